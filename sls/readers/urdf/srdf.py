"""A robot's reference configurations (stances) from its SRDF file, as Pinocchio's ``loadReferenceConfigurations``.

An SRDF file (the semantic description MoveIt and Pinocchio read beside a URDF file) names configurations of
the robot::

    <group_state name="standing" group="all_legs">
        <joint name="root_joint" value="0 0 0.235 0 0 0 1" />
        <joint name="FL_HFE" value="0.8" />
        ...
    </group_state>

:func:`read_stances` reads every ``<group_state>`` as ``{name: {joint: values}}``; :func:`stance_coordinates`
turns one into the robot's coordinates ``q`` (sls's order, :attr:`~sls.model.tree.Robot.slots`). As Pinocchio
does: a joint the state does not list keeps its neutral value (0; a quaternion the identity); a joint the
robot does not have is skipped (an SRDF file often describes more than the URDF, e.g. ``root_joint`` of a
fixed-base arm); a free-flyer's value is ``x y z qx qy qz qw`` (Pinocchio's layout, which is sls's own:
:mod:`sls.model.free_flyer`), a ball joint's ``qx qy qz qw``, a continuous joint's one angle (or Pinocchio's
``cos sin``). The free-flyer sls adds for ``floating_base`` is named ``base``; the SRDF's name for it is
Pinocchio's ``root_joint`` (either is accepted). With ``base_orientation="euler"`` its quaternion becomes the
yaw, pitch and roll of the chain. :func:`stance_frames` places every link at a stance (the contacts' default
places, :func:`sls.readers.urdf.contacts.contact_defaults`).

The file is data: parsed by the standard library's XML parser after refusing any ``<!DOCTYPE``/``<!ENTITY``,
nothing in it evaluated; every mistake is one :class:`~sls.errors.ModelFileError` line naming the file.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path

from sls.errors import ModelFileError
from sls.model import did_you_mean
from sls.model.tree import BALL, FREE, MOVABLE_TYPES, Robot, rpy_matrix
from sls.readers.numbers import NumberProblem, file_number

#: Pinocchio's name of the free-flyer joint it adds (``buildModelFromUrdf(path, JointModelFreeFlyer())``).
PINOCCHIO_ROOT = "root_joint"

#: The neutral coordinates of the quaternion joints (a unit quaternion, scalar last); every other joint's is 0.
NEUTRAL = {FREE: (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0), BALL: (0.0, 0.0, 0.0, 1.0)}

_DTD = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


def read_stances(path: str | Path, text: str | None = None) -> dict:
    """``{stance name: {joint name: (values, …)}}`` of every ``<group_state>`` in the SRDF file ``path`` (or its
    ``text``), in the file's order."""
    filename = str(path)
    if text is None:
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise ModelFileError(f"{filename}: cannot read the SRDF file: {exc.strerror or exc}") from None
        except UnicodeDecodeError:
            raise ModelFileError(f"{filename}: not a text file (an SRDF file is XML)") from None
    match = _DTD.search(text)
    if match:
        raise ModelFileError(f"{filename}: <!{match.group(1).upper()} ...>: DTDs and entities are not allowed")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        line, column = exc.position
        raise ModelFileError(f"{filename}: not valid XML (at line {line}, column {column + 1})") from None
    if root.tag != "robot":
        raise ModelFileError(f"{filename}: the root element is <{root.tag}>, expected <robot> (is this an SRDF file?)")
    stances: dict = {}
    for state in root.iter("group_state"):
        name = state.get("name")
        if not name:
            raise ModelFileError(f"{filename}: a <group_state> has no name")
        joints: dict = {}
        for joint in state.findall("joint"):
            joint_name, value = joint.get("name"), joint.get("value")
            if not joint_name or value is None:
                raise ModelFileError(f'{filename}: <group_state name="{name}">: a <joint> needs name and value')
            try:
                numbers = tuple(file_number(v) for v in value.split())
            except NumberProblem as exc:
                raise ModelFileError(f"{filename}: stance '{name}', joint '{joint_name}': {exc}") from None
            if not numbers:
                raise ModelFileError(
                    f"{filename}: stance '{name}', joint '{joint_name}': value must be finite numbers, got {value!r}"
                )
            joints[joint_name] = numbers
        stances[name] = joints
    return stances


def choose_stance(stances: Mapping[str, dict], stance: str, filename: str) -> dict:
    """The joints' values of the stance named ``stance`` (one line naming the file's stances otherwise)."""
    if stance not in stances:
        if not stances:
            raise ModelFileError(f"{filename}: has no <group_state>: no stance '{stance}' to read")
        hint = did_you_mean(stance, list(stances)) or f" (its stances: {', '.join(stances)})"
        raise ModelFileError(f"{filename}: no stance '{stance}'{hint}")
    return dict(stances[stance])


def stance_coordinates(robot: Robot, joints: Mapping[str, Sequence[float]], where: str) -> tuple:
    """The coordinates ``q`` (``Robot.slots`` order, as many as the model's) of a stance ``{joint: values}``;
    ``where`` starts the messages (``file: stance 'name'``). Joints not given keep their neutral values; names the
    robot does not have are skipped (as Pinocchio does)."""
    q: list = [value for slot in robot.slots for value in NEUTRAL.get(slot.kind, (0.0,))]
    by_name = {slot.joint.name: slot for slot in robot.slots}
    euler = {base.name: base for base in robot.bases}
    for name, values in joints.items():
        slot = by_name.get(name)
        if slot is None and name == PINOCCHIO_ROOT and robot.free is not None and PINOCCHIO_ROOT not in by_name:
            slot = by_name[robot.free.name]
        if slot is not None:
            q[slot.q : slot.q + slot.n_q] = _joint_values(
                slot.kind, slot.joint.kind, values, f"{where}, joint '{name}'"
            )
            continue
        base = euler.get(name) or (next(iter(euler.values())) if name == PINOCCHIO_ROOT and len(euler) == 1 else None)
        if base is not None and base.kind == "floating":
            pose = _joint_values(FREE, FREE, values, f"{where}, joint '{name}'")
            angles = _yaw_pitch_roll(pose[3:])
            for joint_name, value in zip(base.joints, (*pose[:3], *angles)):
                if joint_name in by_name:
                    q[by_name[joint_name].q] = value
    return tuple(q)


def _joint_values(kind: str, joint_kind: str, values: Sequence[float], where: str) -> list:
    """A joint's coordinates from its SRDF value: 7 numbers for a free-flyer (the quaternion scaled to unit norm),
    4 for a ball joint, 1 for the others (or a continuous joint's ``cos sin``, Pinocchio's own)."""
    size = 7 if kind == FREE else 4 if kind == BALL else 1
    values = list(values)
    if joint_kind == "continuous" and len(values) == 2:
        return [math.atan2(values[1], values[0])]
    if len(values) != size:
        shape = {7: "x y z qx qy qz qw", 4: "qx qy qz qw", 1: "one number"}[size]
        raise ModelFileError(f"{where}: expected {shape}, got {len(values)} number{'s' if len(values) != 1 else ''}")
    if size > 1:
        norm = math.sqrt(sum(v * v for v in values[-4:]))
        if abs(norm - 1.0) > 1e-3:
            raise ModelFileError(f"{where}: the quaternion (qx qy qz qw) must have unit norm, got {norm:.6g}")
        values[-4:] = [v / norm for v in values[-4:]]
    return values


def _yaw_pitch_roll(quaternion: Sequence[float]) -> tuple:
    """``(yaw, pitch, roll)`` of the unit quaternion ``(qx, qy, qz, qw)`` (``R = Rz(yaw) Ry(pitch) Rx(roll)``)."""
    from sls.model.tree import rpy_angles

    roll, pitch, yaw = rpy_angles(quaternion_matrix(quaternion))
    return yaw, pitch, roll


def quaternion_matrix(quaternion: Sequence[float]) -> tuple:
    """``R`` (3 × 3, rows) of the unit quaternion ``(qx, qy, qz, qw)``."""
    x, y, z, w = quaternion
    return (
        (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
        (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
        (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)),
    )


def stance_frames(robot: Robot, q: Sequence[float] | None = None) -> dict:
    """``{link: (R, p)}``: every link's orientation (3 × 3, rows) and origin in the world at the coordinates ``q``
    (``Robot.slots`` order; ``None``: the neutral configuration, every joint at zero, a free-flyer at its joint's
    origin, level). A mimic joint follows its joint (``multiplier·q + offset``)."""
    values: dict = {}
    if q is not None:
        for slot in robot.slots:
            values[slot.joint.name] = tuple(q[slot.q : slot.q + slot.n_q])
    identity = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    frames: dict = {robot.root: (identity, (0.0, 0.0, 0.0))}
    for joint in robot.joints:
        R, p = frames[joint.parent]
        R_child = _matmul(R, rpy_matrix(joint.rpy))
        p_child = tuple(p[i] + sum(R[i][k] * joint.xyz[k] for k in range(3)) for i in range(3))
        if joint.kind == FREE and joint.name in values:
            pose = values[joint.name]
            p_child = tuple(p_child[i] + sum(R_child[i][k] * pose[k] for k in range(3)) for i in range(3))
            R_child = _matmul(R_child, quaternion_matrix(pose[3:]))
        elif joint.kind == BALL and joint.name in values:
            R_child = _matmul(R_child, quaternion_matrix(values[joint.name]))
        elif joint.kind in MOVABLE_TYPES:
            if joint.mimic is not None:
                followed, multiplier, offset = joint.mimic
                value = multiplier * values.get(followed, (0.0,))[0] + offset
            else:
                value = values.get(joint.name, (0.0,))[0]
            if value and joint.kind == "prismatic":
                p_child = tuple(
                    p_child[i] + sum(R_child[i][k] * joint.axis[k] for k in range(3)) * value for i in range(3)
                )
            elif value:
                R_child = _matmul(R_child, _axis_rotation(joint.axis, value))
        frames[joint.child] = (R_child, p_child)
    return frames


def _matmul(A: Sequence, B: Sequence) -> tuple:
    return tuple(tuple(sum(A[i][k] * B[k][j] for k in range(3)) for j in range(3)) for i in range(3))


def _axis_rotation(axis: Sequence[float], angle: float) -> tuple:
    x, y, z = axis
    c, s = math.cos(angle), math.sin(angle)
    return (
        (c + x * x * (1 - c), x * y * (1 - c) - z * s, x * z * (1 - c) + y * s),
        (y * x * (1 - c) + z * s, c + y * y * (1 - c), y * z * (1 - c) - x * s),
        (z * x * (1 - c) - y * s, z * y * (1 - c) + x * s, c + z * z * (1 - c)),
    )
