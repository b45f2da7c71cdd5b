# Runtime of a generated package whose robot has a quaternion free-flyer base (Pinocchio's layout): moving on the
# configuration space, the tangent-space linearization, and MuJoCo's layout. Copied as _free_flyer.py after the
# package's header by sls.backends.python, with the model's N_Q and N_V and with the helpers of _quaternion_math.py
# (shared with _quaternions.py) spliced in where a line names them; these leading comment lines are not copied.

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

N_Q = 7  # the model's number of coordinates (7 of the base, then one per joint), set when copied
N_V = 6  # its number of speeds (6 of the base, then one per joint), set when copied

# Conventions: q = [x, y, z, qx, qy, qz, qw, joints...] (position in the world, unit quaternion, scalar last),
# v = [vx, vy, vz, wx, wy, wz, joint rates...] (the base's linear and angular velocity in its own frame).
# integrate and difference are Pinocchio's: the base moves by the SE(3) exponential of dq in its own frame.


# spliced from _quaternion_math.py when copied: _skew, _rotation, _multiply, _series, _exp_quaternion


# spliced from _quaternion_math.py when copied: _left_jacobian, _left_jacobian_inverse, _configuration, _tangent


def normalize(q):
    """q with its base quaternion scaled to unit norm (the coordinates as a simulation should keep them)."""
    q = _configuration(q, "q").copy()
    norm = np.linalg.norm(q[..., 3:7], axis=-1, keepdims=True)
    if np.any(norm == 0):
        raise ValueError("normalize: the base quaternion is zero")
    q[..., 3:7] /= norm
    return q


def integrate(q, dq):
    """q moved by the tangent vector dq (length N_V): the base by the SE(3) exponential of dq[:6] in its own
    frame (pinocchio.integrate), each joint by its entry. Batches broadcast over leading axes."""
    q, dq = _configuration(q, "q"), _tangent(dq, "dq")
    batch = np.broadcast_shapes(q.shape[:-1], dq.shape[:-1])
    q = np.broadcast_to(q, batch + (N_Q,))
    dq = np.broadcast_to(dq, batch + (N_V,))
    out = np.empty(batch + (N_Q,))
    quat = q[..., 3:7]
    R = _rotation(quat)
    translation = np.einsum("...ij,...j->...i", _left_jacobian(dq[..., 3:6]), dq[..., 0:3])
    out[..., 0:3] = q[..., 0:3] + np.einsum("...ij,...j->...i", R, translation)
    out[..., 3:7] = _multiply(quat, _exp_quaternion(dq[..., 3:6]))
    out[..., 7:] = q[..., 7:] + dq[..., 6:]
    return out


def difference(q0, q1):
    """The tangent vector dq (length N_V) with integrate(q0, dq) = q1 (pinocchio.difference): the base's by the
    SE(3) logarithm in q0's base frame (the shorter rotation), the joints' q1 - q0."""
    q0, q1 = _configuration(q0, "q0"), _configuration(q1, "q1")
    batch = np.broadcast_shapes(q0.shape[:-1], q1.shape[:-1])
    q0 = np.broadcast_to(q0, batch + (N_Q,))
    q1 = np.broadcast_to(q1, batch + (N_Q,))
    conjugate = q0[..., 3:7] * np.array([-1.0, -1.0, -1.0, 1.0])
    relative = _multiply(conjugate, q1[..., 3:7])
    relative = np.where(relative[..., 3:] < 0, -relative, relative)
    sine = np.linalg.norm(relative[..., :3], axis=-1, keepdims=True)
    angle = 2 * np.arctan2(sine, relative[..., 3:])
    small = sine < 1e-8
    scale = np.where(small, 2.0 / np.where(small, 1.0, relative[..., 3:]), angle / np.where(small, 1.0, sine))
    w = scale * relative[..., :3]
    R0 = _rotation(q0[..., 3:7])
    local = np.einsum("...ji,...j->...i", R0, q1[..., 0:3] - q0[..., 0:3])
    out = np.empty(batch + (N_V,))
    out[..., 0:3] = np.einsum("...ij,...j->...i", _left_jacobian_inverse(w), local)
    out[..., 3:6] = w
    out[..., 6:] = q1[..., 7:] - q0[..., 7:]
    return out


def tangent_kinematics(x):
    """The kinematic rows (N_V, 2 N_V) of the tangent-space linearization at x: d/dt of dq where
    q = integrate(q_bar, dq), to first order at dq = 0: [-ad(v_base)/2 on the base block, I]."""
    x = np.asarray(x, dtype=float)
    v = x[..., N_Q : N_Q + 6]
    ad = np.zeros(x.shape[:-1] + (6, 6))
    ad[..., 0:3, 0:3] = _skew(v[..., 3:6])
    ad[..., 0:3, 3:6] = _skew(v[..., 0:3])
    ad[..., 3:6, 3:6] = _skew(v[..., 3:6])
    rows = np.zeros(x.shape[:-1] + (N_V, 2 * N_V))
    rows[..., :, N_V:] = np.eye(N_V)
    rows[..., 0:6, 0:6] = -0.5 * ad
    return rows


def to_mujoco(x):
    """(qpos, qvel) in MuJoCo's layout for x = [q; v]: qpos = [x, y, z, qw, qx, qy, qz, joints], qvel = [the base's
    linear velocity in the world frame, its angular velocity in its own frame, joint rates] (a free joint first,
    then the joints in this package's order)."""
    x = np.asarray(x, dtype=float)
    q, v = x[..., :N_Q], x[..., N_Q:]
    qpos = np.concatenate([q[..., 0:3], q[..., 6:7], q[..., 3:6], q[..., 7:]], axis=-1)
    world = np.einsum("...ij,...j->...i", _rotation(q[..., 3:7]), v[..., 0:3])
    qvel = np.concatenate([world, v[..., 3:]], axis=-1)
    return qpos, qvel


def from_mujoco(qpos, qvel):
    """x = [q; v] from MuJoCo's qpos and qvel (the inverse of to_mujoco)."""
    qpos, qvel = np.asarray(qpos, dtype=float), np.asarray(qvel, dtype=float)
    if qpos.shape[-1] != N_Q or qvel.shape[-1] != N_V:
        raise ValueError(f"from_mujoco: qpos must have length {N_Q} and qvel {N_V}, got {qpos.shape} and {qvel.shape}")
    quat = np.concatenate([qpos[..., 4:7], qpos[..., 3:4]], axis=-1)
    q = np.concatenate([qpos[..., 0:3], quat, qpos[..., 7:]], axis=-1)
    local = np.einsum("...ji,...j->...i", _rotation(quat), qvel[..., 0:3])
    v = np.concatenate([local, qvel[..., 3:]], axis=-1)
    batch = np.broadcast_shapes(q.shape[:-1], v.shape[:-1])
    return np.concatenate([np.broadcast_to(q, batch + (N_Q,)), np.broadcast_to(v, batch + (N_V,))], axis=-1)
