"""Constrained and loaded systems: holonomic and rolling constraints, point loads, affine forces, contact terms.

References never go through sls: the polar pendulum is derived by hand, the
rolling disc and the Linearizer cross-check come from sympy.physics.mechanics,
tip-force Jacobians are written out by hand.
"""

from __future__ import annotations

import importlib.resources

import numpy as np
import pytest
import sympy as sp
from conftest import METHODS, build, run
from scipy.integrate import solve_ivp
from scipy.optimize import fsolve

import sls
import sls.control as control

CARTESIAN_PENDULUM = """\
# Pendulum in Cartesian coordinates: one holonomic constraint keeps the bob on the circle
state = ["px", "py", "dpx", "dpy"]
T = "1/2*m*(dpx^2 + dpy^2)"
V = "m*g*py"
fric = "0"
inputs = ["F"]
forces = ["F", "0"]
constraints = ["px^2 + py^2 - L^2"]
[params]
m = 1.3
g = 9.81
L = 0.8
"""
M_, G_, L_ = 1.3, 9.81, 0.8


def polar_reference(th: float, w: float, F: float) -> tuple[np.ndarray, float]:
    """The pendulum by hand in its angle th (from the downward vertical): (Cartesian qddot, rod tension)."""
    # m L^2 thdd = -m g L sin th + F L cos th (the horizontal force F at the bob)
    thdd = -G_ / L_ * np.sin(th) + F * np.cos(th) / (M_ * L_)
    pxdd = L_ * np.cos(th) * thdd - L_ * np.sin(th) * w**2
    pydd = L_ * np.sin(th) * thdd + L_ * np.cos(th) * w**2
    # radial balance: tension - m g cos th - F sin th = m L w^2
    tension = M_ * L_ * w**2 + M_ * G_ * np.cos(th) + F * np.sin(th)
    return np.array([pxdd, pydd]), tension


def on_circle(th: float, w: float) -> np.ndarray:
    return np.array([L_ * np.sin(th), -L_ * np.cos(th), L_ * np.cos(th) * w, L_ * np.sin(th) * w])


def pendulum_api() -> sls.Model:
    px, py, dpx, dpy, m, g, L, F = sp.symbols("px py dpx dpy m g L F")
    return sls.model_from_sympy(
        m * (dpx**2 + dpy**2) / 2,
        m * g * py,
        0,
        [px, py, dpx, dpy],
        params={m: M_, g: G_, L: L_},
        inputs=[F],
        forces=[F, 0],
        constraints=[px**2 + py**2 - L**2],
    )


@pytest.fixture(scope="module")
def pendulums(tmp_path_factory):
    """The Cartesian pendulum through the three inputs and both derivation routes."""
    folder = tmp_path_factory.mktemp("pendulums")
    (folder / "cart.toml").write_text(CARTESIAN_PENDULUM)
    run(
        "generate",
        "--T",
        "1/2*m*(dpx^2 + dpy^2)",
        "--V",
        "m*g*py",
        "--fric",
        "0",
        "--state",
        "px py dpx dpy",
        "--input",
        "F",
        "--force",
        "F",
        "--force",
        "0",
        "--constraint",
        "px^2 + py^2 - L^2",
        "--param",
        f"m={M_}",
        "--param",
        f"g={G_}",
        "--param",
        f"L={L_}",
        "--out",
        "flags",
        "-q",
        cwd=folder,
    )
    from conftest import import_package

    packages = {"flags": import_package(folder / "flags")}
    for method in METHODS:
        packages[f"toml-{method}"] = build(sls.load_toml(folder / "cart.toml"), folder / f"toml-{method}", method)
        packages[f"api-{method}"] = build(pendulum_api(), folder / f"api-{method}", method)
    return packages


def test_cartesian_pendulum_against_polar(pendulums):
    rng = np.random.default_rng(1)
    for label, pkg in pendulums.items():
        assert pkg.N_CONSTRAINTS == 1 and pkg.N_HOLONOMIC == 1
        states, inputs = [], []
        for _ in range(6):
            th, w, F = rng.uniform(-3, 3), rng.uniform(-3, 3), rng.uniform(-2, 2)
            qddot, tension = polar_reference(th, w, F)
            x = on_circle(th, w)
            np.testing.assert_allclose(pkg.qddot_fun(x, [F]), qddot, rtol=1e-10, atol=1e-10, err_msg=label)
            # A' lam is the rod force; A = [2 px, 2 py] points outwards, the tension inwards: lam = -tension / (2 L).
            np.testing.assert_allclose(pkg.multipliers_fun(x, [F]), [-tension / (2 * L_)], rtol=1e-10, err_msg=label)
            np.testing.assert_allclose(pkg.constraint_fun(x), [0.0], atol=1e-12)
            states.append(x)
            inputs.append([F])
        # the batch path gives the same rows
        batch = pkg.qddot_fun(np.array(states), np.array(inputs))
        np.testing.assert_allclose(batch, [pkg.qddot_fun(x, u) for x, u in zip(states, inputs)], rtol=1e-12)


def test_constrained_linearization_is_the_jacobian_of_xdot(pendulums):
    rng = np.random.default_rng(2)
    for label, pkg in pendulums.items():
        x, u = rng.uniform(-1, 1, 4), rng.uniform(-1, 1, 1)  # off the circle too: A is the Jacobian of f everywhere
        A, B = pkg.linearized_model(x, u)
        eps = 1e-6
        A_fd = np.array(
            [(pkg.xdot_fun(x + eps * e, u) - pkg.xdot_fun(x - eps * e, u)) / (2 * eps) for e in np.eye(4)]
        ).T
        B_fd = np.array(
            [(pkg.xdot_fun(x, u + eps * e) - pkg.xdot_fun(x, u - eps * e)) / (2 * eps) for e in np.eye(1)]
        ).T
        np.testing.assert_allclose(A, A_fd, atol=1e-6, err_msg=label)
        np.testing.assert_allclose(B, B_fd, atol=1e-6, err_msg=label)
        A_batch, _ = pkg.linearized_model(np.array([x, x]), u)
        np.testing.assert_allclose(A_batch[1], A, rtol=1e-12)


def test_lqr_on_reduced_coordinates_matches_sympy_linearizer(pendulums):
    """sympy's Linearizer with q_ind = [x], q_dep = [y] against sls's reduced linearization (hanging)."""
    from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols

    x, y = dynamicsymbols("x y")
    F = dynamicsymbols("F")
    t = dynamicsymbols._t
    xd, yd = x.diff(t), y.diff(t)
    frame = sp.physics.mechanics.ReferenceFrame("N")
    bob = sp.physics.mechanics.Point("P")
    bob.set_vel(frame, xd * frame.x + yd * frame.y)
    lagrangian = sp.Rational(1, 2) * M_ * (xd**2 + yd**2) - M_ * G_ * y
    method = LagrangesMethod(
        lagrangian, [x, y], hol_coneqs=[x**2 + y**2 - L_**2], forcelist=[(bob, F * frame.x)], frame=frame
    )
    method.form_lagranges_equations()
    linearizer = method.to_linearizer(q_ind=[x], qd_ind=[xd], q_dep=[y], qd_dep=[yd])
    point = {x: 0.0, y: -L_, xd: 0.0, yd: 0.0, F: 0.0}
    lam = method.solve_multipliers(op_point=point)
    A_ref, B_ref = linearizer.linearize(op_point=[point, lam], A_and_B=True)
    A_ref, B_ref = np.array(A_ref, dtype=float), np.array(B_ref, dtype=float)

    pkg = pendulums["toml-expanded"]
    x_eq = np.array([0.0, -L_, 0.0, 0.0])
    basis = control.constraint_basis(pkg, x_eq)
    assert basis.shape == (4, 2)
    A, B = pkg.linearized_model(x_eq, [0.0])
    sign = np.sign(basis[0, 0])  # the null space of A = [0, -2L] is ±[1, 0]: z = ±[dx, dxd]
    np.testing.assert_allclose(basis.T @ A @ basis, A_ref, atol=1e-10)
    np.testing.assert_allclose(sign * (basis.T @ B), B_ref, atol=1e-10)

    # upright: LQR on the reduced coordinates stabilizes the nonlinear constrained model
    upright = np.array([0.0, L_, 0.0, 0.0])
    design = control.lqr(pkg, upright, Q=1.0, R=1.0)
    assert design.K.shape == (1, 4) and len(design.poles) == 2 and np.all(design.poles.real < 0)
    start = on_circle(np.pi - 0.3, 0.0)
    run_ = solve_ivp(lambda t, s: pkg.xdot_fun(s, design(t, s)), (0, 10), start, rtol=1e-9, atol=1e-9)
    assert np.abs(run_.y[:, -1] - upright).max() < 1e-4
    assert np.abs(pkg.constraint_fun(run_.y.T)).max() < 1e-6


def test_lqr_refuses_a_state_off_the_constraints(pendulums):
    with pytest.raises(control.ControlError, match="violates the constraints"):
        control.lqr(pendulums["toml-expanded"], [0.0, 2 * L_, 0.0, 0.0], u_eq=[0.0])


# --------------------------------------------------------------------------
# four-bar linkage: energy and constraint drift over seconds


def four_bar_start(pkg, th1: float = 0.5, rate: float = 2.0) -> np.ndarray:
    th23 = fsolve(lambda v: pkg.constraint_fun([th1, v[0], v[1], 0, 0, 0]), [0.5, 1.5], xtol=1e-14)
    A = pkg.constraint_jac_fun(np.r_[th1, th23, 0, 0, 0])
    rates = np.linalg.solve(A[:, 1:], -A[:, 0] * rate)
    return np.r_[th1, th23, rate, rates]


@pytest.mark.parametrize("method", METHODS)
def test_four_bar_conserves_energy(tmp_path, method):
    pkg = build(sls.load_example("four_bar"), tmp_path / "pkg", method)
    x0 = four_bar_start(pkg)
    assert np.abs(pkg.constraint_fun(x0)).max() < 1e-12
    sol = solve_ivp(lambda t, x: pkg.xdot_fun(x, [0.0]), (0, 5), x0, rtol=1e-10, atol=1e-10)
    X = sol.y.T
    energy = pkg.T_fun(X) + pkg.V_fun(X)
    drift = np.abs(energy - energy[0]).max()
    constraint_drift = np.abs(pkg.constraint_fun(X)).max()
    print(f"four-bar ({method}): energy drift {drift:.2e}, constraint drift {constraint_drift:.2e} over 5 s")
    assert np.abs(np.diff(X[:, 0])).max() > 1e-3  # it moves
    assert drift < 1e-6 * max(1.0, abs(energy[0]))
    assert constraint_drift < 1e-6
    # the torque's power goes into the energy: dE/dt = tau * dth1
    x, tau = X[len(X) // 2], 0.7
    eps = 1e-6
    xdot = pkg.xdot_fun(x, [tau])
    dE = (
        pkg.T_fun(x + eps * xdot) + pkg.V_fun(x + eps * xdot) - pkg.T_fun(x - eps * xdot) - pkg.V_fun(x - eps * xdot)
    ) / (2 * eps)
    assert abs(dE - tau * x[3]) < 1e-5 * max(1.0, abs(dE))


def test_baumgarte_stabilization_reduces_drift(tmp_path):
    text = importlib.resources.files("sls").joinpath("examples/four_bar.toml").read_text()
    stabilized = sls.load_toml(
        "four_bar_b.toml", text=text.replace("[params]", "constraint_stabilization = 10.0\n\n[params]")
    )
    assert stabilized.stabilization == 10.0
    drifts = {}
    for label, model in (("off", sls.load_example("four_bar")), ("on", stabilized)):
        pkg = build(model, tmp_path / label)
        sol = solve_ivp(lambda t, x, pkg=pkg: pkg.xdot_fun(x, [0.0]), (0, 5), four_bar_start(pkg), rtol=1e-6, atol=1e-6)
        drifts[label] = np.abs(pkg.constraint_fun(sol.y.T)).max()
    assert drifts["on"] < drifts["off"] / 10, drifts


# --------------------------------------------------------------------------
# rolling disc against sympy's LagrangesMethod with nonhol_coneqs


def test_rolling_disc_against_lagranges_method(tmp_path):
    from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols

    values = {"m": 2.0, "R": 0.3, "Iz": 0.05, "Is": 0.09}
    x, y, th, ph = dynamicsymbols("x y th ph")
    t = dynamicsymbols._t
    xd, yd, thd, phd = (s.diff(t) for s in (x, y, th, ph))
    m, R, Iz, Is = sp.symbols("m R Iz Is")
    lagrangian = m * (xd**2 + yd**2) / 2 + Iz * thd**2 / 2 + Is * phd**2 / 2
    frame = sp.physics.mechanics.ReferenceFrame("N")
    method = LagrangesMethod(
        lagrangian, [x, y, th, ph], nonhol_coneqs=[xd - R * sp.cos(th) * phd, yd - R * sp.sin(th) * phd], frame=frame
    )
    method.form_lagranges_equations()
    rhs = sp.lambdify([[x, y, th, ph, xd, yd, thd, phd], list(values)], method.rhs(), modules="numpy")

    text = """\
# Disc rolling upright without slipping: heading th, spin ph
state = ["x", "y", "th", "ph", "dx", "dy", "dth", "dph"]
T = "1/2*m*(dx^2 + dy^2) + 1/2*Iz*dth^2 + 1/2*Is*dph^2"
V = "0"
fric = "0"
velocity_constraints = ["dx - R*cos(th)*dph", "dy - R*sin(th)*dph"]
[params]
m = 2.0
R = 0.3
Iz = 0.05
Is = 0.09
"""
    rng = np.random.default_rng(3)
    for method_name in METHODS:
        pkg = build(sls.load_toml("disc.toml", text=text), tmp_path / method_name, method_name)
        assert pkg.N_CONSTRAINTS == 2 and pkg.N_HOLONOMIC == 0
        for _ in range(5):
            q = rng.uniform(-2, 2, 4)
            dth, dph = rng.uniform(-3, 3, 2)
            state = np.r_[q, values["R"] * np.cos(q[2]) * dph, values["R"] * np.sin(q[2]) * dph, dth, dph]
            reference = np.asarray(rhs(state, list(values.values())), dtype=float).ravel()
            # method.rhs() is [qdot; qddot; lam], and sympy's lam has the sign of sls's (M qddot = ... + A' lam)
            np.testing.assert_allclose(pkg.qddot_fun(state, np.zeros(4)), reference[4:8], rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(pkg.multipliers_fun(state, np.zeros(4)), reference[8:10], rtol=1e-9, atol=1e-12)
            np.testing.assert_allclose(pkg.constraint_fun(state), [0.0, 0.0], atol=1e-12)


# --------------------------------------------------------------------------
# loads and affine forces

TWO_LINK_TIP = """\
# Two-link arm (point masses at the link ends) pushed at its tip by (Fx, Fy) plus a constant load (0, -W)
state = ["q1", "q2", "dq1", "dq2"]
T = "1/2*m1*l1^2*dq1^2 + 1/2*m2*(l1^2*dq1^2 + l2^2*(dq1 + dq2)^2 + 2*l1*l2*cos(q2)*dq1*(dq1 + dq2))"
V = "0"
fric = ["b*dq1", "b*dq2"]
inputs = ["Fx", "Fy"]
forces = ["0", "0"]
[params]
m1 = 1.0
m2 = 0.7
l1 = 1.1
l2 = 0.9
b = 0.2
W = 3.0

[[loads]]
point = ["l1*cos(q1) + l2*cos(q1 + q2)", "l1*sin(q1) + l2*sin(q1 + q2)"]
force = ["Fx", "Fy - W"]
"""


def tip_jacobian(q1: float, q2: float) -> np.ndarray:
    l1, l2 = 1.1, 0.9
    return np.array(
        [
            [-l1 * np.sin(q1) - l2 * np.sin(q1 + q2), -l2 * np.sin(q1 + q2)],
            [l1 * np.cos(q1) + l2 * np.cos(q1 + q2), l2 * np.cos(q1 + q2)],
        ]
    )


@pytest.mark.parametrize("method", METHODS)
def test_tip_force_on_two_link_arm(tmp_path, method):
    pkg = build(sls.load_toml("tip.toml", text=TWO_LINK_TIP), tmp_path / "pkg", method)
    rng = np.random.default_rng(4)
    for _ in range(5):
        x = rng.uniform(-2, 2, 4)
        J = tip_jacobian(*x[:2])
        np.testing.assert_allclose(pkg.input_matrix_fun(x), J.T, rtol=1e-12, atol=1e-12)
        # the input-free part -W along y is a state-dependent generalized force, on the left in fric
        np.testing.assert_allclose(pkg.fric_fun(x), 0.2 * x[2:] - J.T @ [0.0, -3.0], rtol=1e-12, atol=1e-12)
        u = rng.uniform(-1, 1, 2)
        qddot = pkg.qddot_fun(x, u)
        np.testing.assert_allclose(
            pkg.M_fun(x) @ qddot + pkg.C_fun(x) @ x[2:] + 0.2 * x[2:], J.T @ (u + [0.0, -3.0]), atol=1e-10
        )
        np.testing.assert_allclose(pkg.tau_fun(x, qddot), J.T @ u, atol=1e-10)


def test_loads_through_the_python_api_and_torques():
    q, th, dq, dth, F, k = sp.symbols("q th dq dth F k")
    model = sls.model_from_sympy(
        (dq**2 + dth**2) / 2,
        0,
        0,
        [q, th, dq, dth],
        inputs=[F],
        forces=[0, 0],
        loads=[{"angle": q + th, "torque": F}, {"angular_velocity": [0, 0, dth], "torque": [0, 0, -k * th]}],
    )
    assert [str(f) for f in model.forces] == ["F", "F"]
    assert [str(f) for f in model.fric] == ["0", "k*th"]


BACK_EMF = """\
# Cart-pole driven by a DC motor voltage V through a pulley of radius r: F = km/(Rm*r)*(V - kb*ds/r)
state = ["s", "th", "ds", "dth"]
T = "1/2*(mc + mp)*ds^2 + mp*l*ds*dth*cos(th) + 1/2*mp*l^2*dth^2"
V = "mp*g*l*cos(th)"
fric = ["c*ds", "0"]
inputs = ["Vm"]
forces = ["km/(Rm*r)*(Vm - kb*ds/r)", "0"]
[params]
mc = 1.0
mp = 0.3
l = 0.6
g = 9.81
c = 0.1
km = 0.05
kb = 0.05
Rm = 2.0
r = 0.02
"""


@pytest.mark.parametrize("method", METHODS)
def test_back_emf_cart_pole(tmp_path, method):
    pkg = build(sls.load_toml("emf.toml", text=BACK_EMF), tmp_path / "pkg", method)
    km, kb, Rm, r, c = 0.05, 0.05, 2.0, 0.02, 0.1
    rng = np.random.default_rng(5)
    for _ in range(5):
        x, u = rng.uniform(-1, 1, 4), rng.uniform(-5, 5, 1)
        np.testing.assert_allclose(pkg.input_matrix_fun(x), [[km / (Rm * r)], [0.0]], rtol=1e-12)
        np.testing.assert_allclose(
            pkg.fric_fun(x), [c * x[2] + km * kb / (Rm * r**2) * x[2], 0.0], rtol=1e-12, atol=1e-14
        )
        # by hand: the 2x2 system of the cart-pole with the motor force
        s, th, ds, dth = x
        mc, mp, length, g = 1.0, 0.3, 0.6, 9.81
        force = km / (Rm * r) * (u[0] - kb * ds / r) - c * ds
        M = np.array([[mc + mp, mp * length * np.cos(th)], [mp * length * np.cos(th), mp * length**2]])
        rhs = np.array([force + mp * length * np.sin(th) * dth**2, mp * g * length * np.sin(th)])
        np.testing.assert_allclose(pkg.qddot_fun(x, u), np.linalg.solve(M, rhs), rtol=1e-10)
        A, B = pkg.linearized_model(x, u)
        assert A[2, 2] != 0  # the back-EMF damping reaches the linearization


# --------------------------------------------------------------------------
# contact-style terms and mechanics names

BALL = """\
# Ball on a penalty floor and wall
state = ["x", "y", "dx", "dy"]
T = "1/2*m*(dx^2 + dy^2)"
V = "m*g*y + k*Max(0, -y)^2 + k*Min(0, x)^2"
fric = ["c*Heaviside(-y)*dx", "c*Heaviside(-y)*dy"]
[params]
m = 1.0
g = 9.81
k = 1000.0
c = 5.0
"""


def test_contact_terms_on_both_routes(tmp_path):
    packages = [build(sls.load_toml("ball.toml", text=BALL), tmp_path / method, method) for method in METHODS]
    for x in ([0.1, -0.2, 0.3, -1.0], [-0.1, 0.5, 0.3, 1.0], [0.2, 0.3, 0.0, 0.0]):
        x = np.array(x)
        inside = x[1] < 0
        expected = np.array(
            [-2000.0 * min(0.0, x[0]) - 5.0 * inside * x[2], -9.81 + 2000.0 * max(0.0, -x[1]) - 5.0 * inside * x[3]]
        )
        for pkg in packages:
            np.testing.assert_allclose(pkg.qddot_fun(x, [0, 0]), expected, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(pkg.qddot_fun(np.array([x, x]), [0, 0])[1], expected, rtol=1e-12, atol=1e-12)
            A, _ = pkg.linearized_model(x, [0, 0])
            assert np.all(np.isfinite(A))
            assert A[3, 1] == (-2000.0 if inside else 0.0)  # the stiffness, piece by piece
            A_batch, _ = pkg.linearized_model(np.array([x, x]), [0, 0])
            np.testing.assert_allclose(A_batch[0], A)


def test_piecewise_through_the_api_takes_the_expanded_route(tmp_path):
    y, dy = sp.symbols("y dy")
    model = sls.model_from_sympy(dy**2 / 2, sp.Piecewise((y**2, y < 0), (0, True)), 0, [y, dy])
    pkg = build(model, tmp_path / "pkg")
    np.testing.assert_allclose(pkg.qddot_fun([-0.5, 0.0], [0.0]), [1.0])
    np.testing.assert_allclose(pkg.qddot_fun(np.array([[-0.5, 0.0], [0.5, 0.0]]), [0.0]), [[1.0], [0.0]])
    with pytest.raises(sls.ModelError, match="graph route cannot hold Piecewise"):
        sls.generate(model, tmp_path / "graph", method="graph")


def test_mechanics_names_become_identifiers(tmp_path):
    q, dq = sp.symbols("q dq")
    inertia, mass = sp.Symbol("I_{1zz}"), sp.Symbol("m_{1}")
    model = sls.model_from_sympy(
        (inertia + mass) * dq**2 / 2, mass * sp.cos(q), 0, [q, dq], params={inertia: 0.5, "m_{1}": 2.0}
    )
    assert model.params == {"I_1zz": 0.5, "m_1": 2.0}
    assert "symbol 'I_{1zz}' is named 'I_1zz' in the generated code" in model.warnings()
    pkg = build(model, tmp_path / "pkg")
    assert pkg.PARAMS == {"I_1zz": 0.5, "m_1": 2.0}
    np.testing.assert_allclose(pkg.qddot_fun([0.3, 0.0], [0.0]), [2.0 * np.sin(0.3) / 2.5])


# --------------------------------------------------------------------------
# model errors: one line each

STATE = ["x", "y", "z", "dx", "dy", "dz"]
BASE = dict(state=STATE, T="1/2*(dx^2 + dy^2 + dz^2)", V="y", fric="0")

MODEL_ERRORS = {
    "constraint on velocities": (
        {"constraints": ["x*dx"]},
        "constraints\\[0\\]: a holonomic constraint depends on the coordinates q only",
    ),
    "velocity constraint not linear": (
        {"velocity_constraints": ["dx - dy^2"]},
        "velocity_constraints\\[0\\]: must be linear in the velocities.*offending term: -dy\\*\\*2",
    ),
    "velocity constraint with a rest": ({"velocity_constraints": ["dx + y"]}, "offending term: y"),
    "redundant constraints": (
        {"constraints": ["x^2 + y^2 - 1", "2*x^2 + 2*y^2 - 2"]},
        "constraints\\[1\\] adds nothing to the rows before it",
    ),
    "dependent velocity constraint": (
        {"constraints": ["x - y"], "velocity_constraints": ["dx - dy"]},
        "velocity_constraints\\[0\\] adds nothing",
    ),
    "too many constraints": (
        {"constraints": ["x", "y", "z", "x + y"]},
        "4 constraints on 3 coordinates is more than there are coordinates",
    ),
    "no freedom left": ({"constraints": ["x", "y", "z"]}, "leave no degree of freedom"),
    "constraint on nothing": ({"constraints": ["L - 1"]}, "depends on no coordinate"),
    "load point with velocity": (
        {"loads": [{"point": ["x + dx", "y"], "force": ["1", "0"]}]},
        "loads\\[0\\].point\\[0\\]: a load point depends on the coordinates q only; it contains dx",
    ),
    "load dimensions": (
        {"loads": [{"point": ["x", "y", "z"], "force": ["1", "0"]}]},
        "loads\\[0\\]: point has 3 components but force has 2",
    ),
    "load keys": ({"loads": [{"point": ["x", "y"], "torque": "1"}]}, "loads\\[0\\]: expected the keys point and force"),
    "nonlinear input": ({"inputs": ["F"], "forces": ["F*sin(F)", "0", "0"]}, "must be linear in the inputs"),
}


def _checked(model: sls.Model) -> None:
    from sls import derive
    from sls.derive import validate

    validate.check_dynamics(derive.derive(model))


@pytest.mark.parametrize("label", MODEL_ERRORS)
def test_model_errors_strings(label):
    extra, message = MODEL_ERRORS[label]
    with pytest.raises(sls.SlsError, match=message) as info:
        _checked(sls.model_from_strings(**BASE, **extra))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "label",
    ["constraint on velocities", "velocity constraint not linear", "redundant constraints", "load point with velocity"],
)
def test_model_errors_api(label):
    extra, message = MODEL_ERRORS[label]
    names = {s: sp.Symbol(s) for s in STATE + ["F", "L"]}

    def parse(value):
        if isinstance(value, list):
            return [parse(v) for v in value]
        if isinstance(value, dict):
            return {key: parse(v) for key, v in value.items()}
        return sp.sympify(value.replace("^", "**"), locals=names)

    kwargs = {key: parse(value) for key, value in extra.items()}
    with pytest.raises(sls.SlsError, match=message):
        _checked(sls.model_from_sympy(parse(BASE["T"]), parse(BASE["V"]), 0, [names[s] for s in STATE], **kwargs))


def test_model_errors_toml_and_flags(tmp_path):
    (tmp_path / "bad.toml").write_text(
        'state = ["x", "y", "dx", "dy"]\nT = "1/2*(dx^2 + dy^2)"\nV = "0"\nfric = "0"\n'
        'velocity_constraints = ["dx*dy"]\n'
    )
    result = run("generate", "bad.toml", "--out", "out", cwd=tmp_path, check=False)
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert "bad.toml: velocity_constraints[0]: must be linear in the velocities" in result.stderr
    result = run(
        "generate",
        "--T",
        "1/2*(dx^2 + dy^2)",
        "--V",
        "0",
        "--fric",
        "0",
        "--state",
        "x y dx dy",
        "--constraint",
        "x*dx",
        "--out",
        "out",
        cwd=tmp_path,
        check=False,
    )
    assert result.returncode == 1 and result.stderr.count("\n") == 1
    assert "constraints[0]: a holonomic constraint depends on the coordinates q only" in result.stderr
    result = run(
        "generate",
        "--T",
        "1/2*(dx^2 + dy^2)",
        "--V",
        "0",
        "--fric",
        "0",
        "--state",
        "x y dx dy",
        "--velocity-constraint",
        "dx - y*dy",
        "--out",
        "ok",
        "-q",
        cwd=tmp_path,
    )
    assert (tmp_path / "ok" / "multipliers_fun.py").is_file()


def test_sign_friction_is_still_refused():
    with pytest.raises(sls.ModelError, match="fric_jac.*DiracDelta"):
        _checked(sls.model_from_strings(state=["q", "dq"], T="1/2*dq^2", V="0", fric=["sign(dq)"]))


# --------------------------------------------------------------------------
# constrained models whose M is only positive semi-definite (M + A'A definite)


def _quaternion_rates(q) -> sp.Matrix:
    """E(q) (3 x 4): body angular velocity w = 2 E(q) qdot of the unit quaternion q = (q0, q1, q2, q3)."""
    q0, q1, q2, q3 = q
    return sp.Matrix([[-q1, q0, q3, -q2], [-q2, -q3, q0, q1], [-q3, q2, -q1, q0]])


INERTIA = {"I1": 0.3, "I2": 0.5, "I3": 0.7}


def quaternion_body() -> sls.Model:
    """A free rigid body's attitude as a unit quaternion (M = 4 E'IE is singular along q), driven by body torques.

    The torques enter through an angular_velocity load only: inputs without forces.
    """
    q, dq, tau = sp.symbols("q0:4"), sp.symbols("dq0:4"), sp.symbols("tau1:4")
    I1, I2, I3 = sp.symbols("I1 I2 I3")
    w = 2 * _quaternion_rates(q) * sp.Matrix(dq)
    return sls.model_from_sympy(
        (I1 * w[0] ** 2 + I2 * w[1] ** 2 + I3 * w[2] ** 2) / 2,
        0,
        0,
        [*q, *dq],
        params=INERTIA,
        inputs=list(tau),
        loads=[{"angular_velocity": list(w), "torque": list(tau)}],
        constraints=[sum(s**2 for s in q) - 1],
    )


def _lagranges_reference(method, coordinates, rates, inputs=()):
    """(x, u) -> [qddot; lam] from LagrangesMethod's mass_matrix_full and forcing_full, solved numerically."""
    mass = sp.lambdify([[*coordinates, *rates], list(inputs)], method.mass_matrix_full, modules="numpy")
    forcing = sp.lambdify([[*coordinates, *rates], list(inputs)], method.forcing_full, modules="numpy")
    n = len(coordinates)

    def reference(x, u=()):
        full = np.linalg.solve(
            np.asarray(mass(list(x), list(u)), dtype=float), np.asarray(forcing(list(x), list(u)), dtype=float).ravel()
        )
        return full[n : 2 * n], full[2 * n :]

    return reference


def _finite_difference_jacobian(pkg, x, u, eps=1e-6):
    x, u = np.asarray(x, dtype=float), np.asarray(u, dtype=float)
    columns = [(pkg.xdot_fun(x + eps * e, u) - pkg.xdot_fun(x - eps * e, u)) / (2 * eps) for e in np.eye(len(x))]
    columns += [(pkg.xdot_fun(x, u + eps * e) - pkg.xdot_fun(x, u - eps * e)) / (2 * eps) for e in np.eye(len(u))]
    return np.column_stack(columns[: len(x)]), np.column_stack(columns[len(x) :])


@pytest.fixture(scope="module")
def quaternion_reference():
    from sympy.physics.mechanics import LagrangesMethod, ReferenceFrame, dynamicsymbols

    q = dynamicsymbols("q0:4")
    t = dynamicsymbols._t
    dq = [s.diff(t) for s in q]
    tau = dynamicsymbols("tau1:4")
    I1, I2, I3 = (INERTIA[k] for k in ("I1", "I2", "I3"))
    w = 2 * _quaternion_rates(q) * sp.Matrix(dq)
    world, body = ReferenceFrame("N"), ReferenceFrame("B")
    body.orient_quaternion(world, q)
    body.set_ang_vel(world, w[0] * body.x + w[1] * body.y + w[2] * body.z)
    method = LagrangesMethod(
        (I1 * w[0] ** 2 + I2 * w[1] ** 2 + I3 * w[2] ** 2) / 2,
        q,
        hol_coneqs=[sum(s**2 for s in q) - 1],
        forcelist=[(body, tau[0] * body.x + tau[1] * body.y + tau[2] * body.z)],
        frame=world,
    )
    method.form_lagranges_equations()
    return method, _lagranges_reference(method, q, dq, tau)


def _on_sphere(rng):
    """A unit quaternion, a body angular velocity and the state x = [q; qdot = 1/2 E(q)' w]."""
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    w = rng.normal(size=3)
    dq = 0.5 * np.array(_quaternion_rates(q).T, dtype=float) @ w
    return q, w, np.r_[q, dq]


@pytest.mark.parametrize("method", METHODS)
def test_quaternion_body_with_singular_mass_matrix_against_lagranges_method(tmp_path, method, quaternion_reference):
    lm, reference = quaternion_reference
    pkg = build(quaternion_body(), tmp_path / method, method)
    inertia = np.array(list(INERTIA.values()))
    rng = np.random.default_rng(7)
    for _ in range(4):
        q, w, x = _on_sphere(rng)
        assert np.linalg.eigvalsh(pkg.M_fun(x))[0] < 1e-12  # M alone is singular (along q)
        u = rng.normal(size=3)
        qddot_ref, lam_ref = reference(x, u)
        np.testing.assert_allclose(pkg.qddot_fun(x, u), qddot_ref, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(pkg.multipliers_fun(x, u), lam_ref, rtol=1e-10, atol=1e-12)
        # Newton-Euler: I wdot + w x I w = tau, qddot = 1/2 (E(qdot)' w + E(q)' wdot)
        wdot = (u - np.cross(w, inertia * w)) / inertia
        E = lambda v: np.array(_quaternion_rates(v), dtype=float)  # noqa: E731
        np.testing.assert_allclose(pkg.qddot_fun(x, u), 0.5 * (E(x[4:]).T @ w + E(q).T @ wdot), rtol=1e-10, atol=1e-12)
        A, B = pkg.linearized_model(x, u)
        A_fd, B_fd = _finite_difference_jacobian(pkg, x, u)
        np.testing.assert_allclose(A, A_fd, atol=1e-7)
        np.testing.assert_allclose(B, B_fd, atol=1e-7)
    batch = np.array([_on_sphere(rng)[2] for _ in range(3)])
    np.testing.assert_allclose(
        pkg.qddot_fun(batch, np.zeros(3)), [pkg.qddot_fun(x, np.zeros(3)) for x in batch], rtol=1e-13, atol=1e-14
    )


def test_multiplier_sign_is_that_of_lagranges_method_rhs(tmp_path, quaternion_reference):
    """sls's lam is the lam at the end of LagrangesMethod.rhs() (and of mass_matrix_full \\ forcing_full):
    the opposite of solve_multipliers() and of lm.eom, which reads M qddot - f - A' lam_sls = 0 as
    M qddot - f + A' lam = 0."""
    from sympy.physics.mechanics import dynamicsymbols

    lm, reference = quaternion_reference
    pkg = build(quaternion_body(), tmp_path / "sign")
    q, _, x = _on_sphere(np.random.default_rng(11))
    lam = pkg.multipliers_fun(x, np.zeros(3))
    assert abs(lam[0]) > 1e-3
    np.testing.assert_allclose(lam, reference(x, np.zeros(3))[1], rtol=1e-10)
    coordinates = dynamicsymbols("q0:4")
    t = dynamicsymbols._t
    point = dict(zip(coordinates + [s.diff(t) for s in coordinates], x))
    point.update(dict.fromkeys(dynamicsymbols("tau1:4"), 0.0))
    solved = lm.solve_multipliers(op_point=point)
    assert float(next(iter(solved.values())).subs(point)) == pytest.approx(-lam[0], rel=1e-10)


@pytest.mark.parametrize("massless", [("mb",), ("ma", "mb")])
def test_four_bar_with_massless_links_against_lagranges_method(tmp_path, massless):
    from dataclasses import replace

    from sympy.physics.mechanics import LagrangesMethod, dynamicsymbols

    model = sls.load_example("four_bar")
    model = replace(model, params={**model.params, **dict.fromkeys(massless, 0.0)})
    pkg = build(model, tmp_path / "pkg")
    values = {k: v for k, v in model.params.items()}
    th = dynamicsymbols("th1:4")
    t = dynamicsymbols._t
    dth = [s.diff(t) for s in th]
    a, b, c, d, ma, mb, mc, g = (values[k] for k in ("a", "b", "c", "d", "ma", "mb", "mc", "g"))
    T = (
        (ma * a**2 / 3 * dth[0] ** 2 + mc * c**2 / 3 * dth[2] ** 2) / 2
        + mb
        / 2
        * (
            (a * sp.sin(th[0]) * dth[0] + b / 2 * sp.sin(th[1]) * dth[1]) ** 2
            + (a * sp.cos(th[0]) * dth[0] + b / 2 * sp.cos(th[1]) * dth[1]) ** 2
        )
        + mb * b**2 / 24 * dth[1] ** 2
    )
    V = g * (ma * a / 2 * sp.sin(th[0]) + mb * (a * sp.sin(th[0]) + b / 2 * sp.sin(th[1])) + mc * c / 2 * sp.sin(th[2]))
    loop = [
        a * sp.cos(th[0]) + b * sp.cos(th[1]) - c * sp.cos(th[2]) - d,
        a * sp.sin(th[0]) + b * sp.sin(th[1]) - c * sp.sin(th[2]),
    ]
    lm = LagrangesMethod(T - V, th, hol_coneqs=loop)
    lm.form_lagranges_equations()
    reference = _lagranges_reference(lm, th, dth)
    rng = np.random.default_rng(5)
    closed = 0
    for _ in range(20):
        th1 = rng.uniform(-np.pi, np.pi)
        guess = [th1, rng.uniform(-1, 1), rng.uniform(0.5, 2.5)]
        angles, info, ok, _ = fsolve(
            lambda z, th1=th1: [float(e.subs(dict(zip(th, [th1, *z])))) for e in loop], guess[1:], full_output=True
        )
        if ok != 1:
            continue
        q = np.r_[th1, angles]
        A = np.asarray(pkg.constraint_jac_fun(np.r_[q, 0, 0, 0]))
        rate = np.linalg.svd(A)[2][-1] * rng.uniform(-2, 2)  # a velocity the loop allows
        x = np.r_[q, rate]
        assert np.linalg.eigvalsh(pkg.M_fun(x))[0] < 1e-12  # M alone is singular
        qddot_ref, lam_ref = reference(x)
        np.testing.assert_allclose(pkg.qddot_fun(x, [0.0]), qddot_ref, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(pkg.multipliers_fun(x, [0.0]), lam_ref, rtol=1e-9, atol=1e-10)
        A_lin, B_lin = pkg.linearized_model(x, [0.3])
        A_fd, B_fd = _finite_difference_jacobian(pkg, x, [0.3])
        np.testing.assert_allclose(A_lin, A_fd, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(B_lin, B_fd, rtol=1e-5, atol=1e-6)
        closed += 1
    assert closed >= 5


def test_positive_definite_models_keep_the_cholesky_schur_results(tmp_path):
    """For M positive definite the augmented solve equals the textbook Schur complement on M to ~1e-12."""
    pkg = build(sls.load_example("four_bar"), tmp_path / "pkg")
    rng = np.random.default_rng(2)
    for _ in range(5):
        x, u = rng.uniform(-2, 2, 6), rng.uniform(-1, 1, 1)
        M, A, g, B = pkg.M_fun(x), pkg.constraint_jac_fun(x), pkg.constraint_bias_fun(x), pkg.input_matrix_fun(x)
        f = B @ u - pkg.tau_fun(x, np.zeros(3))
        Minv_f, Minv_At = np.linalg.solve(M, f), np.linalg.solve(M, A.T)
        lam = np.linalg.solve(A @ Minv_At, g - A @ Minv_f)
        qddot = Minv_f + Minv_At @ lam
        scale = np.abs(qddot).max() + np.abs(lam).max()
        assert np.abs(pkg.qddot_fun(x, u) - qddot).max() <= 1e-12 * scale
        assert np.abs(pkg.multipliers_fun(x, u) - lam).max() <= 1e-12 * scale


def test_constraints_that_leave_a_massless_motion_are_refused(tmp_path):
    text = """\
state = ["x", "y", "z", "dx", "dy", "dz"]
T = "1/2*dx^2 + 1/2*dy^2"
V = "0"
fric = 0
constraints = ["x + y - 1"]
"""
    with pytest.raises(
        sls.ModelError, match=r"singular, not positive definite, at x=.*the constraints do not make up for it"
    ):
        sls.generate(sls.load_toml("free_z.toml", text=text), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_runtime_names_a_state_where_the_constrained_dynamics_are_singular(tmp_path):
    pkg = build(quaternion_body(), tmp_path / "pkg")
    with pytest.raises(
        np.linalg.LinAlgError,
        match=r"not positive definite on the velocities the constraints allow .* at x = \[q0=0, q1=0",
    ):
        pkg.qddot_fun(np.zeros(8), np.zeros(3))  # q = 0: A = 2q' vanishes and M = 0


def test_the_c_target_solves_singular_mass_constrained_models_as_the_python_target(tmp_path):
    """The four-bar with a massless link (M only semi-definite): the C target's augmented solve."""
    from click.testing import CliRunner
    from conftest import import_package

    from sls.cli.app import main

    for target in ("python", "c"):
        out = str(tmp_path / target)
        result = CliRunner().invoke(main, ["generate", "four_bar", "--param", "mb=0", "--target", target, "--out", out])
        assert result.exit_code == 0, result.output
    py, c = import_package(tmp_path / "python"), import_package(tmp_path / "c")
    rng = np.random.default_rng(4)
    for _ in range(5):
        x, u = rng.uniform(-2, 2, 6), rng.uniform(-1, 1, 1)
        np.testing.assert_allclose(c.qddot_fun(x, u), py.qddot_fun(x, u), rtol=1e-10, atol=1e-10)


def test_the_matlab_target_generates_singular_mass_constrained_models(tmp_path):
    """MATLAB solves them as the Python package does (M + A'WA, definite on the allowed velocities)."""
    from click.testing import CliRunner

    from sls.cli.app import main

    result = CliRunner().invoke(
        main, ["generate", "four_bar", "--param", "mb=0", "--target", "matlab", "--out", str(tmp_path / "out"), "-q"]
    )
    assert result.exit_code == 0, result.output
    assert "solve_constrained" in (tmp_path / "out" / "qddot_fun.m").read_text()


def test_inputs_may_act_through_loads_alone(tmp_path):
    without_forces = TWO_LINK_TIP.replace('forces = ["0", "0"]\n', "")
    assert "forces" not in without_forces
    with_forces = build(sls.load_toml("tip.toml", text=TWO_LINK_TIP), tmp_path / "with")
    loads_only = build(sls.load_toml("tip.toml", text=without_forces), tmp_path / "without")
    x, u = [0.3, -0.7, 0.2, 0.1], [1.5, -0.4]
    np.testing.assert_array_equal(loads_only.input_matrix_fun(x), with_forces.input_matrix_fun(x))
    np.testing.assert_array_equal(loads_only.qddot_fun(x, u), with_forces.qddot_fun(x, u))
    no_loads = without_forces.split("[[loads]]")[0]
    with pytest.raises(sls.ModelError, match="inputs need forces or loads to act through"):
        sls.load_toml("tip.toml", text=no_loads)


def test_lqr_on_the_quaternion_body_with_singular_mass_matrix(tmp_path):
    """The attitude at rest: 8 states, 1 holonomic + its velocity row leave 6 reduced states, all stabilized."""
    pkg = build(quaternion_body(), tmp_path / "pkg")
    x_eq = [1.0, 0, 0, 0, 0, 0, 0, 0]
    u_eq, residual = control.equilibrium_input(pkg, x_eq)
    np.testing.assert_allclose(u_eq, 0.0, atol=1e-12)
    design = control.lqr(pkg, x_eq, u_eq, Q=1, R=1)
    assert design.K.shape == (3, 8) and len(design.poles) == 6
    assert np.all(design.poles.real < 0)
