"""The CasADi target (``--target casadi``): every ``casadi.Function`` agrees with the numpy target, the helpers
hand out what acados and do-mpc take, generating needs no casadi, and IPOPT swings the cart-pole up with the
generated ``xdot_fun``.

Agreement: every function of every bundled example (the UR5 from its URDF among them) and every reference system
(both derivation routes), at random states and parameters, against the Python target's package, to 1e-12.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import METHODS, import_package
from systems import ARM_SPEEDS, ROLLING_DISC, SYSTEM_NAMES, systems

import sls

ca = pytest.importorskip("casadi")

TOL = 1e-12
STATES = 3
#: Bundled examples (four_bar is constrained).
EXAMPLES = list(sls.readers.example_names())


def packages(model: sls.Model, folder: Path, method: str = "auto") -> tuple:
    """The numpy and the casadi package of ``model``."""
    sls.generate(model, folder / "np", method=method)
    sls.generate(model, folder / "ca", method=method, target="casadi")
    return import_package(folder / "np"), import_package(folder / "ca")


def as_array(value, shape: tuple) -> np.ndarray:
    """A casadi result (a DM: a column, a matrix, or an (a*b, c) matrix for three axes) as numpy's ``shape``."""
    return np.asarray(ca.DM(value).full()).reshape(shape)


def close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    scale = max(1.0, float(np.max(np.abs(want)))) if np.size(want) else 1.0
    np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL * scale, err_msg=what)


def sample(model: sls.Model, rng: np.random.Generator) -> tuple:
    """A random state (a unit quaternion for a free-flyer base), input, acceleration and parameter set (within
    ±50 % of the defaults)."""
    q = rng.uniform(-np.pi, np.pi, len(model.q))
    if model.tree is not None and model.tree.free is not None:
        q[3:7] /= np.linalg.norm(q[3:7])  # [x, y, z, qx, qy, qz, qw, joints...]
    x = np.concatenate([q, rng.uniform(-2, 2, model.n)])
    params = {name: float(value) * rng.uniform(0.5, 1.5) for name, value in model.params.items()}
    return x, rng.uniform(-1, 1, model.m), rng.uniform(-1, 1, model.n), params


def check_agreement(model: sls.Model, np_pkg, ca_pkg, seed: int = 0) -> None:
    """Every function of ``ca_pkg`` equals the one of ``np_pkg`` at random states and parameters."""
    rng = np.random.default_rng(seed)
    names = [name for name in np_pkg.__all__ if name.endswith("_fun") or name == "linearized_model"]
    assert names and set(names) <= set(ca_pkg.__all__)
    for _ in range(STATES):
        x, u, qddot, params = sample(model, rng)
        p = ca_pkg.parameters(**params)
        for name in names:
            function = getattr(ca_pkg, name)
            assert isinstance(function, ca.Function) and function.name_in()[-1] == "p"
            values = {"x": x, "u": u, "qddot": qddot, "lam": rng.normal(size=model.k)}
            args = tuple(values[argument] for argument in function.name_in()[:-1])
            want = getattr(np_pkg, name)(*args, **params)
            got = function(*args, p)
            if function.n_out() > 1:
                for k, w in enumerate(want):
                    close(as_array(got[k], w.shape), w, f"{model.name}: {name}[{k}]")
            else:
                close(as_array(got, np.shape(want)), np.asarray(want), f"{model.name}: {name}")


@pytest.mark.parametrize("name", EXAMPLES)
def test_bundled_examples_agree_with_the_numpy_target(name, tmp_path):
    model = sls.load_example(name)
    check_agreement(model, *packages(model, tmp_path))


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_reference_systems_agree_with_the_numpy_target(name, method, tmp_path):
    model = systems()[name].make_model()
    check_agreement(model, *packages(model, tmp_path, method), seed=1)


def test_ur5_from_its_urdf(tmp_path, record_property):
    """The UR5 read from its URDF (its generation time recorded; measured in benchmarks.casadi_target): equal to
    the numpy target; its qddot_fun (the unrolled L D L' of the lowering) has fewer instructions than CasADi's own
    symbolic solve of the same M and rhs."""
    urdf = Path(sls.__file__).resolve().parent / "examples" / "ur5.urdf"
    model = sls.load_urdf(urdf)
    start = time.perf_counter()
    sls.generate(model, tmp_path / "ca", target="casadi")
    seconds = time.perf_counter() - start
    sls.generate(model, tmp_path / "np")
    ca_pkg, np_pkg = import_package(tmp_path / "ca"), import_package(tmp_path / "np")
    check_agreement(model, np_pkg, ca_pkg, seed=2)
    x, u, p = ca.SX.sym("x", 2 * model.n), ca.SX.sym("u", model.m), ca.SX.sym("p", len(model.params))
    rhs = u - ca_pkg.tau_fun(x, ca.DM.zeros(model.n), p)  # B_u = I: rhs = u - (C qdot + phi + fric)
    generic = ca.Function("generic", [x, u, p], [ca.solve(ca_pkg.M_fun(x, p), rhs)])
    instructions = ca_pkg.qddot_fun.n_instructions()
    record_property("ur5_generation_s", seconds)
    record_property("ur5_qddot_instructions", instructions)
    print(
        f"UR5 --target casadi: {seconds:.2f} s, qddot_fun {instructions} instructions "
        f"(casadi.solve of M_fun and tau_fun: {generic.n_instructions()})"
    )
    assert instructions < generic.n_instructions()


@pytest.mark.parametrize("method", METHODS)
def test_a_rolling_disc_agrees_with_the_numpy_target(method, tmp_path):
    model = sls.model_from_strings(**ROLLING_DISC)
    np_pkg, ca_pkg = packages(model, tmp_path, method)
    assert "multipliers_fun" in ca_pkg.__all__
    check_agreement(model, np_pkg, ca_pkg, seed=9)


def test_helpers(tmp_path):
    model = sls.load_example("cart_pole")
    sls.generate(model, tmp_path / "pkg", target="casadi")
    pkg = import_package(tmp_path / "pkg")
    assert pkg.UNIT_QUATERNION == ()
    assert list(pkg.PARAMS) == list(model.params) and pkg.STATE == ("s", "th", "ds", "dth") and pkg.INPUTS == ("F",)
    np.testing.assert_array_equal(pkg.parameters(mp=0.2).full().ravel(), [1.0, 0.2, 0.5, 9.81])
    with pytest.raises(TypeError, match="unknown parameter 'mass'"):
        pkg.parameters(mass=1.0)
    fields = pkg.acados_model()
    assert set(fields) == {"x", "xdot", "u", "p", "f_expl_expr", "f_impl_expr", "name"}
    assert fields["name"] == "cart_pole"
    assert [fields[k].shape for k in ("x", "xdot", "u", "p")] == [(4, 1), (4, 1), (1, 1), (4, 1)]
    for key in ("x", "xdot", "u", "p"):
        assert ca.SX(fields[key]).is_valid_input()
    symbols = [fields[k] for k in ("x", "xdot", "u", "p")]
    check = ca.Function("check", symbols, [fields["f_expl_expr"], fields["f_impl_expr"]])
    x, xdot, u, p = [0.1, 2.0, -0.3, 0.4], [1.0, 2.0, 3.0, 4.0], [0.5], pkg.parameters()
    expl, impl = check(x, xdot, u, p)
    want = pkg.xdot_fun(x, u, p)
    close(expl.full(), want.full(), "f_expl_expr")
    close(impl.full(), np.reshape(xdot, (4, 1)) - want.full(), "f_impl_expr")


def test_do_mpc_model(tmp_path):
    pytest.importorskip("do_mpc")
    sls.generate(sls.load_example("cart_pole"), tmp_path / "pkg", target="casadi")
    pkg = import_package(tmp_path / "pkg")
    model = pkg.do_mpc_model(mp=0.2)
    assert model.n_x == 4 and model.n_u == 1
    rhs = ca.Function("rhs", [model.x.cat, model.u.cat], [model._rhs.cat])
    x, u = [0.1, 2.0, -0.3, 0.4], [0.5]
    close(rhs(x, u).full(), pkg.xdot_fun(x, u, pkg.parameters(mp=0.2)).full(), "do-mpc rhs")


def test_casadis_own_c_code_of_a_function_compiles_and_agrees(tmp_path, monkeypatch):
    """``Function.generate`` (CasADi's C code generation, left to CasADi) of the generated ``xdot_fun`` and
    ``linearized_model``: compiled into a shared library, loaded by ``casadi.external``, the same numbers."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    sls.generate(sls.load_example("cart_pole"), tmp_path / "pkg", target="casadi")
    pkg = import_package(tmp_path / "pkg")
    monkeypatch.chdir(tmp_path)
    for name in ("xdot_fun", "linearized_model"):
        source = getattr(pkg, name).generate(f"{name}.c")
        library = tmp_path / f"{name}.so"
        subprocess.run([compiler, "-shared", "-fPIC", "-O1", source, "-o", str(library)], check=True, timeout=120)
        compiled = ca.external(name, str(library))
        rng = np.random.default_rng(4)
        for _ in range(STATES):
            x, u, p = rng.uniform(-2, 2, 4), rng.uniform(-1, 1, 1), pkg.parameters(mp=rng.uniform(0.05, 0.2))
            want, got = getattr(pkg, name)(x, u, p), compiled(x, u, p)
            for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
                close(np.asarray(g.full()), np.asarray(w.full()), f"{name} compiled by CasADi")


def test_generation_needs_no_casadi_and_the_package_says_it_does(tmp_path):
    script = (
        "import sys; sys.modules['casadi'] = None\n"
        "import sls\n"
        f"sls.generate(sls.load_example('pendulum'), {str(tmp_path / 'pkg')!r}, target='casadi')\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "import pkg\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1] == 'ImportError: this package needs casadi: pip install "sls[casadi]"'


def test_cart_pole_swing_up_by_direct_collocation_with_ipopt(tmp_path):
    """Trapezoidal collocation, 40 intervals over 2 s, |F| <= 20 N: from hanging (th = pi) to upright (th = 0)
    at rest, minimizing the integral of F^2. IPOPT converges, and the plan satisfies the collocation equations
    of the numpy target's xdot_fun (an independent evaluation of the dynamics)."""
    model = sls.load_example("cart_pole")
    np_pkg, pkg = packages(model, tmp_path)
    f, p = pkg.xdot_fun, pkg.parameters()
    N, T = 40, 2.0
    h = T / N
    opti = ca.Opti()
    X = opti.variable(4, N + 1)
    U = opti.variable(1, N + 1)
    for k in range(N):
        xk, xn = X[:, k], X[:, k + 1]
        opti.subject_to(xn == xk + h / 2 * (f(xk, U[:, k], p) + f(xn, U[:, k + 1], p)))
    opti.subject_to(X[:, 0] == [0.0, np.pi, 0.0, 0.0])
    opti.subject_to(X[:, N] == [0.0, 0.0, 0.0, 0.0])
    opti.subject_to(opti.bounded(-20.0, U, 20.0))
    opti.minimize(h * ca.sumsqr(U))
    for k in range(N + 1):
        opti.set_initial(X[:, k], [0.0, np.pi * (1 - k / N), 0.0, 0.0])
    opti.solver("ipopt", {"print_time": False}, {"print_level": 0, "sb": "yes"})
    solution = opti.solve()
    assert solution.stats()["return_status"] == "Solve_Succeeded"
    states, forces = solution.value(X).T, np.atleast_2d(solution.value(U)).ravel()
    rates = np_pkg.xdot_fun(states, forces[:, None])  # the batch call of the numpy target
    defects = states[1:] - states[:-1] - h / 2 * (rates[1:] + rates[:-1])
    assert np.max(np.abs(defects)) < 1e-6
    np.testing.assert_allclose(states[0], [0.0, np.pi, 0.0, 0.0], atol=1e-8)
    np.testing.assert_allclose(states[-1], [0.0, 0.0, 0.0, 0.0], atol=1e-8)
    assert np.max(np.abs(forces)) <= 20.0 + 1e-6 and np.max(np.abs(states[:, 0])) > 0.05  # the cart moved


def test_generalized_speeds_agree_with_the_numpy_target(tmp_path):
    model = sls.model_from_strings(**ARM_SPEEDS)
    np_pkg, ca_pkg = packages(model, tmp_path, "expanded")  # speeds are derived on the expanded route
    assert {"qdot_fun", "qdot_jac_fun"} <= set(ca_pkg._BUILDERS)
    check_agreement(model, np_pkg, ca_pkg, seed=3)


def test_frames_of_the_ur5_agree_with_the_numpy_target(tmp_path):
    urdf = Path(sls.__file__).resolve().parent / "examples" / "ur5.urdf"
    model = sls.load_urdf(urdf, frames=["ee_link", "forearm_link"])
    np_pkg, ca_pkg = packages(model, tmp_path)
    assert "frame_pose_fun" in ca_pkg._BUILDERS
    check_agreement(model, np_pkg, ca_pkg, seed=4)


def test_ur5_on_a_floating_base_in_euler_angles_agrees_with_the_numpy_target(tmp_path):
    urdf = Path(sls.__file__).resolve().parent / "examples" / "ur5.urdf"
    model = sls.load_urdf(urdf, floating_base=True, base_orientation="euler")
    check_agreement(model, *packages(model, tmp_path), seed=5)


def test_ur5_qddot_agrees_with_adam_robotics(tmp_path):
    """An independent implementation of the UR5's forward dynamics in CasADi (adam-robotics' mass matrix and bias
    force from the same URDF, solved by casadi.solve), where it is installed."""
    adam = pytest.importorskip("adam.casadi")
    urdf = Path(sls.__file__).resolve().parent / "examples" / "ur5.urdf"
    model = sls.load_urdf(urdf)
    sls.generate(model, tmp_path / "ca", target="casadi")
    pkg = import_package(tmp_path / "ca")
    kin = adam.KinDynComputations(str(urdf), [s.name for s in model.q])
    kin.g = np.array([0.0, 0.0, -pkg.PARAMS["g"], 0.0, 0.0, 0.0])
    q, qd, tau = ca.SX.sym("q", 6), ca.SX.sym("qd", 6), ca.SX.sym("tau", 6)
    M = kin.mass_matrix_fun()(ca.SX.eye(4), q)[6:, 6:]
    h = kin.bias_force_fun()(ca.SX.eye(4), q, ca.SX.zeros(6), qd)[6:]
    peer = ca.Function("peer", [q, qd, tau], [ca.solve(M, tau - h)])
    rng = np.random.default_rng(6)
    for _ in range(STATES):
        x, u = np.concatenate([rng.uniform(-np.pi, np.pi, 6), rng.uniform(-2, 2, 6)]), rng.uniform(-5, 5, 6)
        close(pkg.qddot_fun(x, u, pkg.parameters()).full(), peer(x[:6], x[6:], u).full(), "UR5 qddot against adam")


def quaternion_matrix(qx: float, qy: float, qz: float, qw: float) -> np.ndarray:
    """The rotation of the unit quaternion [qx, qy, qz, qw]."""
    return np.array(
        [
            [1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - qz * qw), 2 * (qx * qz + qy * qw)],
            [2 * (qx * qy + qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - qx * qw)],
            [2 * (qx * qz - qy * qw), 2 * (qy * qz + qx * qw), 1 - 2 * (qx * qx + qy * qy)],
        ]
    )


def test_solo12_joint_accelerations_agree_with_adam_robotics_aba(tmp_path):
    """Solo-12 on its quaternion base against an independent articulated-body algorithm in CasADi (adam-robotics'
    aba_fun on the same URDF; its base velocity in the mixed representation: the body-frame speeds turned to the
    world). The joints' accelerations do not depend on the base's frame convention."""
    adam = pytest.importorskip("adam.casadi")
    pin = pytest.importorskip("pinocchio")
    urdf = (
        Path(pin.__file__).resolve().parents[4] / "share/example-robot-data/robots/solo_description/robots/solo12.urdf"
    )
    if not urdf.is_file():
        pytest.skip("example-robot-data is not installed")
    model = sls.load_urdf(urdf, floating_base=True, name="solo12")
    sls.generate(model, tmp_path / "ca", target="casadi")
    pkg = import_package(tmp_path / "ca")
    joints = [s.name for s in model.q][7:]
    kin = adam.KinDynComputations(str(urdf), joints)
    kin.g = np.array([0.0, 0.0, -pkg.PARAMS["g"], 0.0, 0.0, 0.0])
    aba = kin.aba_fun()
    rng = np.random.default_rng(12)
    for _ in range(STATES):
        q = np.concatenate([rng.uniform(-1, 1, 3), rng.normal(size=4), rng.uniform(-np.pi, np.pi, 12)])
        q[3:7] /= np.linalg.norm(q[3:7])
        v, tau = rng.uniform(-2, 2, 18), np.concatenate([np.zeros(6), rng.uniform(-3, 3, 12)])
        R = quaternion_matrix(*q[3:7])
        H = np.eye(4)
        H[:3, :3], H[:3, 3] = R, q[:3]
        want = np.asarray(aba(H, q[7:], np.concatenate([R @ v[:3], R @ v[3:6]]), v[6:], tau[6:])).ravel()[6:]
        got = np.asarray(pkg.vdot_fun(np.concatenate([q, v]), tau, pkg.parameters())).ravel()[6:]
        close(got, want, "Solo-12 joint accelerations against adam's aba")


# do-mpc's controller applies a numpy function to a casadi value (do_mpc/controller/_mpc.py; casadi issue #2959)
@pytest.mark.filterwarnings("ignore:\\s*casadi. a numpy function was called on a casadi value:FutureWarning")
def test_do_mpc_stabilizes_the_cart_pole_from_30_degrees(tmp_path):
    """A do-mpc MPC on the generated do_mpc_model (horizon 1 s in 20 steps, |F| <= 20 N) brings the pole from 30° to
    upright; the plant is the numpy target's xdot_fun integrated by scipy between the MPC's steps (zero-order hold)."""
    do_mpc = pytest.importorskip("do_mpc")
    from scipy.integrate import solve_ivp

    np_pkg, pkg = packages(sls.load_example("cart_pole"), tmp_path)
    model = pkg.do_mpc_model()
    mpc = do_mpc.controller.MPC(model)
    mpc.settings.n_horizon, mpc.settings.t_step, mpc.settings.store_full_solution = 20, 0.05, False
    mpc.settings.supress_ipopt_output()
    x = model.x["x"]
    cost = 10 * x[1] ** 2 + x[0] ** 2 + 0.1 * x[2] ** 2 + 0.1 * x[3] ** 2
    mpc.set_objective(mterm=cost, lterm=cost)
    mpc.set_rterm(u=1e-2)
    mpc.bounds["lower", "_u", "u"], mpc.bounds["upper", "_u", "u"] = -20.0, 20.0
    mpc.setup()
    state = np.array([0.0, np.deg2rad(30.0), 0.0, 0.0])
    mpc.x0 = state
    mpc.set_initial_guess()
    angles = []
    for _ in range(100):  # 5 s
        force = mpc.make_step(state.reshape(-1, 1)).ravel()
        step = solve_ivp(
            lambda t, x, u: np_pkg.xdot_fun(x, u), (0.0, 0.05), state, args=(force,), rtol=1e-10, atol=1e-10
        )
        state = step.y[:, -1]
        angles.append(state[1])
    assert np.max(np.abs(angles[-20:])) < 0.02 and abs(state[3]) < 0.1 and abs(state[0]) < 0.1


def test_ur5_on_a_quaternion_base_agrees_with_the_numpy_target(tmp_path):
    """A free-flyer base (7 coordinates, 6 speeds): linearized_model in the tangent space, as the numpy target's."""
    urdf = Path(sls.__file__).resolve().parent / "examples" / "ur5.urdf"
    model = sls.load_urdf(urdf, floating_base=True)
    np_pkg, ca_pkg = packages(model, tmp_path)
    check_agreement(model, np_pkg, ca_pkg, seed=7)
    assert ca_pkg.UNIT_QUATERNION == (3, 4, 5, 6) and [s.name for s in model.q][3:7] == [
        "base_qx",
        "base_qy",
        "base_qz",
        "base_qw",
    ]
    A, B = ca_pkg.linearized_model.size_out(0), ca_pkg.linearized_model.size_out(1)
    assert A == (2 * model.n, 2 * model.n) and B == (2 * model.n, model.m)


@pytest.mark.parametrize(
    "relative, floating",
    [("solo_description/robots/solo12.urdf", True), ("panda_description/urdf/panda.urdf", False)],
    ids=["Solo-12 on its quaternion base", "Panda"],
)
def test_robots_of_example_robot_data_agree_with_the_numpy_target(relative, floating, tmp_path):
    pin = pytest.importorskip("pinocchio")
    urdf = Path(pin.__file__).resolve().parents[4] / "share/example-robot-data/robots" / relative
    if not urdf.is_file():
        pytest.skip("example-robot-data is not installed")
    model = sls.load_urdf(urdf, floating_base=floating)
    check_agreement(model, *packages(model, tmp_path), seed=8)


def test_a_constrained_model_in_generalized_speeds_agrees_with_the_numpy_target(tmp_path):
    model = sls.model_from_strings(**{**ARM_SPEEDS, "constraints": ["sin(q1) + sin(q2) - 0.5"]})
    np_pkg, ca_pkg = packages(model, tmp_path, "expanded")
    assert {"multipliers_fun", "qdot_jac_fun"} <= set(ca_pkg._BUILDERS)
    check_agreement(model, np_pkg, ca_pkg, seed=10)


@pytest.mark.parametrize("flat", [False, True], ids=["point feet", "one flat foot"])
def test_solo12_standing_on_its_feet_agrees_with_the_numpy_target(flat, tmp_path):
    """Point contacts on a quaternion base (and one foot held flat, 6-D, beside three points): the KKT solve,
    contact_forces_fun (the contacts' multipliers, one row per foot) and the tangent-space linearization of the
    constrained dynamics."""
    pin = pytest.importorskip("pinocchio")
    robots = Path(pin.__file__).resolve().parents[4] / "share/example-robot-data/robots"
    urdf = robots / "solo_description/robots/solo12.urdf"
    if not urdf.is_file():
        pytest.skip("example-robot-data is not installed")
    feet = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
    feet = ["FL_FOOT:6d", *feet[1:]] if flat else feet
    model = sls.load_urdf(urdf, floating_base=True, contacts=feet, constraint_stabilization=5.0, name="solo_feet")
    np_pkg, ca_pkg = packages(model, tmp_path)
    assert ca_pkg.contact_forces_fun.size_out(0) == (4, 6 if flat else 3)
    check_agreement(model, np_pkg, ca_pkg, seed=11)
