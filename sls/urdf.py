"""Stage 1 for robots: a URDF file → a :class:`~sls.model.Model`.

A URDF file describes a robot as a tree of links joined by joints. sls reads:

* ``<joint>`` of type ``revolute``, ``continuous``, ``prismatic`` or ``fixed``,
  with ``<parent link>``, ``<child link>``, ``<origin xyz rpy>`` (default 0),
  ``<axis xyz>`` (default ``1 0 0``, normalised) and ``<dynamics damping>``
  (viscous friction ``damping·q̇``);
* ``<link>`` with ``<inertial>``: ``<origin xyz rpy>`` (the centre of mass and
  the orientation of the inertia's frame), ``<mass value>`` and ``<inertia
  ixx ixy ixz iyy iyz izz>`` (about the centre of mass).

Everything else (``<visual>``, ``<collision>``, ``<limit>``,
``<transmission>``, ``<gazebo>``, materials, ...) is ignored. What sls cannot
model is refused with one line naming the element (:class:`ModelFileError`):
floating and planar joints, ``<mimic>``, a ``friction`` attribute, closed
loops, DTDs and entities.

The file is data: it is parsed by the standard library's XML parser, after
refusing any ``<!DOCTYPE``/``<!ENTITY`` in the text (so no entity is ever
expanded), and nothing in it is evaluated.

Conventions of the model
------------------------
* The root link is fixed to the world; gravity is ``g`` along −z of the root
  link's frame, ``g`` a parameter (default 9.81).
* The coordinates are the movable joints in tree order (depth first from the
  root, children in document order), named after the joints (see
  :func:`state_names`), then their rates ``d_<name>``.
* The numbers of the file (lengths, masses, inertias, damping) are baked into
  ``T``, ``V`` and ``fric`` as floats (an integral value such as ``0.0`` or
  ``1.0`` as an exact integer, so zero terms vanish).
* A link fixed to its parent (``fixed`` joint) moves with it: it is a body of
  its own with the composed constant transform, which is the same as merging
  its inertia into the parent's.

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
from dataclasses import dataclass
from pathlib import Path

import sympy

from .errors import ModelError, ModelFileError, SlsError
from .expressions import symbol
from .model import Model, build_model, check_name, read_model_text

#: Joint types sls models, and those that move.
MOVABLE_TYPES = ("revolute", "continuous", "prismatic")
JOINT_TYPES = MOVABLE_TYPES + ("fixed",)
#: Default of the gravity parameter ``g``.
GRAVITY = 9.81
#: Prefix of the rate names (``d_<joint>``) and of joint names that are not usable as they are.
RATE_PREFIX = "d_"
RENAME_PREFIX = "q_"

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
    mimic: tuple | None = None


@dataclass(frozen=True)
class Robot:
    """A parsed, checked URDF tree: the root link, joints in tree order, inertials by link (``None``: none)."""

    root: str
    joints: tuple
    inertials: dict

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


def load_urdf(path: str | Path, *, name: str | None = None, source: str | None = None, text: str | None = None) -> Model:
    """Read a URDF file (or its ``text``) into a model; errors start with the file name."""
    path = Path(path)
    if text is None:
        text = read_model_text(path)
    filename = str(path)
    robot = parse_urdf(text, filename)
    names = state_names(robot, filename)
    T, V, fric = energies(robot, names)
    params = {"g": GRAVITY} if symbol("g") in V.free_symbols else {}
    try:
        return build_model(
            state=names,
            T=T,
            V=V,
            fric=fric,
            params=params,
            name=name or path.stem,
            source=source or f"URDF file {path.name}",
            tree=robot,
        )
    except SlsError as exc:
        raise ModelFileError(f"{filename}: {exc}") from None


def parse_urdf(text: str, filename: str) -> Robot:
    """Parse and check URDF text: the tree, the joints and the inertials sls models."""
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
    joints = []
    for k, element in enumerate(root.findall("joint"), 1):
        joints.append(_joint(element, k, links, where))
    seen = set()
    for joint in joints:
        if joint.name in seen:
            raise where.error(f"joint '{joint.name}' is defined twice")
        seen.add(joint.name)
    root_link, ordered = _tree(links, joints, where)
    inertials = {link: _inertial(element, link, where) for link, element in links.items()}
    robot = Robot(root=root_link, joints=ordered, inertials=inertials)
    if not robot.movable:
        raise where.error(
            "the robot has no movable joint (revolute, continuous or prismatic); there is nothing to derive"
        )
    _check_moving_mass(robot, where)
    return robot


def state_names(robot: Robot, filename: str) -> list:
    """The state names: one per movable joint in tree order, then ``d_<name>`` for each.

    A joint's name is used as it is when it is a valid sls name; otherwise
    characters other than letters, digits and ``_`` become ``_``, and a name
    that starts with a digit or ``_``, is reserved (a Python builtin or
    keyword, a function such as ``sin``), is ``g`` (the gravity parameter) or
    ``u1``, ``u2``, ... (the inputs) gets the prefix ``q_``. Two joints that
    end up with the same name are refused.
    """
    names = {}
    for joint in robot.movable:
        base = _NOT_IDENTIFIER.sub("_", joint.name)
        if not _usable(base):
            base = RENAME_PREFIX + base.lstrip("_")
        for candidate in (base, RATE_PREFIX + base):
            if candidate in names:
                other = names[candidate]
                raise ModelFileError(
                    f"{filename}: joints '{other}' and '{joint.name}' both give the state name '{candidate}'; rename one of them"
                )
        names[base] = joint.name
        names[RATE_PREFIX + base] = joint.name
    q = list(names)[0::2]
    return q + [RATE_PREFIX + s for s in q]


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
            f"{filename}: <!{match.group(1).upper()} ...> at line {line}: DTDs and entities are not allowed in a URDF file "
            "(sls never expands entities); remove it"
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


def _numbers(element: ET.Element | None, attribute: str, count: int, default: tuple | None, what: str, where: _Where) -> tuple:
    """``count`` finite floats from ``element``'s ``attribute`` (``default`` when the element or attribute is absent)."""
    text = None if element is None else element.get(attribute)
    if text is None:
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


def _joint(element: ET.Element, number: int, links: dict, where: _Where) -> Joint:
    name = element.get("name")
    if not name:
        raise where.error(f"joint number {number} has no name")
    what = f"joint '{name}'"
    kind = element.get("type")
    if kind is None:
        raise where.error(f"{what}: missing attribute type (revolute, continuous, prismatic or fixed)")
    if kind in ("floating", "planar"):
        raise where.error(
            f"{what}: type '{kind}' cannot be modelled (sls models revolute, continuous, prismatic and fixed joints; "
            "the root link is fixed to the world)"
        )
    if kind not in JOINT_TYPES:
        raise where.error(f"{what}: unknown type '{kind}' (sls models revolute, continuous, prismatic and fixed joints)")
    ends = {}
    for end in ("parent", "child"):
        tag = element.find(end)
        link = None if tag is None else tag.get("link")
        if not link:
            raise where.error(f"{what}: missing <{end} link=\"...\">")
        if link not in links:
            raise where.error(f"{what}: {end} link '{link}' is not defined (no <link name=\"{link}\">)")
        ends[end] = link
    if element.find("mimic") is not None:
        raise where.error(f"{what}: <mimic> joints cannot be modelled (every movable joint is a coordinate of its own in sls)")
    origin = element.find("origin")
    xyz = _numbers(origin, "xyz", 3, (0.0, 0.0, 0.0), what, where)
    rpy = _numbers(origin, "rpy", 3, (0.0, 0.0, 0.0), what, where)
    axis, damping = (1.0, 0.0, 0.0), 0.0
    if kind in MOVABLE_TYPES:
        axis = _numbers(element.find("axis"), "xyz", 3, axis, what, where)
        length = math.sqrt(sum(a * a for a in axis))
        if length < 1e-12:
            raise where.error(f"{what}: <axis xyz=\"{element.find('axis').get('xyz').strip()}\">: the axis has zero length")
        axis = tuple(a / length for a in axis)
        dynamics = element.find("dynamics")
        damping = _numbers(dynamics, "damping", 1, (0.0,), what, where)[0]
        friction = _numbers(dynamics, "friction", 1, (0.0,), what, where)[0]
        if damping < 0:
            raise where.error(f"{what}: <dynamics damping=\"{dynamics.get('damping').strip()}\">: damping must not be negative")
        if friction != 0:
            raise where.error(
                f"{what}: <dynamics friction=\"{dynamics.get('friction').strip()}\">: sls models viscous damping only "
                "(Coulomb friction is not smooth); remove the friction attribute or set it to 0"
            )
    return Joint(name, kind, ends["parent"], ends["child"], xyz, rpy, axis, damping)


def _tree(links: dict, joints: list, where: _Where) -> tuple:
    """The root link and the joints in tree order (depth first, children in document order)."""
    parent_joint = {}
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
    children = {}
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
    """'joints 'a', 'b' form a closed loop': the cycle met going up from ``link`` (every link on the way has a parent)."""
    path = []
    while link not in path:
        path.append(link)
        link = parent_joint[link].parent
    names = [parent_joint[l].name for l in reversed(path[path.index(link) :])]  # parent to child
    return f"joints {', '.join(repr(n) for n in names)} form a closed loop"


def _inertial(link: ET.Element, name: str, where: _Where) -> Inertial | None:
    element = link.find("inertial")
    if element is None:
        return None
    what = f"link '{name}'"
    mass_tag = element.find("mass")
    if mass_tag is None:
        raise where.error(f"{what}: <inertial> without <mass value=\"...\">")
    mass = _numbers(mass_tag, "value", 1, None, what, where)[0]
    if mass < 0:
        raise where.error(f"{what}: <mass value=\"{mass_tag.get('value').strip()}\">: the mass must not be negative")
    tensor = element.find("inertia")
    if tensor is None:
        raise where.error(f"{what}: <inertial> without <inertia ixx=... ixy=... ixz=... iyy=... iyz=... izz=...>")
    ixx, ixy, ixz, iyy, iyz, izz = (_numbers(tensor, key, 1, None, what, where)[0] for key in _INERTIA)
    inertia = ((ixx, ixy, ixz), (ixy, iyy, iyz), (ixz, iyz, izz))
    if not _positive_semidefinite(inertia):
        raise where.error(f"{what}: <inertia>: the inertia tensor is not positive semi-definite")
    origin = element.find("origin")
    com = _numbers(origin, "xyz", 3, (0.0, 0.0, 0.0), what, where)
    rotation = _rpy_matrix(_numbers(origin, "rpy", 3, (0.0, 0.0, 0.0), what, where))
    rotated = tuple(
        tuple(
            sum(rotation[i][a] * inertia[a][b] * rotation[j][b] for a in range(3) for b in range(3)) for j in range(3)
        )
        for i in range(3)
    )
    return Inertial(mass=mass, com=com, inertia=rotated)


def _positive_semidefinite(matrix: tuple) -> bool:
    """Sylvester-style test on all principal minors, with a tolerance relative to the trace."""
    (a, b, c), (_, d, e), (_, _, f) = matrix
    scale = max(abs(a) + abs(d) + abs(f), 1e-300)
    tol = 1e-12 * scale
    minors1 = (a, d, f)
    minors2 = (a * d - b * b, a * f - c * c, d * f - e * e)
    det = a * (d * f - e * e) - b * (b * f - e * c) + c * (b * e - d * c)
    return min(minors1) >= -tol and min(minors2) >= -tol * scale and det >= -tol * scale * scale


def _check_moving_mass(robot: Robot, where: _Where) -> None:
    """Every movable joint must move some mass (prismatic) or mass or inertia (revolute)."""
    below = {}
    for joint in robot.joints:
        below.setdefault(joint.parent, []).append(joint.child)
    for joint in robot.movable:
        carried, stack = [], [joint.child]
        while stack:
            link = stack.pop()
            carried.append(link)
            stack.extend(below.get(link, []))
        inertials = [robot.inertials[link] for link in carried if robot.inertials[link] is not None]
        mass = sum(i.mass for i in inertials)
        rotational = any(any(v != 0 for row in i.inertia for v in row) for i in inertials)
        if mass > 0 or (rotational and joint.kind != "prismatic"):
            continue
        child = f"link '{joint.child}'" + (" and the links it carries" if len(carried) > 1 else "")
        problem = "no <inertial>" if not inertials else ("zero mass" if joint.kind == "prismatic" else "zero mass and inertia")
        raise where.error(
            f"joint '{joint.name}' moves no mass: {child} {'have' if len(carried) > 1 else 'has'} {problem}, "
            "so the mass matrix would be singular; give the link an <inertial> with a positive mass"
        )


# --------------------------------------------------------------------------
# kinematics and energies


def _number(value: float) -> sympy.Expr:
    """A float as a sympy number: integral values exact, values within 1e-14 of an integer snapped."""
    nearest = round(value)
    if abs(value - nearest) <= 1e-14 and abs(nearest) < 2**53:
        return sympy.Integer(nearest)
    return sympy.Float(value)


def _rpy_matrix(rpy: tuple) -> tuple:
    """URDF's fixed-axis roll, pitch, yaw: ``R = Rz(yaw) Ry(pitch) Rx(roll)``, as floats."""
    roll, pitch, yaw = rpy
    cr, sr, cp, sp, cy, sy = math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch), math.cos(yaw), math.sin(yaw)
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


def energies(robot: Robot, names: list) -> tuple:
    """``(T, V, fric)`` of ``robot`` with the coordinates named ``names`` (q then q̇)."""
    n = len(robot.movable)
    coordinate = {joint.name: (symbol(names[k]), symbol(names[n + k])) for k, joint in enumerate(robot.movable)}
    g = symbol("g")
    zero = [sympy.Integer(0)] * 3
    # Per link: angular velocity, velocity of its origin, world vertical (all in its frame), height, moves?
    frames = {robot.root: (zero, zero, [sympy.Integer(0), sympy.Integer(0), sympy.Integer(1)], sympy.Integer(0), False)}
    kinetic, potential, fric = [], [], []
    for joint in robot.joints:
        omega, velocity, vertical, height, moves = frames[joint.parent]
        origin = [[_number(v) for v in row] for row in _rpy_matrix(joint.rpy)]
        offset = [_number(v) for v in joint.xyz]
        axis = [_number(v) for v in joint.axis]
        q, dq = coordinate.get(joint.name, (None, None))
        if dq is not None:
            fric.append(_number(joint.damping) * dq)
            moves = True
        if joint.kind == "prismatic":
            offset = [offset[i] + _dot(origin[i], axis) * q for i in range(3)]  # t + R_o a q
        rotation = _axis_rotation(joint.axis, q) if joint.kind in ("revolute", "continuous") else None

        def to_child(vector: list) -> list:
            vector = _transpose_times(origin, vector)
            return vector if rotation is None else _transpose_times(rotation, vector)

        child_omega = to_child(omega)
        child_velocity = to_child([velocity[i] + w for i, w in enumerate(_cross(omega, offset))])
        if rotation is not None:
            child_omega = [child_omega[i] + axis[i] * dq for i in range(3)]
        if joint.kind == "prismatic":
            child_velocity = [child_velocity[i] + axis[i] * dq for i in range(3)]
        child_height = height + _dot(vertical, offset)
        frames[joint.child] = (child_omega, child_velocity, to_child(vertical), child_height, moves)
        inertial = robot.inertials[joint.child]
        if moves and inertial is not None:
            T, V = _body_energies(inertial, *frames[joint.child][:4], g)
            kinetic.append(T)
            potential.append(V)
    return sympy.Add(*kinetic), sympy.Add(*potential), tuple(fric)


def _body_energies(inertial: Inertial, omega: list, velocity: list, vertical: list, height: sympy.Expr, g: sympy.Symbol) -> tuple:
    """``½ m |v + ω × c|² + ½ ωᵀ I ω`` and ``m g (h + z·c)`` of one link."""
    com = [_number(v) for v in inertial.com]
    mass = _number(inertial.mass)
    half = sympy.Rational(1, 2)
    terms = []
    if mass != 0:
        v = [velocity[i] + w for i, w in enumerate(_cross(omega, com))]
        terms.append(half * mass * sympy.Add(*(component**2 for component in v)))
    I = [[_number(value) for value in row] for row in inertial.inertia]
    for a in range(3):
        if I[a][a] != 0:
            terms.append(half * I[a][a] * omega[a] ** 2)
        for b in range(a + 1, 3):
            if I[a][b] != 0:
                terms.append(I[a][b] * omega[a] * omega[b])
    potential = mass * g * (height + _dot(vertical, com)) if mass != 0 else sympy.Integer(0)
    return sympy.Add(*terms), potential
