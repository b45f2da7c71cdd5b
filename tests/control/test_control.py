"""The control workflow (sls/control/): input maps, equilibrium, LQR, ZOH, simulation, dlqr, ctrb, state_space.

Failures of the generated code (a singular mass matrix, a state outside the model's domain) end in one
ControlError naming the function, the state and the cause. The commands ``sls lqr``/``sls simulate``:
test_cli_control.py.
"""

from __future__ import annotations

import sys

import numpy as np
import pytest
import scipy.linalg
import sympy
from click.testing import CliRunner
from conftest import SPHERICAL
from scipy.integrate import solve_ivp

import sls
import sls.control as control
from sls.cli.app import main
from sls.errors import ControlError, MissingDependencyError, ModelError

RNG = np.random.default_rng(7)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("control")
    out = {}
    for name in ("cart_pole", "acrobot", "two_link_arm"):
        sls.generate(sls.load_example(name), root / name)
        out[name] = root / name
    # A pendulum pushed horizontally at its tip: B_u = l cos(q) depends on the state; with friction.
    pushed = sls.model_from_strings(
        state=["q", "dq"],
        T="1/2*m*l^2*dq^2",
        V="m*g*l*(1 - cos(q))",
        fric=["b*dq"],
        params={"m": 1.0, "l": 0.8, "g": 9.81, "b": 0.3},
        inputs=["F"],
        forces=["F*l*cos(q)"],
        name="pushed",
    )
    sls.generate(pushed, root / "pushed")
    out["pushed"] = root / "pushed"
    # Two uncoupled inverted pendulums, only the first one actuated: not stabilizable.
    twins = sls.model_from_strings(
        state=["a", "b", "da", "db"],
        T="1/2*(da^2 + db^2)",
        V="cos(a) + cos(b)",
        fric="0",
        inputs=["F"],
        forces=["F", "0"],
        name="twins",
    )
    sls.generate(twins, root / "twins")
    out["twins"] = root / "twins"
    # A spherical pendulum: M is singular at th = 0.
    sls.generate(sls.model_from_strings(**SPHERICAL), root / "spherical")
    out["spherical"] = root / "spherical"
    # phi = 1 - 1/sqrt(q): not defined for q <= 0
    root_well = sls.model_from_strings(
        state=["q", "dq"], T="1/2*dq^2", V="q - 2*sqrt(q)", fric="0", inputs=["F"], forces=["F"], name="rootwell"
    )
    sls.generate(root_well, root / "root_well")
    out["root_well"] = root / "root_well"
    return out


@pytest.fixture(scope="module")
def pkgs(folders):
    return {name: control.load_package(path) for name, path in folders.items()}


def textbook_cart_pole(mc, mp, length, g):
    """Cart-pole (point mass mp on a massless rod of length l, cart mass mc, force F on the cart), upright.

    (mc + mp) s'' + mp l cos(th) th'' - mp l sin(th) th'^2 = F
    mp l cos(th) s'' + mp l^2 th'' - mp g l sin(th) = 0
    linearized at th = 0: s'' = (F - mp g th) / mc, th'' = ((mc + mp) g th - F) / (mc l).
    """
    A = np.array(
        [
            [0, 0, 1, 0],
            [0, 0, 0, 1],
            [0, -mp * g / mc, 0, 0],
            [0, (mc + mp) * g / (mc * length), 0, 0],
        ]
    )
    B = np.array([[0], [0], [1 / mc], [-1 / (mc * length)]])
    return A, B


def care_gain(A, B, Q, R):
    S = scipy.linalg.solve_continuous_are(A, B, Q, R)
    return np.linalg.solve(R, B.T @ S), S


# --------------------------------------------------------------------------
# the generated package with an input map


def test_exports(pkgs):
    cp = pkgs["cart_pole"]
    assert (cp.N_DOF, cp.N_INPUTS) == (2, 1)
    assert cp.STATE == ("s", "th", "ds", "dth")
    assert cp.INPUTS == ("F",)
    assert set(cp.PARAMS) == {"mc", "mp", "l", "g"}
    assert cp.FULLY_ACTUATED is False
    assert pkgs["two_link_arm"].FULLY_ACTUATED is True
    np.testing.assert_array_equal(cp.input_matrix_fun(RNG.normal(size=4)), [[1.0], [0.0]])
    np.testing.assert_array_equal(pkgs["acrobot"].input_matrix_fun(RNG.normal(size=4)), [[0.0], [1.0]])


@pytest.mark.parametrize("params", [{}, {"mc": 2.5, "mp": 0.3, "l": 0.8, "g": 9.7}])
def test_cart_pole_linearization_is_the_textbook_one(pkgs, params):
    cp = pkgs["cart_pole"]
    values = {**cp.PARAMS, **params}
    A, B = cp.linearized_model(np.zeros(4), [0.0], **params)
    A_ref, B_ref = textbook_cart_pole(values["mc"], values["mp"], values["l"], values["g"])
    np.testing.assert_allclose(A, A_ref, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(B, B_ref, rtol=1e-13, atol=1e-13)


def _f(pkg, x, u):
    n = pkg.N_DOF
    return np.concatenate([x[n:], pkg.qddot_fun(x, u)])


@pytest.mark.parametrize("name", ["pushed", "cart_pole", "acrobot"])
def test_linearization_matches_finite_differences_with_input(pkgs, name):
    """A includes d(B_u(x) u)/dx: checked with u != 0 against central differences."""
    pkg = pkgs[name]
    x = RNG.normal(size=2 * pkg.N_DOF)
    u = RNG.normal(size=pkg.N_INPUTS) * 3
    A, B = pkg.linearized_model(x, u)
    h = 1e-6
    A_fd = np.column_stack([(_f(pkg, x + h * e, u) - _f(pkg, x - h * e, u)) / (2 * h) for e in np.eye(len(x))])
    B_fd = np.column_stack([(_f(pkg, x, u + h * e) - _f(pkg, x, u - h * e)) / (2 * h) for e in np.eye(len(u))])
    np.testing.assert_allclose(A, A_fd, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(B, B_fd, rtol=1e-6, atol=1e-6)
    B_u = pkg.input_matrix_fun(x)
    np.testing.assert_allclose(B[pkg.N_DOF :], np.linalg.solve(pkg.M_fun(x), B_u), rtol=1e-12)


def test_input_matrix_jacobian(pkgs):
    pkg = pkgs["pushed"]
    x = RNG.normal(size=2)
    length = pkg.PARAMS["l"]
    np.testing.assert_allclose(pkg.input_matrix_fun(x), [[length * np.cos(x[0])]])
    np.testing.assert_allclose(pkg.input_matrix_jac_fun(x), [[[-length * np.sin(x[0]), 0.0]]])


@pytest.mark.parametrize("name", ["pushed", "cart_pole", "acrobot", "two_link_arm"])
def test_tau_inverts_qddot(pkgs, name):
    """tau_fun = M q'' + C q' + phi + fric, so tau_fun(x, qddot_fun(x, u)) = B_u(x) u (friction included)."""
    pkg = pkgs[name]
    X = RNG.normal(size=(5, 2 * pkg.N_DOF))
    U = RNG.normal(size=(5, pkg.N_INPUTS))
    for x, u in zip(X, U):
        np.testing.assert_allclose(
            pkg.tau_fun(x, pkg.qddot_fun(x, u)), pkg.input_matrix_fun(x) @ u, rtol=1e-10, atol=1e-10
        )
    batch = pkg.tau_fun(X, pkg.qddot_fun(X, U))
    np.testing.assert_allclose(batch, np.einsum("kij,kj->ki", pkg.input_matrix_fun(X), U), rtol=1e-10, atol=1e-10)


def test_friction_is_in_tau(pkgs):
    pkg = pkgs["pushed"]
    x = np.array([0.2, 1.5])
    static = pkg.tau_fun(x, [0.0], b=0.0)
    np.testing.assert_allclose(pkg.tau_fun(x, [0.0]) - static, [0.3 * 1.5])


# --------------------------------------------------------------------------
# input-map validation through the three ways in


BAD_FORCES = [
    (["F^2", "0"], "must be linear in the inputs"),
    (["F*sin(F)", "G"], "must be linear in the inputs"),
    (["F + G/F", "0"], "is not linear in F"),
    (["F"], "forces: expected 2 entries"),
    (["F", "0", "0"], "forces: expected 2 entries"),
]
MODEL = dict(state=["s", "th", "ds", "dth"], T="1/2*(mc + mp)*ds^2 + 1/2*mp*l^2*dth^2", V="mp*g*l*cos(th)")


@pytest.mark.parametrize("forces, message", BAD_FORCES)
def test_input_map_errors_toml(tmp_path, forces, message):
    path = tmp_path / "bad.toml"
    quoted = ", ".join(f'"{f}"' for f in forces)
    path.write_text(
        f'state = ["s", "th", "ds", "dth"]\nT = "{MODEL["T"]}"\nV = "{MODEL["V"]}"\nfric = "0"\n'
        f'inputs = ["F"]\nforces = [{quoted}]\n'
    )
    with pytest.raises(ModelError, match=message):
        sls.load_toml(path)


@pytest.mark.parametrize("forces, message", BAD_FORCES)
def test_input_map_errors_flags(tmp_path, forces, message):
    args = ["generate", "--T", MODEL["T"], "--V", MODEL["V"], "--fric", "0", "--state", "s th ds dth", "--input", "F"]
    for force in forces:
        args += ["--force", force]
    result = CliRunner().invoke(main, args + ["--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("forces, message", BAD_FORCES)
def test_input_map_errors_api(tmp_path, forces, message):
    s, th, ds, dth, F, G, mc, mp, length, g = sympy.symbols("s th ds dth F G mc mp l g")
    T = (mc + mp) * ds**2 / 2 + mp * length**2 * dth**2 / 2
    V = mp * g * length * sympy.cos(th)
    exprs = [sympy.sympify(f.replace("^", "**"), locals={"F": F, "G": G}) for f in forces]
    with pytest.raises(ModelError, match=message):
        sls.model_from_sympy(T, V, 0, [s, th, ds, dth], inputs=[F], forces=exprs)
    with pytest.raises(ModelError, match=message):
        sls.sym_lagrangian_solver(T, V, 0, [s, th, ds, dth], inputs=[F], forces=exprs, out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_inputs_without_forces_or_loads_is_an_error():
    with pytest.raises(ModelError, match="inputs need forces or loads to act through"):
        sls.model_from_strings(fric="0", inputs=["F"], **MODEL)
    with pytest.raises(ModelError, match="forces need inputs"):
        sls.model_from_strings(fric="0", forces=["0", "0"], **MODEL)


# --------------------------------------------------------------------------
# equilibrium_input


def test_equilibrium_input(pkgs):
    u, residual = control.equilibrium_input(pkgs["cart_pole"], np.zeros(4))
    assert u.shape == (1,) and abs(u[0]) < 1e-12 and residual < 1e-12
    # Fully actuated arm at rest: u = phi (gravity); with velocities: C q' + phi + fric.
    arm = pkgs["two_link_arm"]
    x = np.array([0.4, -0.3, 0.0, 0.0])
    u, residual = control.equilibrium_input(arm, x)
    np.testing.assert_allclose(u, arm.phi_fun(x), rtol=1e-12)
    x = np.array([0.4, -0.3, 0.5, 0.2])
    u, _ = control.equilibrium_input(arm, x, params={"m2": 0.3})
    np.testing.assert_allclose(arm.qddot_fun(x, u, m2=0.3), 0.0, atol=1e-12)


def test_equilibrium_input_underactuated(pkgs):
    acro = pkgs["acrobot"]
    # Combined centre of mass over the passive shoulder: m1 lc1 sin q1 + m2 (l1 sin q1 + lc2 sin(q1 + q2)) = 0.
    q1 = 0.1
    q2 = np.arcsin(-1.5 * np.sin(q1)) - q1
    x = np.array([q1, q2, 0.0, 0.0])
    u, residual = control.equilibrium_input(acro, x)
    assert residual < 1e-10
    np.testing.assert_allclose(u, [acro.phi_fun(x)[1]], rtol=1e-10)
    with pytest.raises(ControlError, match=r"no input holds x = \[0.1, -0.2, 0, 0\] at rest.*residual 1.6"):
        control.equilibrium_input(acro, [0.1, -0.2, 0, 0])
    with pytest.raises(ControlError, match="no input holds"):
        control.equilibrium_input(pkgs["cart_pole"], [0, 0.3, 0, 0])


def test_equilibrium_input_argument_errors(pkgs, tmp_path):
    with pytest.raises(ControlError, match=r"x must have length 4 \[s, th, ds, dth\], got shape \(3,\)"):
        control.equilibrium_input(pkgs["cart_pole"], [0, 0, 0])
    with pytest.raises(ControlError, match="unknown parameter 'M'"):
        control.equilibrium_input(pkgs["cart_pole"], np.zeros(4), params={"M": 1.0})
    with pytest.raises(ControlError, match="not a generated package"):
        control.equilibrium_input(tmp_path, np.zeros(4))


# --------------------------------------------------------------------------
# lqr


@pytest.mark.parametrize(
    "name, Q, R",
    [("cart_pole", [10, 10, 1, 1], 1.0), ("cart_pole", 1.0, [[0.1]]), ("acrobot", np.diag([10.0, 10, 1, 1]), 2.0)],
)
def test_lqr_matches_riccati(pkgs, name, Q, R):
    pkg = pkgs[name]
    result = control.lqr(pkg, np.zeros(4), np.zeros(1), Q, R)
    A, B = pkg.linearized_model(np.zeros(4), [0.0])
    Qm = np.diag(Q) if np.ndim(Q) == 1 else np.eye(4) * Q if np.ndim(Q) == 0 else np.asarray(Q)
    Rm = np.atleast_2d(R) if np.ndim(R) else np.array([[R]])
    K, S = care_gain(A, B, Qm, Rm)
    np.testing.assert_allclose(result.K, K, rtol=1e-9)
    np.testing.assert_allclose(result.S, S, rtol=1e-9)
    np.testing.assert_allclose(np.sort_complex(result.poles), np.sort_complex(np.linalg.eigvals(A - B @ K)), rtol=1e-9)
    assert result.K.shape == (1, 4) and np.all(result.poles.real < 0)
    K2, S2, E2 = result  # python-control style unpacking
    assert K2 is result.K and E2 is result.poles


def test_lqr_matches_python_control(pkgs):
    ct = pytest.importorskip("control")
    for name in ("cart_pole", "acrobot"):
        result = control.lqr(pkgs[name], np.zeros(4), None, [10, 10, 1, 1], 1)
        K, S, E = ct.lqr(result.A, result.B, np.diag([10.0, 10, 1, 1]), np.eye(1))
        np.testing.assert_allclose(result.K, K, rtol=1e-8)
        np.testing.assert_allclose(result.S, S, rtol=1e-8)


def test_lqr_cart_pole_values(pkgs):
    result = control.lqr(pkgs["cart_pole"], np.zeros(4), None, [10, 10, 1, 1], 1)
    # sqrt(10) on the cart position: the classic LQR identity K_s = -sqrt(q_s / r) for a double-integrator-like mode.
    np.testing.assert_allclose(result.K[0, 0], -np.sqrt(10), rtol=1e-9)
    np.testing.assert_allclose(result.K, [[-3.16227766, -37.11418089, -4.2391844, -8.18449468]], rtol=1e-8)


def test_lqr_not_an_equilibrium(pkgs):
    with pytest.raises(
        ControlError, match=r"not an equilibrium: xdot = f\(x_eq, u_eq\) = \[0, 0, 2, -4\] \(residual 4.47\)"
    ):
        control.lqr(pkgs["cart_pole"], np.zeros(4), [2.0], 1, 1)
    with pytest.raises(ControlError, match="x_eq must have zero velocities"):
        control.lqr(pkgs["cart_pole"], [0, 0, 1, 0], [0.0], 1, 1)
    with pytest.raises(ControlError, match="no input holds"):
        control.lqr(pkgs["acrobot"], [0.3, 0, 0, 0], None, 1, 1)


def test_lqr_not_stabilizable(pkgs):
    with pytest.raises(
        ControlError, match=r"not stabilizable: 1 unstable mode \(eigenvalue \[1\]\) cannot be reached by the inputs"
    ):
        control.lqr(pkgs["twins"], np.zeros(4), None, 1, 1)
    # Hanging down, the uncontrolled twin oscillates forever (eigenvalues ±1j): not stabilizable either.
    with pytest.raises(
        ControlError,
        match=r"not stabilizable: 2 modes on or right of the imaginary axis \(eigenvalues \[0\+1j, 0-1j\]\)",
    ):
        control.lqr(pkgs["twins"], [np.pi, np.pi, 0, 0], None, 1, 1)


@pytest.mark.parametrize(
    "Q, R, message",
    [
        ([1, 2, 3], 1, r"Q as a vector holds the diagonal and must have length 4, got length 3"),
        (np.eye(3), 1, r"Q must be a 4x4 matrix, got shape 3x3"),
        (
            np.ones((2, 2, 2)),
            1,
            r"Q must be a scalar, a vector of 4 diagonal entries or a 4x4 matrix, got shape \(2, 2, 2\)",
        ),
        (np.triu(np.ones((4, 4))), 1, "Q must be symmetric"),
        ([1, -1, 1, 1], 1, r"Q must be positive semidefinite \(smallest eigenvalue -1\)"),
        (1, 0, r"R must be positive definite \(smallest eigenvalue 0\)"),
        (1, [1, 1], "R as a vector holds the diagonal and must have length 1, got length 2"),
        (1, np.eye(2), "R must be a 1x1 matrix, got shape 2x2"),
        ("big", 1, "Q must be a scalar, a vector or a matrix of numbers"),
    ],
)
def test_lqr_weight_errors(pkgs, Q, R, message):
    with pytest.raises(ControlError, match=message):
        control.lqr(pkgs["cart_pole"], np.zeros(4), None, Q, R)


def test_lqr_unweighted_marginal_mode(pkgs):
    with pytest.raises(
        ControlError, match=r"does not stabilize the loop \(closed-loop poles \[.*make Q positive definite"
    ):
        control.lqr(pkgs["cart_pole"], np.zeros(4), None, [0, 1, 1, 1], 1)


def test_lqr_weight_forms_agree(pkgs):
    a = control.lqr(pkgs["cart_pole"], np.zeros(4), None, 2.0, 0.5)
    b = control.lqr(pkgs["cart_pole"], np.zeros(4), None, [2, 2, 2, 2], [0.5])
    c = control.lqr(pkgs["cart_pole"], np.zeros(4), None, 2 * np.eye(4), [[0.5]])
    np.testing.assert_allclose(a.K, b.K, rtol=1e-12)
    np.testing.assert_allclose(a.K, c.K, rtol=1e-12)


# --------------------------------------------------------------------------
# discretize


def test_discretize_matches_cont2discrete(pkgs):
    from scipy.signal import cont2discrete

    A, B = pkgs["cart_pole"].linearized_model(np.zeros(4), [0.0])
    Ad, Bd = control.discretize(A, B, 0.02)
    Ad_ref, Bd_ref, *_ = cont2discrete((A, B, np.eye(4), np.zeros((4, 1))), 0.02, method="zoh")
    np.testing.assert_allclose(Ad, Ad_ref, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(Bd, Bd_ref, rtol=1e-12, atol=1e-14)


def test_discretize_matches_fine_integration(pkgs):
    A, B = pkgs["acrobot"].linearized_model(np.zeros(4), [0.0])
    dt, x0, u = 0.05, np.array([0.1, -0.2, 0.3, 0.0]), np.array([0.7])
    Ad, Bd = control.discretize(A, B, dt)
    reference = solve_ivp(lambda t, x: A @ x + B @ u, (0, dt), x0, rtol=1e-12, atol=1e-14).y[:, -1]
    np.testing.assert_allclose(Ad @ x0 + Bd @ u, reference, rtol=1e-9, atol=1e-11)


def test_discretize_errors():
    with pytest.raises(ControlError, match="A must be a square matrix"):
        control.discretize(np.ones((2, 3)), np.ones((2, 1)), 0.1)
    with pytest.raises(ControlError, match="B must have 2 rows"):
        control.discretize(np.eye(2), np.ones((3, 1)), 0.1)
    with pytest.raises(ControlError, match="dt must be a positive finite number"):
        control.discretize(np.eye(2), np.ones((2, 1)), 0.0)


# --------------------------------------------------------------------------
# simulate


def test_cart_pole_closed_loop_balances_from_10_degrees(pkgs):
    cp = pkgs["cart_pole"]
    design = control.lqr(cp, np.zeros(4), None, [10, 10, 1, 1], 1)
    run = control.simulate(cp, [0, np.deg2rad(10), 0, 0], (0, 8), design)
    assert run.success
    assert np.abs(run.y[:, -1]).max() < 1e-3
    assert np.abs(run.y[1]).max() <= np.deg2rad(10) + 1e-12
    assert control.settling_time(run.t, run.y, np.zeros(4)) < 6.0
    np.testing.assert_allclose(run.u[:, 0], -design.K @ run.y[:, 0])


def test_acrobot_closed_loop_balances(pkgs):
    acro = pkgs["acrobot"]
    design = control.lqr(acro, np.zeros(4), None, [10, 10, 1, 1], 1)
    run = control.simulate(acro, [0.05, -0.1, 0.0, 0.0], (0, 6), design)
    assert run.success and np.abs(run.y[:, -1]).max() < 1e-3
    # Open loop, it falls.
    fall = control.simulate(acro, [0.05, -0.1, 0.0, 0.0], (0, 2))
    assert np.abs(fall.y[0, -1]) > 1.0


@pytest.mark.parametrize("name, x0", [("cart_pole", [0.0, 2.5, 0.3, -1.0]), ("acrobot", [2.0, -1.0, 0.5, 0.0])])
def test_energy_is_conserved_unforced(pkgs, name, x0):
    run = control.simulate(pkgs[name], x0, (0, 5), rtol=1e-10, atol=1e-12)
    assert run.success
    np.testing.assert_allclose(run.energy, run.T + run.V)
    drift = np.abs(run.energy - run.energy[0]).max()
    assert drift < 1e-7 * max(1.0, np.abs(run.energy).max()), drift


def test_friction_dissipates(pkgs):
    run = control.simulate(pkgs["pushed"], [1.0, 0.0], (0, 5))
    assert np.all(np.diff(run.energy) <= 1e-9)
    assert run.energy[-1] < 0.5 * run.energy[0]


def test_simulate_params_and_errors(pkgs):
    cp = pkgs["cart_pole"]
    heavy = control.simulate(cp, [0, 0.1, 0, 0], (0, 0.5), params={"mp": 0.5})
    light = control.simulate(cp, [0, 0.1, 0, 0], (0, 0.5))
    assert heavy.y[0, -1] < light.y[0, -1] < 0  # a heavier falling pole pushes the cart back harder
    with pytest.raises(ControlError, match=r"controller\(t, x\) must return 1 input\(s\) \[F\], got shape \(2,\)"):
        control.simulate(cp, np.zeros(4), (0, 1), lambda t, x: [0.0, 1.0])
    with pytest.raises(ControlError, match=r"x0 must have length 4"):
        control.simulate(cp, np.zeros(3), (0, 1))
    with pytest.raises(ControlError, match="t0 < t_end"):
        control.simulate(cp, np.zeros(4), (1, 0))
    seen = []
    control.simulate(cp, [0, 0.1, 0, 0], (0, 1), progress=seen.append)
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)


# ====================================================================================================
# when the generated code fails, and the python-control conveniences (was test_control_more.py)


@pytest.mark.parametrize(
    "params, pattern",
    [
        (
            {"mp": 0.0},
            r"with mp=0: the mass matrix M is singular or not positive definite at x = \[s=0, th=0, ds=0, dth=0\]",
        ),
        ({"mc": -1.0}, r"with mc=-1: the mass matrix M is singular or not positive definite at x = \[s=0"),
        ({"l": 0.0}, r"with l=0: the mass matrix M is singular or not positive definite"),
    ],
)
def test_lqr_with_a_singular_mass_matrix_raises_control_error(pkgs, params, pattern):
    for call in (
        lambda: control.lqr(pkgs["cart_pole"], np.zeros(4), params=params),
        lambda: control.lqr(pkgs["cart_pole"], np.zeros(4), [0.0], params=params),
        lambda: control.equilibrium_input(pkgs["cart_pole"], np.zeros(4), params=params),
        lambda: control.dlqr(pkgs["cart_pole"], np.zeros(4), [0.0], dt=0.01, params=params),
    ):
        with pytest.raises(ControlError, match=pattern) as info:
            call()
        assert "check the parameters" in str(info.value)
        assert not isinstance(info.value, np.linalg.LinAlgError)


def test_lqr_at_a_singular_state_names_it(pkgs):
    with pytest.raises(
        ControlError, match=r"qddot_fun: the mass matrix M is singular .* at x = \[th=0, ph=0, dth=0, dph=0\]"
    ):
        control.lqr(pkgs["spherical"], np.zeros(4), [0.0, 0.0])


def test_domain_error_becomes_control_error(pkgs):
    with pytest.raises(ControlError, match=r"tau_fun is not defined at x = \[q=-1, dq=0\]: math domain error"):
        control.equilibrium_input(pkgs["root_well"], [-1.0, 0.0])
    with pytest.raises(ControlError, match=r"qddot_fun is not defined at x = \[q=0, dq=0\]: float division by zero"):
        control.lqr(pkgs["root_well"], [0.0, 0.0], [0.0])


def test_simulate_names_the_time_the_state_and_the_cause(pkgs):
    with pytest.raises(
        ControlError, match=r"the simulation stopped at t = 0: qddot_fun with mp=0: the mass matrix M is singular"
    ):
        control.simulate(pkgs["cart_pole"], [0, 0.1, 0, 0], (0, 1), params={"mp": 0.0})
    # rolls over q = 0, where the model ends
    with pytest.raises(
        ControlError, match=r"the simulation stopped at t = [\d.]+: qddot_fun is not defined at x = \[q=-?[\d.e-]+, dq="
    ):
        control.simulate(pkgs["root_well"], [0.5, -5.0], (0, 5))


def test_column_and_row_vectors_are_accepted(pkgs):
    flat = control.lqr(pkgs["cart_pole"], np.zeros(4), [0.0], Q=[10, 10, 1, 1])
    column = control.lqr(pkgs["cart_pole"], np.zeros((4, 1)), np.zeros((1, 1)), Q=[10, 10, 1, 1])
    np.testing.assert_array_equal(flat.K, column.K)
    assert control.equilibrium_input(pkgs["cart_pole"], np.zeros((1, 4)))[0].shape == (1,)
    run = control.simulate(pkgs["cart_pole"], np.array([[0.0], [0.1], [0.0], [0.0]]), (0, 0.1))
    assert run.y.shape[0] == 4
    with pytest.raises(ControlError, match=r"x_eq must have length 4 \[s, th, ds, dth\], got shape \(2, 2\)"):
        control.lqr(pkgs["cart_pole"], np.zeros((2, 2)))
    with pytest.raises(ControlError, match="must be a vector of 4 real numbers"):
        control.lqr(pkgs["cart_pole"], np.zeros(4) + 1j)


# --------------------------------------------------------------------------
# dlqr, ctrb, controllability_rank, state_space


def test_dlqr_matches_python_control_on_the_discretized_model(pkgs):
    ct = pytest.importorskip("control")
    design = control.dlqr(pkgs["cart_pole"], np.zeros(4), None, [10, 10, 1, 1], 1, dt=0.02)
    continuous = control.lqr(pkgs["cart_pole"], np.zeros(4), None, [10, 10, 1, 1], 1)
    Ad, Bd = control.discretize(continuous.A, continuous.B, 0.02)
    np.testing.assert_allclose(design.A, Ad) and np.testing.assert_allclose(design.B, Bd)
    K, S, E = ct.dlqr(Ad, Bd, np.diag([10.0, 10, 1, 1]), np.eye(1))
    np.testing.assert_allclose(design.K, K, rtol=1e-8)
    np.testing.assert_allclose(design.S, S, rtol=1e-8)
    assert design.dt == 0.02 and continuous.dt is None
    assert np.all(np.abs(design.poles) < 1)
    # a fast sampler approaches the continuous design
    fine = control.dlqr(pkgs["cart_pole"], np.zeros(4), None, [10, 10, 1, 1], 1, dt=1e-4)
    np.testing.assert_allclose(fine.K, continuous.K, rtol=1e-2)


def test_dlqr_errors(pkgs):
    with pytest.raises(ControlError, match="dt must be a positive finite number"):
        control.dlqr(pkgs["cart_pole"], np.zeros(4), dt=0)
    with pytest.raises(ControlError, match="dt must be a positive number"):
        control.dlqr(pkgs["cart_pole"], np.zeros(4), dt="fast")


def test_ctrb_and_rank(pkgs):
    ct = pytest.importorskip("control")
    design = control.lqr(pkgs["cart_pole"], np.zeros(4))
    C = control.ctrb(design.A, design.B)
    assert C.shape == (4, 4)
    np.testing.assert_allclose(C, ct.ctrb(design.A, design.B))
    assert control.controllability_rank(design.A, design.B) == 4
    # two uncoupled identical pendulums pushed by one common input: rank 2 of 4
    A = np.block([[np.zeros((2, 2)), np.eye(2)], [np.eye(2), np.zeros((2, 2))]])
    assert control.controllability_rank(A, [0, 0, 1, 1]) == 2
    # a chain pushed at one end is controllable, also when stiff and fast
    chain = np.block([[np.zeros((2, 2)), np.eye(2)], [np.array([[-2.0, 1.0], [1.0, -1.0]]), np.zeros((2, 2))]])
    assert control.controllability_rank(chain, [0, 0, 1, 0]) == 4
    assert control.controllability_rank(chain * 1e4, [0, 0, 1, 0]) == 4
    with pytest.raises(ControlError, match="A must be a square matrix"):
        control.ctrb(np.zeros((2, 3)), np.zeros(2))


def test_state_space(pkgs):
    ct = pytest.importorskip("control")
    sys_ = control.state_space(pkgs["cart_pole"], np.zeros(4))
    assert isinstance(sys_, ct.StateSpace)
    A, B = pkgs["cart_pole"].linearized_model(np.zeros(4), [0.0])
    np.testing.assert_array_equal(sys_.A, A) and np.testing.assert_array_equal(sys_.B, B)
    assert list(sys_.state_labels) == ["s", "th", "ds", "dth"] and list(sys_.input_labels) == ["F"]
    assert list(sys_.output_labels) == ["s", "th", "ds", "dth"]
    np.testing.assert_allclose(np.sort_complex(ct.poles(sys_)), np.sort_complex(np.linalg.eigvals(A)))
    assert control.state_space(pkgs["cart_pole"], np.zeros(4), [1.0], params={"mp": 0.5}).B[2, 0] == pytest.approx(1.0)


def test_state_space_without_python_control(pkgs, monkeypatch):
    monkeypatch.setitem(sys.modules, "control", None)
    with pytest.raises(
        MissingDependencyError, match=r'state_space: this needs python-control.*pip install "sls\[control\]"'
    ):
        control.state_space(pkgs["cart_pole"], np.zeros(4))
