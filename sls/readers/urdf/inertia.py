"""The numbers of the links: each ``<inertial>`` read and checked (mass not negative, inertia positive
semi-definite up to rounding), every coordinate moving some mass, the mass matrix regular at sampled
configurations (from :func:`numeric_mass_matrix`, an independent numeric route over the same tree)."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import replace

import numpy as np

from sls.model.free_flyer import SPEED_SUFFIXES
from sls.model.tree import FREE, MOVABLE_TYPES, Inertial, Robot, rpy_matrix
from sls.readers.urdf.document import Where, attribute_text, numbers

#: An inertia tensor is positive semi-definite "up to rounding" when its smallest eigenvalue is at least
#: −(relative·trace + absolute) (kg·m²).
INERTIA_RELATIVE_TOLERANCE = 1e-6
INERTIA_ABSOLUTE_TOLERANCE = 1e-12
#: A mass matrix whose smallest eigenvalue is below this times the largest is singular (as in sls.derive.validate).
SINGULAR_RATIO = 1e-12
#: Principal moments ``a ≤ b ≤ c`` of a moving link must satisfy ``c ≤ a + b`` (a rigid body's, as MuJoCo's compiler
#: checks) up to this fraction of the largest principal moment of any moving link. Real robot files break the
#: inequality far beyond rounding (up to 14 % of that moment in the URDF corpus of ``benchmarks.robots``: the xArm's
#: link 3, the Allegro hand's link 15), on links too light to matter; a tensor that breaks it by a quarter of the
#: robot's largest inertia (``ixx = iyy = 1, izz = 3``) is a mistake.
TRIANGLE_TOLERANCE = 0.25
#: A link this many times heavier than every other link, whose mass makes the mass matrix singular to rounding, is
#: named as the cause (``<mass value="1e12">``) instead of the joints that seem to move nothing.
OUTLIER_RATIO = 1e3
_INERTIA = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


def read_inertial(link: ET.Element, name: str, where: Where, *, check: bool = True) -> Inertial | None:
    """The link's ``<inertial>`` (``None``: none). A negative mass is refused on every link; ``check=False`` (a
    link that never moves): an inertia tensor that is not positive semi-definite gives ``None`` instead of an
    error (it never enters the dynamics, and real files have such tensors on their fixed links)."""
    element = link.find("inertial")
    if element is None:
        return None
    what = f"link '{name}'"
    mass_tag = element.find("mass")
    if mass_tag is None:
        raise where.error(f'{what}: <inertial> without <mass value="...">')
    mass = numbers(mass_tag, "value", 1, None, what, where)[0]
    tensor = element.find("inertia")
    if tensor is None:
        raise where.error(f"{what}: <inertial> without <inertia ixx=... ixy=... ixz=... iyy=... iyz=... izz=...>")
    ixx, ixy, ixz, iyy, iyz, izz = (numbers(tensor, key, 1, None, what, where)[0] for key in _INERTIA)
    inertia = ((ixx, ixy, ixz), (ixy, iyy, iyz), (ixz, iyz, izz))
    origin = element.find("origin")
    com = numbers(origin, "xyz", 3, (0.0, 0.0, 0.0), what, where)
    rotation = rpy_matrix(numbers(origin, "rpy", 3, (0.0, 0.0, 0.0), what, where))
    if mass < 0:  # anywhere, as MuJoCo's compiler refuses it: no body has a negative mass
        raise where.error(f'{what}: <mass value="{attribute_text(mass_tag, "value")}">: the mass must not be negative')
    if not positive_semidefinite(inertia):
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


def positive_semidefinite(matrix: tuple) -> bool:
    """Smallest eigenvalue ≥ −(relative tolerance·trace + absolute tolerance): PSD up to rounding."""
    values = np.linalg.eigvalsh(np.array(matrix, dtype=float))
    trace = abs(matrix[0][0]) + abs(matrix[1][1]) + abs(matrix[2][2])
    return bool(values[0] >= -(INERTIA_RELATIVE_TOLERANCE * trace + INERTIA_ABSOLUTE_TOLERANCE))


def check_triangle(robot: Robot, moving: set, where: Where) -> None:
    """The principal moments ``a ≤ b ≤ c`` of every link in ``moving`` satisfy ``c ≤ a + b`` up to
    :data:`TRIANGLE_TOLERANCE` times the largest principal moment of those links; one line naming the link
    otherwise."""
    moments = {
        link: np.linalg.eigvalsh(np.array(inertial.inertia, dtype=float))
        for link, inertial in robot.inertials.items()
        if inertial is not None and link in moving
    }
    if not moments:
        return
    largest = max(float(values[2]) for values in moments.values())
    for link, (a, b, c) in moments.items():
        if c - a - b > TRIANGLE_TOLERANCE * largest:
            raise where.error(
                f"link '{link}': <inertia>: its principal moments {a:.4g}, {b:.4g}, {c:.4g} break the triangle "
                f"inequality ({c:.4g} > {a:.4g} + {b:.4g}), which every rigid body satisfies (MuJoCo's compiler "
                "refuses it too); check ixx, iyy, izz"
            )


def _carriers(robot: Robot) -> dict:
    """Per coordinate joint name: the joints that move with it (itself and the mimic joints that follow it)."""
    carriers = {j.name: [j] for j in robot.movable}
    for joint in robot.moving:
        if joint.mimic is not None:
            carriers[joint.mimic[0]].append(joint)
    return carriers


def check_moving_mass(robot: Robot, where: Where) -> None:
    """Every coordinate must move some mass (prismatic) or mass or inertia (revolute), itself or through its mimics."""
    below: dict[str, list[str]] = {}
    for joint in robot.joints:
        below.setdefault(joint.parent, []).append(joint.child)
    free = robot.free
    if free is not None and sum(i.mass for i in robot.inertials.values() if i is not None) <= 0:
        raise where.error(
            f"the floating joint '{free.name}' (coordinate '{free.name}_x') moves no mass: link '{free.child}' "
            + (
                "has no <inertial>"
                if all(i is None for i in robot.inertials.values())
                else "and the links it carries have zero mass"
            )
            + ", so the mass matrix would be singular; give the link an <inertial> with a positive mass"
        )
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


def check_mass_matrix(robot: Robot, where: Where, samples: int = 3) -> None:
    """Refuse a mass matrix that is singular at sampled configurations, naming the joints that move no mass.

    The configurations are drawn in [−1.2, 1.2] (away from a floating base's pitch = ±π/2) with a fixed seed.
    """
    free = robot.free
    names = [f"{free.name}_{suffix}" for suffix in SPEED_SUFFIXES] if free is not None else []
    names += [j.name for j in robot.movable]
    n = len(names)
    rng = np.random.default_rng(20261123)
    for _ in range(samples):
        q = rng.uniform(-1.2, 1.2, n)
        M = numeric_mass_matrix(robot, q)
        values, vectors = np.linalg.eigh(M)
        if values[0] > SINGULAR_RATIO * max(values[-1], 1e-300):
            continue
        null = np.abs(vectors[:, 0])
        involved = [names[k] for k in np.flatnonzero(null > 1e-6 * null.max())]
        at = ", ".join(f"{name}={value:.3g}" for name, value in zip(names, q))
        heavy = _outlier(robot, q)
        if heavy is not None:
            link, mass, next_mass = heavy
            raise where.error(
                f"link '{link}': <mass value=\"{mass:g}\">: it is {mass / next_mass:.2g} times heavier than any other "
                f"link, so the mass matrix is singular to rounding (e.g. at {at}): the other links' masses and "
                "inertias vanish beside it; check its mass (and its units)"
            )
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


def _outlier(robot: Robot, q: np.ndarray) -> tuple | None:
    """``(link, mass, next mass)`` when the heaviest link is :data:`OUTLIER_RATIO` times heavier than the next and
    the mass matrix at ``q`` is regular once that link weighs as much as the next (its inertia kept); else
    ``None``."""
    masses = {link: i.mass for link, i in robot.inertials.items() if i is not None and i.mass > 0}
    if len(masses) < 2:
        return None
    ranked = sorted(masses, key=masses.__getitem__)
    heaviest, mass, next_mass = ranked[-1], masses[ranked[-1]], masses[ranked[-2]]
    if mass < OUTLIER_RATIO * next_mass:
        return None
    inertial = robot.inertials[heaviest]
    lighter = Inertial(mass=next_mass, com=inertial.com, inertia=inertial.inertia)
    values = np.linalg.eigvalsh(
        numeric_mass_matrix(replace(robot, inertials={**robot.inertials, heaviest: lighter}), q)
    )
    return (heaviest, mass, next_mass) if values[0] > SINGULAR_RATIO * max(values[-1], 1e-300) else None


def numeric_mass_matrix(robot: Robot, q: np.ndarray) -> np.ndarray:
    """``M(q)`` (n×n, floats) from world-frame Jacobians: an independent numeric route over the same tree.

    ``q`` holds the coordinates in ``robot.movable`` order; mimic joints move with the joint they follow.
    A quaternion free-flyer (:data:`~sls.model.tree.FREE`) comes first, as six speeds in its own frame
    (three slides and three turns about its axes, at the identity orientation: ``M`` does not depend on it);
    its six entries of ``q`` are not read.
    """
    shift = 6 if robot.free is not None else 0
    n = len(robot.movable) + shift
    index = {j.name: k + shift for k, j in enumerate(robot.movable)}
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
        if joint.kind == FREE:
            axes = [R_joint[:, i] for i in range(3)]
            above = above + [(i, 1.0, "prismatic", a, p_joint) for i, a in enumerate(axes)]
            above = above + [(3 + i, 1.0, "revolute", a, p_joint) for i, a in enumerate(axes)]
        elif joint.kind in MOVABLE_TYPES:
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
