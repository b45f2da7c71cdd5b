# The helpers of the Python target's quaternion runtimes (_free_flyer.py: one free-flyer base first; _quaternions.py:
# any layout of free and ball joints), written once: sls.backends.python.files splices each function below into those
# runtimes where a line "# spliced from _quaternion_math.py when copied: NAMES" lists it, so a generated package's
# _free_flyer.py stays one file that needs numpy alone. Only the functions are spliced (not these leading comment
# lines, the import or the stand-in sizes).

import numpy as np

N_Q = 7  # stands for the number of coordinates of the runtime the helpers are spliced into (its own N_Q)
N_V = 6  # stands for its number of speeds (its own N_V)


def _skew(w):
    """[w]x of vectors w (..., 3): (..., 3, 3)."""
    zero = np.zeros(w.shape[:-1])
    return np.stack(
        [
            np.stack([zero, -w[..., 2], w[..., 1]], -1),
            np.stack([w[..., 2], zero, -w[..., 0]], -1),
            np.stack([-w[..., 1], w[..., 0], zero], -1),
        ],
        -2,
    )


def _rotation(quat):
    """R (..., 3, 3) of unit quaternions (..., 4) [qx, qy, qz, qw]: the rotated frame to its reference frame."""
    x, y, z, w = np.moveaxis(quat, -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def _multiply(a, b):
    """Quaternion products a b of (..., 4) arrays [qx, qy, qz, qw]."""
    av, aw = a[..., :3], a[..., 3:]
    bv, bw = b[..., :3], b[..., 3:]
    vector = aw * bv + bw * av + np.cross(av, bv)
    scalar = aw * bw - np.sum(av * bv, axis=-1, keepdims=True)
    return np.concatenate([vector, scalar], axis=-1)


def _series(theta):
    """(sin t / t, (1 - cos t) / t^2, (t - sin t) / t^3) at angles theta (...), by Taylor series near 0."""
    small = theta < 1e-4
    t = np.where(small, 1.0, theta)
    t2 = theta * theta
    a = np.where(small, 1 - t2 / 6, np.sin(t) / t)
    b = np.where(small, 0.5 - t2 / 24, (1 - np.cos(t)) / (t * t))
    c = np.where(small, 1.0 / 6 - t2 / 120, (t - np.sin(t)) / (t * t * t))
    return a, b, c


def _exp_quaternion(w):
    """The unit quaternion (..., 4) of the rotation vector w (..., 3)."""
    theta = np.linalg.norm(w, axis=-1, keepdims=True)
    half = 0.5 * theta
    small = theta < 1e-4
    scale = np.where(small, 0.5 - theta * theta / 48, np.sin(half) / np.where(small, 1.0, theta))
    return np.concatenate([scale * w, np.cos(half)], axis=-1)


def _left_jacobian(w):
    """V(w) = I + (1 - cos t)/t^2 [w]x + (t - sin t)/t^3 [w]x^2: the translation part of the SE(3) exponential."""
    theta = np.linalg.norm(w, axis=-1)
    _, b, c = _series(theta)
    K = _skew(w)
    return np.eye(3) + b[..., None, None] * K + c[..., None, None] * (K @ K)


def _left_jacobian_inverse(w):
    """V(w)^-1 = I - [w]x / 2 + (1 - t sin t / (2 (1 - cos t))) / t^2 [w]x^2."""
    theta = np.linalg.norm(w, axis=-1)
    small = theta < 1e-4
    t = np.where(small, 1.0, theta)
    d = np.where(small, 1.0 / 12 + theta * theta / 720, (1 - t * np.sin(t) / (2 * (1 - np.cos(t)))) / (t * t))
    K = _skew(w)
    return np.eye(3) - 0.5 * K + d[..., None, None] * (K @ K)


def _configuration(q, name):
    q = np.asarray(q, dtype=float)
    if q.ndim < 1 or q.shape[-1] != N_Q:
        raise ValueError(f"{name} must have length {N_Q} (the coordinates), got shape {q.shape}")
    return q


def _tangent(v, name):
    v = np.asarray(v, dtype=float)
    if v.ndim < 1 or v.shape[-1] != N_V:
        raise ValueError(f"{name} must have length {N_V} (one entry per speed), got shape {v.shape}")
    return v
