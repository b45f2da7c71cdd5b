"""MuJoCo as the reference of the MJCF tests: the smooth dynamics sls models, and sls's speeds against MuJoCo's.

MuJoCo's free joint has its linear velocity in the world's frame and its angular velocity in its own; sls's free
joint has both in the body's frame (a ball joint's speeds are the same in both). With ``J`` the block diagonal of
every free body's orientation on its linear speeds (``qvel = J ν``): ``M_fun = Jᵀ mj_fullM J``, ``tau_fun = Jᵀ
qfrc_inverse`` and ``ν̇`` from ``qacc`` by :func:`speed_rates`. Imported by test files that have already skipped
without MuJoCo."""

from __future__ import annotations

import mujoco
import numpy as np

#: ``mjtJoint``: the quaternion joints.
FREE, BALL = 0, 1


def smooth(m):
    """``m`` without contacts, constraints (limits, frictionloss) and clamping: the smooth dynamics sls models."""
    m.opt.disableflags |= mujoco.mjtDisableBit.mjDSBL_CONTACT | mujoco.mjtDisableBit.mjDSBL_CONSTRAINT
    m.actuator_ctrllimited[:] = 0
    m.actuator_forcelimited[:] = 0
    m.jnt_actfrclimited[:] = 0
    return m


def full_mass_matrix(m, d) -> np.ndarray:
    """``mj_fullM`` (nv × nv), armature included."""
    M = np.zeros((m.nv, m.nv))
    try:
        mujoco.mj_fullM(m, d, M)
    except TypeError:  # MuJoCo 3
        mujoco.mj_fullM(m, M, d.qM)
    return M


def relative(a, b) -> float:
    """The largest difference of ``a`` and ``b`` relative to ``max(1, |b|)``."""
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(b).max(), 1.0))


def free_joints(m) -> list:
    return [j for j in range(m.njnt) if m.jnt_type[j] == FREE]


def speed_map(m, d) -> np.ndarray:
    """``J`` with ``qvel = J ν``: each free body's orientation on its linear block, ``I`` elsewhere."""
    J = np.eye(m.nv)
    for j in free_joints(m):
        a = m.jnt_dofadr[j]
        J[a : a + 3, a : a + 3] = d.xmat[m.jnt_bodyid[j]].reshape(3, 3)
    return J


def speed_rates(m, d, v) -> np.ndarray:
    """``ν̇`` from MuJoCo's ``qacc`` at the speeds ``v`` (sls's, nv): ``v̇ = Rᵀ a − ω × v`` on each free joint's
    linear speeds, else ``qacc``."""
    rates = d.qacc.copy()
    for j in free_joints(m):
        a = m.jnt_dofadr[j]
        R = d.xmat[m.jnt_bodyid[j]].reshape(3, 3)
        rates[a : a + 3] = R.T @ d.qacc[a : a + 3] - np.cross(v[a + 3 : a + 6], v[a : a + 3])
    return rates


def random_state(m, d, rng) -> None:
    """A random ``qpos`` (every quaternion unit) and ``qvel`` in ``d``."""
    d.qpos[:] = rng.uniform(-1, 1, m.nq)
    for j in range(m.njnt):
        if m.jnt_type[j] in (FREE, BALL):
            a = m.jnt_qposadr[j] + (3 if m.jnt_type[j] == FREE else 0)
            d.qpos[a : a + 4] /= np.linalg.norm(d.qpos[a : a + 4])
    d.qvel[:] = rng.uniform(-1.5, 1.5, m.nv)
