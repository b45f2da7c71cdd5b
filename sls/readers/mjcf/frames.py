"""Rotations between MuJoCo's and the tree's conventions: MuJoCo's unit quaternions ``[w x y z]`` as matrices
(:func:`quat_matrix`), matrices as URDF's fixed-axis roll, pitch, yaw (:func:`rpy_chain`, exact to rounding at
every angle), and the rotation that turns a gravity vector to −z (:func:`gravity_rotation`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

#: ``Rz(π/2)``, exactly: a rotation near pitch ±π/2 is written as ``A · Rz(π/2)`` with ``A`` far from it.
QUARTER_TURN = ((0.0, -1.0, 0.0), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0))
QUARTER_TURN_RPY = (0.0, 0.0, math.pi / 2)
#: Largest ``|sin pitch|`` converted directly (below it ``cos pitch`` ≥ 0.43, so roll and yaw are well defined).
DIRECT_PITCH = 0.9
Matrix = tuple[tuple[float, float, float], tuple[float, float, float], tuple[float, float, float]]
IDENTITY: Matrix = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


def quat_matrix(quat: Sequence[float]) -> Matrix:
    """The rotation matrix of MuJoCo's unit quaternion ``[w, x, y, z]`` (as ``mju_quat2Mat``; exactly ``I`` for
    ``[1, 0, 0, 0]``)."""
    w, x, y, z = (float(v) for v in quat)
    if (w, x, y, z) == (1.0, 0.0, 0.0, 0.0):
        return IDENTITY
    ww, xx, yy, zz = w * w, x * x, y * y, z * z
    return (
        (ww + xx - yy - zz, 2 * (x * y - w * z), 2 * (x * z + w * y)),
        (2 * (x * y + w * z), ww - xx + yy - zz, 2 * (y * z - w * x)),
        (2 * (x * z - w * y), 2 * (y * z + w * x), ww - xx - yy + zz),
    )


def matmul(A: Matrix, B: Matrix) -> Matrix:
    """``A B`` of 3×3 matrices."""
    if A is IDENTITY:
        return B
    if B is IDENTITY:
        return A
    rows = [tuple(sum(A[i][k] * B[k][j] for k in range(3)) for j in range(3)) for i in range(3)]
    return (rows[0], rows[1], rows[2])  # type: ignore[return-value]


def transpose(A: Matrix) -> Matrix:
    rows = [tuple(A[j][i] for j in range(3)) for i in range(3)]
    return (rows[0], rows[1], rows[2])  # type: ignore[return-value]


def apply(A: Matrix, v: Sequence[float]) -> tuple:
    """``A v``."""
    return tuple(sum(A[i][k] * v[k] for k in range(3)) for i in range(3))


def axis_rotation(axis: Sequence[float], angle: float) -> Matrix:
    """Rotation by ``angle`` about the unit ``axis`` (Rodrigues); ``I`` for a zero angle."""
    if angle == 0:
        return IDENTITY
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    t = 1 - c
    return (
        (c + x * x * t, x * y * t - z * s, x * z * t + y * s),
        (y * x * t + z * s, c + y * y * t, y * z * t - x * s),
        (z * x * t - y * s, z * y * t + x * s, c + z * z * t),
    )


def rpy(R: Matrix) -> tuple:
    """Roll, pitch, yaw of ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (URDF's convention), for ``|R[2][0]|`` ≤
    :data:`DIRECT_PITCH`; zeros for ``I``."""
    pitch = math.atan2(-R[2][0], math.hypot(R[0][0], R[1][0]))
    return (math.atan2(R[2][1], R[2][2]), pitch, math.atan2(R[1][0], R[0][0]))


def rpy_chain(R: Matrix) -> tuple:
    """Roll-pitch-yaw triples whose rotations, multiplied in order, are ``R``: one triple, or two
    (``A`` and ``Rz(π/2)``) when ``R`` is near pitch ±π/2, where one triple would lose precision."""
    if abs(R[2][0]) <= DIRECT_PITCH:
        return (rpy(R),)
    return (rpy(matmul(R, transpose(QUARTER_TURN))), QUARTER_TURN_RPY)


def gravity_rotation(gravity: Sequence[float]) -> Matrix:
    """The rotation ``R`` (smallest angle) with ``R ĝ = −e_z`` for the direction ``ĝ`` of a non-zero ``gravity``:
    the world's frame in a root frame whose −z is down."""
    size = math.sqrt(sum(v * v for v in gravity))
    d = [v / size for v in gravity]
    # rotate d onto (0, 0, -1): about d × (−e_z) = (−d_y, d_x, 0), by the angle between them
    axis = (-d[1], d[0], 0.0)
    sine = math.hypot(axis[0], axis[1])
    if sine == 0:
        return IDENTITY if d[2] < 0 else ((1.0, 0.0, 0.0), (0.0, -1.0, 0.0), (0.0, 0.0, -1.0))
    angle = math.atan2(sine, -d[2])
    return axis_rotation((axis[0] / sine, axis[1] / sine, 0.0), angle)
