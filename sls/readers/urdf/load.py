"""The entry points: a URDF file (:func:`load_urdf`) or a TOML file's ``[urdf]`` table
(:func:`load_urdf_table`) → a :class:`~sls.model.Model`."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from sls.algebra.expressions import symbol
from sls.errors import ModelFileError, SlsError
from sls.model import Model, build_model
from sls.model.free_flyer import free_flyer_rates
from sls.readers.common import check_table_keys, read_model_text, with_param_table
from sls.readers.urdf.kinematics import energies, forward, input_map, split_names
from sls.readers.urdf.naming import check_generated_names, friction_parameters, model_name, state_names
from sls.readers.urdf.structure import BASE_ORIENTATIONS, parse_urdf

#: Default of the gravity parameter ``g``.
GRAVITY = 9.81


def load_urdf(
    path: str | Path,
    *,
    name: str | None = None,
    source: str | None = None,
    text: str | None = None,
    floating_base: bool = False,
    base_orientation: str = "quaternion",
) -> Model:
    """Read a URDF file (or its ``text``) into a model; errors start with the file name.

    ``floating_base=True`` frees the root link (a 6-DOF free-flyer joint ``base`` between the world
    and the root link). ``base_orientation`` says how such a base (and a floating joint of the root link in
    the file, or a lone body) turns: ``"quaternion"`` (the default; coordinates ``base_x, base_y, base_z,
    base_qx, base_qy, base_qz, base_qw``, speeds ``base_vx … base_wz`` in the base's frame, as Pinocchio's
    free-flyer, :mod:`sls.model.free_flyer`) or ``"euler"`` (coordinates ``base_x, base_y, base_z, base_yaw,
    base_pitch, base_roll``, their rates the speeds; singular at pitch ±90°).
    """
    path = Path(path)
    if text is None:
        text = read_model_text(path)
    filename = str(path)
    if base_orientation not in BASE_ORIENTATIONS:
        raise ModelFileError(
            f"{filename}: base orientation must be one of {', '.join(BASE_ORIENTATIONS)}, got {base_orientation!r}"
        )
    robot = parse_urdf(text, filename, floating_base=floating_base, base_orientation=base_orientation)
    names = state_names(robot, filename)
    parameters = friction_parameters(robot)
    frames = forward(robot, names)
    inputs, forces = input_map(robot, names, frames)
    check_generated_names(robot, names, parameters, inputs, filename)
    T, V, fric = energies(robot, names, frames)
    params = {"g": GRAVITY} if symbol("g") in V.free_symbols else {}
    params.update(parameters)
    actuated = not robot.bases
    free, joints = split_names(robot, names)
    rates = free_flyer_rates(*free) + joints[1] if robot.free is not None else None
    try:
        model = build_model(
            kinematics=rates,
            state=names,
            T=T,
            V=V,
            fric=fric,
            params=params,
            inputs=None if actuated else inputs,
            forces=None if actuated else forces,
            name=name or model_name(robot.name) or path.stem,
            source=source or f"URDF file {path.name}",
            tree=robot,
        )
    except SlsError as exc:
        raise ModelFileError(f"{filename}: {exc}") from None
    if actuated:  # one torque per coordinate (B_u = I), named after its joint rather than u1 … un
        joint_inputs = tuple(symbol(s) for s in inputs)
        model = replace(model, inputs=joint_inputs, forces=joint_inputs)
    return model


#: Keys of a TOML model file's ``[urdf]`` table, and the other tables such a file may have.
URDF_TABLE_KEYS = ("file", "floating_base", "base_orientation")
URDF_FILE_KEYS = ("urdf", "params")


def load_urdf_table(data: dict, path: Path, *, name: str, source: str) -> Model:
    """A TOML model file that points at a URDF file: ``[urdf]`` with ``file`` (relative to the TOML
    file) and optionally ``floating_base = true``; ``[params]`` may change parameter defaults."""
    table = check_table_keys(data, path, "urdf", URDF_FILE_KEYS, URDF_TABLE_KEYS, 'file = "robot.urdf"')
    what, params = f"{path}: [urdf]", data.get("params", {})
    file, floating = table.get("file"), table.get("floating_base", False)
    if not isinstance(file, str) or not file:
        raise ModelFileError(f"{what}: 'file' must name the URDF file (relative to this file)")
    if not isinstance(floating, bool):
        raise ModelFileError(f"{what}: 'floating_base' must be true or false")
    orientation = table.get("base_orientation", "quaternion")
    if orientation not in BASE_ORIENTATIONS:
        raise ModelFileError(
            f"{what}: 'base_orientation' must be one of {', '.join(repr(o) for o in BASE_ORIENTATIONS)}, "
            f"got {orientation!r}"
        )
    if not isinstance(params, dict):
        raise ModelFileError(f"{path}: key 'params' must be a table of NAME = NUMBER")
    model = load_urdf(
        Path(path).parent / file, name=name, source=source, floating_base=floating, base_orientation=orientation
    )
    return with_param_table(model, params, path)
