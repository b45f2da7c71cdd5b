"""The names a robot model is given: the model after its ``<robot name>``, states after its joints, rates
``d_<joint>``, friction parameters ``damping_<joint>``, ``friction_<joint>`` and ``friction_velocity``, inputs
``tau_<joint>``; clashes refused."""

from __future__ import annotations

import re

from sls.errors import ModelError, ModelFileError
from sls.model import check_name
from sls.model.free_flyer import BALL_COORDINATE_SUFFIXES, BALL_SPEED_SUFFIXES, COORDINATE_SUFFIXES, SPEED_SUFFIXES
from sls.model.tree import BALL, FREE, Joint, Robot

#: The suffixes of a quaternion joint's coordinates and speeds, by kind.
QUATERNION_SUFFIXES = {
    FREE: (COORDINATE_SUFFIXES, SPEED_SUFFIXES),
    BALL: (BALL_COORDINATE_SUFFIXES, BALL_SPEED_SUFFIXES),
}

#: Prefix of the rate names (``d_<joint>``) and of joint names that are not usable as they are.
RATE_PREFIX = "d_"
RENAME_PREFIX = "q_"
#: Prefixes of the per-joint parameters and inputs.
DAMPING_PREFIX = "damping_"
FRICTION_PREFIX = "friction_"
INPUT_PREFIX = "tau_"
#: The velocity scale ``v_s`` of the smooth Coulomb law ``f_c·tanh(q̇/v_s)``: its parameter and default (rad/s or m/s).
FRICTION_VELOCITY_NAME = "friction_velocity"
FRICTION_VELOCITY = 0.01
NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")
_IMPLICIT_INPUT = re.compile(r"u[0-9]+")
_NOT_NAME = re.compile(r"[^A-Za-z0-9_]+")
#: Longest model name made from a ``<robot name>``.
MAX_MODEL_NAME = 64


def state_names(robot: Robot, filename: str) -> list:
    """The state names: one per movable joint in tree order, then ``d_<name>`` for each.

    A joint's name is used as it is when it is a valid sls name; otherwise
    characters other than letters, digits and ``_`` become ``_``, and a name
    that starts with a digit or ``_``, is reserved (a Python builtin or
    keyword, a function such as ``sin``), is ``g`` (the gravity parameter) or
    ``u1``, ``u2``, ... gets the prefix ``q_``. Two joints that end up with
    the same name are refused. A quaternion free-flyer (:data:`~sls.model.tree.FREE`) has seven
    coordinates ``<name>_x … <name>_qw`` and six speeds ``<name>_vx … <name>_wz``, a ball joint
    (:data:`~sls.model.tree.BALL`) four ``<name>_qx … <name>_qw`` and three ``<name>_wx … <name>_wz``
    (:mod:`sls.model.free_flyer`), in the tree's order (:attr:`~sls.model.tree.Robot.slots`).
    """
    names: dict[str, str] = {}
    coordinates: list[str] = []
    speeds: list[str] = []
    for slot in robot.slots:
        joint = slot.joint
        if slot.kind in QUATERNION_SUFFIXES:
            label = NOT_IDENTIFIER.sub("_", joint.name)
            if not _usable(label):
                label = RENAME_PREFIX + label.lstrip("_")
            q_suffixes, v_suffixes = QUATERNION_SUFFIXES[slot.kind]
            own = ([f"{label}_{suffix}" for suffix in q_suffixes], [f"{label}_{suffix}" for suffix in v_suffixes])
        else:
            base = usable_name(joint.name, RENAME_PREFIX)
            own = ([base], [RATE_PREFIX + base])
        for candidate in own[0] + own[1]:
            if candidate in names:
                other = names[candidate]
                raise ModelFileError(
                    f"{filename}: joints '{other}' and '{joint.name}' both give the state name '{candidate}'; "
                    "rename one of them"
                )
            names[candidate] = joint.name
        coordinates += own[0]
        speeds += own[1]
    return coordinates + speeds


def usable_name(name: str, prefix: str) -> str:
    """``name`` as an sls name: characters other than letters, digits and ``_`` become ``_``; a result that starts
    with a digit or ``_``, is reserved, is ``g`` or ``u1``, ``u2``, ... gets ``prefix`` (leading ``_`` dropped)."""
    base = NOT_IDENTIFIER.sub("_", name)
    return base if _usable(base) else prefix + base.lstrip("_")


def joint_label(joint: Joint) -> str:
    """The identifier part of the names made from a joint's name (``damping_<label>``, ``tau_<label>``)."""
    return NOT_IDENTIFIER.sub("_", joint.name)


def friction_parameters(robot: Robot) -> dict:
    """``{name: default}`` of the friction parameters: ``damping_<joint>`` and ``friction_<joint>`` for
    every moving joint whose value is non-zero, and ``friction_velocity`` when any friction is."""
    params = {}
    for joint in robot.moving:
        if joint.damping != 0:
            params[DAMPING_PREFIX + joint_label(joint)] = joint.damping
    coulomb = {FRICTION_PREFIX + joint_label(j): j.friction for j in robot.moving if j.friction != 0}
    if coulomb:
        params.update(coulomb)
        params[FRICTION_VELOCITY_NAME] = FRICTION_VELOCITY
    return params


def check_generated_names(robot: Robot, names: list, params: dict, inputs: list, filename: str) -> None:
    """One line when a parameter or input made from a joint's name equals a state or another such name."""
    owners = {s: f"the state name '{s}'" for s in names}
    owners["g"] = "the gravity parameter 'g'"
    made = [(p, "parameter") for p in params] + [(u, "input") for u in inputs]
    for made_name, what in made:
        if made_name in owners:
            raise ModelFileError(
                f"{filename}: the {what} '{made_name}' made from a joint's name is also {owners[made_name]}; "
                "rename the joint"
            )
        owners[made_name] = f"the {what} '{made_name}'"


def _usable(name: str) -> bool:
    if not name or name[0] in "0123456789_" or name == "g" or _IMPLICIT_INPUT.fullmatch(name):
        return False
    try:
        check_name(name, "state")
    except ModelError:
        return False
    return True


def model_name(robot_name: str) -> str | None:
    """A robot's ``<robot name>`` made an identifier, the model's name (the generated C functions' prefix):
    runs of characters other than ASCII letters, digits and ``_`` become one ``_``, leading and trailing ``_``
    go, a leading digit gets ``robot_`` (``ur5`` stays, ``my robot (v2)`` → ``my_robot_v2``, ``2dof`` →
    ``robot_2dof``); at most :data:`MAX_MODEL_NAME` characters. ``None`` when nothing is left (no name, or
    no ASCII letter or digit in it): the file's name is used then."""
    text = _NOT_NAME.sub("_", robot_name).strip("_")[:MAX_MODEL_NAME].rstrip("_")
    if not text:
        return None
    return "robot_" + text if text[0].isdigit() else text
