"""The quaternion free-flyer's closed forms (sls.model.free_flyer) against the general symbolic ones."""

import numpy as np
import sympy

from sls.model.free_flyer import free_flyer_kinematics, quaternion_rates, rotation_matrix
from sls.model.kinematics import lie_bracket

Q = sympy.symbols("x y z qx qy qz qw", real=True)
V = sympy.symbols("vx vy vz wx wy wz", real=True)


def unit_points(count: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    points = []
    for _ in range(count):
        quat = rng.normal(size=4)
        points.append(dict(zip(Q, [*rng.normal(size=3), *(quat / np.linalg.norm(quat))])))
    return points


def numeric(expr, point) -> np.ndarray:
    return np.array(sympy.Matrix(expr).subs(point).evalf(), dtype=float)


def test_left_inverse_and_structure_coefficients_hold_on_unit_quaternions():
    """W S = I, and every bracket of the speeds' directions is S γ (γ: se(3) in the body frame)."""
    kin = free_flyer_kinematics(Q, V)
    columns = [tuple(kin.S[k][r] for k in range(7)) for r in range(6)]
    for point in unit_points(3):
        assert np.abs(numeric(kin.W, point) @ numeric(kin.S, point) - np.eye(6)).max() < 1e-14
        for a in range(6):
            for b in range(6):
                bracket = lie_bracket(columns[a], columns[b], Q)
                combination = [sum(kin.structure[j][a][b] * columns[j][k] for j in range(6)) for k in range(7)]
                assert np.abs(numeric([e - c for e, c in zip(bracket, combination)], point)).max() < 1e-14


def test_rotation_and_quaternion_rates_agree_with_the_rotation_rate():
    """Ṙ = R [ω]× when the quaternion moves as ½ quat ⊗ (0, ω) (finite differences)."""
    rng = np.random.default_rng(3)
    quat = rng.normal(size=4)
    quat /= np.linalg.norm(quat)
    omega = rng.normal(size=3)
    symbols = sympy.symbols("a b c d", real=True)
    R = sympy.lambdify(symbols, sympy.Matrix(rotation_matrix(symbols)))
    rate = np.array(sympy.lambdify((symbols, V[3:]), quaternion_rates(symbols, V[3:]))(quat, omega), dtype=float)
    h = 1e-6
    R_dot = (np.array(R(*(quat + h * rate))) - np.array(R(*(quat - h * rate)))) / (2 * h)
    skew = np.array([[0, -omega[2], omega[1]], [omega[2], 0, -omega[0]], [-omega[1], omega[0], 0]])
    assert np.abs(R_dot - np.array(R(*quat)) @ skew).max() < 1e-8
    assert abs(rate @ quat) < 1e-15  # the rate is tangent to the unit sphere


def test_quaternion_kinematics_of_a_ball_a_hinge_and_a_free_joint():
    """A layout of a ball joint, a hinge and a free joint (Robot.slots): W S = I on unit quaternions, the brackets
    are S γ (so(3) and se(3) blocks), and the free joint's blocks are the free-flyer's closed forms."""
    from sls.model.free_flyer import quaternion_kinematics
    from sls.model.tree import Joint, Slot

    def slot(kind: str, q: int, v: int, n_q: int, n_v: int) -> Slot:
        return Slot(Joint(kind, kind, "a", "b", (0, 0, 0), (0, 0, 0), (1, 0, 0), 0.0), kind, q, v, n_q, n_v)

    q = sympy.symbols("bx by bz bw h", real=True) + Q
    v = sympy.symbols("ba bb bc dh", real=True) + V
    slots = [slot("ball", 0, 0, 4, 3), slot("continuous", 4, 3, 1, 1), slot("free", 5, 4, 7, 6)]
    kin = quaternion_kinematics(q, v, slots)
    free = free_flyer_kinematics(Q, V)
    assert all(tuple(kin.W[4 + i][5:]) == tuple(free.W[i]) for i in range(6))
    columns = [tuple(kin.S[k][r] for k in range(12)) for r in range(10)]
    rng = np.random.default_rng(5)
    for _ in range(2):
        ball = rng.normal(size=4)
        point = dict(zip(q[:5], [*(ball / np.linalg.norm(ball)), rng.normal()]))
        point.update(unit_points(1, seed=int(rng.integers(100)))[0])
        assert np.abs(numeric(kin.W, point) @ numeric(kin.S, point) - np.eye(10)).max() < 1e-14
        for a in range(10):
            for b in range(a + 1, 10):
                bracket = lie_bracket(columns[a], columns[b], q)
                combination = [sum(kin.structure[j][a][b] * columns[j][k] for j in range(10)) for k in range(12)]
                assert np.abs(numeric([e - c for e, c in zip(bracket, combination)], point)).max() < 1e-14
