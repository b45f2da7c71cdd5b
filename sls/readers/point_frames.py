"""Frames of a model given by its energies: named points (:func:`with_point_frames`), each a world position of
three expressions in the coordinates and the parameters, with an optional rotation matrix (3 × 3 expressions, rows).

The readers give them as ``frames={"tip": [x, y, z]}`` or ``{"tip": {"position": [...], "rotation": [[...], ...]}}``
(the Python API and Python model files, sympy expressions) and ``[frames.NAME] position = ["...", "...", "..."]``
(TOML model files, strings parsed by the safe parser); :mod:`sls.derive.point_frames` derives their poses,
Jacobians and ``J̇v``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import replace

import sympy

from sls.algebra.expressions import symbol
from sls.errors import ModelError, ModelTypeError
from sls.model import Model, check_name, symbols_in
from sls.model.entries import as_list, expression

#: A frame's name: an identifier (it is a string of ``FRAMES`` in every target).
FRAME_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

#: The keys of a frame given as a table.
FRAME_KEYS = ("position", "rotation")


def frame_tables(frames: object, parse: Callable[[object, str], sympy.Expr]) -> dict:
    """``{name: (position, rotation or None)}`` of sympy expressions from ``frames`` (a mapping of name → position
    list, or → a table with ``position`` and optionally ``rotation``), each entry read by ``parse(value, what)``."""
    if not isinstance(frames, Mapping):
        raise ModelTypeError(
            f"frames: expected a table of NAME = [x, y, z] (or NAME = {{position = [...], rotation = [...]}}), "
            f"got {type(frames).__name__}"
        )
    result = {}
    for name, value in frames.items():
        if not isinstance(name, str) or not FRAME_NAME.fullmatch(name):
            raise ModelError(f"frames: a frame's name must be an identifier (letters, digits, _), got {name!r}")
        what = f"frames.{name}"
        table = value if isinstance(value, Mapping) else {"position": value}
        unknown = sorted(set(table) - set(FRAME_KEYS))
        if unknown:
            raise ModelError(f"{what}: unknown key '{unknown[0]}' (a frame has position and rotation)")
        if "position" not in table:
            raise ModelError(f"{what}: give its position = [x, y, z] (world frame)")
        position = _entries(table["position"], 3, f"{what}.position", "[x, y, z]")
        rotation = None
        if table.get("rotation") is not None:
            rows = _entries(table["rotation"], 3, f"{what}.rotation", "3 rows of 3")
            rotation = tuple(
                tuple(
                    parse(e, f"{what}.rotation[{i}][{j}]")
                    for j, e in enumerate(_entries(row, 3, f"{what}.rotation[{i}]", "3 entries"))
                )
                for i, row in enumerate(rows)
            )
        result[name] = (tuple(parse(e, f"{what}.position[{i}]") for i, e in enumerate(position)), rotation)
    if not result:
        raise ModelError("frames: name at least one frame")
    return result


def check_rotation(rows: tuple, model: Model, params: dict, what: str, samples: int = 3) -> None:
    """Refuse ``rows`` (3 × 3 expressions) that are not a rotation (``RᵀR = I``, ``det R = 1``, to 1e-9) at a few
    coordinates of the model's sample box, with the parameters' defaults (unchecked when one has none)."""
    import random

    R = sympy.Matrix(rows)
    names = {s.name for s in R.free_symbols}
    if any(params.get(n) is None for n in names if n in params):
        return
    values = {symbol(n): v for n, v in params.items() if n in names}
    low, high = model.sample_box()
    chooser = random.Random(0)
    for _ in range(samples):
        at = {s: chooser.uniform(low[i], high[i]) for i, s in enumerate(model.q)}
        number = R.subs({**values, **at}).evalf()
        if not all(e.is_number for e in number):
            return
        error = max(abs(float(e)) for e in (number.T * number - sympy.eye(3))) + abs(float(number.det()) - 1)
        if error > 1e-9:
            where = ", ".join(f"{s.name} = {v:.3g}" for s, v in at.items())
            raise ModelError(f"{what}: not a rotation matrix (R' R = I, det R = 1) at {where}")


def _entries(value: object, size: int, what: str, shape: str) -> list:
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, sympy.MatrixBase)):
        raise ModelTypeError(f"{what}: expected {shape}, got {type(value).__name__}")
    entries = as_list(value, what) if isinstance(value, sympy.MatrixBase) and value.shape[1] == 1 else None
    if entries is None:
        entries = value.tolist() if isinstance(value, sympy.MatrixBase) else list(value)
    if len(entries) != size:
        raise ModelError(f"{what}: expected {shape}, got {len(entries)} entries")
    return entries


def with_point_frames(model: Model, frames: Mapping[str, tuple]) -> Model:
    """``model`` with the frames ``{name: (position, rotation or None)}`` (sympy expressions, as
    :func:`frame_tables` gives them): their names in ``frames``, their expressions in ``frame_points``.

    Each expression may use the coordinates ``q`` and parameters (a symbol new to the model becomes a required
    parameter, as in every other expression); not the speeds nor the inputs. A robot model names links instead.
    """
    if model.tree is not None:
        raise ModelError('frames: a robot model names its links as frames (frames = ["link", ...])')
    q = set(model.q)
    others = {s.name for s in model.dq} | {s.name for s in model.inputs}
    params = dict(model.params)
    points = []
    for name, (position, rotation) in frames.items():
        entries = list(position) + [e for row in rotation or () for e in row]
        checked = []
        for index, entry in enumerate(entries):
            what = f"frames.{name}." + ("position" if index < 3 else "rotation")
            expr = expression(entry, what)
            for s in sorted(symbols_in(expr) - q, key=lambda s: s.name):
                if s.name in others:
                    raise ModelError(
                        f"{what}: depends on '{s.name}'; a frame's place depends on the coordinates and parameters only"
                    )
                check_name(s.name, f"{what}: symbol", parameter=True)
                params.setdefault(s.name, None)
            checked.append(expr)
        rows = None if rotation is None else tuple(tuple(checked[3 + 3 * i : 6 + 3 * i]) for i in range(3))
        if rows is not None:
            check_rotation(rows, model, params, f"frames.{name}.rotation")
        points.append((tuple(checked[:3]), rows))
    used = set().union(*(symbols_in(e) for pos, rot in points for e in list(pos) + [x for r in rot or () for x in r]))
    unused = tuple(p for p in model.unused_params if symbol(p) not in used)
    return replace(model, frames=tuple(frames), frame_points=tuple(points), params=params, unused_params=unused)
