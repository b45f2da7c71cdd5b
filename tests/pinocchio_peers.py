"""Pinocchio as the robots' reference: example-robot-data's files, and the peer models several test files build
(Solo-12 standing on its four feet). Imported by test files that have already skipped without Pinocchio."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pinocchio as pin

#: example-robot-data's robots, installed beside Pinocchio's Python package.
ROBOTS = Path(pin.__file__).resolve().parents[4] / "share/example-robot-data/robots"
SOLO = ROBOTS / "solo_description/robots/solo12.urdf"
FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
#: Solo-12's joint motors, leg by leg.
SOLO_JOINTS = [f"{leg}_{joint}" for leg in ("FL", "FR", "HL", "HR") for joint in ("HAA", "HFE", "KFE")]
#: Solo-12 standing: its trunk 0.24 m up, level, the knees bent (Pinocchio's configuration layout).
SOLO_STANDING = np.array([0, 0, 0.24, 0, 0, 0, 1] + [0, 0.8, -1.6, 0, 0.8, -1.6, 0, -0.8, 1.6, 0, -0.8, 1.6])


def solo_on_feet() -> tuple:
    """Pinocchio's Solo-12 with a free-flyer, its four 3-D contact models at the feet (LOCAL_WORLD_ALIGNED) and their
    datas: (model, contact models, contact datas)."""
    peer = pin.buildModelFromUrdf(str(SOLO), pin.JointModelFreeFlyer())
    contacts = pin.StdVec_RigidConstraintModel()
    for foot in FEET:
        frame = peer.frames[peer.getFrameId(foot)]
        contacts.append(
            pin.RigidConstraintModel(
                pin.ContactType.CONTACT_3D, peer, frame.parentJoint, frame.placement, pin.LOCAL_WORLD_ALIGNED
            )
        )
    datas = pin.StdVec_RigidConstraintData()
    for contact in contacts:
        datas.append(contact.createData())
    return peer, contacts, datas


def feet_places(peer: pin.Model, q: np.ndarray) -> dict:
    """Where each foot of :data:`FEET` is at configuration ``q`` (world frame, 3 numbers each)."""
    data = peer.createData()
    pin.framesForwardKinematics(peer, data, q)
    return {foot: data.oMf[peer.getFrameId(foot)].translation.copy() for foot in FEET}


def random_state(peer: pin.Model, rng: np.random.Generator) -> np.ndarray:
    """A random configuration (Pinocchio's, positions in [-1, 1]) and normal random speeds."""
    q = pin.randomConfiguration(peer, -np.ones(peer.nq), np.ones(peer.nq))
    return np.concatenate([q, rng.normal(size=peer.nv)])
