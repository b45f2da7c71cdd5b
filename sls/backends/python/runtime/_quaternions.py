# Runtime of a generated package whose robot has several quaternion joints (free joints anywhere in the layout,
# ball joints): the same functions as _free_flyer.py (one free-flyer base first), for any layout. Copied as
# _free_flyer.py after the package's header by sls.backends.python, with the model's tables and with the helpers of
# _quaternion_math.py (shared with _free_flyer.py) spliced in where a line names them; these leading comment lines are
# not copied. _free_flyer.py stays the runtime of the single free-flyer base (its files unchanged).

import numpy as np

from ._quaternion_math import (
    _configuration,
    _exp_quaternion,
    _left_jacobian,
    _left_jacobian_inverse,
    _multiply,
    _rotation,
    _skew,
    _tangent,
)

N_Q = 11  # the model's number of coordinates, set when copied
N_V = 9  # its number of speeds, set when copied
FREE = ((0, 0),)  # (first coordinate, first speed) of each free joint (7 and 6 of them), set when copied
BALL = ((7, 6),)  # (first coordinate, first speed) of each ball joint (4 and 3 of them), set when copied
MUJOCO_NQ = 11  # the sizes of MuJoCo's qpos and qvel, set when copied
MUJOCO_NV = 9  # set when copied
QPOS = tuple(range(11))  # where each coordinate sits in MuJoCo's qpos, set when copied
QVEL = tuple(range(9))  # where each speed sits in MuJoCo's qvel, set when copied

# Conventions (Pinocchio's free-flyer and spherical joints): a free joint's coordinates are its position in its
# parent's frame and its unit quaternion (scalar last), its speeds its linear and angular velocity in its own frame;
# a ball joint's coordinates are the unit quaternion of its body relative to the joint's frame, its speeds the
# relative angular velocity in its body's frame. integrate and difference move a free joint by the SE(3)
# exponential of its tangent entries in its own frame, a ball joint by the SO(3) exponential, the rest additively.

_QUATERNIONS = tuple(a + 3 for a, _ in FREE) + tuple(a for a, _ in BALL)  # first entry of each unit quaternion
_SCALAR_Q = np.array(
    sorted(set(range(N_Q)) - {a + k for a, _ in FREE for k in range(7)} - {a + k for a, _ in BALL for k in range(4)}),
    dtype=int,
)
_SCALAR_V = np.array(
    sorted(set(range(N_V)) - {b + k for _, b in FREE for k in range(6)} - {b + k for _, b in BALL for k in range(3)}),
    dtype=int,
)


# spliced from _quaternion_math.py when copied: _skew, _rotation, _multiply, _series, _exp_quaternion


def _log_quaternion(quat0, quat1):
    """The rotation vector (..., 3) w with quat1 = quat0 exp(w) (the shorter rotation)."""
    conjugate = quat0 * np.array([-1.0, -1.0, -1.0, 1.0])
    relative = _multiply(conjugate, quat1)
    relative = np.where(relative[..., 3:] < 0, -relative, relative)
    sine = np.linalg.norm(relative[..., :3], axis=-1, keepdims=True)
    angle = 2 * np.arctan2(sine, relative[..., 3:])
    small = sine < 1e-8
    scale = np.where(small, 2.0 / np.where(small, 1.0, relative[..., 3:]), angle / np.where(small, 1.0, sine))
    return scale * relative[..., :3]


# spliced from _quaternion_math.py when copied: _left_jacobian, _left_jacobian_inverse


def _times(A, v):
    return np.einsum("...ij,...j->...i", A, v)


def _transposed_times(A, v):
    return np.einsum("...ji,...j->...i", A, v)


# spliced from _quaternion_math.py when copied: _configuration, _tangent


def normalize(q):
    """q with every quaternion (of each free and ball joint) scaled to unit norm."""
    q = _configuration(q, "q").copy()
    for a in _QUATERNIONS:
        norm = np.linalg.norm(q[..., a : a + 4], axis=-1, keepdims=True)
        if np.any(norm == 0):
            raise ValueError(f"normalize: the quaternion at coordinates {a} to {a + 3} is zero")
        q[..., a : a + 4] /= norm
    return q


def integrate(q, dq):
    """q moved by the tangent vector dq (length N_V): each free joint by the SE(3) exponential of its six entries
    in its own frame, each ball joint by the SO(3) exponential of its three (pinocchio.integrate), each other joint
    by its entry. Batches broadcast over leading axes."""
    q, dq = _configuration(q, "q"), _tangent(dq, "dq")
    batch = np.broadcast_shapes(q.shape[:-1], dq.shape[:-1])
    q = np.broadcast_to(q, batch + (N_Q,))
    dq = np.broadcast_to(dq, batch + (N_V,))
    out = np.empty(batch + (N_Q,))
    out[..., _SCALAR_Q] = q[..., _SCALAR_Q] + dq[..., _SCALAR_V]
    for a, b in FREE:
        quat = q[..., a + 3 : a + 7]
        translation = _times(_left_jacobian(dq[..., b + 3 : b + 6]), dq[..., b : b + 3])
        out[..., a : a + 3] = q[..., a : a + 3] + _times(_rotation(quat), translation)
        out[..., a + 3 : a + 7] = _multiply(quat, _exp_quaternion(dq[..., b + 3 : b + 6]))
    for a, b in BALL:
        out[..., a : a + 4] = _multiply(q[..., a : a + 4], _exp_quaternion(dq[..., b : b + 3]))
    return out


def difference(q0, q1):
    """The tangent vector dq (length N_V) with integrate(q0, dq) = q1 (pinocchio.difference): each free joint's by
    the SE(3) logarithm in q0's frame, each ball joint's by the SO(3) logarithm (the shorter rotations), the other
    joints' q1 - q0."""
    q0, q1 = _configuration(q0, "q0"), _configuration(q1, "q1")
    batch = np.broadcast_shapes(q0.shape[:-1], q1.shape[:-1])
    q0 = np.broadcast_to(q0, batch + (N_Q,))
    q1 = np.broadcast_to(q1, batch + (N_Q,))
    out = np.empty(batch + (N_V,))
    out[..., _SCALAR_V] = q1[..., _SCALAR_Q] - q0[..., _SCALAR_Q]
    for a, b in FREE:
        w = _log_quaternion(q0[..., a + 3 : a + 7], q1[..., a + 3 : a + 7])
        local = _transposed_times(_rotation(q0[..., a + 3 : a + 7]), q1[..., a : a + 3] - q0[..., a : a + 3])
        out[..., b : b + 3] = _times(_left_jacobian_inverse(w), local)
        out[..., b + 3 : b + 6] = w
    for a, b in BALL:
        out[..., b : b + 3] = _log_quaternion(q0[..., a : a + 4], q1[..., a : a + 4])
    return out


def tangent_kinematics(x):
    """The kinematic rows (N_V, 2 N_V) of the tangent-space linearization at x: d/dt of dq where
    q = integrate(q_bar, dq), to first order at dq = 0: [-ad(v)/2 on each free joint's block, -[w]x/2 on each ball
    joint's, I]."""
    x = np.asarray(x, dtype=float)
    v = x[..., N_Q:]
    rows = np.zeros(x.shape[:-1] + (N_V, 2 * N_V))
    rows[..., :, N_V:] = np.eye(N_V)
    for _, b in FREE:
        rows[..., b : b + 3, b : b + 3] = -0.5 * _skew(v[..., b + 3 : b + 6])
        rows[..., b : b + 3, b + 3 : b + 6] = -0.5 * _skew(v[..., b : b + 3])
        rows[..., b + 3 : b + 6, b + 3 : b + 6] = -0.5 * _skew(v[..., b + 3 : b + 6])
    for _, b in BALL:
        rows[..., b : b + 3, b : b + 3] = -0.5 * _skew(v[..., b : b + 3])
    return rows


def to_mujoco(x):
    """(qpos, qvel) in MuJoCo's layout for x = [q; v]: a free joint's qpos [x, y, z, qw, qx, qy, qz] and qvel [its
    linear velocity in the world frame, its angular velocity in its own frame], a ball joint's qpos [qw, qx, qy, qz]
    and qvel its speeds, every other joint's entry (QPOS, QVEL: the places)."""
    x = np.asarray(x, dtype=float)
    if x.ndim == 0 or x.shape[-1] != N_Q + N_V:
        raise ValueError(f"x must have {N_Q + N_V} entries (the state) on its last axis, got shape {x.shape}")
    q, v = x[..., :N_Q], x[..., N_Q:].copy()
    for a, b in FREE:
        v[..., b : b + 3] = _times(_rotation(q[..., a + 3 : a + 7]), v[..., b : b + 3])
    qpos = np.zeros(x.shape[:-1] + (MUJOCO_NQ,))
    qvel = np.zeros(x.shape[:-1] + (MUJOCO_NV,))
    qpos[..., QPOS] = q
    qvel[..., QVEL] = v
    return qpos, qvel


def from_mujoco(qpos, qvel):
    """x = [q; v] from MuJoCo's qpos (..., MUJOCO_NQ) and qvel (..., MUJOCO_NV) (the inverse of to_mujoco)."""
    qpos, qvel = np.asarray(qpos, dtype=float), np.asarray(qvel, dtype=float)
    if qpos.ndim == 0 or qpos.shape[-1] != MUJOCO_NQ or qvel.ndim == 0 or qvel.shape[-1] != MUJOCO_NV:
        raise ValueError(
            f"from_mujoco: qpos must have length {MUJOCO_NQ} and qvel {MUJOCO_NV}, got {qpos.shape} and {qvel.shape}"
        )
    batch = np.broadcast_shapes(qpos.shape[:-1], qvel.shape[:-1])
    q = np.broadcast_to(qpos[..., QPOS], batch + (N_Q,))
    v = np.array(np.broadcast_to(qvel[..., QVEL], batch + (N_V,)))
    for a, b in FREE:
        v[..., b : b + 3] = _transposed_times(_rotation(q[..., a + 3 : a + 7]), v[..., b : b + 3])
    return np.concatenate([q, v], axis=-1)
