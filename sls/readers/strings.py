"""Models from expression strings: TOML model files and the command line's inline flags."""

from __future__ import annotations

import sympy

from sls.algebra.expressions import parse_expression
from sls.model import Model, build_model
from sls.model.entries import as_list
from sls.readers.common import as_text, map_loads
from sls.readers.point_frames import frame_tables, with_point_frames


def model_from_strings(
    *,
    state: list,
    T: str,
    V: str,
    fric: list | str,
    params: dict | None = None,
    inputs: list | None = None,
    forces: list | None = None,
    name: str = "model",
    source: str = "inline flags",
    constraints: list | None = None,
    velocity_constraints: list | None = None,
    loads: list | None = None,
    stabilization: float = 0.0,
    ranges: dict | None = None,
    kinematics: list | None = None,
    frames: dict | None = None,
) -> Model:
    """Build a model from expression strings (TOML files and CLI flags).

    ``fric`` is a list of n strings, or the single string ``"0"`` for none.
    ``constraints``/``velocity_constraints`` are lists of strings, ``loads``
    a list of tables of strings (see :func:`sls.model.load_forces`), ``ranges`` a dict
    of state name → ``[low, high]`` (see :func:`sls.model.check_ranges`). Strings are parsed
    by :func:`sls.algebra.expressions.parse_expression` (never evaluated as code). ``kinematics`` (n strings,
    ``q̇ = S(q) v``) makes the second half of ``state`` generalized speeds (see :func:`sls.model.build_model`).
    ``frames`` (``{name: {"position": [3 strings], "rotation": [3 rows of 3 strings]}}``, the rotation optional)
    names points whose poses, Jacobians and ``J̇v`` are generated (:mod:`sls.readers.point_frames`).
    """
    if isinstance(fric, str):
        fric_exprs: object = parse_expression(fric, "fric")
        if fric_exprs != 0:
            fric_exprs = [fric_exprs]
    else:
        fric_exprs = [
            parse_expression(as_text(f, f"fric[{i}]"), f"fric[{i}]") for i, f in enumerate(as_list(fric, "fric"))
        ]
    force_exprs = None
    if forces is not None:
        force_exprs = [
            parse_expression(as_text(f, f"forces[{i}]"), f"forces[{i}]")
            for i, f in enumerate(as_list(forces, "forces"))
        ]
    model = build_model(
        state=[as_text(s, "state") for s in as_list(state, "state")],
        T=parse_expression(as_text(T, "T"), "T"),
        V=parse_expression(as_text(V, "V"), "V"),
        fric=fric_exprs,
        params=params,
        inputs=None if inputs is None else [as_text(i, "inputs") for i in as_list(inputs, "inputs")],
        forces=force_exprs,
        name=name,
        source=source,
        constraints=_parse_list(constraints, "constraints"),
        velocity_constraints=_parse_list(velocity_constraints, "velocity_constraints"),
        loads=None if loads is None else map_loads(loads, _parse_text),
        stabilization=stabilization,
        ranges=ranges,
        kinematics=_parse_list(kinematics, "kinematics"),
    )
    return model if frames is None else with_point_frames(model, frame_tables(frames, _parse_text))


def _parse_text(value: object, what: str) -> sympy.Expr:
    """A string entry (of a loads table) parsed as an expression."""
    return parse_expression(as_text(value, what), what)


def _parse_list(values: list | None, what: str) -> list | None:
    if values is None:
        return None
    return [parse_expression(as_text(v, f"{what}[{i}]"), f"{what}[{i}]") for i, v in enumerate(as_list(values, what))]
