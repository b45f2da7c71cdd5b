"""The MJCF reader's rotations against MuJoCo's and numpy's, and its constants against MuJoCo's enumerations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sls.model.tree import rpy_matrix
from sls.readers.mjcf import actuators, checks, frames, structure

mujoco = pytest.importorskip("mujoco")


def random_quaternions(rng: np.random.Generator, count: int) -> list:
    quats = [q / np.linalg.norm(q) for q in rng.normal(size=(count, 4))]
    # at and near pitch ±90°, where one roll-pitch-yaw triple loses precision
    for pitch in (math.pi / 2, -math.pi / 2, math.pi / 2 - 1e-9, math.pi / 2 - 1e-6, math.pi / 2 - 1e-4):
        for yaw in (0.0, 0.7):
            q = np.zeros(4)
            mujoco.mju_euler2Quat(q, np.array([0.3, pitch, yaw]), "XYZ")
            quats.append(q / np.linalg.norm(q))
    quats.append(np.array([0.7071068, 0.0, 0.7071068, 0.0]) / np.linalg.norm([0.7071068, 0.7071068]))
    return quats


def test_quaternions_as_matrices_equal_mujoco():
    for q in random_quaternions(np.random.default_rng(7), 50):
        R = np.zeros(9)
        mujoco.mju_quat2Mat(R, q)
        assert np.abs(np.array(frames.quat_matrix(q)) - R.reshape(3, 3)).max() <= 4e-16
    assert frames.quat_matrix([1.0, 0.0, 0.0, 0.0]) == frames.IDENTITY


def test_roll_pitch_yaw_chains_are_exact_at_every_angle():
    for q in random_quaternions(np.random.default_rng(8), 200):
        R = frames.quat_matrix(q)
        product = np.eye(3)
        for rpy in frames.rpy_chain(R):
            product = product @ np.array(rpy_matrix(rpy))
        assert np.abs(product - np.array(R)).max() <= 1e-15
    assert frames.rpy_chain(frames.IDENTITY) == ((0.0, 0.0, 0.0),)


@pytest.mark.parametrize("gravity", [(0, 0, -9.81), (0, 0, 9.81), (1e-5, 0, -9.81), (3, -2, -9), (0, 5, 0)])
def test_gravity_rotation_turns_gravity_down(gravity):
    R = np.array(frames.gravity_rotation(gravity))
    assert np.abs(R @ R.T - np.eye(3)).max() <= 1e-15 and np.linalg.det(R) > 0
    down = R @ np.array(gravity, dtype=float) / np.linalg.norm(gravity)
    assert np.abs(down - [0.0, 0.0, -1.0]).max() <= 1e-15


def test_constants_are_mujocos():
    assert (structure.FREE, structure.BALL, structure.SLIDE, structure.HINGE) == (
        mujoco.mjtJoint.mjJNT_FREE,
        mujoco.mjtJoint.mjJNT_BALL,
        mujoco.mjtJoint.mjJNT_SLIDE,
        mujoco.mjtJoint.mjJNT_HINGE,
    )
    trn, dyn, gain, bias = mujoco.mjtTrn, mujoco.mjtDyn, mujoco.mjtGain, mujoco.mjtBias
    assert (actuators.TRN_JOINT, actuators.TRN_JOINTINPARENT, actuators.TRN_TENDON) == (
        trn.mjTRN_JOINT,
        trn.mjTRN_JOINTINPARENT,
        trn.mjTRN_TENDON,
    )
    assert actuators.DYN_NONE == dyn.mjDYN_NONE and actuators.WRAP_JOINT == mujoco.mjtWrap.mjWRAP_JOINT
    assert (actuators.GAIN_FIXED, actuators.GAIN_AFFINE) == (gain.mjGAIN_FIXED, gain.mjGAIN_AFFINE)
    assert (actuators.BIAS_NONE, actuators.BIAS_AFFINE) == (bias.mjBIAS_NONE, bias.mjBIAS_AFFINE)
    flags = mujoco.mjtDisableBit
    assert (
        checks.DISABLE_CONSTRAINT,
        checks.DISABLE_FRICTIONLOSS,
        checks.DISABLE_SPRING,
        checks.DISABLE_DAMPER,
        checks.DISABLE_GRAVITY,
        checks.DISABLE_ACTUATION,
    ) == (
        flags.mjDSBL_CONSTRAINT,
        flags.mjDSBL_FRICTIONLOSS,
        flags.mjDSBL_SPRING,
        flags.mjDSBL_DAMPER,
        flags.mjDSBL_GRAVITY,
        flags.mjDSBL_ACTUATION,
    )
