"""The tree of a URDF file: links and joints in tree order, mimic joints resolved, floating and planar
joints (and the free-flyer of ``floating_base``) expanded into chains of ordinary joints; :func:`parse_urdf`."""

from __future__ import annotations

import math
from dataclasses import replace

from sls.errors import ModelError
from sls.model.tree import FREE, MOVABLE_TYPES, Base, Inertial, Joint, Robot
from sls.readers.urdf.document import BASE_TYPES, Where, read_joint, xml_root
from sls.readers.urdf.inertia import check_mass_matrix, check_moving_mass, check_triangle, read_inertial

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
#: How a floating base turns: a unit quaternion with body-frame speeds (the default), or yaw, pitch, roll angles.
BASE_ORIENTATIONS = ("quaternion", "euler")


def parse_urdf(text: str, filename: str, *, floating_base: bool = False, base_orientation: str = "quaternion") -> Robot:
    """Parse and check URDF text: the tree, the joints and the inertials sls models.

    Floating and planar joints come back expanded into chains (see :class:`sls.model.tree.Base`); with
    ``floating_base`` (or for a file with one link and no joint) the root link gets a free-flyer.
    With ``base_orientation="quaternion"`` (the default) a floating joint of the root link (or that
    free-flyer) becomes one :data:`~sls.model.tree.FREE` joint (:mod:`sls.model.free_flyer`); with
    ``"euler"``, and for floating joints deeper in the tree, a chain x, y, z, yaw, pitch, roll.
    """
    if base_orientation not in BASE_ORIENTATIONS:
        raise ModelError(f"base orientation must be one of {', '.join(BASE_ORIENTATIONS)}, got {base_orientation!r}")
    root = xml_root(text, filename)
    where = Where(filename)
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
        joints.append(read_joint(element, k, links, where))
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
    quaternion_root = world if base_orientation == "quaternion" else None
    expanded, bases, massless = _expand_bases(ordered, set(links) | {world}, where, quaternion_root)
    fixed_to_world = _fixed_to_root(world, expanded)
    inertials: dict[str, Inertial | None] = {link: None for link in massless}
    if world not in links:
        inertials[world] = None
    for link, element in links.items():
        inertials[link] = read_inertial(element, link, where, check=link not in fixed_to_world)
    robot = Robot(root=world, joints=expanded, inertials=inertials, bases=bases, name=root.get("name") or "")
    check_triangle(robot, set(links) - fixed_to_world, where)
    check_moving_mass(robot, where)
    check_mass_matrix(robot, where)
    return robot


def _resolve_mimics(joints: tuple, where: Where) -> tuple:
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


def planar_axes(normal: tuple) -> tuple:
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


def _expand_bases(joints: tuple, links: set, where: Where, quaternion_root: str | None = None) -> tuple:
    """``(joints, bases, new massless links)``: floating and planar joints replaced by their chains.

    A floating joint whose parent is ``quaternion_root`` becomes one :data:`~sls.model.tree.FREE` joint.
    """
    taken = set(links)
    joint_names = {j.name for j in joints}
    expanded: list[Joint] = []
    bases: list[Base] = []
    massless: list[str] = []
    for joint in joints:
        if joint.kind not in BASE_TYPES:
            expanded.append(joint)
            continue
        if joint.kind == "floating" and joint.parent == quaternion_root:
            wrench = tuple(
                (suffix, direction if suffix.startswith("f") else None, direction if suffix.startswith("m") else None)
                for suffix, direction in zip(WRENCH_SUFFIXES, ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)) * 2)
            )
            expanded.append(replace(joint, kind=FREE, damping=0.0, friction=0.0))
            bases.append(Base(joint.name, FREE, (joint.name,), joint.child, wrench))
            continue
        if joint.kind == "floating":
            chain: tuple[tuple[str, str, tuple], ...] = FLOATING_CHAIN
            axes: tuple[tuple[str, tuple | None, tuple | None], ...] = tuple(
                (suffix, direction if suffix.startswith("f") else None, direction if suffix.startswith("m") else None)
                for suffix, direction in zip(WRENCH_SUFFIXES, ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)) * 2)
            )
        else:
            e1, e2 = planar_axes(joint.axis)
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


def _tree(links: dict, joints: list, where: Where) -> tuple:
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
