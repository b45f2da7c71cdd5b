"""The entry points: an MJCF file (:func:`load_mjcf`) or a TOML file's ``[mjcf]`` table (:func:`load_mjcf_table`)
→ a :class:`~sls.model.Model`."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import sympy

from sls.algebra.expressions import symbol
from sls.errors import ModelFileError, SlsError
from sls.model import Model, build_model
from sls.model.free_flyer import free_flyer_rates
from sls.readers.common import check_table_keys, with_param_table
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
from sls.readers.mjcf.structure import read_tree
from sls.readers.urdf.kinematics import energies, forward, input_map, split_names
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


def load_mjcf(
    path: str | Path, *, name: str | None = None, source: str | None = None, text: str | None = None
) -> Model:
    """Read an MJCF file (or its ``text``), compiled by MuJoCo, into a model; errors start with the file name.

    Hinge and slide joints, and a free joint first (the quaternion free-flyer, :mod:`sls.model.free_flyer`);
    coordinates named after the joints, in MuJoCo's order (``qpos``); one input per
    actuator (MuJoCo's order and names), or ``tau_<joint>`` on every joint when the file has no actuator. See
    :mod:`sls.readers.mjcf` for what is read and ``docs/mjcf.md`` for the conventions.
    """
    path = Path(path)
    filename = str(path)
    m = compile_mjcf(path, text)
    refuse_unsupported(m, filename)
    flags = int(m.opt.disableflags)
    friction = not flags & (DISABLE_FRICTIONLOSS | DISABLE_CONSTRAINT)
    robot = read_tree(m, filename, damping=not flags & DISABLE_DAMPER, friction=friction)
    names = state_names(robot, filename)
    (free_q, free_v), (joint_q, joint_v) = split_names(robot, names)
    n_q, n = len(free_q) + len(joint_q), len(free_v) + len(joint_v)
    params = friction_parameters(robot)
    free_damping = _free_damping(m, robot, free_v, enabled=not flags & DISABLE_DAMPER)
    springs, spring_params = _springs(m, robot, joint_q, enabled=not flags & DISABLE_SPRING)
    params.update(spring_params)
    frames = forward(robot, names)
    if m.nu:
        joints = {
            j: (q.name, v.name, len(free_v) + k)
            for k, (j, q, v) in enumerate(zip(_joint_ids(m, robot), joint_q, joint_v))
        }
        inputs, forces = actuator_forces(m, joints, n, set(names) | set(params) | set(free_damping[1]))
    else:
        inputs, forces = input_map(robot, names, frames)
    params.update(free_damping[1])
    check_generated_names(robot, names, params, inputs, filename)
    T, V, fric = energies(robot, names, frames)
    fric = tuple(f + extra for f, extra in zip(fric, free_damping[0])) + tuple(fric[len(free_damping[0]) :])
    half = sympy.Rational(1, 2)
    T = T + sympy.Add(*(half * number(a) * symbol(names[n_q + k]) ** 2 for k, a in enumerate(robot.armature) if a))
    g = math.sqrt(sum(float(v) ** 2 for v in m.opt.gravity))
    if flags & DISABLE_GRAVITY or g == 0:
        V = V.subs(symbol("g"), 0)
    elif symbol("g") in V.free_symbols:
        params = {"g": g, **params}
    V = V + springs
    robot = replace(robot, springs=springs)
    rates = free_flyer_rates(free_q, free_v) + joint_v if robot.free is not None else None
    try:
        model = build_model(
            kinematics=rates,
            state=names,
            T=T,
            V=V,
            fric=fric,
            params=params,
            inputs=inputs if m.nu or robot.free is not None else None,
            forces=forces if m.nu or robot.free is not None else None,
            name=name or model_name(robot.name) or path.stem,
            source=source or f"MJCF file {path.name}",
            tree=robot,
            constraints=_equalities(m, robot, joint_q) or None,
        )
    except SlsError as exc:
        raise ModelFileError(f"{filename}: {exc}") from None
    if not m.nu and robot.free is None:  # one torque per coordinate (B_u = I), named after its joint, not u1 … un
        joint_inputs = tuple(symbol(s) for s in inputs)
        model = replace(model, inputs=joint_inputs, forces=joint_inputs)
    return model


def _equalities(m: Any, robot: Any, joint_q: list) -> tuple:
    """The active joint and fixed-tendon equality constraints (:mod:`sls.readers.mjcf.equality`) in the
    coordinates; ``()`` without any."""
    coordinate = {j: symbol(q.name) for j, q in zip(_joint_ids(m, robot), joint_q)}
    return equality_constraints(m, coordinate)


def _joint_ids(m: Any, robot: Any) -> list:
    """MuJoCo's joint id of each hinge and slide coordinate (``robot.movable`` order): the joint at that ``qpos``
    address (after a free joint's seven)."""
    by_address = {int(m.jnt_qposadr[j]): j for j in range(m.njnt)}
    return [by_address[a] for a in robot.mujoco.qpos[len(robot.mujoco.qpos) - len(robot.movable) :]]


def _free_damping(m: Any, robot: Any, speeds: list, enabled: bool) -> tuple:
    """``(forces, params)``: a free joint's ``damping`` as ``damping_<joint>·ν`` on its six speeds (MuJoCo's
    ``−damping·qvel`` on its dofs is that force in the body's speeds: the same damping along every axis), with the
    parameter's default; ``((), {})`` without a damped free joint."""
    free = robot.free
    damping = float(m.dof_damping[m.jnt_dofadr[0]]) if free is not None and enabled else 0.0
    if damping == 0:
        return (), {}
    label = DAMPING_PREFIX + joint_label(free)
    return tuple(symbol(label) * v for v in speeds), {label: damping}


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
MJCF_TABLE_KEYS = ("file",)
MJCF_FILE_KEYS = ("mjcf", "params")


def load_mjcf_table(data: dict, path: Path, *, name: str, source: str) -> Model:
    """A TOML model file that points at an MJCF file: ``[mjcf]`` with ``file`` (relative to the TOML file);
    ``[params]`` may change parameter defaults."""
    table = check_table_keys(data, path, "mjcf", MJCF_FILE_KEYS, MJCF_TABLE_KEYS, 'file = "robot.xml"')
    file = table.get("file")
    if not isinstance(file, str) or not file:
        raise ModelFileError(f"{path}: [mjcf]: 'file' must name the MJCF file (relative to this file)")
    model = load_mjcf(Path(path).parent / file, name=name, source=source)
    return with_param_table(model, data.get("params", {}), path)
