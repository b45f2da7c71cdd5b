"""The entry points: an MJCF file (:func:`load_mjcf`) or a TOML file's ``[mjcf]`` table (:func:`load_mjcf_table`)
→ a :class:`~sls.model.Model`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import sympy

from sls.algebra.expressions import symbol
from sls.errors import ModelFileError
from sls.model import Model
from sls.model.entries import symbols_in
from sls.model.free_flyer import joint_rates
from sls.model.tree import MOVABLE_TYPES
from sls.readers.common import check_table_keys, joint_torques, robot_model, with_param_table
from sls.readers.inertial import with_inertial_params
from sls.readers.mjcf.actuators import actuator_forces, number
from sls.readers.mjcf.checks import (
    DISABLE_CONSTRAINT,
    DISABLE_DAMPER,
    DISABLE_FRICTIONLOSS,
    DISABLE_GRAVITY,
    DISABLE_SPRING,
    refuse_unsupported,
)
from sls.readers.mjcf.compile import compile_mjcf
from sls.readers.mjcf.equality import equality_constraints
from sls.readers.mjcf.structure import element_name, read_tree
from sls.readers.urdf.kinematics import energies, forward, input_map, slot_symbols
from sls.readers.urdf.naming import (
    DAMPING_PREFIX,
    check_generated_names,
    friction_parameters,
    joint_label,
    model_name,
    state_names,
)

#: Suffixes of the files read as MJCF.
MJCF_SUFFIXES = (".xml", ".mjcf")
#: Prefixes of a joint spring's parameters: ``stiffness_<joint>`` (k) and ``springref_<joint>`` (q_ref).
STIFFNESS_PREFIX = "stiffness_"
SPRINGREF_PREFIX = "springref_"
#: Prefix of a joint's armature parameter (with ``inertial_params``): ``armature_<joint>``.
ARMATURE_PREFIX = "armature_"


def load_mjcf(
    path: str | Path,
    *,
    name: str | None = None,
    source: str | None = None,
    text: str | None = None,
    actuators: bool = True,
    inertial_params: Sequence[str] | str | None = None,
) -> Model:
    """Read an MJCF file (or its ``text``), compiled by MuJoCo, into a model; errors start with the file name.

    Hinge, slide and ball joints, and free joints (quaternion joints, :mod:`sls.model.free_flyer`); coordinates
    named after the joints, in MuJoCo's order (``qpos``); one input per
    actuator (MuJoCo's order and names), or ``tau_<joint>`` on every joint when the file has no actuator. See
    :mod:`sls.readers.mjcf` for what is read and ``docs/mjcf.md`` for the conventions.

    ``actuators=False`` reads the model without its ``<actuator>`` elements (as a file that has none: a
    generalized force on every joint): for a file whose actuators sls does not model (activation dynamics,
    muscles, ...) when the joints' forces are what you want to drive.

    ``inertial_params`` names bodies (a list, a comma-separated string, or ``"all"``) whose ten inertial parameters
    become parameters, as :func:`~sls.readers.urdf.load_urdf` does; they are those of the body's link in sls's tree,
    whose origin is at the body's first joint's anchor (``pos``), in the body's axes (:mod:`sls.model.inertial`);
    each joint's non-zero ``armature`` becomes the parameter ``armature_<joint>`` then too (a regressor column).
    """
    path = Path(path)
    filename = str(path)
    m = compile_mjcf(path, text, actuators)
    refuse_unsupported(m, filename)
    flags = int(m.opt.disableflags)
    friction = not flags & (DISABLE_FRICTIONLOSS | DISABLE_CONSTRAINT)
    robot = read_tree(m, filename, damping=not flags & DISABLE_DAMPER, friction=friction)
    inertial: dict = {}
    if inertial_params is not None:
        bodies = [element_name(m, "body", b, "body") for b in range(1, m.nbody)]
        robot, inertial = with_inertial_params(robot, inertial_params, bodies, filename)
        robot, armature = _armature_parameters(robot)
        inertial.update(armature)
    names = state_names(robot, filename)
    symbols = slot_symbols(robot, names)
    slots = robot.slots
    n_q, n = sum(s.n_q for s in slots), sum(s.n_v for s in slots)
    joint_q = [symbols[j.name][0][0] for j in robot.movable]
    params = {**friction_parameters(robot), **inertial}
    free_damping = _quaternion_damping(m, robot, symbols, n, enabled=not flags & DISABLE_DAMPER)
    springs, spring_params = _springs(m, robot, joint_q, enabled=not flags & DISABLE_SPRING)
    params.update(spring_params)
    frames = forward(robot, names)
    if m.nu:
        joints = {
            j: (symbols[s.joint.name][0][0].name, symbols[s.joint.name][1][0].name, s.v)
            for j, s in zip(_joint_ids(m, robot), _movable_slots(robot))
        }
        inputs, forces = actuator_forces(m, joints, n, set(names) | set(params) | set(free_damping[1]))
    else:
        inputs, forces = input_map(robot, names, frames)
    params.update(free_damping[1])
    check_generated_names(robot, names, params, inputs, filename)
    T, V, fric = energies(robot, names, frames)
    fric = tuple(f + extra for f, extra in zip(fric, free_damping[0])) if free_damping[1] else fric
    half = sympy.Rational(1, 2)
    T = T + sympy.Add(*(half * _value(a) * symbol(names[n_q + k]) ** 2 for k, a in enumerate(robot.armature) if a))
    g = math.sqrt(sum(float(v) ** 2 for v in m.opt.gravity))
    if flags & DISABLE_GRAVITY or g == 0:
        V = V.subs(symbol("g"), 0)
    elif symbol("g") in symbols_in(V):  # each distinct subexpression once: V of a deep tree is a large tree
        params = {"g": g, **params}
    V = V + springs
    robot = replace(robot, springs=springs)
    rates = [r for s in slots for r in joint_rates(s.kind, *symbols[s.joint.name])] if robot.quaternions else None
    model = robot_model(
        filename,
        kinematics=rates,
        state=names,
        T=T,
        V=V,
        fric=fric,
        params=params,
        inputs=inputs if m.nu or robot.bases else None,
        forces=forces if m.nu or robot.bases else None,
        name=name or model_name(robot.name) or path.stem,
        source=source or f"MJCF file {path.name}",
        tree=robot,
        constraints=_equalities(m, robot, joint_q) or None,
    )
    if inertial:  # a parameter τ does not depend on is a zero column of the regressor, no mistake
        model = replace(model, unused_params=tuple(p for p in model.unused_params if p not in inertial))
    if not m.nu and not robot.bases:  # one torque per speed (B_u = I), named after its joint, not u1 … un
        model = joint_torques(model, inputs)
    return model


def _armature_parameters(robot: Any) -> tuple:
    """``(robot, {name: default})``: each joint's non-zero armature the parameter ``armature_<joint>`` (one per
    joint, on each of its dofs: MuJoCo's ``armature`` is a joint's), in :attr:`Robot.armature`."""
    armature, params = list(robot.armature), {}
    for slot in robot.slots:
        value = armature[slot.v]
        if value == 0:
            continue
        name = ARMATURE_PREFIX + joint_label(slot.joint)
        params[name] = value
        armature[slot.v : slot.v + slot.n_v] = [symbol(name)] * slot.n_v
    return replace(robot, armature=tuple(armature)), params


def _value(a: object) -> sympy.Expr:
    """An armature: a number (:func:`number`) or its parameter."""
    return a if isinstance(a, sympy.Basic) else number(a)  # type: ignore[arg-type]


def _equalities(m: Any, robot: Any, joint_q: list) -> tuple:
    """The active joint and fixed-tendon equality constraints (:mod:`sls.readers.mjcf.equality`) in the
    coordinates; ``()`` without any."""
    coordinate = {j: symbol(q.name) for j, q in zip(_joint_ids(m, robot), joint_q)}
    return equality_constraints(m, coordinate)


def _movable_slots(robot: Any) -> list:
    """The slots (:attr:`~sls.model.tree.Robot.slots`) of the hinge and slide coordinates, ``robot.movable`` order."""
    return [s for s in robot.slots if s.kind in MOVABLE_TYPES]


def _joint_ids(m: Any, robot: Any) -> list:
    """MuJoCo's joint id of each hinge and slide coordinate (``robot.movable`` order): the joint at that ``qpos``
    address."""
    by_address = {int(m.jnt_qposadr[j]): j for j in range(m.njnt)}
    return [by_address[robot.mujoco.qpos[s.q]] for s in _movable_slots(robot)]


def _quaternion_damping(m: Any, robot: Any, symbols: dict, n: int, enabled: bool) -> tuple:
    """``(forces, params)``: each free or ball joint's ``damping`` as ``damping_<joint>·ν`` on its speeds (n
    entries; MuJoCo's ``−damping·qvel`` on its dofs is that force in the body's speeds: the same damping along every
    axis), with the parameters' defaults; ``((), {})`` without a damped quaternion joint."""
    forces = [sympy.Integer(0)] * n
    params = {}
    by_name = {element_name(m, "joint", j, "jnt"): j for j in range(m.njnt)}
    for slot in robot.quaternions:
        damping = float(m.dof_damping[m.jnt_dofadr[by_name[slot.joint.name]]]) if enabled else 0.0
        if damping == 0:
            continue
        label = DAMPING_PREFIX + joint_label(slot.joint)
        params[label] = damping
        for k, v in enumerate(symbols[slot.joint.name][1]):
            forces[slot.v + k] = symbol(label) * v
    return (tuple(forces), params) if params else ((), {})


def _springs(m: Any, robot: Any, coordinates: list, enabled: bool) -> tuple:
    """``(V_s, params)``: ``Σ ½ stiffness_<j> (q_j − springref_<j>)²`` over the hinge and slide joints with a
    non-zero ``stiffness`` (``coordinates``: their symbols, ``robot.movable`` order), with the parameters' defaults
    (the file's ``stiffness`` and ``springref``)."""
    terms, params = [], {}
    for q, joint, j in zip(coordinates, robot.movable, _joint_ids(m, robot)):
        stiffness = float(m.jnt_stiffness[j])
        if not enabled or stiffness == 0:
            continue
        k_name, ref_name = STIFFNESS_PREFIX + joint_label(joint), SPRINGREF_PREFIX + joint_label(joint)
        params[k_name] = stiffness
        params[ref_name] = float(m.qpos_spring[m.jnt_qposadr[j]])
        terms.append(sympy.Rational(1, 2) * symbol(k_name) * (q - symbol(ref_name)) ** 2)
    return sympy.Add(*terms), params


#: Keys of a TOML model file's ``[mjcf]`` table, and the other tables such a file may have.
MJCF_TABLE_KEYS = ("file", "actuators")
MJCF_FILE_KEYS = ("mjcf", "params", "inertial_params")


def load_mjcf_table(data: dict, path: Path, *, name: str, source: str) -> Model:
    """A TOML model file that points at an MJCF file: ``[mjcf]`` with ``file`` (relative to the TOML file) and
    optionally ``actuators = false`` (:func:`load_mjcf`); ``[params]`` may change parameter defaults;
    ``inertial_params = [...]`` as :func:`load_mjcf` takes it."""
    table = check_table_keys(data, path, "mjcf", MJCF_FILE_KEYS, MJCF_TABLE_KEYS, 'file = "robot.xml"')
    file = table.get("file")
    if not isinstance(file, str) or not file:
        raise ModelFileError(f"{path}: [mjcf]: 'file' must name the MJCF file (relative to this file)")
    actuators = table.get("actuators", True)
    if not isinstance(actuators, bool):
        raise ModelFileError(f"{path}: [mjcf]: 'actuators' must be true or false, got {actuators!r}")
    inertial = data.get("inertial_params")
    if inertial is not None and not (
        isinstance(inertial, list) and all(isinstance(link, str) for link in inertial) or inertial == "all"
    ):
        raise ModelFileError(f"{path}: 'inertial_params' must be a list of body names (or \"all\")")
    model = load_mjcf(Path(path).parent / file, name=name, source=source, actuators=actuators, inertial_params=inertial)
    return with_param_table(model, data.get("params", {}), path)
