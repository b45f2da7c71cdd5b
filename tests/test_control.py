"""The control workflow: input maps, sls.control (equilibrium, LQR, ZOH, simulation), sls lqr / sls simulate."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.linalg
import sympy
from click.testing import CliRunner
from scipy.integrate import solve_ivp

import sls
import sls.control as control
from sls.cli import main
from sls.errors import ControlError, MissingDependencyError, ModelError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
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
    return out


@pytest.fixture(scope="module")
def pkgs(folders):
    return {name: control.load_package(path) for name, path in folders.items()}


def textbook_cart_pole(mc, mp, l, g):
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
            [0, (mc + mp) * g / (mc * l), 0, 0],
        ]
    )
    B = np.array([[0], [0], [1 / mc], [-1 / (mc * l)]])
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
    l = pkg.PARAMS["l"]
    np.testing.assert_allclose(pkg.input_matrix_fun(x), [[l * np.cos(x[0])]])
    np.testing.assert_allclose(pkg.input_matrix_jac_fun(x), [[[-l * np.sin(x[0]), 0.0]]])


@pytest.mark.parametrize("name", ["pushed", "cart_pole", "acrobot", "two_link_arm"])
def test_tau_inverts_qddot(pkgs, name):
    """tau_fun = M q'' + C q' + phi + fric, so tau_fun(x, qddot_fun(x, u)) = B_u(x) u (friction included)."""
    pkg = pkgs[name]
    X = RNG.normal(size=(5, 2 * pkg.N_DOF))
    U = RNG.normal(size=(5, pkg.N_INPUTS))
    for x, u in zip(X, U):
        np.testing.assert_allclose(pkg.tau_fun(x, pkg.qddot_fun(x, u)), pkg.input_matrix_fun(x) @ u, rtol=1e-10, atol=1e-10)
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
        f'state = ["s", "th", "ds", "dth"]\nT = "{MODEL["T"]}"\nV = "{MODEL["V"]}"\nfric = "0"\ninputs = ["F"]\nforces = [{quoted}]\n'
    )
    with pytest.raises(ModelError, match=message):
        sls.load_toml(path)


@pytest.mark.parametrize("forces, message", BAD_FORCES)
def test_input_map_errors_flags(tmp_path, forces, message):
    args = ["generate", "--T", MODEL["T"], "--V", MODEL["V"], "--fric", "0", "--x", "s th ds dth", "--input", "F"]
    for force in forces:
        args += ["--force", force]
    result = CliRunner().invoke(main, args + ["--out", str(tmp_path / "out")])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert message in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("forces, message", BAD_FORCES)
def test_input_map_errors_api(tmp_path, forces, message):
    s, th, ds, dth, F, G, mc, mp, l, g = sympy.symbols("s th ds dth F G mc mp l g")
    T = (mc + mp) * ds**2 / 2 + mp * l**2 * dth**2 / 2
    V = mp * g * l * sympy.cos(th)
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
    with pytest.raises(ControlError, match=r"not an equilibrium: xdot = f\(x_eq, u_eq\) = \[0, 0, 2, -4\] \(residual 4.47\)"):
        control.lqr(pkgs["cart_pole"], np.zeros(4), [2.0], 1, 1)
    with pytest.raises(ControlError, match="x_eq must have zero velocities"):
        control.lqr(pkgs["cart_pole"], [0, 0, 1, 0], [0.0], 1, 1)
    with pytest.raises(ControlError, match="no input holds"):
        control.lqr(pkgs["acrobot"], [0.3, 0, 0, 0], None, 1, 1)


def test_lqr_not_stabilizable(pkgs):
    with pytest.raises(ControlError, match=r"not stabilizable: 1 unstable mode \(eigenvalue \[1\]\) cannot be reached by the inputs"):
        control.lqr(pkgs["twins"], np.zeros(4), None, 1, 1)
    # Hanging down, the uncontrolled twin oscillates forever (eigenvalues ±1j): not stabilizable either.
    with pytest.raises(ControlError, match=r"not stabilizable: 2 modes on or right of the imaginary axis \(eigenvalues \[0\+1j, 0-1j\]\)"):
        control.lqr(pkgs["twins"], [np.pi, np.pi, 0, 0], None, 1, 1)


@pytest.mark.parametrize(
    "Q, R, message",
    [
        ([1, 2, 3], 1, r"Q as a vector holds the diagonal and must have length 4, got length 3"),
        (np.eye(3), 1, r"Q must be a 4x4 matrix, got shape 3x3"),
        (np.ones((2, 2, 2)), 1, r"Q must be a scalar, a vector of 4 diagonal entries or a 4x4 matrix, got shape \(2, 2, 2\)"),
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
    with pytest.raises(ControlError, match=r"does not stabilize the loop \(closed-loop poles \[.*make Q positive definite"):
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


# --------------------------------------------------------------------------
# sls lqr, sls simulate


def run_cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_cli_lqr_prints_gain_and_poles(folders, tmp_path):
    result = run_cli("lqr", folders["cart_pole"], "--x-eq", "0 0 0 0", "--Q", "10 10 1 1", "--R", "1", "--save", tmp_path / "gain.json")
    assert result.exit_code == 0, result.output
    assert "-37.1142" in result.output and "-3.16228" in result.output
    assert "-1.25768 ± 1.08157j" in result.output and "u_eq = [F=0]" in result.output
    design = json.loads((tmp_path / "gain.json").read_text())
    assert design["state"] == ["s", "th", "ds", "dth"] and np.shape(design["K"]) == (1, 4)
    # Scalar and matrix weights, expressions in vectors, parameters.
    result = run_cli("lqr", folders["cart_pole"], "--x-eq", "0, 0, 0, 0", "--Q", "1", "--R", "2", "--param", "mp=0.5")
    expected = control.lqr(folders["cart_pole"], np.zeros(4), None, 1, 2, params={"mp": 0.5})
    assert f"{expected.K[0, 1]:12.6g}".strip() in result.output
    result = run_cli("lqr", folders["acrobot"], "--x-eq", "0 0 0 0", "--Q", "1 0 0 0; 0 1 0 0; 0 0 1 0; 0 0 0 1")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--x-eq", "0 0 0"], 2, "error: --x-eq '0 0 0': expected 4 numbers [s, th, ds, dth], got 3"),
        (["--x-eq", "0 0 0 0", "--Q", "1 2"], 2, "error: --Q '1 2': expected one number (times the identity), 4 diagonal entries"),
        (["--x-eq", "0 0 0 0", "--Q", "1 0; 0 1"], 2, "error: --Q: a matrix must have 4 rows of 4 entries"),
        (["--x-eq", "0 0 0 0", "--R", "0"], 1, "error: R must be positive definite"),
        (["--x-eq", "0 q 0 0"], 2, "error: --x-eq: entry 'q' is not a number or a constant expression like pi/18 (it uses q)"),
        (["--x-eq", "0 pi/4 0 0"], 1, "error: no input holds x = [0, 0.7854, 0, 0] at rest"),
        (["--x-eq", "0 0 0 0", "--u-eq", "1"], 1, "error: (x_eq, u_eq) is not an equilibrium"),
        (["--x-eq", "0 0 0 0", "--param", "M=1"], 1, "error: unknown parameter 'M'"),
    ],
)
def test_cli_lqr_errors(folders, args, code, message):
    result = run_cli("lqr", folders["cart_pole"], *args)
    assert result.exit_code == code
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1, result.stderr


def test_cli_lqr_not_a_package(tmp_path):
    result = run_cli("lqr", tmp_path, "--x-eq", "0")
    assert result.exit_code == 1 and "not a generated package" in result.stderr


def test_cli_simulate_closed_loop_with_plot(folders, tmp_path):
    pytest.importorskip("matplotlib")
    gain, png, csv = tmp_path / "gain.json", tmp_path / "run.png", tmp_path / "run.csv"
    assert run_cli("lqr", folders["cart_pole"], "--x-eq", "0 0 0 0", "--Q", "10 10 1 1", "--save", gain).exit_code == 0
    result = run_cli(
        "simulate", folders["cart_pole"], "--x0", "0 10*pi/180 0 0", "--t-end", "6", "--lqr-from", gain, "--plot", png, "--csv", csv, "--points", "121"
    )
    assert result.exit_code == 0, result.output + result.stderr
    assert png.read_bytes()[:8] == PNG_MAGIC
    table = np.loadtxt(csv, delimiter=",", skiprows=1)
    assert table.shape == (121, 1 + 4 + 1 + 3)
    assert np.abs(table[-1, 1:5]).max() < 1e-2
    assert "settling time" in result.output and "wrote the plot" in result.output


def test_cli_simulate_open_loop_and_errors(folders, tmp_path):
    result = run_cli("simulate", folders["acrobot"], "--x0", "1 0 0 0", "--t-end", "2", "--rtol", "1e-10", "--atol", "1e-12")
    assert result.exit_code == 0
    assert "energy T + V" in result.output and "largest change" in result.output
    result = run_cli("simulate", folders["acrobot"], "--x0", "0 0 0 0", "--t-end", "1", "--lqr-from", tmp_path / "none.json")
    assert result.exit_code == 2 and result.stderr.startswith("error: --lqr-from") and "no such file" in result.stderr
    gain = tmp_path / "gain.json"
    run_cli("lqr", folders["cart_pole"], "--x-eq", "0 0 0 0", "--save", gain)
    result = run_cli("simulate", folders["acrobot"], "--x0", "0 0 0 0", "--t-end", "1", "--lqr-from", gain)
    assert result.exit_code == 1 and "the design is for state [s, th, ds, dth]" in result.stderr
    result = run_cli("simulate", folders["acrobot"], "--x0", "0 0 0 0", "--t-end", "-1")
    assert result.exit_code == 2 and result.stderr.startswith("error: --t-end")


def test_plot_without_matplotlib(folders, tmp_path):
    """With matplotlib missing, --plot fails at once with one line naming the extra; nothing is simulated."""
    code = "import sys; sys.modules['matplotlib'] = None; from sls.cli import main; sys.argv[0] = 'sls'; main()"
    png = tmp_path / "run.png"
    proc = subprocess.run(
        [sys.executable, "-c", code, "simulate", str(folders["cart_pole"]), "--x0", "0 0.1 0 0", "--t-end", "1", "--plot", str(png)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert proc.stderr == 'error: writing a plot needs matplotlib, which is not installed; install it with: pip install "sls[plot]"\n'
    assert not png.exists()
    # The API raises the same error, an SlsError.
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; sys.modules['matplotlib'] = None\nfrom sls.plot import require_matplotlib\n"
         "try:\n    require_matplotlib()\nexcept Exception as e:\n    print(type(e).__name__)"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.strip() == MissingDependencyError.__name__
