"""Models from sympy objects: Python model files and the Python API (:func:`model_from_sympy`)."""

from __future__ import annotations

import sympy

from sls.algebra.expressions import symbol
from sls.errors import ModelError, ModelTypeError, brief
from sls.model import Model, build_model, check_name, check_ranges
from sls.model.entries import as_list
from sls.readers.common import map_loads
from sls.readers.mechanics import MECHANICS_NAME, identifier_for, symbol_names, time_functions
from sls.readers.point_frames import frame_tables, with_point_frames


def model_from_sympy(
    T: object,
    V: object,
    fric: object,
    x: object,
    *,
    params: dict | None = None,
    inputs: object = None,
    forces: object = None,
    name: str = "model",
    source: str = "Python API",
    constraints: object = None,
    velocity_constraints: object = None,
    loads: object = None,
    stabilization: float = 0.0,
    ranges: dict | None = None,
    kinematics: object = None,
    frames: dict | None = None,
) -> Model:
    """Build a model from sympy objects (Python model files and the API).

    ``x`` is a list/Matrix of 2n sympy symbols (or names), ``fric`` a
    list/Matrix of n expressions or ``0``; ``params`` maps symbols or names to
    values. Symbols are renamed onto sls's real symbols. Functions of time
    (``sympy.physics.mechanics.dynamicsymbols``) are accepted in ``x`` and
    ``inputs``: ``q(t)`` becomes the symbol ``q`` and ``q(t).diff(t)`` the
    symbol ``dq``, in ``T``, ``V``, ``fric`` and ``forces`` too. Names that
    are not identifiers (sympy.physics.mechanics style, ``I_{1zz}``) are
    mapped onto identifiers (``I_1zz``); :attr:`sls.model.Model.renamed` lists them.

    ``frames`` names points whose poses, Jacobians and ``J̇v`` are generated (:mod:`sls.derive.point_frames`):
    ``{"tip": [x, y, z]}`` (a list or a 3 × 1 Matrix of expressions in the coordinates and parameters, world frame),
    or ``{"tip": {"position": [x, y, z], "rotation": R}}`` with a 3 × 3 rotation matrix ``R`` (world axes).
    """
    timed, time = time_functions(as_list(x, "x") + ([] if inputs is None else as_list(inputs, "inputs")))
    if timed:
        x = [timed.get(s, s) for s in as_list(x, "x")]
        inputs = None if inputs is None else [timed.get(s, s) for s in as_list(inputs, "inputs")]
    state = as_list(x, "x")
    for s in state:
        if not isinstance(s, (sympy.Symbol, str)):
            raise ModelTypeError(f"x: entries must be sympy symbols, got {s!r}")
    names = {}
    for s in state:
        if isinstance(s, sympy.Symbol):
            names[s] = s.name
    if params is not None and not isinstance(params, dict):
        raise ModelTypeError(f"params: expected a dict of symbol or name -> number, got {type(params).__name__}")
    param_values = {}
    for key, value in (params or {}).items():
        pname = key.name if isinstance(key, sympy.Symbol) else key
        if not isinstance(pname, str):
            raise ModelTypeError(f"params: keys must be symbols or names, got {key!r}")
        param_values[pname] = value
    input_list = None
    if inputs is not None:
        input_list = []
        for s in as_list(inputs, "inputs"):
            if not isinstance(s, (sympy.Symbol, str)):
                raise ModelTypeError(f"inputs: entries must be sympy symbols or names, got {s!r}")
            input_list.append(s.name if isinstance(s, sympy.Symbol) else s)

    renamed: dict = {}
    taken = {names.get(s, s) for s in state} | set(param_values) | set(input_list or ())
    taken |= symbol_names([T, V, fric, forces, constraints, velocity_constraints, loads, kinematics, frames])

    def identifier(name: str, what: str) -> str:
        if name.isascii() and name.isidentifier() or name in names.values() or not MECHANICS_NAME.fullmatch(name):
            return name  # identifiers stay; anything but a mechanics-style name is refused by check_name
        if name not in renamed:
            renamed[name] = identifier_for(name, taken)
            taken.add(renamed[name])
        return renamed[name]

    param_values = {identifier(pname, "params"): value for pname, value in param_values.items()}

    def canonical(value: object, what: str) -> object:
        if isinstance(value, str):
            raise ModelTypeError(
                f"{what}: expected a sympy expression, got a string (use a TOML model file for strings)"
            )
        if isinstance(value, sympy.Basic):
            expr: sympy.Basic = value
            if timed:
                expr = expr.xreplace(timed)
                if time in expr.free_symbols:
                    raise ModelError(
                        f"{what}: depends on the time {time} other than through the state "
                        f"[{', '.join(str(s) for s in state)}]: {brief(expr, 80)}"
                    )
            mapping = {}
            for s in expr.free_symbols:
                if not isinstance(s, sympy.Symbol):
                    continue
                name = identifier(s.name, what)
                check_name(name, f"{what}: symbol")
                mapping[s] = symbol(name)
            return expr.xreplace(mapping)
        return value

    def canonical_list(value: object, what: str) -> object:
        if isinstance(value, (list, tuple, sympy.MatrixBase, sympy.NDimArray)):
            return [canonical(v, f"{what}[{i}]") for i, v in enumerate(as_list(value, what))]
        return canonical(value, what)

    model = build_model(
        state=[names.get(s, s) for s in state],
        T=canonical(T, "T"),
        V=canonical(V, "V"),
        fric=canonical_list(fric, "fric"),
        params=param_values,
        inputs=input_list,
        forces=None if forces is None else canonical_list(forces, "forces"),
        name=name,
        source=source,
        constraints=None if constraints is None else canonical_list(constraints, "constraints"),
        velocity_constraints=(
            None if velocity_constraints is None else canonical_list(velocity_constraints, "velocity_constraints")
        ),
        loads=None if loads is None else map_loads(loads, canonical),
        stabilization=stabilization,
        renamed=tuple(renamed.items()),
        ranges=_ranges_by_name(ranges, timed, names),
        kinematics=None if kinematics is None else canonical_list(kinematics, "kinematics"),
    )
    if frames is None:
        return model
    return with_point_frames(model, frame_tables(frames, lambda value, what: canonical(value, what)))


def _ranges_by_name(ranges: object, timed: dict, names: dict) -> dict | None:
    """``ranges`` keyed by state names.

    Symbols and functions of time (``q(t)``, ``q(t).diff(t)``) become their names.
    """
    if ranges is None:
        return None
    if not isinstance(ranges, dict):
        check_ranges(ranges, ())  # raises, naming the type
        raise AssertionError(f"check_ranges accepted ranges of type {type(ranges).__name__}")
    keyed = {}
    for key, value in ranges.items():
        key = timed.get(key, key) if isinstance(key, sympy.Basic) else key
        keyed[names.get(key, key.name if isinstance(key, sympy.Symbol) else key)] = value
    return keyed
