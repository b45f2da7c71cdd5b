"""The quaternion free-flyer: a body free in space, in Pinocchio's layout (and the ball joint, its turning half).

Coordinates (7): the position ``p = (x, y, z)`` of the body's origin in its parent's frame and the unit quaternion
``(qx, qy, qz, qw)`` of its orientation (scalar last, as Pinocchio's ``JointModelFreeFlyer``). Speeds (6): the
velocity ``v = (vx, vy, vz)`` of the origin and the angular velocity ``ω = (wx, wy, wz)``, both in the body's own
frame. The kinematics ``q̇ = S(q) ν``:

* ``ṗ = R v`` with ``R`` the rotation of the quaternion (:func:`rotation_matrix`, body to parent),
* ``q̇_quat = ½ quat ⊗ (0, ω)``: ``ẇ = −½ x⃗·ω``, ``ẋ⃗ = ½ (w ω + x⃗ × ω)``.

Their left inverse on unit quaternions is ``v = Rᵀ ṗ``, ``ω = 2 vec(quat* ⊗ q̇_quat)``, and the structure
coefficients of the speeds' directions are those of se(3) in the body frame (:func:`free_flyer_structure`):
``[s_ωa, s_ωb] = Σ_c ε_abc s_ωc`` and ``[s_ωa, s_vb] = Σ_c ε_abc s_vc`` (so a free rigid body's equations in these
speeds are the Newton–Euler equations in the body frame).

A ball (spherical) joint is the free-flyer's turning half, as Pinocchio's ``JointModelSpherical``: coordinates
(4) the unit quaternion ``(qx, qy, qz, qw)`` of the child relative to the joint's frame, speeds (3) the angular
velocity ``ω`` of the child relative to its parent, in the child's frame (MuJoCo's ``qvel`` of a ball joint).
A model may hold any number of both, anywhere in its coordinates (:func:`quaternion_kinematics`).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from sls.model.kinematics import Kinematics, kinematic_matrix

ZERO = sympy.Integer(0)
ONE = sympy.Integer(1)
HALF = sympy.Rational(1, 2)

#: Suffixes of the free-flyer's coordinates and speeds (``base_x``, ..., ``base_wz`` for a joint named ``base``).
COORDINATE_SUFFIXES = ("x", "y", "z", "qx", "qy", "qz", "qw")
SPEED_SUFFIXES = ("vx", "vy", "vz", "wx", "wy", "wz")
#: Number of coordinates and speeds of one free-flyer.
N_Q, N_V = 7, 6
#: Suffixes of a ball joint's coordinates and speeds.
BALL_COORDINATE_SUFFIXES = ("qx", "qy", "qz", "qw")
BALL_SPEED_SUFFIXES = ("wx", "wy", "wz")


def rotation_matrix(quaternion: Sequence[sympy.Expr]) -> list:
    """``R`` (3×3) of the unit quaternion ``(qx, qy, qz, qw)``: ``I + 2w[x]× + 2[x]×²`` (as Eigen writes it)."""
    x, y, z, w = quaternion
    two = sympy.Integer(2)
    return [
        [1 - two * (y * y + z * z), two * (x * y - z * w), two * (x * z + y * w)],
        [two * (x * y + z * w), 1 - two * (x * x + z * z), two * (y * z - x * w)],
        [two * (x * z - y * w), two * (y * z + x * w), 1 - two * (x * x + y * y)],
    ]


def quaternion_rates(quaternion: Sequence[sympy.Expr], omega: Sequence[sympy.Expr]) -> list:
    """``½ quat ⊗ (0, ω)`` (4, in the order ``qx, qy, qz, qw``) for a body-frame angular velocity ``ω``."""
    x, y, z, w = quaternion
    a, b, c = omega
    return [
        HALF * (w * a + y * c - z * b),
        HALF * (w * b + z * a - x * c),
        HALF * (w * c + x * b - y * a),
        -HALF * (x * a + y * b + z * c),
    ]


def free_flyer_rates(q: Sequence[sympy.Expr], v: Sequence[sympy.Expr]) -> list:
    """The kinematic equations (7) of one free-flyer: ``[R v; ½ quat ⊗ (0, ω)]`` for ``q`` (7) and ``v`` (6)."""
    R = rotation_matrix(q[3:7])
    position = [sympy.Add(*(R[i][k] * v[k] for k in range(3))) for i in range(3)]
    return position + quaternion_rates(q[3:7], v[3:6])


def free_flyer_inverse(q: Sequence[sympy.Expr]) -> list:
    """``W`` (6×7) with ``W S = I`` on unit quaternions: ``v = Rᵀ ṗ``, ``ω = 2 vec(quat* ⊗ q̇_quat)``."""
    R = rotation_matrix(q[3:7])
    x, y, z, w = q[3:7]
    two = sympy.Integer(2)
    W = [[ZERO] * 7 for _ in range(6)]
    for i in range(3):
        for k in range(3):
            W[i][k] = R[k][i]
    # vec(quat* ⊗ d) for quat = (x⃗, w), d = (d⃗, d_w): w d⃗ − d_w x⃗ − x⃗ × d⃗
    rows = [
        [w, z, -y, -x],
        [-z, w, x, -y],
        [y, -x, w, -z],
    ]
    for i in range(3):
        for k in range(4):
            W[3 + i][3 + k] = two * rows[i][k]
    return W


def free_flyer_structure() -> tuple:
    """``γ[j][a][b]`` (6, 6, 6) of the free-flyer's speeds (order ``v, ω``): se(3) in the body frame.

    ``[s_ωa, s_ωb] = Σ_c ε_abc s_ωc``, ``[s_ωa, s_vb] = Σ_c ε_abc s_vc`` (and antisymmetric), every other
    bracket zero; with the convention ``[s_a, s_b] = (∂s_b/∂q) s_a − (∂s_a/∂q) s_b`` of
    :func:`sls.model.kinematics.lie_bracket`.
    """
    gamma = [[[ZERO] * 6 for _ in range(6)] for _ in range(6)]
    for a in range(3):
        for b in range(3):
            for c in range(3):
                eps = sympy.LeviCivita(a, b, c)
                if eps == 0:
                    continue
                gamma[3 + c][3 + a][3 + b] = eps  # [s_ωa, s_ωb]
                gamma[c][3 + a][b] = eps  # [s_ωa, s_vb]
                gamma[c][b][3 + a] = -eps  # [s_vb, s_ωa]
    return tuple(tuple(tuple(row) for row in plane) for plane in gamma)


def ball_rates(q: Sequence[sympy.Expr], v: Sequence[sympy.Expr]) -> list:
    """The kinematic equations (4) of one ball joint: ``½ quat ⊗ (0, ω)`` for ``q`` (4) and ``v`` (3)."""
    return quaternion_rates(q, v)


def joint_rates(kind: str, q: Sequence[sympy.Expr], v: Sequence[sympy.Expr]) -> list:
    """The kinematic equations of one joint of ``kind`` (``free``, ``ball``, or any one-coordinate joint:
    ``q̇ = v``) for its coordinates ``q`` and speeds ``v``."""
    if kind == "free":
        return free_flyer_rates(q, v)
    if kind == "ball":
        return ball_rates(q, v)
    return list(v)


def _ball_inverse(q: Sequence[sympy.Expr]) -> list:
    """``W`` (3×4) of one ball joint: the angular rows of :func:`free_flyer_inverse`."""
    return [row[3:7] for row in free_flyer_inverse([ZERO, ZERO, ZERO, *q])[3:6]]


def quaternion_kinematics(q: Sequence[sympy.Symbol], v: Sequence[sympy.Symbol], slots: Sequence) -> Kinematics:
    """The :class:`~sls.model.kinematics.Kinematics` of a robot whose coordinates and speeds are laid out by
    ``slots`` (:attr:`sls.model.tree.Robot.slots`: per joint its kind and the offsets ``q``, ``v`` and sizes
    ``n_q``, ``n_v`` of its coordinates and speeds): free joints and ball joints by the closed forms above (their
    blocks of ``S``, ``W`` and the structure coefficients: se(3), resp. so(3), in the body frame), every other
    joint ``q̇_k = v_k``."""
    q, v = tuple(q), tuple(v)
    if sum(s.n_q for s in slots) != len(q) or sum(s.n_v for s in slots) != len(v):
        raise ValueError(
            f"the slots lay out {sum(s.n_q for s in slots)} coordinates and {sum(s.n_v for s in slots)} "
            f"speeds, got {len(q)} and {len(v)}"
        )
    rates: list = []
    W = [[ZERO] * len(q) for _ in v]
    n = len(v)
    gamma = [[[ZERO] * n for _ in range(n)] for _ in range(n)]
    for slot in slots:
        qs, vs = q[slot.q : slot.q + slot.n_q], v[slot.v : slot.v + slot.n_v]
        rates += joint_rates(slot.kind, qs, vs)
        if slot.kind == "free":
            block, structure = free_flyer_inverse(qs), free_flyer_structure()
        elif slot.kind == "ball":
            block, structure = _ball_inverse(qs), _rotation_structure()
        else:
            W[slot.v][slot.q] = ONE
            continue
        for i, row in enumerate(block):
            W[slot.v + i][slot.q : slot.q + slot.n_q] = row
        for j in range(slot.n_v):
            for a in range(slot.n_v):
                for b in range(slot.n_v):
                    gamma[slot.v + j][slot.v + a][slot.v + b] = structure[j][a][b]
    S = kinematic_matrix(tuple(rates), q, v)
    return Kinematics(
        q=q,
        v=v,
        rates=tuple(rates),
        S=S,
        W=tuple(tuple(row) for row in W),
        structure=tuple(tuple(tuple(row) for row in plane) for plane in gamma),
    )


def _rotation_structure() -> tuple:
    """``γ[j][a][b]`` (3, 3, 3) of a ball joint's speeds: so(3) in the body frame, ``[s_ωa, s_ωb] = Σ_c ε_abc s_ωc``."""
    full = free_flyer_structure()
    return tuple(tuple(tuple(full[3 + j][3 + a][3 + b] for b in range(3)) for a in range(3)) for j in range(3))


def free_flyer_kinematics(q: Sequence[sympy.Symbol], v: Sequence[sympy.Symbol]) -> Kinematics:
    """The :class:`~sls.model.kinematics.Kinematics` of a model whose first 7 coordinates and 6 speeds are a
    free-flyer and whose other coordinates move with their own speeds (``q̇_k = v_k``).

    Built from the closed forms above (:func:`free_flyer_inverse`, :func:`free_flyer_structure`) instead of
    the symbolic inverse and brackets :func:`sls.model.kinematics.kinematics` would compute (the tests check
    they agree).
    """
    q, v = tuple(q), tuple(v)
    joints = len(q) - N_Q
    if joints < 0 or len(v) - N_V != joints:
        raise ValueError(f"a free-flyer model has 7 + k coordinates and 6 + k speeds, got {len(q)} and {len(v)}")
    rates = tuple(free_flyer_rates(q[:N_Q], v[:N_V])) + v[N_V:]
    S = kinematic_matrix(rates, q, v)
    W = [[ZERO] * len(q) for _ in v]
    for i, row in enumerate(free_flyer_inverse(q[:N_Q])):
        W[i][:N_Q] = row
    for k in range(joints):
        W[N_V + k][N_Q + k] = ONE
    base = free_flyer_structure()
    n = len(v)
    gamma = tuple(
        tuple(tuple(base[j][a][b] if j < N_V and a < N_V and b < N_V else ZERO for b in range(n)) for a in range(n))
        for j in range(n)
    )
    return Kinematics(q=q, v=v, rates=rates, S=S, W=tuple(tuple(row) for row in W), structure=gamma)
