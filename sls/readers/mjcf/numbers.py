"""The numbers of an MJCF file checked (:mod:`sls.readers.numbers`): in its XML before MuJoCo compiles it
(:func:`scan_xml`: a non-finite number in any numeric attribute, named as written), and in the compiled model
(:func:`check_compiled`: every value sls reads finite and not absurd, named by its element and attribute; this
covers included files and values MuJoCo computes, such as a mass from ``density``).

MuJoCo reads ``nan`` and ``inf`` as numbers and compiles them (with at most a warning), so without these checks
they would reach the model (a slide joint's ``pos="nan 0 0"``, which MuJoCo ignores, passed unnoticed) or end in
arithmetic errors (``ref="inf"``).
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from typing import Any

import numpy as np

from sls.errors import ModelFileError
from sls.readers.mjcf.structure import element_name
from sls.readers.numbers import DECIMAL, MAX_MAGNITUDE, NON_FINITE, NumberProblem, checked_number, file_number, shown

#: Attributes MuJoCo reads as names or words, never as numbers (so ``name="nan"`` is a name).
WORD_ATTRIBUTES = frozenset(
    {
        "name",
        "class",
        "childclass",
        "model",
        "file",
        "prefix",
        "type",
        "joint",
        "joint1",
        "joint2",
        "jointinparent",
        "body",
        "body1",
        "body2",
        "site",
        "site1",
        "site2",
        "geom",
        "geom1",
        "geom2",
        "tendon",
        "tendon1",
        "tendon2",
        "actuator",
        "mesh",
        "material",
        "texture",
        "hfield",
        "target",
        "objname",
        "objtype",
        "key",
        "content_type",
        "plugin",
        "instance",
        "sidesite",
        "slidersite",
        "cranksite",
        "refsite",
    }
)

#: A DTD or an entity declaration.
_DTD = re.compile(r"<!\s*(DOCTYPE|ENTITY)", re.IGNORECASE)
#: What sls reads of a compiled model: ``(field of mjModel, element kind, its id from the row, attribute)``; the
#: row of a ``dof_`` field is a degree of freedom (its joint: ``dof_jntid``), of ``qpos0``/``qpos_spring`` a
#: ``qpos`` address (the joint that starts there, or holds it).
FIELDS = (
    ("body_pos", "body", "pos"),
    ("body_quat", "body", "quat"),
    ("body_mass", "body", "mass"),
    ("body_ipos", "body", "inertial pos"),
    ("body_iquat", "body", "inertial quat"),
    ("body_inertia", "body", "inertia"),
    ("jnt_axis", "joint", "axis"),
    ("jnt_pos", "joint", "pos"),
    ("jnt_stiffness", "joint", "stiffness"),
    ("dof_damping", "dof", "damping"),
    ("dof_frictionloss", "dof", "frictionloss"),
    ("dof_armature", "dof", "armature"),
    ("qpos0", "qpos", "ref"),
    ("qpos_spring", "qpos", "springref"),
    ("actuator_gear", "actuator", "gear"),
    ("actuator_gainprm", "actuator", "gainprm"),
    ("actuator_biasprm", "actuator", "biasprm"),
    ("wrap_prm", "wrap", "coef"),
    ("tendon_length0", "tendon", "length"),
    ("eq_data", "equality", "polycoef"),
)


def scan_xml(text: str, filename: str) -> None:
    """Refuse a non-finite number (``nan``, ``inf``, ``1e999``) in any numeric attribute of the MJCF ``text``, in
    one line naming the element, the attribute and the value. Text that is not XML, or that has a DTD (whose
    entities Python's parser would expand), is left to MuJoCo and :func:`check_compiled`."""
    if _DTD.search(text):  # never let Python's parser expand entities; the compiled values are still checked
        return
    try:
        root = ET.fromstring(text)
    except (ET.ParseError, ValueError, RecursionError):
        return
    for element in root.iter():
        for attribute, value in element.attrib.items():
            words = value.split()
            if attribute in WORD_ATTRIBUTES or not words:
                continue
            if not all(DECIMAL.fullmatch(w) or NON_FINITE.fullmatch(w) for w in words):
                continue  # not a number list (a word, a path): MuJoCo reads it as it reads it
            for word in words:
                problem = _non_finite(word)
                if problem:
                    raise ModelFileError(f"{filename}: {_written(element, attribute, value)}: {problem}")


def _non_finite(word: str) -> str | None:
    """The problem of ``word`` when MuJoCo would read it as a non-finite number (``nan``, ``inf``, ``1e999``);
    magnitudes are checked where sls reads them (:func:`check_compiled`)."""
    if NON_FINITE.fullmatch(word) or math.isinf(float(word)):
        try:
            file_number(word)
        except NumberProblem as exc:
            return str(exc)
    return None


def _written(element: ET.Element, attribute: str, value: str) -> str:
    name = element.get("name")
    named = f' name="{shown(name)}"' if name else ""
    return f'<{element.tag}{named} {attribute}="{shown(value)}">'


def check_compiled(m: Any, filename: str) -> None:
    """Every value of :data:`FIELDS` in the compiled model ``m`` finite and not absurd
    (:func:`~sls.readers.numbers.checked_number`); one line naming the element and the attribute otherwise."""
    for field, kind, attribute in FIELDS:
        values = np.asarray(getattr(m, field), dtype=float)
        if values.size == 0 or (np.isfinite(values).all() and not _too_large(values)):
            continue
        rows = values.reshape(len(values), -1)
        for row, entries in enumerate(rows):
            for value in entries:
                try:
                    checked_number(float(value))
                except NumberProblem as exc:
                    raise ModelFileError(f"{filename}: {_element(m, kind, row)}: {attribute}: {exc}") from None
    gravity = np.asarray(m.opt.gravity, dtype=float)
    for value in gravity:
        try:
            checked_number(float(value))
        except NumberProblem as exc:
            raise ModelFileError(f"{filename}: <option gravity>: {exc}") from None


def _too_large(values: np.ndarray) -> bool:
    return bool(np.abs(values).max() > MAX_MAGNITUDE)


def _element(m: Any, kind: str, row: int) -> str:
    """The element a row of a field belongs to, as ``joint 'hinge'``."""
    if kind == "dof":
        return f"joint '{element_name(m, 'joint', int(m.dof_jntid[row]), 'jnt')}'"
    if kind == "qpos":
        joint = max(j for j in range(m.njnt) if int(m.jnt_qposadr[j]) <= row)
        return f"joint '{element_name(m, 'joint', joint, 'jnt')}'"
    if kind == "wrap":
        tendon = max(t for t in range(m.ntendon) if int(m.tendon_adr[t]) <= row)
        return f"tendon '{element_name(m, 'tendon', tendon, 'tendon')}'"
    names = {"body": "body", "joint": "jnt", "actuator": "act", "tendon": "tendon", "equality": "eq"}
    return f"{kind} '{element_name(m, kind, row, names[kind])}'"
