"""Generalized speeds (sls/derive/kinematics.py, sls/derive/speeds.py) against references that share no code with them.

* a rigid body with ZYX Euler angles and body rates: Euler's equations ``I ω̇ + ω × Iω = 0`` (numpy cross products);
* ``S = I``: the classic derivation of :func:`sls.derive.derive`, expression for expression;
* a heavy top by ``sympy.physics.mechanics.KanesMethod`` with body-fixed speeds;
* a unit quaternion (n_q = 4 > n_v = 3), alone and with a body-frame translation (n_q = 7, n_v = 6):
  Euler's and Newton's equations in the body frame, and a 10 s tumble through pitch ±90° conserving energy and world
  angular momentum;
* a 3-coordinate system with a q-dependent, non-group ``S``: Lagrange's equations of ``L*(q, q̇) = T(q, W q̇) − V``
  in the coordinates, mapped to ``v̇ = W q̈ + Ẇ q̇`` (fixes the sign of the bracket terms for any ``S``);
* ``Ṁ − 2C`` skew-symmetric and ``C v = h`` (the momentum route) in all of them; bad kinematics refused in one line.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from scipy.integrate import solve_ivp
from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dot, dynamicsymbols, inertia

import sls
from sls.derive import derive
from sls.derive.speeds import mass_matrix_rate, speed_components, speed_dynamics, velocity_forces
from sls.errors import ModelError
from sls.model.kinematics import blocks, identity_kinematics, kinematics

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

EXAMPLES = Path(sls.__file__).parent / "examples"


def real(names: str) -> tuple:
    return sp.symbols(names, real=True)


def numeric(exprs, *groups):
    """``exprs`` (a nested tuple or sympy matrix) as a numpy function of the symbol ``groups``."""
    f = sp.lambdify(groups, sp.Matrix(exprs), "numpy")
    return lambda *values: np.asarray(f(*values), dtype=float)


def speed_rates(d, params=(), forces=None):
    """``v̇(q, v, params)`` of ``M v̇ + C v + φ = forces`` from the derived terms (``forces`` in speed space)."""
    kin = d.kinematics
    rest = sp.Matrix(d.coriolis_force) + sp.Matrix(d.potential_gradient)
    if forces is not None:
        rest -= sp.Matrix(forces)
    M = numeric(d.mass_matrix, kin.q, kin.v, params)
    r = numeric(rest, kin.q, kin.v, params)
    return lambda q, v, p=(): np.linalg.solve(M(q, v, p), -r(q, v, p).ravel())


def assert_power_balance(d):
    """``Ṁ − 2C`` skew-symmetric (expanded entries) and ``C v`` equal to ``h`` from the momentum (simplified)."""
    kin = d.kinematics
    K = sp.Matrix(mass_matrix_rate(d.frame_derivatives, kin.v)) - 2 * sp.Matrix(d.coriolis)
    sym = K + K.T
    assert all(sp.expand(e) == 0 or sp.simplify(e) == 0 for e in sym), "Ṁ − 2C is not skew-symmetric"
    G = sp.Matrix(d.gyroscopic)
    assert (G + G.T).expand() == sp.zeros(*G.shape)
    h = velocity_forces(T_of(d), kin)
    for a, b in zip(d.coriolis_force, h):
        assert sp.simplify(sp.expand(a - b)) == 0, f"C v != h: {a} vs {b}"


def T_of(d):
    """``T = ½ vᵀ M v`` back from the mass matrix."""
    v = sp.Matrix(d.kinematics.v)
    return (v.T * sp.Matrix(d.mass_matrix) * v)[0, 0] / 2


def euler_rates(moments, w):
    """``ω̇`` of Euler's equations ``I ω̇ = −ω × I ω`` (``moments`` the principal moments of inertia)."""
    moments, w = np.asarray(moments, dtype=float), np.asarray(w, dtype=float)
    return -np.cross(w, moments * w) / moments


# -------------------------------------------------------------------------------------------------
# a) a rigid body, ZYX Euler angles, body rates

YAW, PITCH, ROLL, W1, W2, W3 = real("yaw pitch roll w1 w2 w3")
I1, I2, I3 = sp.symbols("I1 I2 I3", positive=True)
RIGID_T = (I1 * W1**2 + I2 * W2**2 + I3 * W3**2) / 2
# ω = E(q) q̇ for R = Rz(yaw) Ry(pitch) Rx(roll), inverted: q̇ = E(q)⁻¹ ω.
ZYX_RATES = (
    (sp.sin(ROLL) * W2 + sp.cos(ROLL) * W3) / sp.cos(PITCH),
    sp.cos(ROLL) * W2 - sp.sin(ROLL) * W3,
    W1 + (sp.sin(ROLL) * W2 + sp.cos(ROLL) * W3) * sp.tan(PITCH),
)


@pytest.fixture(scope="module")
def euler_body():
    return speed_dynamics(RIGID_T, 0, kinematics(ZYX_RATES, (YAW, PITCH, ROLL), (W1, W2, W3)))


def test_euler_angle_kinematics_give_the_angular_velocity_basis(euler_body):
    """``W = E(q)`` (ω from the Euler rates, written out) and ``[s_a, s_b] = ε_abc s_c``."""
    kin = euler_body.kinematics
    E = sp.Matrix(
        [
            [-sp.sin(PITCH), 0, 1],
            [sp.cos(PITCH) * sp.sin(ROLL), sp.cos(ROLL), 0],
            [sp.cos(PITCH) * sp.cos(ROLL), -sp.sin(ROLL), 0],
        ]
    )
    assert (sp.Matrix(kin.W) - E).applyfunc(sp.simplify) == sp.zeros(3, 3)
    assert (sp.Matrix(kin.W) * sp.Matrix(kin.S)).applyfunc(sp.simplify) == sp.eye(3)
    for a in range(3):
        for b in range(3):
            assert [kin.structure[j][a][b] for j in range(3)] == [sp.LeviCivita(a, b, j) for j in range(3)]


def test_euler_angle_body_obeys_eulers_equations(euler_body):
    """Symbolically ``C ω = ω × Iω``; numerically ``v̇`` = Euler's equations at random states (≤ 1e-12)."""
    w = sp.Matrix([W1, W2, W3])
    expected = w.cross(sp.diag(I1, I2, I3) * w)
    assert [sp.expand(a - b) for a, b in zip(euler_body.coriolis_force, expected)] == [0, 0, 0]
    assert euler_body.potential_gradient == (0, 0, 0)
    vdot = speed_rates(euler_body, (I1, I2, I3))
    rng = np.random.default_rng(1)
    for _ in range(20):
        q = rng.uniform(-1.4, 1.4, 3)
        w_val, inertias = rng.normal(size=3), rng.uniform(0.5, 3.0, 3)
        np.testing.assert_allclose(vdot(q, w_val, inertias), euler_rates(inertias, w_val), rtol=1e-12, atol=1e-12)


def test_the_issues_rigid_body_example(euler_body):
    """I = (1, 2, 3), ω = (1, 2, 0.5): ω̇ = [−1, 0.5, −2/3] (the issue's [−1.0, 0.5, −0.667]) at any orientation."""
    vdot = speed_rates(euler_body, (I1, I2, I3))
    for q in ([0.0, 0.0, 0.0], [0.3, -1.2, 2.0], [-2.0, 1.5, 0.1]):
        np.testing.assert_allclose(vdot(q, [1.0, 2.0, 0.5], [1.0, 2.0, 3.0]), [-1.0, 0.5, -2 / 3], atol=1e-12)
    np.testing.assert_allclose(euler_rates([1, 2, 3], [1, 2, 0.5]), [-1.0, 0.5, -2 / 3], atol=1e-15)


def test_euler_angle_body_power_balance(euler_body):
    assert_power_balance(euler_body)


# -------------------------------------------------------------------------------------------------
# b) v = q̇: the classic derivation, expression for expression


def example_model(name: str) -> sls.Model:
    data = tomllib.loads((EXAMPLES / f"{name}.toml").read_text())
    return sls.model_from_strings(
        state=data["state"], T=data["T"], V=data["V"], fric=data["fric"], params=data["params"], name=name
    )


@pytest.mark.parametrize(
    ("name", "simplify"), [("double_pendulum", False), ("double_pendulum", True), ("two_link_arm", False)]
)
def test_identity_kinematics_reproduce_the_classic_terms(name, simplify):
    model = example_model(name)
    classic = derive(model, simplify=simplify, method="expanded")
    checked = kinematics(model.dq, model.q, model.dq)  # through every check of the kinematic equations
    assert checked.identity and checked.commuting and checked.W == checked.S
    assert identity_kinematics(model.q, model.dq) == checked
    d = speed_dynamics(model.T, model.V, checked, simplify=simplify)
    assert d.mass_matrix == classic.mass_matrix
    assert d.christoffel == classic.christoffel
    assert d.coriolis == classic.coriolis
    assert d.coriolis_force == classic.coriolis_force
    assert d.potential_gradient == classic.potential_gradient
    for a, b in zip(sp.Matrix(d.coriolis), sp.Matrix(classic.coriolis)):
        assert sp.simplify(a - b) == 0


# -------------------------------------------------------------------------------------------------
# c) a heavy top by KanesMethod, body-fixed speeds


@pytest.fixture(scope="module")
def heavy_top():
    """(speed dynamics, Kane's v̇ function, parameter symbols) for a top on a fixed point, ZXZ angles."""
    qs, us = dynamicsymbols("q1:4"), dynamicsymbols("u1:4")
    m, g, arm, J1, J2, J3 = sp.symbols("m g l J1 J2 J3", positive=True)
    N, A = ReferenceFrame("N"), ReferenceFrame("A")
    A.orient_body_fixed(N, qs, "zxz")
    omega = A.ang_vel_in(N)
    kd = [dot(omega, A.x) - us[0], dot(omega, A.y) - us[1], dot(omega, A.z) - us[2]]
    A.set_ang_vel(N, us[0] * A.x + us[1] * A.y + us[2] * A.z)
    pivot = Point("O")
    pivot.set_vel(N, 0)
    P = pivot.locatenew("P", arm * A.z)
    P.v2pt_theory(pivot, N, A)
    top = RigidBody("top", P, A, m, (inertia(A, J1, J2, J3), P))
    kane = KanesMethod(N, q_ind=qs, u_ind=us, kd_eqs=kd)
    kane.kanes_equations([top], [(P, -m * g * N.z)])
    q, u, params = real("q1 q2 q3"), real("u1 u2 u3"), (m, g, arm, J1, J2, J3)
    plain = dict(zip(qs, q)) | dict(zip(us, u))
    solved = kane.kindiffdict()
    rates = [solved[qi.diff(dynamicsymbols._t)].xreplace(plain) for qi in qs]
    T = top.kinetic_energy(N).xreplace(plain)
    V = (m * g * dot(P.pos_from(pivot), N.z)).xreplace(plain)
    d = speed_dynamics(T, V, kinematics(rates, q, u))
    MM = numeric(kane.mass_matrix_full.xreplace(plain), q, u, params)
    F = numeric(kane.forcing_full.xreplace(plain), q, u, params)
    return d, (lambda qv, uv, pv: np.linalg.solve(MM(qv, uv, pv), F(qv, uv, pv).ravel())[3:]), params


def test_heavy_top_matches_kanes_method(heavy_top):
    d, kane_rates, params = heavy_top
    vdot = speed_rates(d, params)
    rng = np.random.default_rng(2)
    for _ in range(20):
        q = np.array([rng.uniform(-3, 3), rng.uniform(0.3, 2.8), rng.uniform(0.3, 2.8)])  # off the ZXZ poles
        u, p = rng.normal(size=3) * 2, rng.uniform(0.2, 3.0, 6)
        expected = kane_rates(q, u, p)
        np.testing.assert_allclose(vdot(q, u, p), expected, rtol=1e-10, atol=1e-10 * max(1, np.abs(expected).max()))


def test_heavy_top_power_balance(heavy_top):
    assert_power_balance(heavy_top[0])


# -------------------------------------------------------------------------------------------------
# d) unit quaternions: n_q > n_v

QX, QY, QZ, QW = real("qx qy qz qw")
# q̇ = ½ q ⊗ [ω, 0] (Hamilton product, [x, y, z, w] order, ω in the body frame).
QUATERNION_RATES = (
    (QW * W1 - QZ * W2 + QY * W3) / 2,
    (QZ * W1 + QW * W2 - QX * W3) / 2,
    (-QY * W1 + QX * W2 + QW * W3) / 2,
    -(QX * W1 + QY * W2 + QZ * W3) / 2,
)


def rotation(quaternion):
    """The rotation matrix (body → world) of a quaternion [x, y, z, w], normalized first."""
    x, y, z, w = np.asarray(quaternion, dtype=float) / np.linalg.norm(quaternion)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


@pytest.fixture(scope="module")
def quaternion_body():
    return speed_dynamics(RIGID_T, 0, kinematics(QUATERNION_RATES, (QX, QY, QZ, QW), (W1, W2, W3)))


def test_quaternion_kinematics(quaternion_body):
    """One tall block, ``W S = I`` exactly, ``W = 2/|q|² Q(q)ᵀ`` rows, ``γ^j_ab = ε_abj``."""
    kin = quaternion_body.kinematics
    assert blocks(kin.S) == [([0, 1, 2, 3], [0, 1, 2])]
    assert (sp.Matrix(kin.W) * sp.Matrix(kin.S)).applyfunc(sp.cancel) == sp.eye(3)
    for a in range(3):
        for b in range(3):
            assert [kin.structure[j][a][b] for j in range(3)] == [sp.LeviCivita(a, b, j) for j in range(3)]


def test_quaternion_body_obeys_eulers_equations(quaternion_body):
    w = sp.Matrix([W1, W2, W3])
    expected = w.cross(sp.diag(I1, I2, I3) * w)
    assert [sp.expand(a - b) for a, b in zip(quaternion_body.coriolis_force, expected)] == [0, 0, 0]
    vdot = speed_rates(quaternion_body, (I1, I2, I3))
    rng = np.random.default_rng(3)
    for _ in range(10):
        q, w_val, inertias = rng.normal(size=4), rng.normal(size=3), rng.uniform(0.5, 3.0, 3)
        np.testing.assert_allclose(vdot(q, w_val, inertias), euler_rates(inertias, w_val), rtol=1e-12, atol=1e-12)
    assert_power_balance(quaternion_body)


def test_quaternion_body_tumbles_through_pitch_90_conserving_energy_and_momentum(quaternion_body):
    """10 s near the intermediate axis: the ZYX pitch passes ±90° (within 2°), energy and world momentum hold."""
    d, inertias = quaternion_body, (1.0, 2.0, 3.0)
    kin = d.kinematics
    vdot = speed_rates(d, (I1, I2, I3))
    qdot = numeric(kin.rates, kin.q, kin.v)

    def rhs(t, y):
        return np.concatenate([qdot(y[:4], y[4:]).ravel(), vdot(y[:4], y[4:], inertias)])

    y0 = np.array([0.0, 0.0, 0.0, 1.0, 0.01, 2.0, 0.01])
    sol = solve_ivp(rhs, (0.0, 10.0), y0, method="DOP853", rtol=1e-12, atol=1e-12, dense_output=True)
    assert sol.success
    Y = sol.sol(np.linspace(0.0, 10.0, 4001))
    inertia_matrix = np.diag(inertias)
    energy = np.array([0.5 * w @ inertia_matrix @ w for w in Y[4:].T])
    momentum = np.array([rotation(q) @ inertia_matrix @ w for q, w in zip(Y[:4].T, Y[4:].T)])
    sin_pitch = np.array([-rotation(q)[2, 0] for q in Y[:4].T])  # R = Rz Ry Rx: R[2, 0] = −sin(pitch)
    near_pole = np.cos(np.radians(2.0))  # within 2° of the Euler chart's poles, both ways
    assert sin_pitch.max() > near_pole and sin_pitch.min() < -near_pole
    assert np.abs(energy - energy[0]).max() <= 1e-8 * energy[0]
    assert np.linalg.norm(momentum - momentum[0], axis=1).max() <= 1e-8 * np.linalg.norm(momentum[0])
    assert np.abs(np.linalg.norm(Y[:4], axis=0) - 1).max() <= 1e-9


def test_free_floating_body_with_quaternion_and_body_frame_velocity():
    """Position in the world, q̇_pos = R(q) v (homogeneous R), quaternion: n_q = 7, n_v = 6, two blocks.

    The equations are Newton's and Euler's in the body frame: m (v̇ + ω × v) = 0, I ω̇ + ω × Iω = 0.
    """
    x, y, z, vx, vy, vz, m = real("x y z vx vy vz m")
    R = sp.Matrix(
        [
            [QW**2 + QX**2 - QY**2 - QZ**2, 2 * (QX * QY - QW * QZ), 2 * (QX * QZ + QW * QY)],
            [2 * (QX * QY + QW * QZ), QW**2 - QX**2 + QY**2 - QZ**2, 2 * (QY * QZ - QW * QX)],
            [2 * (QX * QZ - QW * QY), 2 * (QY * QZ + QW * QX), QW**2 - QX**2 - QY**2 + QZ**2],
        ]
    )
    rates = tuple(R * sp.Matrix([vx, vy, vz])) + QUATERNION_RATES
    kin = kinematics(rates, (x, y, z, QX, QY, QZ, QW), (vx, vy, vz, W1, W2, W3))
    assert blocks(kin.S) == [([0, 1, 2], [0, 1, 2]), ([3, 4, 5, 6], [3, 4, 5])]
    assert (sp.Matrix(kin.W) * sp.Matrix(kin.S)).applyfunc(sp.cancel) == sp.eye(6)
    d = speed_dynamics(m * (vx**2 + vy**2 + vz**2) / 2 + RIGID_T, 0, kin)
    v, w = sp.Matrix([vx, vy, vz]), sp.Matrix([W1, W2, W3])
    expected = list(w.cross(m * v)) + list(w.cross(sp.diag(I1, I2, I3) * w))
    assert [sp.expand(a - b) for a, b in zip(d.coriolis_force, expected)] == [0] * 6
    assert_power_balance(d)


# -------------------------------------------------------------------------------------------------
# e) a q-dependent, non-group S against Lagrange's equations of L*(q, q̇) = T(q, W q̇) − V

Q1, Q2, Q3, V1, V2, V3 = real("q1 q2 q3 v1 v2 v3")
GENERIC_S = sp.Matrix([[sp.cos(Q3), -sp.sin(Q3), 0], [sp.sin(Q3), sp.cos(Q3), Q1], [0, Q2, 1]])  # det 1 − q1 q2 cos q3
GENERIC_M = sp.Matrix([[2 + Q2**2, Q1, 0], [Q1, 3, sp.cos(Q3)], [0, sp.cos(Q3), 2]])
GENERIC_V = Q1**2 * Q2 + sp.sin(Q3) * Q1 + Q2**2
GENERIC_FORCE = (sp.sin(Q1), Q3, 1 + Q2)  # generalized forces in the coordinates


@pytest.fixture(scope="module")
def generic():
    v = sp.Matrix([V1, V2, V3])
    T = sp.expand((v.T * GENERIC_M * v)[0, 0] / 2)
    kin = kinematics(tuple(GENERIC_S * v), (Q1, Q2, Q3), (V1, V2, V3))
    return speed_dynamics(T, GENERIC_V, kin)


def lagrange_reference():
    """``v̇(q, v)`` from Lagrange's equations in the coordinates, numerically, no brackets.

    ``L* = ½ q̇ᵀ M* q̇ − V`` with ``M* = Wᵀ M W``, ``W = S⁻¹``, ``∂W/∂q_l = −W (∂S/∂q_l) W``:
    ``M* q̈ = Q − ∂V/∂q − Σ_l (∂M*/∂q_l) q̇_l q̇ + ½ [q̇ᵀ (∂M*/∂q_l) q̇]_l``, then ``v̇ = W q̈ + Ẇ q̇``.
    """
    q = (Q1, Q2, Q3)
    S, dS = numeric(GENERIC_S, q), [numeric(GENERIC_S.diff(s), q) for s in q]
    M, dM = numeric(GENERIC_M, q), [numeric(GENERIC_M.diff(s), q) for s in q]
    dV = numeric([GENERIC_V.diff(s) for s in q], q)
    force = numeric(GENERIC_FORCE, q)

    def vdot(q_val, v_val):
        W = np.linalg.inv(S(q_val))
        dW = [-W @ dS_l(q_val) @ W for dS_l in dS]
        M_val = M(q_val)
        M_star = W.T @ M_val @ W
        dM_star = [dW_l.T @ M_val @ W + W.T @ dM_l(q_val) @ W + W.T @ M_val @ dW_l for dW_l, dM_l in zip(dW, dM)]
        dq = S(q_val) @ v_val
        M_star_dot = sum(dM_l * dq_l for dM_l, dq_l in zip(dM_star, dq))
        dT_dq = np.array([dq @ dM_l @ dq / 2 for dM_l in dM_star])
        qdd = np.linalg.solve(M_star, force(q_val).ravel() - dV(q_val).ravel() - M_star_dot @ dq + dT_dq)
        W_dot = sum(dW_l * dq_l for dW_l, dq_l in zip(dW, dq))
        return W @ qdd + W_dot @ dq

    return vdot


def test_generic_speeds_match_lagrange_in_the_coordinates(generic):
    assert not generic.kinematics.commuting  # the bracket terms are exercised
    forces = speed_components(GENERIC_FORCE, generic.kinematics)
    vdot = speed_rates(generic, (), forces)
    reference = lagrange_reference()
    rng = np.random.default_rng(4)
    for _ in range(20):
        q, v = rng.uniform(-0.5, 0.5, 3), rng.normal(size=3)
        expected = reference(q, v)
        np.testing.assert_allclose(vdot(q, v), expected, rtol=1e-10, atol=1e-10 * max(1, np.abs(expected).max()))


def test_generic_speeds_power_balance(generic):
    assert_power_balance(generic)
    K = numeric(
        sp.Matrix(mass_matrix_rate(generic.frame_derivatives, generic.kinematics.v)) - 2 * sp.Matrix(generic.coriolis),
        generic.kinematics.q,
        generic.kinematics.v,
    )
    rng = np.random.default_rng(5)
    for _ in range(5):
        value = K(rng.normal(size=3), rng.normal(size=3))
        np.testing.assert_allclose(value + value.T, 0, atol=1e-12 * max(1, np.abs(value).max()))


# -------------------------------------------------------------------------------------------------
# f) bad kinematics, one line each

X, Y, TH, V, OM = real("x y th v om")
BAD = {
    "nonlinear": ((W1**2, W2, W3), "must be linear in the speeds; it is not in w1"),
    "speed-free part": ((W1 + sp.sin(PITCH), W2, W3), "has a part without speeds: sin(pitch)"),
    "a speed in a function": ((sp.sin(W1), W2, W3), "must be linear in the speeds"),
    "wrong count": ((W1, W2), "expected 3 entries (one q̇ per coordinate yaw, pitch, roll), got 2"),
    "a speed missing": ((W1, W2, W2 * sp.cos(YAW)), "the speed w3 appears in no kinematic equation"),
    "dependent speeds": ((W1 + W2, W1 + W2, W3), "the speeds w1, w2 are not independent"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_kinematics_are_refused_in_one_line(case):
    rates, message = BAD[case]
    with pytest.raises(ModelError) as error:
        kinematics(rates, (YAW, PITCH, ROLL), (W1, W2, W3))
    assert message in str(error.value) and "\n" not in str(error.value)


def test_more_speeds_than_coordinates_are_refused():
    with pytest.raises(ModelError, match="3 speeds but only 2 coordinates"):
        kinematics((W1, W2), (YAW, PITCH), (W1, W2, W3))


def test_nonholonomic_kinematics_are_refused():
    """A unicycle's q̇ = (cos θ v, sin θ v, ω): [s_v, s_ω] leaves span(S)."""
    with pytest.raises(ModelError, match="nonholonomic: the bracket of the directions of the speeds v and om"):
        kinematics((sp.cos(TH) * V, sp.sin(TH) * V, OM), (X, Y, TH), (V, OM))


def test_kinetic_energy_not_quadratic_in_the_speeds_is_refused(euler_body):
    with pytest.raises(ModelError, match="quadratic"):
        speed_dynamics(W1**3 + W2**2, 0, euler_body.kinematics)


def test_blocks_follow_the_sparsity():
    """Identity blocks stay 1; a one-speed block moving two coordinates gets (SᵀS)⁻¹Sᵀ."""
    kin = kinematics((V1, V2, Y * V2, V3), (X, Y, TH, Q1), (V1, V2, V3))
    assert blocks(kin.S) == [([0], [0]), ([1, 2], [1]), ([3], [2])]
    assert kin.W == ((1, 0, 0, 0), (0, 1 / (Y**2 + 1), Y / (Y**2 + 1), 0), (0, 0, 0, 1))
    assert kin.commuting
