"""Stage 4, shared by every target: the Jinja2 environment, the template context, the fingerprint, tidy text.

Each target's templates live in its own folder of the top-level
``templates/`` (``templates/python``, ``templates/c``, ...; a wheel installs
the same files as the package data ``sls.templates``); a backend
(:mod:`sls.backends`) renders them with :func:`environment` and
:func:`context` and passes every file through :func:`tidy`. Nothing is
written here (see :mod:`sls.output.write`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
import sympy

from sls import functions
from sls.version import __version__

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model
from sls.model.inertial import regressor_names
from sls.model.model import STABILIZATION_PARAMETER


def template_root() -> Path:
    """The folder holding every target's template folder.

    A wheel installs it as ``sls/templates`` (package data ``sls.templates``);
    in a source checkout it is the top-level ``templates/`` folder.
    """
    package = Path(__file__).resolve().parents[1]  # sls/
    for folder in (package / "templates", package.parent / "templates"):
        if any(folder.glob("*/*.j2")):
            return folder
    raise RuntimeError("sls installation is broken: its templates are missing")


def template_folder(target: str) -> Path:
    """The folder of ``target``'s templates (``templates/<target>``)."""
    return template_root() / target


def environment(*folders: str | Path) -> jinja2.Environment:
    """The Jinja2 environment sls renders with (strict: undefined names fail), loading from ``folders``
    (paths, or target names for ``templates/<name>``), first match wins (the C target also renders the
    templates of the Python target it builds on: ``"c", "python"``). At least one folder."""
    if not folders:
        raise ValueError("render.environment: name the template folders to load from")
    paths = [f if isinstance(f, Path) else template_folder(f) for f in folders]
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader([str(p) for p in paths]),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )


def fingerprint(model: Model, simplify: bool = False, method: str = "expanded") -> str:
    """A short hash of everything that determines the generated code (the chosen functions too, when
    ``model.functions`` chooses fewer than all)."""
    parts = [
        f"simplify={simplify}",
        *([f"method={method}"] if method != "expanded" else []),
        repr([s.name for s in model.state]),
        *_energy_parts(model),
        repr([sympy.srepr(f) for f in model.fric]),
        repr([s.name for s in model.inputs]),
        repr([sympy.srepr(f) for f in model.forces]),
        repr(sorted(model.params.items())),
        __version__,
    ]
    if model.constrained:  # unconstrained models keep the fingerprint they always had
        parts += [
            repr([sympy.srepr(c) for c in model.constraints]),
            repr([sympy.srepr(c) for c in model.velocity_constraints]),
            f"stabilization={model.stabilization!r}",
        ]
    rates = getattr(model, "kinematics", None)
    if rates is not None:  # models without generalized speeds keep the fingerprint they always had
        parts.append(repr([sympy.srepr(rate) for rate in rates]))
    if getattr(model, "jacobians", "entries") != "entries":  # the other models keep the fingerprint they always had
        parts.append(f"jacobians={model.jacobians}")
    if getattr(model, "contacts", ()):  # models without contacts keep the fingerprint they always had
        parts.append("contacts=" + ",".join(f"{name}:{kind}" for name, kind in model.contacts))
    if getattr(model, "stances", ()):  # models without stances keep the fingerprint they always had
        parts.append("stances=" + repr(model.stances))
    if getattr(model, "frames", ()):  # models without frames keep the fingerprint they always had
        parts.append("frames=" + ",".join(model.frames))
    if getattr(model, "frame_points", ()):  # a model given by its energies: its frames' expressions
        parts.append(repr([sympy.srepr(sympy.Matrix([list(p), *(r or ())])) for p, r in model.frame_points]))
    if functions.is_subset(model):  # the full set keeps the fingerprint it always had
        parts.append("functions=" + ",".join(functions.names(model)))
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _energy_parts(model: Model) -> list[str]:
    """What determines ``T`` and ``V``: the robot tree they were built from, else their expressions.

    ``T`` of a robot has tens of thousands of nodes, and printing it costs seconds; the
    tree (joints, transforms, inertials, all numbers) determines it and prints in microseconds.
    """
    if model.tree is not None:
        return ["tree=" + repr(model.tree)]
    return [sympy.srepr(model.T), sympy.srepr(model.V)]


#: The yaw-pitch-roll chart of a floating base (``--base-orientation euler``) is refused where ``|cos(pitch)|`` is
#: below this (pitch within about 1e-3 rad, 0.06°, of ±90°). Measured on the hector quadrotor: at 1e-3 from the pole
#: cond(M) is 1e8 (8 digits lost) and the Euler rates of a body turning at 1 rad/s are 1e3 rad/s; at 1e-6, cond(M)
#: 1e14 and max|A| 1e11, numbers without meaning (returned silently before this guard).
CHART_MARGIN = 1e-3


def chart_pitch(model: Model) -> list[dict]:
    """The pitch coordinates of ``model``'s yaw-pitch-roll floating bases (the 5th joint of each ``floating``
    chain x, y, z, yaw, pitch, roll): ``[{"index": state index, "name": state name}]``, empty for every other
    model."""
    tree = model.tree
    if tree is None:
        return []
    order = [joint.name for joint in tree.movable]
    pitch = []
    for base in tree.bases:
        if base.kind == "floating" and len(base.joints) == 6 and base.joints[4] in order:
            index = order.index(base.joints[4])
            pitch.append({"index": index, "name": model.state[index].name})
    return pitch


def context(model: Model, simplify: bool = False, method: str = "expanded") -> dict:
    """Template variables describing ``model`` (``simplify``: generated with ``--simplify``;
    ``method``: the derivation route, see :data:`sls.derive.METHODS`)."""
    return {
        "version": __version__,
        "source": model.source,
        "name": model.name,
        "fingerprint": fingerprint(model, simplify, method)
        + (", simplified" if simplify else "")
        + (", derived on the expression graph" if method == "graph" else ""),
        "n": model.n,
        "n_q": model.n_q,
        "n_x": len(model.state),
        "free_flyer": model.tree is not None and bool(model.tree.quaternions),
        "quaternions": quaternion_tables(model),
        "frames": list(model.frames),
        "contacts": [name for name, _ in model.contacts],
        "contact_rows": contact_rows(model),
        "chart_pitch": chart_pitch(model),
        "chart_margin": repr(CHART_MARGIN),
        "m": model.m,
        "state": [s.name for s in model.state],
        "inputs": [s.name for s in model.inputs],
        "actuated": model.actuated,
        "k": model.k,
        "kinematics": getattr(model, "kinematics", None) is not None,
        "holonomic": model.n_holonomic,
        "stabilization": repr(float(model.params.get(STABILIZATION_PARAMETER) or model.stabilization)),
        "params": [
            {"name": name, "default": None if value is None else repr(float(value))}
            for name, value in model.params.items()
        ],
        "mujoco": _mujoco_layout(model),
        "pi": [{"name": name, "default": repr(float(model.params[name]))} for name in regressor_names(model)],
        "stances": [
            {"name": repr(name), "state": [repr(float(v)) for v in state]}
            for name, state in getattr(model, "stances", ())
        ],
    }


def contact_rows(model: Model) -> list:
    """Where ``contact_forces_fun``'s entries are among the multipliers: one row per contact of its 3 (every contact a
    point) or 6 components (one is 6-D: force, then moment; a point contact's moment is zero), each the index of a
    multiplier (from 0) or ``None`` (zero). Contacts come after the model's own constraints, three rows per point
    contact and six per 6-D one (force rows, then moment rows)."""
    width = 6 if any(kind == "6d" for _, kind in model.contacts) else 3
    row = len(model.constraints)
    rows = []
    for _, kind in model.contacts:
        size = 6 if kind == "6d" else 3
        rows.append([row + i if i < size else None for i in range(width)])
        row += size
    return rows


def quaternion_tables(model: Model) -> dict | None:
    """The tables of the runtime of several quaternion joints (``runtime/_quaternions.py`` of the Python target,
    copied as ``_free_flyer.py``): ``None`` for a model without quaternion joints or with one free-flyer first
    (``runtime/_free_flyer.py`` serves it), else ``NAME → literal`` (``FREE``, ``BALL``: the first coordinate and
    speed of each free and ball joint; ``QPOS``, ``QVEL``, ``MUJOCO_NQ``, ``MUJOCO_NV``: MuJoCo's layout)."""
    tree = model.tree
    if tree is None or not tree.quaternions or tree.single_free:
        return None

    def literal(items: list) -> str:
        return "(" + "".join(f"{item}, " for item in items).rstrip(" ") + ")"

    layout = tree.mujoco
    n_q, n_v = len(model.q), len(model.dq)
    return {
        "FREE": literal([(s.q, s.v) for s in tree.quaternions if s.kind == "free"]),
        "BALL": literal([(s.q, s.v) for s in tree.quaternions if s.kind == "ball"]),
        "MUJOCO_NQ": layout.nq if layout is not None else n_q,
        "MUJOCO_NV": layout.nv if layout is not None else n_v,
        "QPOS": literal(list(layout.qpos) if layout is not None else list(range(n_q))),
        "QVEL": literal(list(layout.qvel) if layout is not None else list(range(n_v))),
    }


def _mujoco_layout(model: Model) -> dict | None:
    """Where the coordinates sit in MuJoCo's ``qpos`` and ``qvel`` (a model read from an MJCF file), else ``None``:
    the package then gets ``from_mujoco`` and ``to_mujoco`` (``templates/python/_mujoco.py.j2``)."""
    layout = getattr(model.tree, "mujoco", None)
    if layout is None:
        return None
    return {"nq": layout.nq, "nv": layout.nv, "qpos": list(layout.qpos), "qvel": list(layout.qvel)}


def tidy(text: str) -> str:
    """Strip trailing blanks and end with exactly one newline."""
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def runtime_source(path: Path, comment: tuple = ("#", "//")) -> str:
    """The text of a runtime source file (a real ``.py``/``.c`` file of a backend) without its leading comment
    block (the lines starting with ``comment`` before the code: notes for sls's developers), as copied into
    a generated package after the header."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = 0
    while start < len(lines) and lines[start].startswith(comment):
        start += 1
    return "".join(lines[start:])
