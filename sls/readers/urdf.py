"""Stage 1 for robots: a URDF file → a :class:`~sls.model.Model`.

A URDF file describes a robot as a tree of links joined by joints. sls reads:

* ``<joint>`` of type ``revolute``, ``continuous``, ``prismatic``, ``fixed``,
  ``floating`` or ``planar``, with ``<parent link>``, ``<child link>``,
  ``<origin xyz rpy>`` (default 0), ``<axis xyz>`` (default ``1 0 0``,
  normalised), ``<dynamics damping friction>`` and ``<mimic joint multiplier
  offset>``;
* ``<link>`` with ``<inertial>``: ``<origin xyz rpy>`` (the centre of mass and
  the orientation of the inertia's frame), ``<mass value>`` and ``<inertia
  ixx ixy ixz iyy iyz izz>`` (about the centre of mass).

Everything else (``<visual>``, ``<collision>``, ``<limit>``,
``<transmission>``, ``<gazebo>``, materials, ...) is ignored. What sls cannot
model is refused with one line naming the element (:class:`ModelFileError`):
unknown joint types, closed loops, DTDs and entities, moving links without mass.

The file is data: it is parsed by the standard library's XML parser, after
refusing any ``<!DOCTYPE``/``<!ENTITY`` in the text (so no entity is ever
expanded), and nothing in it is evaluated.

Conventions of the model (``docs/robots.md`` is the user's page)
----------------------------------------------------------------
* The root link is fixed to the world unless ``floating_base=True`` (then a
  free-flyer joint named ``base`` joins it to the world, as Pinocchio's
  ``JointModelFreeFlyer`` root does) or the file has one link and no joint (a
  drone: floating automatically). Gravity is ``g`` along −z of the world
  (the root link's frame), ``g`` a parameter (default 9.81).
* ``floating`` and ``planar`` joints (and the free-flyer) are expanded into
  chains of ordinary joints joined by massless links
  (``Robot.inertials[link] is None``): floating = prismatic along x, y, z of
  the parent frame, then revolute about z (yaw), y (pitch), x (roll), so the
  child's orientation is ``R = Rz(yaw) Ry(pitch) Rx(roll)`` (URDF's own rpy
  convention; singular at pitch = ±π/2); planar = prismatic along two
  orthonormal in-plane axes ``e1``, ``e2`` then revolute about the normal
  ``n`` (``e1 × e2 = n``). The joint's origin goes on the first joint of the
  chain. Coordinates ``<joint>_x … <joint>_roll`` (planar: ``<joint>_x``,
  ``<joint>_y``, ``<joint>_theta``).
* A ``<mimic>`` joint is not a coordinate: its position is ``multiplier·q_f +
  offset``, its rate ``multiplier·q̇_f`` (``q_f`` the joint it follows, chains
  of mimic joints resolved). ``<mimic>`` on a fixed joint does nothing.
* The coordinates are the movable, non-mimic joints in tree order (depth first
  from the root, children in document order), named after the joints (see
  :func:`state_names`), then their rates ``d_<name>``.
* Inputs: ``tau_<joint>`` (torque or force) for every coordinate of an
  ordinary joint; a floating or planar joint instead takes a body wrench on
  its child link, at the link's origin and in its frame: ``<joint>_fx,
  <joint>_fy, <joint>_fz, <joint>_mx, <joint>_my, <joint>_mz`` (planar:
  ``_fx, _fy`` along ``e1, e2``, ``_mz`` about ``n``); its generalized forces are
  ``Jᵀ·wrench``, ``J`` the link's body Jacobian. Without floating or planar
  joints the model is fully actuated (``B_u = I``).
* Friction: a joint whose ``damping`` is non-zero gets the parameter
  ``damping_<joint>``, one whose ``friction`` is non-zero ``friction_<joint>``
  (defaults: the file's values) and the model the parameter
  ``friction_velocity`` (:data:`FRICTION_VELOCITY`); the joint's friction
  force is ``damping·q̇ + friction·tanh(q̇/friction_velocity)``. A mimic joint's
  friction acts on its own rate and maps back through its multiplier.
  Damping and friction of floating and planar joints are ignored.
* The numbers of the file (lengths, masses, inertias) are baked into ``T`` and
  ``V`` as floats (an integral value such as ``0.0`` or ``1.0`` as an exact
  integer, so zero terms vanish).
* A link fixed to its parent (``fixed`` joint) moves with it: it is a body of
  its own with the composed constant transform, which is the same as merging
  its inertia into the parent's. Links fixed to the world never move: their
  ``<inertial>`` values are not checked.
* Inertia tensors are accepted when positive semi-definite up to rounding:
  smallest eigenvalue ≥ −(:data:`INERTIA_RELATIVE_TOLERANCE`·trace +
  :data:`INERTIA_ABSOLUTE_TOLERANCE`).

Kinematics
----------
Velocities are propagated from the root in each link's own frame (the forward
pass of recursive Newton–Euler), which keeps the expressions short: for the
joint from parent ``P`` to child ``C`` with origin ``(R_o, t)``, axis ``a``
and joint rotation ``R_q`` (``I`` for prismatic and fixed joints),

* ``ω_C = R_qᵀ R_oᵀ ω_P (+ a q̇ for a revolute joint)``,
* ``v_C = R_qᵀ R_oᵀ (v_P + ω_P × p) (+ a q̇ for a prismatic joint)``, with
  ``p = t (+ R_o a q for a prismatic joint)`` the child's origin in ``P``,
* ``z_C = R_qᵀ R_oᵀ z_P`` (the world's vertical in the link's frame) and the
  height ``h_C = h_P + z_P·p``.

Each link with an inertial (mass ``m``, centre of mass ``c``, inertia ``I``
about it in the link's frame) adds ``½ m |v_C + ω_C × c|² + ½ ω_Cᵀ I ω_C`` to
``T`` and ``m g (h_C + z_C·c)`` to ``V``. Nothing is expanded or simplified:
``T`` is the natural sum of per-body terms.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import sympy

from sls.algebra.expressions import symbol
from sls.errors import ModelError, ModelFileError, SlsError
from sls.model import Model, build_model, check_name, check_value, read_model_text

#: Joint types that are coordinates, the base joints expanded into chains of them, all types sls reads.
MOVABLE_TYPES = ("revolute", "continuous", "prismatic")
BASE_TYPES = ("floating", "planar")
JOINT_TYPES = MOVABLE_TYPES + ("fixed",) + BASE_TYPES
#: Default of the gravity parameter ``g``.
GRAVITY = 9.81
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
#: Name of the free-flyer joint ``floating_base=True`` adds (coordinates ``base_x`` … ``base_roll``).
FLOATING_BASE = "base"
#: The chains a floating and a planar joint become: (suffix, type, axis); planar axes are set per joint.
FLOATING_CHAIN = (
    ("x", "prismatic", (1.0, 0.0, 0.0)),
    ("y", "prismatic", (0.0, 1.0, 0.0)),
    ("z", "prismatic", (0.0, 0.0, 1.0)),
    ("yaw", "continuous", (0.0, 0.0, 1.0)),
    ("pitch", "continuous", (0.0, 1.0, 0.0)),
    ("roll", "continuous", (1.0, 0.0, 0.0)),
)
PLANAR_SUFFIXES = ("x", "y", "theta")
#: Input suffixes of a base's body wrench (floating: all six; planar: fx, fy, mz).
WRENCH_SUFFIXES = ("fx", "fy", "fz", "mx", "my", "mz")
#: An inertia tensor is positive semi-definite "up to rounding" when its smallest eigenvalue is at least
#: −(relative·trace + absolute) (kg·m²).
INERTIA_RELATIVE_TOLERANCE = 1e-6
INERTIA_ABSOLUTE_TOLERANCE = 1e-12
#: A mass matrix whose smallest eigenvalue is below this times the largest is singular (as in sls.derive.validate).
SINGULAR_RATIO = 1e-12

_DTD = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
_NOT_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]")
_IMPLICIT_INPUT = re.compile(r"u[0-9]+")
_INERTIA = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


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

    ``joints`` are the names of the chain's joints (floating: x, y, z, yaw, pitch, roll; planar: x, y,
    theta); ``link`` is the child link the body wrench acts on; ``axes`` are the wrench's directions in
    that link's frame, one ``(suffix, force direction or None, moment direction or None)`` per input.
    """

    name: str
    kind: str
    joints: tuple
    link: str
    axes: tuple


@dataclass(frozen=True)
class Robot:
    """A parsed, checked URDF tree: the root link, joints in tree order, inertials by link (``None``: none).

    Floating and planar joints are already expanded (``bases`` lists them); ``joints`` hold only
    revolute, continuous, prismatic and fixed joints.
    """

    root: str
    joints: tuple
    inertials: dict
    bases: tuple = ()

    @property
    def movable(self) -> tuple:
        """The movable joints that are coordinates (not mimic joints), in tree order."""
        return tuple(j for j in self.joints if j.kind in MOVABLE_TYPES and j.mimic is None)

    @property
    def moving(self) -> tuple:
        """Every joint that moves, coordinates and mimic joints, in tree order."""
        return tuple(j for j in self.joints if j.kind in MOVABLE_TYPES)


# --------------------------------------------------------------------------
# entry points


def load_urdf(
    path: str | Path,
    *,
    name: str | None = None,
    source: str | None = None,
    text: str | None = None,
    floating_base: bool = False,
) -> Model:
    """Read a URDF file (or its ``text``) into a model; errors start with the file name.

    ``floating_base=True`` frees the root link (a 6-DOF free-flyer joint ``base`` between the world
    and the root link, coordinates ``base_x, base_y, base_z, base_yaw, base_pitch, base_roll``).
    """
    path = Path(path)
    if text is None:
        text = read_model_text(path)
    filename = str(path)
    robot = parse_urdf(text, filename, floating_base=floating_base)
    names = state_names(robot, filename)
    parameters = friction_parameters(robot)
    frames = _forward(robot, names)
    inputs, forces = input_map(robot, names, frames)
    _check_generated_names(robot, names, parameters, inputs, filename)
    T, V, fric = energies(robot, names, frames)
    params = {"g": GRAVITY} if symbol("g") in V.free_symbols else {}
    params.update(parameters)
    actuated = not robot.bases
    try:
        model = build_model(
            state=names,
            T=T,
            V=V,
            fric=fric,
            params=params,
            inputs=None if actuated else inputs,
            forces=None if actuated else forces,
            name=name or path.stem,
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
URDF_TABLE_KEYS = ("file", "floating_base")
URDF_FILE_KEYS = ("urdf", "params")


def load_urdf_table(data: dict, path: Path, *, name: str, source: str) -> Model:
    """A TOML model file that points at a URDF file: ``[urdf]`` with ``file`` (relative to the TOML
    file) and optionally ``floating_base = true``; ``[params]`` may change parameter defaults."""
    what = f"{path}: [urdf]"
    unknown = sorted(set(data) - set(URDF_FILE_KEYS))
    if unknown:
        raise ModelFileError(
            f"{path}: key '{unknown[0]}' cannot go with a [urdf] table (allowed: {', '.join(URDF_FILE_KEYS)})"
        )
    table, params = data["urdf"], data.get("params", {})
    if not isinstance(table, dict):
        raise ModelFileError(f"{what} must be a table: [urdf] file = \"robot.urdf\"")
    unknown = sorted(set(table) - set(URDF_TABLE_KEYS))
    if unknown:
        raise ModelFileError(f"{what}: unknown key '{unknown[0]}' (allowed: {', '.join(URDF_TABLE_KEYS)})")
    file, floating = table.get("file"), table.get("floating_base", False)
    if not isinstance(file, str) or not file:
        raise ModelFileError(f"{what}: 'file' must name the URDF file (relative to this file)")
    if not isinstance(floating, bool):
        raise ModelFileError(f"{what}: 'floating_base' must be true or false")
    if not isinstance(params, dict):
        raise ModelFileError(f"{path}: key 'params' must be a table of NAME = NUMBER")
    model = load_urdf(Path(path).parent / file, name=name, source=source, floating_base=floating)
    unknown = sorted(set(params) - set(model.params))
    if unknown:
        raise ModelFileError(
            f"{path}: [params] {unknown[0]}: the robot has no parameter of that name "
            f"(it has: {', '.join(model.params)})"
        )
    try:
        values = {key: check_value(key, value) for key, value in params.items()}
    except ModelError as exc:
        raise ModelFileError(f"{path}: [params] {exc}") from None
    return replace(model, params={**model.params, **values}, file=str(path))


def parse_urdf(text: str, filename: str, *, floating_base: bool = False) -> Robot:
    """Parse and check URDF text: the tree, the joints and the inertials sls models.

    Floating and planar joints come back expanded into chains (see :class:`Base`); with
    ``floating_base`` (or for a file with one link and no joint) the root link gets a free-flyer.
    """
    root = _xml_root(text, filename)
    where = _Where(filename)
    links = {}
    for k, element in enumerate(root.findall("link"), 1):
        link = element.get("name")
        if not link:
            raise where.error(f"link number {k} has no name")
        if link in links:
            raise where.error(f"link '{link}' is defined twice")
        links[link] = element
    if not links:
        raise where.error("the <robot> has no <link>: a URDF robot is a tree of at least one link")
    joints = []
    for k, element in enumerate(root.findall("joint"), 1):
        joints.append(_joint(element, k, links, where))
    seen = set()
    for joint in joints:
        if joint.name in seen:
            raise where.error(f"joint '{joint.name}' is defined twice")
        seen.add(joint.name)
    root_link, ordered = _tree(links, joints, where)
    ordered = _resolve_mimics(ordered, where)
    if not floating_base and all(j.kind == "fixed" for j in ordered):
        floating_base = True  # nothing moves inside: one rigid body, free in space (a drone)
    world = root_link
    if floating_base:
        for joint in ordered:
            if joint.parent == root_link and joint.kind == "floating":
                raise where.error(
                    f"floating base: the root link '{root_link}' already joins the robot through the floating "
                    f"joint '{joint.name}'; leave out the floating-base option"
                )
        world = _unique("world", links)
        free = Joint(FLOATING_BASE, "floating", world, root_link, (0.0,) * 3, (0.0,) * 3, (1.0, 0.0, 0.0), 0.0)
        ordered = (free,) + ordered
    expanded, bases, massless = _expand_bases(ordered, set(links) | {world}, where)
    fixed_to_world = _fixed_to_root(world, expanded)
    inertials: dict[str, Inertial | None] = {link: None for link in massless}
    if world not in links:
        inertials[world] = None
    for link, element in links.items():
        inertials[link] = _inertial(element, link, where, check=link not in fixed_to_world)
    robot = Robot(root=world, joints=expanded, inertials=inertials, bases=bases)
    _check_moving_mass(robot, where)
    _check_mass_matrix(robot, where)
    return robot


def state_names(robot: Robot, filename: str) -> list:
    """The state names: one per movable joint in tree order, then ``d_<name>`` for each.

    A joint's name is used as it is when it is a valid sls name; otherwise
    characters other than letters, digits and ``_`` become ``_``, and a name
    that starts with a digit or ``_``, is reserved (a Python builtin or
    keyword, a function such as ``sin``), is ``g`` (the gravity parameter) or
    ``u1``, ``u2``, ... gets the prefix ``q_``. Two joints that end up with
    the same name are refused.
    """
    names: dict[str, str] = {}
    for joint in robot.movable:
        base = _NOT_IDENTIFIER.sub("_", joint.name)
        if not _usable(base):
            base = RENAME_PREFIX + base.lstrip("_")
        for candidate in (base, RATE_PREFIX + base):
            if candidate in names:
                other = names[candidate]
                raise ModelFileError(
                    f"{filename}: joints '{other}' and '{joint.name}' both give the state name '{candidate}'; "
                    "rename one of them"
                )
        names[base] = joint.name
        names[RATE_PREFIX + base] = joint.name
    q = list(names)[0::2]
    return q + [RATE_PREFIX + s for s in q]


def joint_label(joint: Joint) -> str:
    """The identifier part of the names made from a joint's name (``damping_<label>``, ``tau_<label>``)."""
    return _NOT_IDENTIFIER.sub("_", joint.name)


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


def input_map(robot: Robot, names: list, frames: dict | None = None) -> tuple:
    """``(input names, generalized forces)``: ``tau_<joint>`` on each coordinate outside a base, and each
    base's body wrench mapped by ``Jᵀ`` (the virtual power ``F·v + M·ω`` of the wrench on its link,
    differentiated by the rates). Inputs in tree order (a base's wrench where its chain starts).
    ``frames``: the robot's forward pass (:func:`_forward`), when already computed."""
    n = len(robot.movable)
    dq = [symbol(s) for s in names[n:]]
    in_base = {j: base for base in robot.bases for j in base.joints}
    inputs, forces = [], [sympy.Integer(0)] * n
    if robot.bases:
        twists = {link: frame[:2] for link, frame in (frames or _forward(robot, names)).items()}
    else:
        twists = {}
    started = set()
    for k, joint in enumerate(robot.movable):
        base = in_base.get(joint.name)
        if base is None:
            label = INPUT_PREFIX + joint_label(joint)
            inputs.append(label)
            forces[k] = forces[k] + symbol(label)
            continue
        if base.name in started:
            continue
        started.add(base.name)
        omega, velocity = twists[base.link]
        for suffix, force, moment in base.axes:
            u = symbol(f"{_NOT_IDENTIFIER.sub('_', base.name)}_{suffix}")
            inputs.append(u.name)
            power = _dot(velocity, force) if force is not None else _dot(omega, moment)
            for i in range(n):
                slope = sympy.diff(power, dq[i])
                if slope != 0:
                    forces[i] = forces[i] + slope * u
    return inputs, forces


def _check_generated_names(robot: Robot, names: list, params: dict, inputs: list, filename: str) -> None:
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


# --------------------------------------------------------------------------
# reading the XML


class _Where:
    """Builds one-line errors that start with the file name."""

    def __init__(self, filename: str) -> None:
        self.filename = filename

    def error(self, message: str) -> ModelFileError:
        return ModelFileError(f"{self.filename}: {message}")


def _xml_root(text: str, filename: str) -> ET.Element:
    match = _DTD.search(text)
    if match:
        line = text.count("\n", 0, match.start()) + 1
        raise ModelFileError(
            f"{filename}: <!{match.group(1).upper()} ...> at line {line}: DTDs and entities are not allowed in a "
            "URDF file (sls never expands entities); remove it"
        )
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        message = str(exc).split(":")[0]
        line, column = exc.position
        raise ModelFileError(f"{filename}: not valid XML: {message} (at line {line}, column {column + 1})") from None
    if root.tag != "robot":
        raise ModelFileError(f"{filename}: the root element is <{root.tag}>, expected <robot> (is this a URDF file?)")
    return root


def _numbers(
    element: ET.Element | None, attribute: str, count: int, default: tuple | None, what: str, where: _Where
) -> tuple:
    """``count`` finite floats from ``element``'s ``attribute`` (``default`` when the element or the attribute
    is absent)."""
    text = None if element is None else element.get(attribute)
    if element is None or text is None:
        if default is None:
            raise where.error(f"{what}: missing attribute {attribute}")
        return default
    parts = text.split()
    shown = f"<{element.tag} {attribute}=\"{text.strip()}\">"
    if len(parts) != count:
        plural = "s" if count != 1 else ""
        raise where.error(f"{what}: {shown}: expected {count} number{plural}, got {len(parts)}")
    values = []
    for part in parts:
        try:
            value = float(part)
        except ValueError:
            raise where.error(f"{what}: {shown}: '{part}' is not a number") from None
        if not math.isfinite(value):
            raise where.error(f"{what}: {shown}: '{part}' is not a finite number")
        values.append(value)
    return tuple(values)


def _attribute_text(element: ET.Element | None, attribute: str) -> str:
    """``element``'s ``attribute`` as written, stripped (``""`` when the element or attribute is absent)."""
    text = None if element is None else element.get(attribute)
    return "" if text is None else text.strip()


def _joint(element: ET.Element, number: int, links: dict, where: _Where) -> Joint:
    name = element.get("name")
    if not name:
        raise where.error(f"joint number {number} has no name")
    what = f"joint '{name}'"
    kind = element.get("type")
    known = "revolute, continuous, prismatic, fixed, floating and planar"
    if kind is None:
        raise where.error(f"{what}: missing attribute type ({known})")
    if kind not in JOINT_TYPES:
        raise where.error(f"{what}: unknown type '{kind}' (sls models {known} joints)")
    ends = {}
    for end in ("parent", "child"):
        tag = element.find(end)
        link = None if tag is None else tag.get("link")
        if not link:
            raise where.error(f"{what}: missing <{end} link=\"...\">")
        if link not in links:
            raise where.error(f"{what}: {end} link '{link}' is not defined (no <link name=\"{link}\">)")
        ends[end] = link
    origin = element.find("origin")
    xyz = _numbers(origin, "xyz", 3, (0.0, 0.0, 0.0), what, where)
    rpy = _numbers(origin, "rpy", 3, (0.0, 0.0, 0.0), what, where)
    axis: tuple[float, ...] = (1.0, 0.0, 0.0)
    damping, friction, mimic = 0.0, 0.0, None
    if kind != "fixed":
        if kind != "floating":
            axis_tag = element.find("axis")
            axis = _numbers(axis_tag, "xyz", 3, axis, what, where)
            length = math.sqrt(sum(a * a for a in axis))
            if length < 1e-12:  # the default axis has length 1: the <axis xyz> is given
                shown = _attribute_text(axis_tag, "xyz")
                raise where.error(f"{what}: <axis xyz=\"{shown}\">: the axis has zero length")
            axis = tuple(a / length for a in axis)
        if kind in MOVABLE_TYPES:  # floating and planar joints: <dynamics> is ignored
            dynamics = element.find("dynamics")
            damping = _numbers(dynamics, "damping", 1, (0.0,), what, where)[0]
            friction = _numbers(dynamics, "friction", 1, (0.0,), what, where)[0]
            for attribute, value in (("damping", damping), ("friction", friction)):
                if value < 0:
                    shown = _attribute_text(dynamics, attribute)  # the default 0 is not negative: it is given
                    raise where.error(f"{what}: <dynamics {attribute}=\"{shown}\">: {attribute} must not be negative")
    tag = element.find("mimic")
    if tag is not None and kind != "fixed":  # a fixed joint does not move: its <mimic> does nothing
        if kind in BASE_TYPES:
            raise where.error(
                f"{what}: <mimic> on a {kind} joint cannot be modelled (a mimic joint turns or slides about one axis)"
            )
        followed = tag.get("joint")
        if not followed:
            raise where.error(f"{what}: <mimic> without joint=\"...\" (the joint it follows)")
        multiplier = _numbers(tag, "multiplier", 1, (1.0,), what, where)[0]
        offset = _numbers(tag, "offset", 1, (0.0,), what, where)[0]
        mimic = (followed, multiplier, offset)
    return Joint(name, kind, ends["parent"], ends["child"], xyz, rpy, axis, damping, friction, mimic)


def _resolve_mimics(joints: tuple, where: _Where) -> tuple:
    """Mimic joints made to follow a coordinate: chains ``a → b → c`` composed, loops and bad targets refused."""
    by_name = {j.name: j for j in joints}
    resolved = []
    for joint in joints:
        if joint.mimic is None:
            resolved.append(joint)
            continue
        multiplier, offset, current, path = 1.0, 0.0, joint, [joint.name]
        while current.mimic is not None:
            followed, m, o = current.mimic
            target = by_name.get(followed)
            what = f"joint '{current.name}': <mimic joint=\"{followed}\">"
            if target is None:
                raise where.error(f"{what}: there is no joint named '{followed}'")
            if target.kind not in MOVABLE_TYPES:
                raise where.error(
                    f"{what}: joint '{followed}' is {target.kind}; a mimic joint follows a revolute, continuous "
                    "or prismatic joint"
                )
            multiplier, offset = multiplier * m, multiplier * o + offset  # q = mult·(m·q_t + o) + off
            if target.name in path:
                loop = path[path.index(target.name) :] + [target.name]
                raise where.error(f"mimic joints {' → '.join(repr(n) for n in loop)} follow each other in a loop")
            path.append(target.name)
            current = target
        resolved.append(replace(joint, mimic=(current.name, multiplier, offset)))
    return tuple(resolved)


def _unique(name: str, taken: set | dict) -> str:
    """``name``, or ``name_2``, ``name_3``, ... : the first not in ``taken``."""
    candidate, k = name, 1
    while candidate in taken:
        k += 1
        candidate = f"{name}_{k}"
    return candidate


def _planar_axes(normal: tuple) -> tuple:
    """Orthonormal in-plane axes ``(e1, e2)`` with ``e1 × e2 = normal``: ``e1`` is the coordinate axis least
    aligned with the normal (the first of x, y, z on ties) made orthogonal to it; so a z normal gives x and y."""
    k = min(range(3), key=lambda i: abs(normal[i]))
    e = [1.0 if i == k else 0.0 for i in range(3)]
    e1 = [e[i] - normal[k] * normal[i] for i in range(3)]
    length = math.sqrt(sum(v * v for v in e1))
    e1 = [v / length for v in e1]
    e2 = [
        normal[1] * e1[2] - normal[2] * e1[1],
        normal[2] * e1[0] - normal[0] * e1[2],
        normal[0] * e1[1] - normal[1] * e1[0],
    ]

    def snap(v: float) -> float:
        return 0.0 if abs(v) < 1e-15 else v  # exact zeros for coordinate axes

    return tuple(snap(v) for v in e1), tuple(snap(v) for v in e2)


def _expand_bases(joints: tuple, links: set, where: _Where) -> tuple:
    """``(joints, bases, new massless links)``: floating and planar joints replaced by their chains."""
    taken = set(links)
    joint_names = {j.name for j in joints}
    expanded: list[Joint] = []
    bases: list[Base] = []
    massless: list[str] = []
    for joint in joints:
        if joint.kind not in BASE_TYPES:
            expanded.append(joint)
            continue
        if joint.kind == "floating":
            chain: tuple[tuple[str, str, tuple], ...] = FLOATING_CHAIN
            axes: tuple[tuple[str, tuple | None, tuple | None], ...] = tuple(
                (suffix, direction if suffix.startswith("f") else None, direction if suffix.startswith("m") else None)
                for suffix, direction in zip(WRENCH_SUFFIXES, ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)) * 2)
            )
        else:
            e1, e2 = _planar_axes(joint.axis)
            chain = tuple(zip(PLANAR_SUFFIXES, ("prismatic", "prismatic", "continuous"), (e1, e2, joint.axis)))
            axes = (("fx", e1, None), ("fy", e2, None), ("mz", None, joint.axis))
        parent, names = joint.parent, []
        for k, (suffix, kind, axis) in enumerate(chain):
            last = k == len(chain) - 1
            child = joint.child if last else _unique(f"{joint.name}_{suffix}_link", taken)
            taken.add(child)
            if not last:
                massless.append(child)
            xyz, rpy = (joint.xyz, joint.rpy) if k == 0 else ((0.0,) * 3, (0.0,) * 3)
            if f"{joint.name}_{suffix}" in joint_names:
                raise where.error(
                    f"joint '{joint.name}_{suffix}' is defined, but it is also the name of a coordinate of the "
                    f"{joint.kind} joint '{joint.name}'; rename it"
                )
            expanded.append(Joint(f"{joint.name}_{suffix}", kind, parent, child, xyz, rpy, axis, 0.0))
            names.append(f"{joint.name}_{suffix}")
            parent = child
        bases.append(Base(joint.name, joint.kind, tuple(names), joint.child, axes))
    return tuple(expanded), tuple(bases), massless


def _fixed_to_root(root: str, joints: tuple) -> set:
    """The root link and the links joined to it by fixed joints only (they never move)."""
    fixed = {root}
    for joint in joints:  # tree order: a parent comes before its children
        if joint.kind == "fixed" and joint.parent in fixed:
            fixed.add(joint.child)
    return fixed


def _tree(links: dict, joints: list, where: _Where) -> tuple:
    """The root link and the joints in tree order (depth first, children in document order)."""
    parent_joint: dict[str, Joint] = {}
    for joint in joints:
        if joint.child in parent_joint:
            first = parent_joint[joint.child].name
            raise where.error(
                f"link '{joint.child}' is the child of two joints ('{first}' and '{joint.name}'): "
                "closed loops cannot be modelled (a URDF is a tree)"
            )
        parent_joint[joint.child] = joint
    roots = [link for link in links if link not in parent_joint]
    if not roots:
        raise where.error(f"{_loop(next(iter(links)), parent_joint)}; a URDF is a tree with one root link")
    if len(roots) > 1:
        raise where.error(
            f"links '{roots[0]}' and '{roots[1]}' are both roots (neither is the child of a joint): a URDF is one tree"
        )
    children: dict[str, list[Joint]] = {}
    for joint in joints:
        children.setdefault(joint.parent, []).append(joint)
    ordered = []
    stack = list(reversed(children.get(roots[0], [])))
    while stack:
        joint = stack.pop()
        ordered.append(joint)
        stack.extend(reversed(children.get(joint.child, [])))
    if len(ordered) != len(joints):
        reached = set(ordered)
        stray = next(j for j in joints if j not in reached)
        raise where.error(f"{_loop(stray.child, parent_joint)}, out of reach of the root link '{roots[0]}'")
    return roots[0], tuple(ordered)


def _loop(link: str, parent_joint: dict) -> str:
    """'joints 'a', 'b' form a closed loop': the cycle met going up from ``link`` (every link on the way has a
    parent)."""
    path = []
    while link not in path:
        path.append(link)
        link = parent_joint[link].parent
    names = [parent_joint[child].name for child in reversed(path[path.index(link) :])]  # parent to child
    return f"joints {', '.join(repr(n) for n in names)} form a closed loop"


def _inertial(link: ET.Element, name: str, where: _Where, *, check: bool = True) -> Inertial | None:
    """The link's ``<inertial>`` (``None``: none). ``check=False`` (a link that never moves): a physically
    impossible value (negative mass, inertia not positive semi-definite) gives ``None`` instead of an error."""
    element = link.find("inertial")
    if element is None:
        return None
    what = f"link '{name}'"
    mass_tag = element.find("mass")
    if mass_tag is None:
        raise where.error(f"{what}: <inertial> without <mass value=\"...\">")
    mass = _numbers(mass_tag, "value", 1, None, what, where)[0]
    tensor = element.find("inertia")
    if tensor is None:
        raise where.error(f"{what}: <inertial> without <inertia ixx=... ixy=... ixz=... iyy=... iyz=... izz=...>")
    ixx, ixy, ixz, iyy, iyz, izz = (_numbers(tensor, key, 1, None, what, where)[0] for key in _INERTIA)
    inertia = ((ixx, ixy, ixz), (ixy, iyy, iyz), (ixz, iyz, izz))
    origin = element.find("origin")
    com = _numbers(origin, "xyz", 3, (0.0, 0.0, 0.0), what, where)
    rotation = rpy_matrix(_numbers(origin, "rpy", 3, (0.0, 0.0, 0.0), what, where))
    if mass < 0:
        if not check:
            return None
        shown = _attribute_text(mass_tag, "value")
        raise where.error(f"{what}: <mass value=\"{shown}\">: the mass must not be negative")
    if not _positive_semidefinite(inertia):
        if not check:
            return None
        smallest = float(np.linalg.eigvalsh(np.array(inertia))[0])
        raise where.error(
            f"{what}: <inertia>: the inertia tensor is not positive semi-definite (smallest eigenvalue {smallest:.3g}, "
            f"beyond the rounding tolerance {INERTIA_RELATIVE_TOLERANCE:g}·trace + {INERTIA_ABSOLUTE_TOLERANCE:g})"
        )
    rotated = tuple(
        tuple(
            sum(rotation[i][a] * inertia[a][b] * rotation[j][b] for a in range(3) for b in range(3)) for j in range(3)
        )
        for i in range(3)
    )
    return Inertial(mass=mass, com=com, inertia=rotated)


def _positive_semidefinite(matrix: tuple) -> bool:
    """Smallest eigenvalue ≥ −(relative tolerance·trace + absolute tolerance): PSD up to rounding."""
    values = np.linalg.eigvalsh(np.array(matrix, dtype=float))
    trace = abs(matrix[0][0]) + abs(matrix[1][1]) + abs(matrix[2][2])
    return bool(values[0] >= -(INERTIA_RELATIVE_TOLERANCE * trace + INERTIA_ABSOLUTE_TOLERANCE))


def _carriers(robot: Robot) -> dict:
    """Per coordinate joint name: the joints that move with it (itself and the mimic joints that follow it)."""
    carriers = {j.name: [j] for j in robot.movable}
    for joint in robot.moving:
        if joint.mimic is not None:
            carriers[joint.mimic[0]].append(joint)
    return carriers


def _check_moving_mass(robot: Robot, where: _Where) -> None:
    """Every coordinate must move some mass (prismatic) or mass or inertia (revolute), itself or through its mimics."""
    below: dict[str, list[str]] = {}
    for joint in robot.joints:
        below.setdefault(joint.parent, []).append(joint.child)
    for joint in robot.movable:
        carried, found = [], False
        for mover in _carriers(robot)[joint.name]:
            links, stack = [], [mover.child]
            while stack:
                link = stack.pop()
                links.append(link)
                stack.extend(below.get(link, []))
            carried += links
            inertials = [robot.inertials[link] for link in links if robot.inertials[link] is not None]
            mass = sum(i.mass for i in inertials)
            rotational = any(any(v != 0 for row in i.inertia for v in row) for i in inertials)
            found = found or mass > 0 or (rotational and mover.kind != "prismatic")
        if found:
            continue
        massless = {j.child for base in robot.bases for j in robot.joints if j.name in base.joints[:-1]}
        carried = [link for link in carried if link not in massless]
        shown = next((base.link for base in robot.bases if joint.name in base.joints), joint.child)
        inertials = [robot.inertials[link] for link in carried if robot.inertials[link] is not None]
        mimics = len(_carriers(robot)[joint.name]) > 1
        carrying = " and the links it and its mimic joints carry" if mimics else " and the links it carries"
        child = f"link '{shown}'" + (carrying if len(carried) > 1 else "")
        if not inertials:
            problem = "no <inertial>"
        else:
            problem = "zero mass" if joint.kind == "prismatic" else "zero mass and inertia"
        base = next((base for base in robot.bases if joint.name in base.joints), None)
        if base is None:
            mover = f"joint '{joint.name}'"
        else:
            mover = f"the {base.kind} joint '{base.name}' (coordinate '{joint.name}')"
        raise where.error(
            f"{mover} moves no mass: {child} {'have' if len(carried) > 1 else 'has'} {problem}, "
            "so the mass matrix would be singular; give the link an <inertial> with a positive mass"
        )


def _check_mass_matrix(robot: Robot, where: _Where, samples: int = 3) -> None:
    """Refuse a mass matrix that is singular at sampled configurations, naming the joints that move no mass.

    The configurations are drawn in [−1.2, 1.2] (away from a floating base's pitch = ±π/2) with a fixed seed.
    """
    n = len(robot.movable)
    rng = np.random.default_rng(20261123)
    names = [j.name for j in robot.movable]
    for _ in range(samples):
        q = rng.uniform(-1.2, 1.2, n)
        M = numeric_mass_matrix(robot, q)
        values, vectors = np.linalg.eigh(M)
        if values[0] > SINGULAR_RATIO * max(values[-1], 1e-300):
            continue
        null = np.abs(vectors[:, 0])
        involved = [names[k] for k in np.flatnonzero(null > 1e-6 * null.max())]
        at = ", ".join(f"{name}={value:.3g}" for name, value in zip(names, q))
        if len(involved) == 1:
            raise where.error(
                f"joint '{involved[0]}' moves no mass: the links it carries have their mass on its axis and no "
                f"inertia about it (the mass matrix is singular, e.g. at {at}); give them inertia"
            )
        listed = ", ".join(f"'{name}'" for name in involved)
        base = next((base for base in robot.bases if set(involved) <= set(base.joints)), None)
        if base is not None:
            raise where.error(
                f"the {base.kind} joint '{base.name}' moves no mass in some direction: coordinates {listed} together "
                f"move nothing that has mass or inertia (the mass matrix is singular, e.g. at {at}); check the "
                f"<inertia> of link '{base.link}' and the links it carries"
            )
        hint = "; give them inertia"
        for base in robot.bases:
            inertial = robot.inertials.get(base.link)
            if set(involved) & set(base.joints) and (inertial is None or inertial.mass == 0):
                hint = (
                    f"; link '{base.link}' of the {base.kind} joint '{base.name}' has no mass, so the joints next "
                    "to it turn it for free: give it an <inertial>"
                )
        raise where.error(
            f"joints {listed} together move no mass (the mass matrix is singular, e.g. at {at}): the links they "
            f"carry have no inertia in that combined motion{hint}"
        )


def numeric_mass_matrix(robot: Robot, q: np.ndarray) -> np.ndarray:
    """``M(q)`` (n×n, floats) from world-frame Jacobians: an independent numeric route over the same tree.

    ``q`` holds the coordinates in ``robot.movable`` order; mimic joints move with the joint they follow.
    """
    n = len(robot.movable)
    index = {j.name: k for k, j in enumerate(robot.movable)}
    # world rotation, origin, joints above (coordinate index, multiplier, type, world axis, world origin)
    frames: dict[str, tuple[np.ndarray, np.ndarray, list[tuple[int, float, str, np.ndarray, np.ndarray]]]] = {
        robot.root: (np.eye(3), np.zeros(3), [])
    }
    M = np.zeros((n, n))
    for joint in robot.joints:
        R, p, above = frames[joint.parent]
        R_joint = R @ np.array(rpy_matrix(joint.rpy))
        p_joint = p + R @ np.array(joint.xyz)
        axis = R_joint @ np.array(joint.axis)
        if joint.kind in MOVABLE_TYPES:
            followed, multiplier, offset = joint.mimic or (joint.name, 1.0, 0.0)
            k = index[followed]
            value = multiplier * q[k] + offset
            above = above + [(k, multiplier, joint.kind, axis, p_joint)]
            if joint.kind == "prismatic":
                p_joint = p_joint + axis * value
            else:
                R_joint = R_joint @ _rotation_matrix(np.array(joint.axis), value)
        frames[joint.child] = (R_joint, p_joint, above)
        inertial = robot.inertials.get(joint.child)
        if inertial is None or not above:
            continue
        com = p_joint + R_joint @ np.array(inertial.com)
        Jv, Jw = np.zeros((3, n)), np.zeros((3, n))
        for k, multiplier, kind, a, origin in above:
            if kind == "prismatic":
                Jv[:, k] += multiplier * a
            else:
                Jv[:, k] += multiplier * np.cross(a, com - origin)
                Jw[:, k] += multiplier * a
        I_world = R_joint @ np.array(inertial.inertia) @ R_joint.T
        M += inertial.mass * Jv.T @ Jv + Jw.T @ I_world @ Jw
    return M


def _rotation_matrix(axis: np.ndarray, angle: float) -> np.ndarray:
    K = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


# --------------------------------------------------------------------------
# kinematics and energies


def _number(value: float) -> sympy.Expr:
    """A float as a sympy number: integral values exact, values within 1e-14 of an integer snapped."""
    nearest = round(value)
    if abs(value - nearest) <= 1e-14 and abs(nearest) < 2**53:
        return sympy.Integer(nearest)
    return sympy.Float(value)


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


def _axis_rotation(axis: tuple, q: sympy.Symbol) -> list:
    """Rotation by ``q`` about the unit ``axis`` (Rodrigues), exact for the coordinate axes."""
    c, s = sympy.cos(q), sympy.sin(q)
    a = [_number(v) for v in axis]
    if sum(v != 0 for v in a) == 1:
        return _principal_rotation(a, c, s)
    x, y, z = a
    return [
        [c + x * x * (1 - c), x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
        [y * x * (1 - c) + z * s, c + y * y * (1 - c), y * z * (1 - c) - x * s],
        [z * x * (1 - c) - y * s, z * y * (1 - c) + x * s, c + z * z * (1 - c)],
    ]


def _principal_rotation(a: list, c: sympy.Expr, s: sympy.Expr) -> list:
    """Rotation about ``±e_k`` (``a`` has one non-zero entry, ±1): only cos and sin, no (1 − cos) terms."""
    k = next(i for i, v in enumerate(a) if v != 0)
    s = s * a[k]
    i, j = (k + 1) % 3, (k + 2) % 3
    R = [[sympy.Integer(0)] * 3 for _ in range(3)]
    R[k][k] = sympy.Integer(1)
    R[i][i], R[j][j] = c, c
    R[i][j], R[j][i] = -s, s
    return R


def _transpose_times(R: list, v: list) -> list:
    """``Rᵀ v``."""
    return [sympy.Add(*(R[a][b] * v[a] for a in range(3))) for b in range(3)]


def _cross(a: list, b: list) -> list:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _dot(a: list, b: list) -> sympy.Expr:
    return sympy.Add(*(x * y for x, y in zip(a, b)))


def _joint_motions(robot: Robot, names: list) -> dict:
    """Per moving joint: ``(position, rate, coordinate index, multiplier)``; a mimic joint's position is
    ``multiplier·q_f + offset`` and its rate ``multiplier·q̇_f``, ``q_f`` the coordinate it follows."""
    n = len(robot.movable)
    index = {joint.name: k for k, joint in enumerate(robot.movable)}
    motions = {}
    for joint in robot.moving:
        followed, multiplier, offset = joint.mimic or (joint.name, 1.0, 0.0)
        k = index[followed]
        q, dq = symbol(names[k]), symbol(names[n + k])
        if joint.mimic is not None:
            m, o = _number(multiplier), _number(offset)
            q, dq = m * q + o, m * dq
        motions[joint.name] = (q, dq, k, multiplier)
    return motions


def _forward(robot: Robot, names: list) -> dict:
    """Per link: ``(ω, v, z, h, moves)``: angular velocity, velocity of its origin and the world's vertical,
    all in the link's frame, its origin's height, and whether it moves (the forward pass of RNEA)."""
    motions = _joint_motions(robot, names)
    zero = [sympy.Integer(0)] * 3
    frames = {robot.root: (zero, zero, [sympy.Integer(0), sympy.Integer(0), sympy.Integer(1)], sympy.Integer(0), False)}
    for joint in robot.joints:
        omega, velocity, vertical, height, moves = frames[joint.parent]
        origin = [[_number(v) for v in row] for row in rpy_matrix(joint.rpy)]
        offset = [_number(v) for v in joint.xyz]
        axis = [_number(v) for v in joint.axis]
        q, dq = motions.get(joint.name, (None, None, None, None))[:2]
        moves = moves or dq is not None
        if joint.kind == "prismatic":
            offset = [offset[i] + _dot(origin[i], axis) * q for i in range(3)]  # t + R_o a q
        rotation = _axis_rotation(joint.axis, q) if joint.kind in ("revolute", "continuous") else None
        child_omega = _to_child(origin, rotation, omega)
        child_velocity = _to_child(origin, rotation, [velocity[i] + w for i, w in enumerate(_cross(omega, offset))])
        if rotation is not None:
            child_omega = [child_omega[i] + axis[i] * dq for i in range(3)]
        if joint.kind == "prismatic":
            child_velocity = [child_velocity[i] + axis[i] * dq for i in range(3)]
        child_height = height + _dot(vertical, offset)
        frames[joint.child] = (child_omega, child_velocity, _to_child(origin, rotation, vertical), child_height, moves)
    return frames


def _to_child(origin: list, rotation: list | None, vector: list) -> list:
    """A parent-frame vector in the child's frame: ``R_qᵀ R_oᵀ v`` (``R_q = I`` when ``rotation`` is None)."""
    vector = _transpose_times(origin, vector)
    return vector if rotation is None else _transpose_times(rotation, vector)


def energies(robot: Robot, names: list, frames: dict | None = None) -> tuple:
    """``(T, V, fric)`` of ``robot`` with the coordinates named ``names`` (q then q̇); ``frames``: its
    forward pass (:func:`_forward`), when already computed.

    ``fric[k]`` is the friction on coordinate ``k``: ``damping_<j>·r + friction_<j>·tanh(r/friction_velocity)``
    of each joint ``j`` that moves with it (itself and its mimic joints, ``r`` the joint's own rate),
    times the joint's multiplier; a joint with zero damping (friction) has no such term.
    """
    n = len(robot.movable)
    g = symbol("g")
    frames = frames or _forward(robot, names)
    kinetic, potential = [], []
    for joint in robot.joints:
        inertial = robot.inertials[joint.child]
        omega, velocity, vertical, height, moves = frames[joint.child]
        if moves and inertial is not None:
            T, V = _body_energies(inertial, omega, velocity, vertical, height, g)
            kinetic.append(T)
            potential.append(V)
    fric: list[list[sympy.Expr]] = [[] for _ in range(n)]
    for joint in robot.moving:
        _, rate, k, multiplier = _joint_motions(robot, names)[joint.name]
        terms = []
        if joint.damping != 0:
            terms.append(symbol(DAMPING_PREFIX + joint_label(joint)) * rate)
        if joint.friction != 0:
            coulomb = symbol(FRICTION_PREFIX + joint_label(joint))
            terms.append(coulomb * sympy.tanh(rate / symbol(FRICTION_VELOCITY_NAME)))
        if terms:
            fric[k].append(sympy.Add(*terms) * (_number(multiplier) if joint.mimic is not None else 1))
    return sympy.Add(*kinetic), sympy.Add(*potential), tuple(sympy.Add(*f) for f in fric)


def _body_energies(
    inertial: Inertial, omega: list, velocity: list, vertical: list, height: sympy.Expr, g: sympy.Symbol
) -> tuple:
    """``½ m |v + ω × c|² + ½ ωᵀ I ω`` and ``m g (h + z·c)`` of one link."""
    com = [_number(v) for v in inertial.com]
    mass = _number(inertial.mass)
    half = sympy.Rational(1, 2)
    terms = []
    if mass != 0:
        v = [velocity[i] + w for i, w in enumerate(_cross(omega, com))]
        terms.append(half * mass * sympy.Add(*(component**2 for component in v)))
    inertia = [[_number(value) for value in row] for row in inertial.inertia]
    for a in range(3):
        if inertia[a][a] != 0:
            terms.append(half * inertia[a][a] * omega[a] ** 2)
        for b in range(a + 1, 3):
            if inertia[a][b] != 0:
                terms.append(inertia[a][b] * omega[a] * omega[b])
    potential = mass * g * (height + _dot(vertical, com)) if mass != 0 else sympy.Integer(0)
    return sympy.Add(*terms), potential
