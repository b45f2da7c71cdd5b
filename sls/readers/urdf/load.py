"""The entry points: a URDF file (:func:`load_urdf`) or a TOML file's ``[urdf]`` table
(:func:`load_urdf_table`) → a :class:`~sls.model.Model`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from sls.algebra.expressions import symbol
from sls.errors import ModelFileError, SlsError
from sls.model import Model, check_value, did_you_mean
from sls.model.free_flyer import free_flyer_rates
from sls.model.tree import Robot
from sls.readers.common import (
    check_table_keys,
    joint_torques,
    read_model_text,
    robot_model,
    with_param_table,
    with_params,
)
from sls.readers.inertial import with_inertial_params
from sls.readers.urdf.actuation import API_NAMES, TOML_NAMES, actuate
from sls.readers.urdf.contacts import contact_defaults, contact_places, contact_specs
from sls.readers.urdf.document import xml_root
from sls.readers.urdf.kinematics import energies, forward, input_map, split_names
from sls.readers.urdf.naming import NOT_IDENTIFIER, check_generated_names, friction_parameters, model_name, state_names
from sls.readers.urdf.srdf import choose_stance, read_stances, stance_coordinates
from sls.readers.urdf.structure import BASE_ORIENTATIONS, parse_urdf
from sls.readers.urdf.xacro_files import expand_xacro, is_xacro

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
    frames: Sequence[str] | str | None = None,
    contacts: Sequence[str] | str | None = None,
    contact_at: Mapping[str, Sequence[float]] | None = None,
    constraint_stabilization: float = 0.0,
    inputs: Sequence[str] | None = None,
    actuation: Mapping[str, object] | None = None,
    params: Mapping[str, float] | None = None,
    xacro_args: Mapping[str, str] | None = None,
    package_paths: Sequence[str] = (),
    srdf: str | Path | None = None,
    stance: str | None = None,
    base_wrench: bool = False,
    inertial_params: Sequence[str] | str | None = None,
) -> Model:
    """Read a URDF file (or its ``text``) into a model; errors start with the file name.

    ``floating_base=True`` frees the root link (a 6-DOF free-flyer joint ``base`` between the world
    and the root link). ``base_orientation`` says how such a base (and a floating joint of the root link in
    the file, or a lone body) turns: ``"quaternion"`` (the default; coordinates ``base_x, base_y, base_z,
    base_qx, base_qy, base_qz, base_qw``, speeds ``base_vx … base_wz`` in the base's frame, as Pinocchio's
    free-flyer, :mod:`sls.model.free_flyer`) or ``"euler"`` (coordinates ``base_x, base_y, base_z, base_yaw,
    base_pitch, base_roll``, their rates the speeds; singular at pitch ±90°).

    ``frames`` names links (a list, or a comma-separated string; ``"all"``: every link) whose world poses,
    Jacobians and ``J̇v`` are generated, with the centre of mass (:data:`sls.functions.FRAME_FUNCTIONS`).
    ``contacts`` (``LINK``, ``LINK:point`` or ``LINK:6d``, a list or comma-separated) holds links in place: a
    point contact its origin (three holonomic constraints, at the parameters ``contact_<link>_x, _y, _z``), a 6-D
    contact its origin and orientation (six, with ``contact_<link>_roll, _pitch, _yaw`` too), with the Baumgarte rate
    ``constraint_stabilization``. The parameters' defaults: ``contact_at[link]`` (``[x, y, z]``, or ``[x, y, z,
    roll, pitch, yaw]`` for a 6-D contact) where given, else where the link is at the stance ``stance`` of the SRDF
    file ``srdf`` (its ``<group_state>``, as Pinocchio's ``loadReferenceConfigurations`` reads it,
    :mod:`sls.readers.urdf.srdf`), else at the neutral configuration. Every stance of ``srdf`` is kept as a state
    at rest (:attr:`Model.stances`: the package's ``STANCES``, ``sls lqr --stance NAME``).

    A robot on contacts with a floating base is driven by its joint motors alone (``tau_<joint>``): the base's
    body wrench (``base_fx … base_mz``), which no motor produces, is an input only with ``base_wrench=True`` (or an
    ``actuation`` table naming it).

    ``inputs`` (new input names) and ``actuation`` (the robot's own inputs, ``tau_<joint>`` or ``base_fx …
    base_mz``, each an expression linear in ``inputs``: a string, a sympy expression or a number) say how the
    robot is driven (:mod:`sls.readers.urdf.actuation`); own inputs not named are unactuated. ``params``
    gives other defaults to the robot's parameters and values to those of the actuation.

    ``inertial_params`` names links (a list, or a comma-separated string; ``"all"``: every moving link) whose ten
    inertial parameters become parameters of the model, ``<link>_m``, ``<link>_mcx``, ``<link>_mcy``, ``<link>_mcz``,
    ``<link>_Ixx``, ``<link>_Ixy``, ``<link>_Iyy``, ``<link>_Ixz``, ``<link>_Iyz``, ``<link>_Izz`` (Pinocchio's
    ``Inertia.toDynamicParameters`` order: mass, first moment, inertia about the link's origin, in its frame), the
    file's values their defaults; the links fixed to a named link are part of its parameters
    (:mod:`sls.model.inertial`).

    A xacro file (``robot.urdf.xacro``) is expanded first by the ``xacro`` package
    (:func:`~sls.readers.urdf.xacro_files.expand_xacro`) with the arguments ``xacro_args`` (``{name: value}``),
    its packages found in ``package_paths``.
    """
    path = Path(path)
    if text is None:
        text = expand_xacro(path, xacro_args, package_paths) if is_xacro(path) else read_model_text(path)
    filename = str(path)
    drive = None if inputs is None and actuation is None else Drive(inputs, actuation, filename, API_NAMES)
    model = _robot_model(
        path,
        text,
        name=name,
        source=source,
        floating_base=floating_base,
        base_orientation=base_orientation,
        frames=frames,
        contacts=contacts,
        contact_at=None if contact_at is None else (contact_at, getattr(contact_at, "what", f"{filename}: contact_at")),
        constraint_stabilization=constraint_stabilization,
        drive=drive,
        stances=_stances(srdf, stance),
        base_wrench=base_wrench,
        inertial_params=inertial_params,
    )
    return model if params is None else with_params(model, params, f"{filename}: params")


def _stances(srdf: str | Path | None, stance: str | None, what: str = "stance") -> tuple | None:
    """``(srdf file, its stances, the chosen one or None)`` for :func:`_robot_model`, or ``None`` without a file."""
    if srdf is None:
        if stance is not None:
            raise ModelFileError(
                f"{what} '{stance}': a stance is read from the robot's SRDF file; name it with srdf too"
            )
        return None
    if stance is not None and not isinstance(stance, str):
        raise ModelFileError(f"{what} must be the name of a <group_state> of {srdf}, got {stance!r}")
    return str(srdf), read_stances(srdf), stance


@dataclass(frozen=True)
class Drive:
    """How a robot is driven: new ``inputs`` and the ``actuation`` table (see :func:`actuate`); ``where`` starts
    the messages (the file that holds the table), ``names`` are how they call the two."""

    inputs: object
    actuation: object
    where: str
    names: tuple[str, str]


def _robot_model(
    path: Path,
    text: str,
    *,
    name: str | None,
    source: str | None,
    floating_base: bool,
    base_orientation: str,
    frames: Sequence[str] | str | None,
    contacts: Sequence[str] | str | None,
    contact_at: tuple | None,
    constraint_stabilization: float,
    drive: Drive | None,
    stances: tuple | None = None,
    base_wrench: bool = False,
    inertial_params: Sequence[str] | str | None = None,
) -> Model:
    """The model of the robot in ``text`` (read from ``path``), driven through its own inputs or ``drive``, with
    its ``frames`` and ``contacts`` (see :func:`load_urdf`); ``contact_at`` is ``(places, what)``: the contacts'
    places and how the messages name them; ``stances`` is ``(srdf file, {name: joints}, chosen name or None)``."""
    filename = str(path)
    if base_orientation not in BASE_ORIENTATIONS:
        raise ModelFileError(
            f"{filename}: base orientation must be one of {', '.join(BASE_ORIENTATIONS)}, got {base_orientation!r}"
        )
    robot = parse_urdf(text, filename, floating_base=floating_base, base_orientation=base_orientation)
    inertial: dict = {}
    if inertial_params is not None:
        robot, inertial = with_inertial_params(robot, inertial_params, file_links(robot, text, filename), filename)
    names = state_names(robot, filename)
    parameters = {**friction_parameters(robot), **inertial}
    motion = forward(robot, names)
    inputs, forces = input_map(robot, names, motion)
    check_generated_names(robot, names, parameters, inputs, filename)
    T, V, fric = energies(robot, names, motion)
    params = {"g": GRAVITY} if symbol("g") in V.free_symbols else {}
    params.update(parameters)
    if drive is not None:
        try:
            inputs, forces = actuate(
                inputs, forces, drive.inputs, drive.actuation, state=names, params=list(params), names=drive.names
            )
        except SlsError as exc:
            raise ModelFileError(f"{drive.where}: {exc}") from None
    if contacts is not None and robot.bases and drive is None and not base_wrench:
        inputs, forces = motors_only(robot, inputs, forces)
    actuated = not robot.bases and drive is None
    free, joints = split_names(robot, names)
    rates = free_flyer_rates(*free) + joints[1] if robot.free is not None else None
    model = robot_model(
        filename,
        kinematics=rates,
        state=names,
        T=T,
        V=V,
        fric=fric,
        params=params,
        inputs=None if actuated else inputs,
        forces=None if actuated else forces,
        name=name or model_name(robot.name) or path.name.split(".")[0],
        source=source or f"URDF file {path.name}",
        tree=robot,
    )
    if inertial:  # a parameter τ does not depend on is a zero column of the regressor, no mistake
        model = replace(model, unused_params=tuple(p for p in model.unused_params if p not in inertial))
    if frames is not None:
        model = replace(model, frames=frame_names(frames, robot, text, filename))
    if contact_at is not None and contacts is None:
        raise ModelFileError(f"{contact_at[1]}: places contacts; name them with contacts too")
    states, at = _stance_states(robot, stances, model.n) if stances is not None else ((), None)
    if states:
        model = replace(model, stances=states)
    if contacts is not None:
        specs = contact_specs(contacts, file_links(robot, text, filename), filename)
        places = None if contact_at is None else contact_places(contact_at[0], specs, contact_at[1])
        try:
            stabilization = check_value("constraint_stabilization", constraint_stabilization)
        except SlsError as exc:
            raise ModelFileError(f"{filename}: {exc}") from None
        if stabilization < 0:
            raise ModelFileError(f"{filename}: constraint_stabilization must be >= 0 (0: off), got {stabilization:g}")
        model = replace(
            model,
            contacts=specs,
            params={**model.params, **contact_defaults(robot, specs, places, at)},
            stabilization=stabilization,
        )
    if actuated:  # one torque per coordinate (B_u = I), named after its joint rather than u1 … un
        model = joint_torques(model, inputs)
    return model


def motors_only(robot: Robot, inputs: Sequence[str], forces: Sequence) -> tuple[list, tuple]:
    """The robot's inputs and generalized forces without its bases' body wrenches (``base_fx … base_mz``): the
    joint motors alone, as a robot standing on its feet is driven."""
    wrench = {f"{NOT_IDENTIFIER.sub('_', base.name)}_{suffix}" for base in robot.bases for suffix, *_ in base.axes}
    zero = {symbol(u): 0 for u in inputs if u in wrench}
    return [u for u in inputs if u not in wrench], tuple(f.xreplace(zero) for f in forces)


def _stance_states(robot: Robot, stances: tuple, n_v: int) -> tuple[tuple, tuple | None]:
    """``(((name, state at rest), …), q of the chosen stance or None)`` from ``(srdf file, stances, chosen)``."""
    srdf, found, chosen = stances
    states = []
    for name, joints in found.items():
        q = stance_coordinates(robot, joints, f"{srdf}: stance '{name}'")
        states.append((name, tuple(q) + (0.0,) * n_v))
    at = None
    if chosen is not None:
        at = stance_coordinates(robot, choose_stance(found, chosen, srdf), f"{srdf}: stance '{chosen}'")
    return tuple(states), at


#: Keys of a TOML model file's ``[urdf]`` table, and the other tables such a file may have.
URDF_TABLE_KEYS = ("file", "floating_base", "base_orientation", "xacro_args", "package_paths")
URDF_FILE_KEYS = (
    "urdf", "params", "inputs", "actuation", "frames", "contacts", "contact_at", "constraint_stabilization",
    "srdf", "stance", "base_wrench", "inertial_params",
)  # fmt: skip


def load_urdf_table(data: dict, path: Path, *, name: str, source: str) -> Model:
    """A TOML model file that points at a URDF file: ``[urdf]`` with ``file`` (relative to the TOML
    file) and optionally ``floating_base = true`` and ``base_orientation``; ``[params]`` may change parameter
    defaults; ``inputs = [...]`` with an ``[actuation]`` table drive the robot through new inputs; ``frames``,
    ``contacts``, ``contact_at`` (a table ``LINK = [x, y, z]``), ``constraint_stabilization``, ``srdf`` (relative
    to the TOML file), ``stance``, ``base_wrench`` and ``inertial_params`` as :func:`load_urdf` takes them."""
    if "forces" in data:
        raise ModelFileError(
            f"{path}: key 'forces' cannot go with a [urdf] table: the robot's generalized forces come from its "
            "file; say how its inputs are driven with inputs = [...] and an [actuation] table"
        )
    table = check_table_keys(data, path, "urdf", URDF_FILE_KEYS, URDF_TABLE_KEYS, 'file = "robot.urdf"')
    what, params = f"{path}: [urdf]", data.get("params", {})
    frames = data.get("frames")
    if frames is not None and not (
        isinstance(frames, list) and frames and all(isinstance(f, str) for f in frames) or frames == "all"
    ):
        raise ModelFileError(f"{path}: 'frames' must be a list of link names (or \"all\")")
    contacts = data.get("contacts")
    if contacts is not None and not (isinstance(contacts, list) and all(isinstance(c, str) for c in contacts)):
        raise ModelFileError(f"{path}: 'contacts' must be a list of LINK, LINK:point or LINK:6d")
    contact_at = data.get("contact_at")
    inertial = data.get("inertial_params")
    if inertial is not None and not (
        isinstance(inertial, list) and all(isinstance(link, str) for link in inertial) or inertial == "all"
    ):
        raise ModelFileError(f"{path}: 'inertial_params' must be a list of link names (or \"all\")")
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
    drive = None
    if "inputs" in data or "actuation" in data:
        drive = Drive(data.get("inputs"), data.get("actuation"), str(path), TOML_NAMES)
    urdf = Path(path).parent / file
    xacro_args, package_paths = table.get("xacro_args", {}), table.get("package_paths", [])
    if not isinstance(xacro_args, dict) or not all(isinstance(v, (str, int, float)) for v in xacro_args.values()):
        raise ModelFileError(f"{what}: 'xacro_args' must be a table of NAME = VALUE")
    if not isinstance(package_paths, list) or not all(isinstance(p, str) for p in package_paths):
        raise ModelFileError(f"{what}: 'package_paths' must be a list of folders")
    folders = [str(Path(path).parent / p) for p in package_paths]
    srdf, stance, base_wrench = data.get("srdf"), data.get("stance"), data.get("base_wrench", False)
    if srdf is not None and not (isinstance(srdf, str) and srdf):
        raise ModelFileError(f"{path}: 'srdf' must name the robot's SRDF file (relative to this file)")
    if not isinstance(base_wrench, bool):
        raise ModelFileError(f"{path}: 'base_wrench' must be true or false")
    arguments = {key: str(value) for key, value in xacro_args.items()}
    text = expand_xacro(urdf, arguments, folders) if is_xacro(urdf) else read_model_text(urdf)
    model = _robot_model(
        urdf,
        text,
        name=name,
        source=source,
        floating_base=floating,
        base_orientation=orientation,
        frames=frames,
        contacts=contacts,
        contact_at=None if contact_at is None else (contact_at, f"{path}: contact_at"),
        constraint_stabilization=data.get("constraint_stabilization", 0.0),
        drive=drive,
        stances=_stances(None if srdf is None else Path(path).parent / srdf, stance, f"{path}: stance"),
        base_wrench=base_wrench,
        inertial_params=inertial,
    )
    return with_param_table(model, params, path)


def file_links(robot: Robot, text: str, filename: str) -> list:
    """The links the file defines, in tree order (not those sls adds for a floating base)."""
    in_file = {element.get("name") for element in xml_root(text, filename).findall("link")}
    return [link for link in [robot.root] + [joint.child for joint in robot.joints] if link in in_file]


def frame_names(frames: Sequence[str] | str, robot: Robot, text: str, filename: str) -> tuple:
    """The frames asked for (link names; ``"all"``: every link of the file, in tree order) checked against the
    robot's links."""
    names = [name.strip() for name in frames.split(",")] if isinstance(frames, str) else list(frames)
    links = file_links(robot, text, filename)
    in_file = set(links)
    if names == ["all"]:
        return tuple(links)
    for name in names:
        if not isinstance(name, str) or not name:
            raise ModelFileError(f"{filename}: frames: a frame is named by its link, got {name!r}")
        if name not in in_file:
            raise ModelFileError(
                f"{filename}: frames: '{name}' is not a link of the robot{did_you_mean(name, links) or ''}"
            )
    if len(set(names)) != len(names):
        raise ModelFileError(f"{filename}: frames: a link is named twice in {names}")
    if not names:
        raise ModelFileError(f"{filename}: frames: name at least one link (or 'all')")
    return tuple(names)
