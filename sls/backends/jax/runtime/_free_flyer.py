# Runtime of a generated JAX package whose robot has a quaternion free-flyer base (Pinocchio's layout), in jax.numpy:
# the numpy target's _free_flyer (integrate, difference, normalize, the tangent-space kinematics, MuJoCo's layout).
# Copied as _free_flyer.py after the package's header by sls.backends.jax, with the model's N_Q and N_V; these
# leading comment lines are not copied.

import jax.numpy as jnp

from . import _runtime

N_Q = 7  # the model's number of coordinates (7 of the base, then one per joint), set when copied
N_V = 6  # its number of speeds (6 of the base, then one per joint), set when copied

# Conventions: q = [x, y, z, qx, qy, qz, qw, joints...] (position in the world, unit quaternion, scalar last),
# v = [vx, vy, vz, wx, wy, wz, joint rates...] (the base's linear and angular velocity in its own frame).
# integrate and difference are Pinocchio's: the base moves by the SE(3) exponential of dq in its own frame.
# Every function takes leading batch axes; the small-angle branches are jnp.where on safe arguments, so jax.grad
# stays finite at zero rotation.


def _skew(w):
    """[w]x of vectors w (..., 3): (..., 3, 3)."""
    zero = jnp.zeros(w.shape[:-1], w.dtype)
    return jnp.stack(
        [
            jnp.stack([zero, -w[..., 2], w[..., 1]], -1),
            jnp.stack([w[..., 2], zero, -w[..., 0]], -1),
            jnp.stack([-w[..., 1], w[..., 0], zero], -1),
        ],
        -2,
    )


def _rotation(quat):
    """R (..., 3, 3) of unit quaternions (..., 4) [qx, qy, qz, qw]: base frame to world."""
    x, y, z, w = (quat[..., i] for i in range(4))
    return jnp.stack(
        [
            jnp.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
            jnp.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
            jnp.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def _multiply(a, b):
    """Quaternion products a b of (..., 4) arrays [qx, qy, qz, qw]."""
    av, aw = a[..., :3], a[..., 3:]
    bv, bw = b[..., :3], b[..., 3:]
    vector = aw * bv + bw * av + jnp.cross(av, bv)
    scalar = aw * bw - jnp.sum(av * bv, axis=-1, keepdims=True)
    return jnp.concatenate([vector, scalar], axis=-1)


def _norm(w):
    """|w| of vectors (..., 3), with a finite gradient at 0."""
    squared = jnp.sum(w * w, axis=-1)
    positive = squared > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, squared, 1.0)), 0.0)


def _series(theta):
    """((1 - cos t) / t^2, (t - sin t) / t^3) at angles theta (...), by Taylor series near 0."""
    small = theta < 1e-4
    t = jnp.where(small, 1.0, theta)
    t2 = theta * theta
    b = jnp.where(small, 0.5 - t2 / 24, (1 - jnp.cos(t)) / (t * t))
    c = jnp.where(small, 1.0 / 6 - t2 / 120, (t - jnp.sin(t)) / (t * t * t))
    return b, c


def _exp_quaternion(w):
    """The unit quaternion (..., 4) of the rotation vector w (..., 3)."""
    theta = _norm(w)[..., None]
    half = 0.5 * theta
    small = theta < 1e-4
    scale = jnp.where(small, 0.5 - theta * theta / 48, jnp.sin(half) / jnp.where(small, 1.0, theta))
    return jnp.concatenate([scale * w, jnp.cos(half)], axis=-1)


def _left_jacobian(w):
    """V(w) = I + (1 - cos t)/t^2 [w]x + (t - sin t)/t^3 [w]x^2: the translation part of the SE(3) exponential."""
    b, c = _series(_norm(w))
    K = _skew(w)
    return jnp.eye(3, dtype=w.dtype) + b[..., None, None] * K + c[..., None, None] * (K @ K)


def _left_jacobian_inverse(w):
    """V(w)^-1 = I - [w]x / 2 + (1 - t sin t / (2 (1 - cos t))) / t^2 [w]x^2."""
    theta = _norm(w)
    small = theta < 1e-4
    t = jnp.where(small, 1.0, theta)
    d = jnp.where(small, 1.0 / 12 + theta * theta / 720, (1 - t * jnp.sin(t) / (2 * (1 - jnp.cos(t)))) / (t * t))
    K = _skew(w)
    return jnp.eye(3, dtype=w.dtype) - 0.5 * K + d[..., None, None] * (K @ K)


def _pair(a, size_a, name_a, b, size_b, name_b):
    """Two arrays checked (last axes), in one floating type, broadcast over their batch axes."""
    a, b = _runtime.floats((a, size_a, name_a), (b, size_b, name_b))
    batch = jnp.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    return jnp.broadcast_to(a, batch + (size_a,)), jnp.broadcast_to(b, batch + (size_b,))


def normalize(q):
    """q with its base quaternion scaled to unit norm (the coordinates as a simulation should keep them; NaN where
    the quaternion is zero: a traced function cannot raise)."""
    (q,) = _runtime.floats((q, N_Q, "q"))
    quat = q[..., 3:7]
    return jnp.concatenate([q[..., :3], quat / jnp.linalg.norm(quat, axis=-1, keepdims=True), q[..., 7:]], axis=-1)


def integrate(q, dq):
    """q moved by the tangent vector dq (length N_V): the base by the SE(3) exponential of dq[:6] in its own
    frame (pinocchio.integrate), each joint by its entry. Batches broadcast over leading axes."""
    q, dq = _pair(q, N_Q, "q", dq, N_V, "dq")
    quat = q[..., 3:7]
    translation = jnp.einsum("...ij,...j->...i", _left_jacobian(dq[..., 3:6]), dq[..., 0:3])
    position = q[..., 0:3] + jnp.einsum("...ij,...j->...i", _rotation(quat), translation)
    turned = _multiply(quat, _exp_quaternion(dq[..., 3:6]))
    return jnp.concatenate([position, turned, q[..., 7:] + dq[..., 6:]], axis=-1)


def difference(q0, q1):
    """The tangent vector dq (length N_V) with integrate(q0, dq) = q1 (pinocchio.difference): the base's by the
    SE(3) logarithm in q0's base frame (the shorter rotation), the joints' q1 - q0."""
    q0, q1 = _pair(q0, N_Q, "q0", q1, N_Q, "q1")
    conjugate = q0[..., 3:7] * jnp.array([-1.0, -1.0, -1.0, 1.0], q0.dtype)
    relative = _multiply(conjugate, q1[..., 3:7])
    relative = jnp.where(relative[..., 3:] < 0, -relative, relative)
    sine = _norm(relative[..., :3])[..., None]
    angle = 2 * jnp.arctan2(sine, relative[..., 3:])
    small = sine < 1e-8
    scale = jnp.where(small, 2.0 / jnp.where(small, 1.0, relative[..., 3:]), angle / jnp.where(small, 1.0, sine))
    w = scale * relative[..., :3]
    local = jnp.einsum("...ji,...j->...i", _rotation(q0[..., 3:7]), q1[..., 0:3] - q0[..., 0:3])
    translation = jnp.einsum("...ij,...j->...i", _left_jacobian_inverse(w), local)
    return jnp.concatenate([translation, w, q1[..., 7:] - q0[..., 7:]], axis=-1)


def tangent_kinematics(x):
    """The kinematic rows (N_V, 2 N_V) of the tangent-space linearization at one state x: d/dt of dq where
    q = integrate(q_bar, dq), to first order at dq = 0: [-ad(v_base)/2 on the base block, I]."""
    v = x[N_Q : N_Q + 6]
    zero = jnp.zeros((3, 3), x.dtype)
    ad = jnp.block([[_skew(v[3:6]), _skew(v[0:3])], [zero, _skew(v[3:6])]])
    rows = jnp.concatenate([jnp.zeros((N_V, N_V), x.dtype), jnp.eye(N_V, dtype=x.dtype)], axis=1)
    return rows.at[0:6, 0:6].set(-0.5 * ad)


def to_mujoco(x):
    """(qpos, qvel) in MuJoCo's layout for x = [q; v]: qpos = [x, y, z, qw, qx, qy, qz, joints], qvel = [the base's
    linear velocity in the world frame, its angular velocity in its own frame, joint rates]."""
    (x,) = _runtime.floats((x, N_Q + N_V, "x"))
    q, v = x[..., :N_Q], x[..., N_Q:]
    qpos = jnp.concatenate([q[..., 0:3], q[..., 6:7], q[..., 3:6], q[..., 7:]], axis=-1)
    world = jnp.einsum("...ij,...j->...i", _rotation(q[..., 3:7]), v[..., 0:3])
    return qpos, jnp.concatenate([world, v[..., 3:]], axis=-1)


def from_mujoco(qpos, qvel):
    """x = [q; v] from MuJoCo's qpos and qvel (the inverse of to_mujoco)."""
    qpos, qvel = _pair(qpos, N_Q, "qpos", qvel, N_V, "qvel")
    quat = jnp.concatenate([qpos[..., 4:7], qpos[..., 3:4]], axis=-1)
    local = jnp.einsum("...ji,...j->...i", _rotation(quat), qvel[..., 0:3])
    return jnp.concatenate([qpos[..., 0:3], quat, qpos[..., 7:], local, qvel[..., 3:]], axis=-1)
