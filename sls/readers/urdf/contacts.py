"""A robot's contacts as the readers take them: ``link``, ``link:point`` or ``link:6d`` (:func:`contact_specs`), held
where the link is at the neutral configuration (:func:`neutral_frames`) unless an explicit place says otherwise
(:func:`contact_places`, ``--contact-at``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sls.errors import ModelFileError, brief
from sls.model.tree import Robot, contact_parameter, rpy_angles
from sls.readers.numbers import DECIMAL, NON_FINITE, NumberProblem, checked_number, file_number

#: Kinds of contact: a point held in place (three constraints), a frame held in place and orientation (six).
CONTACT_KINDS = ("point", "6d")

#: The parameters' suffixes of each kind: the place (world), then for ``6d`` the orientation (URDF's roll, pitch,
#: yaw: ``R₀ = Rz(yaw) Ry(pitch) Rx(roll)``, world).
CONTACT_AXES = {"point": ("x", "y", "z"), "6d": ("x", "y", "z", "roll", "pitch", "yaw")}


def contact_specs(contacts: Sequence[str] | str, links: Sequence[str], filename: str) -> tuple:
    """``((link, kind), …)`` from ``"FOOT[:point|:6d],..."`` or a list of such strings, checked against ``links``."""
    from sls.model import did_you_mean

    items = [c.strip() for c in contacts.split(",")] if isinstance(contacts, str) else list(contacts)
    specs = []
    for item in items:
        if not isinstance(item, str) or not item:
            raise ModelFileError(
                f"{filename}: contacts: a contact is named by its link (LINK, LINK:point or LINK:6d), got {item!r}"
            )
        link, _, kind = item.partition(":")
        kind = kind or "point"
        if kind not in CONTACT_KINDS:
            raise ModelFileError(
                f"{filename}: contacts: '{item}': the kind must be point or 6d (LINK, LINK:point or LINK:6d)"
            )
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


def contact_defaults(
    robot: Robot,
    specs: Sequence[tuple],
    places: Mapping[str, Sequence[float]] | None = None,
    q: Sequence[float] | None = None,
) -> dict:
    """The contacts' parameters (:data:`CONTACT_AXES`: ``contact_<link>_x, _y, _z``, and ``_roll, _pitch, _yaw``
    for a 6-D contact) with their defaults: ``places[link]`` where given (3 numbers, or 6 for a 6-D contact, as
    :func:`contact_places` checks them; a 6-D contact given 3 keeps its orientation at ``q``), else where the link is
    at the coordinates ``q`` (a stance, :mod:`sls.readers.urdf.srdf`; ``None``: the neutral configuration, every
    joint at zero, a floating base at the origin, level)."""
    from sls.readers.urdf.srdf import stance_frames

    neutral = stance_frames(robot, q)
    values = {}
    for link, kind in specs:
        rotation, origin = neutral[link]
        pose = list(origin) + (list(rpy_angles(rotation)) if kind == "6d" else [])
        given = list((places or {}).get(link, ()))
        pose[: len(given)] = given
        for axis, value in zip(CONTACT_AXES[kind], pose):
            values[contact_parameter(link, axis)] = 0.0 if abs(value) < 1e-15 else float(value)
    return values


def contact_places(places: object, specs: Sequence[tuple], what: str) -> dict:
    """``{link: numbers}`` from ``places`` (a mapping ``link → [x, y, z]``, or ``[x, y, z, roll, pitch, yaw]`` for a
    6-D contact), checked against the contacts ``specs``; ``what`` names the source in the one-line errors
    (``--contact-at``, ``model.toml: contact_at``)."""
    if not isinstance(places, Mapping):
        raise ModelFileError(f"{what}: expected a table of CONTACT = [X, Y, Z], got {type(places).__name__}")
    kinds = dict(specs)
    checked = {}
    for link, value in places.items():
        if link not in kinds:
            from sls.model import did_you_mean

            named = ", ".join(kinds)
            hint = did_you_mean(str(link), list(kinds)) or f" (the contacts are {named})"
            raise ModelFileError(f"{what}: '{link}' is not a contact{hint}")
        sizes = (3, 6) if kinds[link] == "6d" else (3,)
        numbers = value if isinstance(value, (list, tuple)) else None
        if (
            numbers is None
            or len(numbers) not in sizes
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in numbers)
        ):
            shape = "X, Y, Z or X, Y, Z, ROLL, PITCH, YAW" if kinds[link] == "6d" else "X, Y, Z"
            raise ModelFileError(
                f"{what}: '{link}' must be {shape} (finite numbers, metres and radians), got {brief(repr(value), 80)}"
            )
        try:
            checked[link] = tuple(checked_number(v) for v in numbers)
        except (NumberProblem, OverflowError) as exc:  # an integer too large for a float overflows
            problem = exc if isinstance(exc, NumberProblem) else "a number is too large"
            raise ModelFileError(f"{what}: '{link}': {problem}") from None
    return checked


class CommandLinePlaces(dict):
    """``{link: numbers}`` from the command line: :func:`contact_places` names ``--contact-at`` in its messages."""

    what = "--contact-at"


def parse_contact_at(items: Sequence[str]) -> dict:
    """``{link: numbers}`` (a :class:`CommandLinePlaces`) from the command line's ``--contact-at
    LINK=X,Y,Z[,ROLL,PITCH,YAW]`` (repeatable); the numbers' count is checked against the contacts by
    :func:`contact_places`."""
    places = CommandLinePlaces()
    for item in items:
        link, equals, text = item.partition("=")
        numbers = []
        for word in text.split(","):
            try:
                numbers.append(file_number(word))
            except NumberProblem as exc:
                if DECIMAL.fullmatch(word.strip()) or NON_FINITE.fullmatch(word.strip()):
                    raise ModelFileError(f"--contact-at: '{link.strip()}': {exc}") from None
                numbers = []
                break
        if not equals or not link.strip() or not numbers:
            raise ModelFileError(
                f"--contact-at: expected LINK=X,Y,Z (or LINK=X,Y,Z,ROLL,PITCH,YAW for a 6-D contact), got {item!r}"
            )
        if link.strip() in places:
            raise ModelFileError(f"--contact-at: '{link.strip()}' is placed twice")
        places[link.strip()] = numbers
    return places


def neutral_frames(robot: Robot) -> dict:
    """``{link: (R, p)}``: every link's orientation (3 × 3, rows) and origin in the world at the neutral
    configuration (a mimic joint at its offset; a free-flyer at its joint's origin, level)."""
    from sls.readers.urdf.srdf import stance_frames

    return stance_frames(robot)
