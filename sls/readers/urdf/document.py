"""Reading the XML of a URDF file: the ``<robot>`` element, attributes as finite numbers, one ``<joint>``.

The file is data: it is parsed by the standard library's XML parser, after refusing any
``<!DOCTYPE``/``<!ENTITY`` in the text (so no entity is ever expanded), and nothing in it is evaluated.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

from sls.errors import ModelFileError
from sls.model import did_you_mean
from sls.model.tree import MOVABLE_TYPES, Joint
from sls.readers.numbers import NumberProblem, file_number, shown

BASE_TYPES = ("floating", "planar")
JOINT_TYPES = MOVABLE_TYPES + ("fixed",) + BASE_TYPES
_DTD = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)


class Where:
    """Builds one-line errors that start with the file name."""

    def __init__(self, filename: str) -> None:
        self.filename = filename

    def error(self, message: str) -> ModelFileError:
        return ModelFileError(f"{self.filename}: {message}")


def xml_root(text: str, filename: str) -> ET.Element:
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


def numbers(
    element: ET.Element | None, attribute: str, count: int, default: tuple | None, what: str, where: Where
) -> tuple:
    """``count`` floats from ``element``'s ``attribute`` (``default`` when the element or the attribute is absent),
    each checked by :func:`~sls.readers.numbers.file_number` (finite, not absurd)."""
    text = None if element is None else element.get(attribute)
    if element is None or text is None:
        if default is None:
            raise where.error(f"{what}: missing attribute {attribute}")
        return default
    parts = text.split()
    written = f'<{element.tag} {attribute}="{shown(text)}">'
    if len(parts) != count:
        plural = "s" if count != 1 else ""
        raise where.error(f"{what}: {written}: expected {count} number{plural}, got {len(parts)}")
    values = []
    for part in parts:
        try:
            values.append(file_number(part))
        except NumberProblem as exc:
            raise where.error(f"{what}: {written}: {exc}") from None
    return tuple(values)


def attribute_text(element: ET.Element | None, attribute: str) -> str:
    """``element``'s ``attribute`` as written, stripped (``""`` when the element or attribute is absent)."""
    text = None if element is None else element.get(attribute)
    return "" if text is None else text.strip()


def read_joint(element: ET.Element, number: int, links: dict, where: Where) -> Joint:
    name = element.get("name")
    if not name:
        raise where.error(f"joint number {number} has no name")
    what = f"joint '{name}'"
    kind = element.get("type")
    known = "revolute, continuous, prismatic, fixed, floating and planar"
    if kind is None:
        raise where.error(f"{what}: missing attribute type ({known})")
    if kind not in JOINT_TYPES:
        raise where.error(f"{what}: unknown type '{kind}'{did_you_mean(kind, JOINT_TYPES)} (sls models {known} joints)")
    ends = {}
    for end in ("parent", "child"):
        tag = element.find(end)
        link = None if tag is None else tag.get("link")
        if not link:
            raise where.error(f'{what}: missing <{end} link="...">')
        if link not in links:
            raise where.error(f"{what}: {end} link '{link}' is not defined (no <link name=\"{link}\">)")
        ends[end] = link
    origin = element.find("origin")
    xyz = numbers(origin, "xyz", 3, (0.0, 0.0, 0.0), what, where)
    rpy = numbers(origin, "rpy", 3, (0.0, 0.0, 0.0), what, where)
    axis: tuple[float, ...] = (1.0, 0.0, 0.0)
    damping, friction, mimic = 0.0, 0.0, None
    if kind != "fixed":
        if kind != "floating":
            axis_tag = element.find("axis")
            axis = numbers(axis_tag, "xyz", 3, axis, what, where)
            length = math.hypot(*axis)  # no overflow or underflow of the squares
            if length < 1e-12:  # the default axis has length 1: the <axis xyz> is given
                raise where.error(
                    f'{what}: <axis xyz="{shown(attribute_text(axis_tag, "xyz"))}">: the axis has zero length'
                )
            axis = tuple(a / length for a in axis)
        if kind in MOVABLE_TYPES:  # floating and planar joints: <dynamics> is ignored
            dynamics = element.find("dynamics")
            damping = numbers(dynamics, "damping", 1, (0.0,), what, where)[0]
            friction = numbers(dynamics, "friction", 1, (0.0,), what, where)[0]
            for attribute, value in (("damping", damping), ("friction", friction)):
                if value < 0:
                    given = attribute_text(dynamics, attribute)  # the default 0 is not negative: it is given
                    raise where.error(f'{what}: <dynamics {attribute}="{given}">: {attribute} must not be negative')
    tag = element.find("mimic")
    if tag is not None and kind != "fixed":  # a fixed joint does not move: its <mimic> does nothing
        if kind in BASE_TYPES:
            raise where.error(
                f"{what}: <mimic> on a {kind} joint cannot be modelled (a mimic joint turns or slides about one axis)"
            )
        followed = tag.get("joint")
        if not followed:
            raise where.error(f'{what}: <mimic> without joint="..." (the joint it follows)')
        multiplier = numbers(tag, "multiplier", 1, (1.0,), what, where)[0]
        offset = numbers(tag, "offset", 1, (0.0,), what, where)[0]
        mimic = (followed, multiplier, offset)
    return Joint(name, kind, ends["parent"], ends["child"], xyz, rpy, axis, damping, friction, mimic)
