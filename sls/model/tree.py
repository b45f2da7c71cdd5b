"""A robot's kinematic tree, as the URDF reader parses it and the tree derivation walks it.

The types are the model stage's (a :class:`~sls.model.Model` carries its tree in :attr:`Model.tree`), so that
the derivation (:mod:`sls.derive.rigid_body`) never imports a reader. Joints are those of URDF: their origin's
rotation follows URDF's fixed-axis roll, pitch, yaw convention (:func:`rpy_matrix`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, fields

#: Joint types that move (revolute, continuous, prismatic): the others are fixed (floating and planar joints
#: are expanded into chains of these by the reader, or a root floating joint becomes a :data:`FREE` joint).
MOVABLE_TYPES = ("revolute", "continuous", "prismatic")
#: The quaternion free-flyer (:mod:`sls.model.free_flyer`): 7 coordinates, 6 speeds; a joint of a body of the world.
FREE = "free"
#: The quaternion ball (spherical) joint (:mod:`sls.model.free_flyer`): 4 coordinates, 3 speeds; anywhere in the tree.
BALL = "ball"
#: Joint kinds whose orientation is a unit quaternion, with their numbers of coordinates and speeds.
QUATERNION_SIZES = {FREE: (7, 6), BALL: (4, 3)}


@dataclass(frozen=True)
class Inertial:
    """A link's mass, centre of mass ``com`` and inertia about it, both in the link's frame."""

    mass: float
    com: tuple
    inertia: tuple  # 3x3, rotated into the link's frame


@dataclass(frozen=True)
class Joint:
    """One ``<joint>``: numbers as floats; ``axis`` normalised (unused for fixed joints)."""

    name: str
    kind: str
    parent: str
    child: str
    xyz: tuple
    rpy: tuple
    axis: tuple
    damping: float
    #: Coulomb friction force/torque of ``<dynamics friction>`` (0: none).
    friction: float = 0.0
    #: ``(followed joint name, multiplier, offset)`` of a ``<mimic>`` joint: it is not a
    #: coordinate; its position is ``multiplier·q_followed + offset``, its rate ``multiplier·q̇_followed``.
    #: The followed joint is always a coordinate (chains of mimic joints are resolved).
    mimic: tuple | None = None


@dataclass(frozen=True)
class Base:
    """A ``floating`` or ``planar`` joint (or the free-flyer of ``floating_base``) and the chain it became.

    ``kind`` is ``floating``, ``planar`` or :data:`FREE` (a quaternion free-flyer: one joint of that kind).
    ``joints`` are the names of the chain's joints (floating: x, y, z, yaw, pitch, roll; planar: x, y,
    theta; free: the joint itself); ``link`` is the child link the body wrench acts on; ``axes`` are the
    wrench's directions in that link's frame, one ``(suffix, force direction or None, moment direction or None)``
    per input.
    """

    name: str
    kind: str
    joints: tuple
    link: str
    axes: tuple


@dataclass(frozen=True)
class Slot:
    """Where one joint that is a coordinate keeps its coordinates and speeds in the model's ``q`` and ``v``:
    ``q`` and ``v`` are the indices of its first ones, ``n_q`` and ``n_v`` their numbers (a free joint 7 and 6,
    a ball joint 4 and 3, a revolute or prismatic joint 1 and 1). ``kind`` is the joint's."""

    joint: Joint
    kind: str
    q: int
    v: int
    n_q: int
    n_v: int


@dataclass(frozen=True)
class MujocoLayout:
    """Where a model read from an MJCF file keeps its coordinates in MuJoCo's ``qpos`` (``nq`` entries) and
    ``qvel`` (``nv``): ``qpos[k]`` and ``qvel[k]`` are the addresses of coordinate ``k`` and speed ``k`` in them
    (a free joint's seven and six first, its ``qx qy qz qw`` at MuJoCo's ``qw qx qy qz`` and its linear speeds in
    its body's frame where MuJoCo's are in the world's; then one entry each per hinge or slide joint,
    ``Robot.movable`` order)."""

    nq: int
    nv: int
    qpos: tuple
    qvel: tuple


@dataclass(frozen=True)
class Robot:
    """A parsed, checked URDF tree: the root link, joints in tree order, inertials by link (``None``: none).

    Floating and planar joints are already expanded (``bases`` lists them); ``joints`` hold only
    revolute, continuous, prismatic and fixed joints. ``name`` is the file's ``<robot name>`` as written
    (``""``: none); it names the model, not its dynamics, so it is left out of the tree's ``repr`` (the
    model fingerprint, :func:`sls.backends.render.fingerprint`) and of comparisons.

    The last three fields are set by the MJCF reader (:mod:`sls.readers.mjcf`) and shown in the ``repr`` only
    when set (a URDF tree keeps the ``repr`` it always had): ``armature``, per coordinate, the rotor inertia
    added to the diagonal of ``M`` (empty: none); ``springs``, a potential energy besides gravity (the joints'
    springs ``½ k (q − q_ref)²``, a sympy expression in the coordinates and parameters; ``0``: none);
    ``mujoco``, the coordinates' places in MuJoCo's ``qpos`` and ``qvel``.
    """

    root: str
    joints: tuple
    inertials: dict
    bases: tuple = ()
    name: str = field(default="", repr=False, compare=False)
    armature: tuple = ()
    springs: object = 0
    mujoco: MujocoLayout | None = None
    #: The moving links whose ten inertial parameters are symbols (:mod:`sls.model.inertial`), tree order; ``()``:
    #: every inertia a number (then left out of the ``repr``, as the MJCF fields).
    inertial_params: tuple = ()

    def __repr__(self) -> str:
        """The dataclass ``repr``, without the MJCF fields that are not set."""
        shown = []
        for f in fields(self):
            value = getattr(self, f.name)
            if f.repr and not (f.name in _MJCF_FIELDS and value == f.default):
                shown.append(f"{f.name}={value!r}")
        return f"Robot({', '.join(shown)})"

    @property
    def movable(self) -> tuple:
        """The movable joints that are coordinates (not mimic joints), in tree order."""
        return tuple(j for j in self.joints if j.kind in MOVABLE_TYPES and j.mimic is None)

    @property
    def free(self) -> Joint | None:
        """The first quaternion free-flyer joint (a body of the world; its coordinates and speeds come first when
        it is the tree's first joint that moves), or ``None``."""
        return next((j for j in self.joints if j.kind == FREE), None)

    @property
    def slots(self) -> tuple:
        """One :class:`Slot` per joint that is a coordinate (free, ball, and the movable joints that are not mimic
        joints), in tree order: the model's ``q`` is their coordinates in this order, ``v`` their speeds."""
        found, q, v = [], 0, 0
        for joint in self.joints:
            if joint.kind in QUATERNION_SIZES:
                n_q, n_v = QUATERNION_SIZES[joint.kind]
            elif joint.kind in MOVABLE_TYPES and joint.mimic is None:
                n_q, n_v = 1, 1
            else:
                continue
            found.append(Slot(joint, joint.kind, q, v, n_q, n_v))
            q, v = q + n_q, v + n_v
        return tuple(found)

    @property
    def quaternions(self) -> tuple:
        """The :class:`Slot` of every free and ball joint, in tree order (``()``: none)."""
        return tuple(s for s in self.slots if s.kind in QUATERNION_SIZES)

    @property
    def single_free(self) -> bool:
        """Whether the only quaternion joint is one free joint whose coordinates and speeds come first (the
        floating base of a URDF robot, the runtime of ``_free_flyer.py``)."""
        found = self.quaternions
        return len(found) == 1 and found[0].kind == FREE and found[0].q == 0

    @property
    def moving(self) -> tuple:
        """Every joint that moves, coordinates and mimic joints, in tree order."""
        return tuple(j for j in self.joints if j.kind in MOVABLE_TYPES)


#: The fields of :class:`Robot` only the MJCF reader sets, and the inertial parameters (shown only when set).
_MJCF_FIELDS = ("armature", "springs", "mujoco", "inertial_params")


def rpy_matrix(rpy: tuple) -> tuple:
    """URDF's fixed-axis roll, pitch, yaw: ``R = Rz(yaw) Ry(pitch) Rx(roll)``, as floats."""
    roll, pitch, yaw = rpy
    cr, sr = math.cos(roll), math.sin(roll)
    cp, sp = math.cos(pitch), math.sin(pitch)
    cy, sy = math.cos(yaw), math.sin(yaw)
    return (
        (cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr),
        (sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr),
        (-sp, cp * sr, cp * cr),
    )


def rpy_angles(R: tuple | list) -> tuple:
    """``(roll, pitch, yaw)`` with ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (3 × 3, rows; :func:`rpy_matrix`'s
    inverse; pitch in [−π/2, π/2], roll 0 at the poles)."""
    pitch = math.atan2(-R[2][0], math.hypot(R[0][0], R[1][0]))
    if math.hypot(R[0][0], R[1][0]) < 1e-12:
        return 0.0, pitch, math.atan2(-R[0][1], R[1][1])
    return math.atan2(R[2][1], R[2][2]), pitch, math.atan2(R[1][0], R[0][0])


def contact_parameter(link: str, axis: str) -> str:
    """The name of the parameter holding a contact's place along ``axis`` (``x``, ``y``, ``z``, world frame)."""
    return f"contact_{re.sub(r'[^A-Za-z0-9_]', '_', link)}_{axis}"
