"""A robot's contacts as the readers take them: ``link`` or ``link:point`` (:func:`contact_specs`), held where the
link's origin is at the neutral configuration unless the parameters say otherwise (:func:`neutral_origins`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from sls.errors import ModelFileError
from sls.model.tree import MOVABLE_TYPES, Robot, contact_parameter, rpy_matrix

#: Kinds of contact: a point held in place (three constraints); ``6d`` (a foot held flat) is not generated yet.
CONTACT_KINDS = ("point",)


def contact_specs(contacts: Sequence[str] | str, links: Sequence[str], filename: str) -> tuple:
    """``((link, kind), …)`` from ``"FOOT[:point],..."`` or a list of such strings, checked against ``links``."""
    from sls.model import did_you_mean

    items = [c.strip() for c in contacts.split(",")] if isinstance(contacts, str) else list(contacts)
    specs = []
    for item in items:
        if not isinstance(item, str) or not item:
            raise ModelFileError(
                f"{filename}: contacts: a contact is named by its link (LINK or LINK:point), got {item!r}"
            )
        link, _, kind = item.partition(":")
        kind = kind or "point"
        if kind == "6d":
            raise ModelFileError(
                f"{filename}: contacts: '{item}': 6-D contacts (a foot held flat) are not generated yet; hold the "
                "foot's corners as point contacts"
            )
        if kind not in CONTACT_KINDS:
            raise ModelFileError(f"{filename}: contacts: '{item}': the kind must be point (LINK or LINK:point)")
        if link not in links:
            raise ModelFileError(
                f"{filename}: contacts: '{link}' is not a link of the robot{did_you_mean(link, list(links)) or ''}"
            )
        specs.append((link, kind))
    if not specs:
        raise ModelFileError(f"{filename}: contacts: name at least one link")
    if len({link for link, _ in specs}) != len(specs):
        raise ModelFileError(f"{filename}: contacts: a link is named twice")
    return tuple(specs)


def contact_defaults(robot: Robot, specs: Sequence[tuple]) -> dict:
    """The parameters ``contact_<link>_x, _y, _z`` with their defaults: the link's origin (world) at the neutral
    configuration (every joint at zero, a floating base at the origin, level)."""
    origins = neutral_origins(robot)
    values = {}
    for link, _kind in specs:
        for axis, value in zip("xyz", origins[link]):
            values[contact_parameter(link, axis)] = 0.0 if abs(value) < 1e-15 else value
    return values


def neutral_origins(robot: Robot) -> dict:
    """Every link's origin in the world at the neutral configuration (a mimic joint at its offset; a free-flyer
    at its joint's origin, level)."""
    frames: dict = {robot.root: (((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)), (0.0, 0.0, 0.0))}
    for joint in robot.joints:
        R, p = frames[joint.parent]
        origin = rpy_matrix(joint.rpy)
        R_child = _matmul(R, origin)
        p_child = tuple(p[i] + sum(R[i][k] * joint.xyz[k] for k in range(3)) for i in range(3))
        value = joint.mimic[2] if joint.mimic is not None else 0.0
        if joint.kind in MOVABLE_TYPES and value:
            axis = joint.axis
            if joint.kind == "prismatic":
                p_child = tuple(p_child[i] + sum(R_child[i][k] * axis[k] for k in range(3)) * value for i in range(3))
            else:
                R_child = _matmul(R_child, _axis_rotation(axis, value))
        frames[joint.child] = (R_child, p_child)
    return {link: p for link, (_, p) in frames.items()}


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
