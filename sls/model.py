"""Stage 1: read a model from any of the three inputs and check its structure.

A model is the user's ``T``, ``V``, ``fric`` and state ``x = [q; q̇]``, plus
optional parameter defaults and an optional input map. All three ways in — a
TOML model file, inline command-line flags, and a Python model file / the
Python API — end in one :class:`Model`, built by :func:`build_model`, which is
also where every structural check happens. So the three inputs cannot drift
apart: the same model gives the same generated functions.

Conventions
-----------
* ``x`` has length ``2n``: the ``n`` coordinates ``q`` first, then their
  rates ``q̇`` in the same order.
* Every symbol is ``Symbol(name, real=True)`` (see
  :func:`sls.expressions.symbol`); sympy symbols given through the API are
  renamed onto these, so assumptions the user attached do not change results.
* Symbols that are neither states nor inputs are parameters; each becomes a
  keyword argument of every generated function, defaulting to its value in
  ``params`` (or required, when it has no value).
"""

from __future__ import annotations

import builtins
import difflib
import keyword
import math
import sys
try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path

import sympy
from sympy.matrices.expressions.matexpr import MatrixElement

from .errors import ModelError, ModelFileError, ModelTypeError, SlsError, brief
from .expressions import CONSTANTS, FUNCTIONS, parse_expression, symbol

#: Names that cannot be used for states, inputs or parameters: the generated
#: functions' own argument names, the modules they use, whitelisted functions.
RESERVED_NAMES = frozenset({"np", "math"}) | frozenset(FUNCTIONS) | frozenset(CONSTANTS)
#: The generated functions' positional arguments: states and inputs may use
#: these names (the code consumes the arguments before unpacking the state),
#: parameters may not (they are keyword arguments of the same functions).
ARGUMENT_NAMES = frozenset({"x", "u", "qddot"})


@dataclass(frozen=True)
class Model:
    """A validated mechanical model.

    Attributes
    ----------
    name : str
        Short name, used in generated headers (e.g. ``"pendulum"``).
    source : str
        Where the model came from (``"model file pendulum.toml"``, ...).
    q, dq : tuple of sympy.Symbol, length n
        Coordinates and their rates; the state is ``x = q + dq``.
    T, V : sympy.Expr
        Kinetic energy (homogeneous quadratic in ``dq``) and potential energy
        (independent of ``dq``).
    fric : tuple of sympy.Expr, length n
        Friction forces, on the left-hand side: ``M q̈ + C q̇ + φ = B_u u − fric``.
    inputs : tuple of sympy.Symbol, length m
        Input symbols. When the model declares no input map this is
        ``u1 … un`` and ``forces == inputs`` (``B_u = I``).
    forces : tuple of sympy.Expr, length n
        Generalized forces produced by the inputs, linear in ``inputs``.
    params : dict str → float or None
        Every parameter in signature order with its default (``None``: required).
    actuated : bool
        ``True`` when the model declared no input map (the classic SLS case).
    unused_params : tuple of str
        Parameters given a value that appear in no expression.
    file : str or None
        The model file it was read from (errors found later name it).
    """

    name: str
    source: str
    q: tuple
    dq: tuple
    T: sympy.Expr
    V: sympy.Expr
    fric: tuple
    inputs: tuple
    forces: tuple
    params: dict = field(default_factory=dict)
    actuated: bool = True
    unused_params: tuple = ()
    file: str | None = None

    def warnings(self) -> list[str]:
        """Likely mistakes worth a warning: parameters given a value but unused, and
        names that became required parameters although the model gives parameter values."""
        notes = [f"parameter '{name}' is not used by the model" for name in self.unused_params]
        given = [name for name, value in self.params.items() if value is not None]
        required = [name for name, value in self.params.items() if value is None]
        if given and required:
            quoted = ", ".join(f"'{name}'" for name in required)
            one = len(required) == 1
            guesses = []
            for name in required:
                close = difflib.get_close_matches(name, given + [s.name for s in self.state], n=1)
                if close:
                    guesses.append(f"'{close[0]}' for '{name}'" if not one else f"'{close[0]}'")
            guess = f"; did you mean {', '.join(guesses)}?" if guesses else ""
            notes.append(
                f"{quoted} {'has' if one else 'have'} no value among the model's parameters and "
                f"{'becomes a required keyword argument' if one else 'become required keyword arguments'} "
                f"of every generated function{guess}"
            )
        return notes

    @property
    def n(self) -> int:
        """Number of degrees of freedom."""
        return len(self.q)

    @property
    def m(self) -> int:
        """Number of inputs."""
        return len(self.inputs)

    @property
    def state(self) -> tuple:
        """The state symbols ``q + dq`` (length 2n)."""
        return self.q + self.dq


# --------------------------------------------------------------------------
# names and values


def check_name(name: object, what: str, *, parameter: bool = False) -> str:
    """Return ``name`` if it can be a symbol in generated code, else raise.

    A valid name is a plain ASCII identifier, not a Python keyword or builtin,
    not starting with ``_`` and not one of :data:`RESERVED_NAMES` (nor, for a
    ``parameter``, one of :data:`ARGUMENT_NAMES`).
    """
    if not isinstance(name, str):
        raise ModelError(f"{what}: name must be a string, got {name!r}")
    if not (name.isascii() and name.isidentifier()) or keyword.iskeyword(name):
        raise ModelError(f"{what}: {name!r} is not a plain identifier (letters, digits and '_', not starting with a digit)")
    if name.startswith("_"):
        raise ModelError(f"{what}: {name!r} starts with '_', which is reserved for generated code")
    if name in RESERVED_NAMES or hasattr(builtins, name):
        raise ModelError(f"{what}: {name!r} is a reserved name (function, constant, Python builtin or generated-code argument)")
    if parameter and name in ARGUMENT_NAMES:
        raise ModelError(
            f"{what}: {name!r} cannot be a parameter: it is an argument of the generated functions "
            f"({', '.join(sorted(ARGUMENT_NAMES))}); rename it"
        )
    return name


def check_value(name: str, value: object) -> float:
    """Return a parameter value as a finite float, or raise :class:`ModelError`."""
    if isinstance(value, (bool, str, bytes)) or (isinstance(value, sympy.Basic) and not value.is_number):
        raise ModelError(f"parameter '{name}': value must be a finite number, got {brief(repr(value), 60)}")
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError, AttributeError):
        raise ModelError(f"parameter '{name}': value must be a finite number, got {brief(repr(value), 60)}") from None
    if not math.isfinite(number):
        raise ModelError(f"parameter '{name}': value must be a finite number, got {brief(repr(value), 60)}")
    return number


# --------------------------------------------------------------------------
# the one constructor every input goes through


def build_model(
    *,
    state: list,
    T: sympy.Expr,
    V: sympy.Expr,
    fric: list,
    params: dict | None = None,
    inputs: list | None = None,
    forces: list | None = None,
    name: str = "model",
    source: str = "Python API",
) -> Model:
    """Check the structure of a model and return it as a :class:`Model`.

    ``state`` is a list of 2n names (``str``); ``T``, ``V`` and the entries
    of ``fric`` and ``forces`` are sympy expressions over real symbols;
    ``params`` maps names to default values. ``inputs``/``forces`` are given
    together or not at all. Raises :class:`ModelError` naming the problem.
    """
    name = safe_label(name, "model")
    source = safe_label(source, "Python API")
    q, dq = _split_state(state)
    n = len(q)
    state_names = [s.name for s in q + dq]
    params = dict(params or {})
    for pname in params:
        check_name(pname, "parameter", parameter=True)
        if pname in state_names:
            raise ModelError(f"parameter '{pname}' has the same name as a state variable")
    defaults = {pname: check_value(pname, value) for pname, value in params.items()}

    fric = _vector(fric, n, "fric", "friction")
    if forces is None and inputs is None:
        input_symbols = tuple(symbol(f"u{i + 1}") for i in range(n))
        actuated = True
        force_exprs = input_symbols
    else:
        if inputs is None or forces is None:
            raise ModelError("inputs and forces must be given together (inputs: m names; forces: n generalized forces)")
        input_names = [check_name(iname, "input") for iname in _as_list(inputs, "inputs")]
        if not input_names:
            raise ModelError("inputs: at least one input is needed when an input map is declared")
        if len(set(input_names)) != len(input_names):
            raise ModelError(f"inputs: duplicate names in {input_names}")
        for iname in input_names:
            if iname in state_names or iname in params:
                raise ModelError(f"input '{iname}' has the same name as a state variable or parameter")
        input_symbols = tuple(symbol(iname) for iname in input_names)
        force_exprs = _vector(forces, n, "forces", "generalized force")
        actuated = False
    if actuated:
        for iname in (s.name for s in input_symbols):
            if iname in state_names or iname in params:
                raise ModelError(
                    f"'{iname}' names the implicit input of a fully actuated model; rename the state or parameter"
                )

    T = _expression(T, "T")
    V = _expression(V, "V")
    try:
        _check_kinetic_energy(T, dq)
        _check_potential_energy(V, dq)
    except ModelError as exc:
        raise ModelError(f"{exc}{_order_hint(T, V, q, dq)}") from None
    _check_forces(force_exprs, input_symbols, actuated)

    used = set().union(T.free_symbols, V.free_symbols, *(e.free_symbols for e in fric + force_exprs))
    known = set(q + dq + input_symbols)
    free_names = sorted(s.name for s in used - known)
    for pname in free_names:
        check_name(pname, "parameter", parameter=True)
    ordered = {pname: defaults[pname] for pname in defaults}
    for pname in free_names:
        ordered.setdefault(pname, None)
    unused = tuple(p for p in defaults if p not in free_names)
    return Model(
        name=name,
        source=source,
        q=q,
        dq=dq,
        T=T,
        V=V,
        fric=fric,
        inputs=input_symbols,
        forces=force_exprs,
        params=ordered,
        actuated=actuated,
        unused_params=unused,
    )


def _order_hint(T: sympy.Expr, V: sympy.Expr, q: tuple, dq: tuple) -> str:
    """A hint when another order of the same state names would make ``T`` and ``V`` valid (e.g. ``[x, v, th, w]``)."""
    state, n = q + dq, len(q)
    candidates = [state[0::2] + state[1::2]] if n > 1 else []
    candidates.append(dq + q)
    for order in candidates:
        try:
            _check_kinetic_energy(T, order[n:])
            _check_potential_energy(V, order[n:])
        except ModelError:
            continue
        return (
            f". The state is read as the n coordinates first, then their n rates in the same order "
            f"(here q = [{', '.join(s.name for s in q)}], rates [{', '.join(s.name for s in dq)}]); "
            f"did you mean the state [{', '.join(s.name for s in order)}]?"
        )
    return ""


def _split_state(state: list) -> tuple[tuple, tuple]:
    names = _as_list(state, "state")
    names = [s.name if isinstance(s, sympy.Symbol) else s for s in names]
    if not names:
        raise ModelError("state: the state list is empty; give q names then q̇ names (2n names)")
    if len(names) % 2:
        raise ModelError(f"state: expected an even number of names (q then q̇, 2n in all), got {len(names)}")
    for sname in names:
        check_name(sname, "state")
    duplicates = sorted({s for s in names if names.count(s) > 1})
    if duplicates:
        raise ModelError(f"state: duplicate names {', '.join(duplicates)}")
    symbols = tuple(symbol(s) for s in names)
    n = len(symbols) // 2
    return symbols[:n], symbols[n:]


def _as_list(value: object, what: str) -> list:
    if isinstance(value, (sympy.MatrixBase, sympy.NDimArray)):
        return list(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    raise ModelTypeError(f"{what}: expected a list, got {type(value).__name__}")


def _expression(value: object, what: str) -> sympy.Expr:
    if isinstance(value, bool) or not isinstance(value, (sympy.Expr, int, float)):
        raise ModelTypeError(f"{what}: expected a sympy expression or number, got {type(value).__name__}")
    expr = sympy.sympify(value) if not isinstance(value, sympy.Expr) else value
    for node in sympy.preorder_traversal(expr):
        problem = _forbidden(node)
        if problem:
            raise ModelError(f"{what}: {problem}: {brief(node, 80)}")
    return expr


def _forbidden(node: sympy.Basic) -> str:
    """Why sls cannot print ``node`` as numeric code ('' when it can)."""
    if node.is_Number or node in (sympy.I, sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        if node is sympy.I or not node.is_finite or not node.is_extended_real:
            return "not a finite real number"
        return ""
    if isinstance(node, (sympy.Derivative, sympy.Integral, sympy.Subs)):
        return "unevaluated derivatives and integrals are not supported"
    if isinstance(node, sympy.core.function.AppliedUndef):
        return f"undefined function {node.func} (use sympy's functions, e.g. {', '.join(list(FUNCTIONS)[:6])}, ...)"
    if isinstance(node, (sympy.MatrixBase, sympy.MatrixExpr, MatrixElement, sympy.Indexed, sympy.IndexedBase, sympy.Idx)):
        return "matrix and indexed objects are not supported; use plain symbols"
    if isinstance(node, sympy.Symbol) and type(node) not in (sympy.Symbol, sympy.Dummy):
        return f"{type(node).__name__} objects are not supported; use plain symbols"
    return ""


def _vector(value: object, n: int, what: str, noun: str) -> tuple:
    if isinstance(value, (int, float, sympy.Expr)) and not isinstance(value, bool) and value == 0:
        return (sympy.Integer(0),) * n
    if isinstance(value, sympy.Expr):
        value = [value]  # one expression: the model has one degree of freedom (checked below)
    entries = _as_list(value, what)
    if len(entries) != n:
        raise ModelError(
            f"{what}: expected {n} {'entry' if n == 1 else 'entries'} (one {noun} per degree of freedom), got {len(entries)}"
        )
    return tuple(_expression(e, f"{what}[{i}]") for i, e in enumerate(entries))


def quadratic_terms(T: sympy.Expr, dq: tuple) -> list[tuple[sympy.Expr, int, int]]:
    """Split ``T`` into ``(coefficient, i, j)`` with ``T = Σ coefficient·q̇_i·q̇_j``, ``i <= j``.

    Raises :class:`ModelError` naming a term that is not of this form.
    """
    dq_set = set(dq)
    index = {s: i for i, s in enumerate(dq)}
    _check_expandable(T, dq_set)
    expanded = sympy.expand(T, power_base=False, power_exp=False, log=False)
    terms = []
    for term in sympy.Add.make_args(expanded):
        coefficient, velocity_part = term.as_independent(*dq, as_Add=False)
        powers = velocity_part.as_powers_dict() if velocity_part != 1 else {}
        velocities = []
        for base, exponent in powers.items():
            if base not in dq_set or not exponent.is_Integer or exponent < 1:
                velocities = None
                break
            velocities += [index[base]] * int(exponent)
        if velocities is None or len(velocities) != 2 or coefficient.free_symbols & dq_set:
            raise ModelError(
                "kinetic energy T must be quadratic in the velocities (T = 1/2 dq' M(q) dq); "
                f"offending term: {brief(term)}"
            )
        i, j = sorted(velocities)
        terms.append((coefficient, i, j))
    return terms


def _check_expandable(T: sympy.Expr, dq_set: set) -> None:
    """Refuse powers that could only be quadratic in q̇ by cancellation, before expanding them.

    ``(q1 + dq1 + dq2)**100`` would take ages to expand; a power of a sum that
    contains a velocity is quadratic only with exponent 2 (or 1).
    """
    for node in sympy.preorder_traversal(T):
        if (
            isinstance(node, sympy.Pow)
            and node.base.is_Add
            and node.base.free_symbols & dq_set
            and not (node.exp.is_Integer and 1 <= int(node.exp) <= 2)
        ):
            raise ModelError(
                "kinetic energy T must be quadratic in the velocities (T = 1/2 dq' M(q) dq); "
                f"offending term: {brief(node)}"
            )


def _check_kinetic_energy(T: sympy.Expr, dq: tuple) -> None:
    """Refuse a ``T`` that is not a homogeneous quadratic form in ``dq``.

    Proven on the expression graph where possible (every term of degree
    exactly 2, without expanding ``T``, which is costly for large models);
    otherwise decided by expanding ``T`` (which also names the offending term).
    """
    if T == 0:
        raise ModelError("kinetic energy T is zero; the mass matrix would be singular")
    from .graph import Graph, Unsupported

    graph = Graph()
    try:
        node = graph.from_sympy(T)
        if graph.degree(node, {graph.symbol(s) for s in dq}) == (2, 2):
            return
    except Unsupported:
        pass
    quadratic_terms(T, dq)


def _check_potential_energy(V: sympy.Expr, dq: tuple) -> None:
    velocities = sorted(s.name for s in V.free_symbols & set(dq))
    if velocities:
        raise ModelError(f"potential energy V must not depend on the velocities; it contains {', '.join(velocities)}")


def _check_forces(forces: tuple, inputs: tuple, actuated: bool) -> None:
    if actuated:
        return
    for k, force in enumerate(forces):
        for u in inputs:
            slope = sympy.diff(force, u)
            if slope.free_symbols & set(inputs):
                raise ModelError(
                    f"forces[{k}]: generalized force must be linear in the inputs; {brief(force, 100)} is not linear in {u}"
                )
        rest = sympy.expand(force - sum(sympy.diff(force, u) * u for u in inputs))
        if rest != 0 and rest.free_symbols & set(inputs):
            raise ModelError(f"forces[{k}]: generalized force must be linear in the inputs; {brief(force, 100)} is not")
        if rest != 0:
            declared = ", ".join(u.name for u in inputs)
            raise ModelError(
                f"forces[{k}]: every term of a generalized force must contain an input (declared inputs: {declared}); "
                f"'{brief(rest, 100)}' does not: declare its input, or move it into fric"
            )
    driving = set().union(*(force.free_symbols for force in forces))
    idle = [u.name for u in inputs if u not in driving]
    if idle:
        raise ModelError(
            f"input '{idle[0]}' appears in no generalized force; every declared input must drive some coordinate"
        )


# --------------------------------------------------------------------------
# the three ways in


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
) -> Model:
    """Build a model from expression strings (TOML files and CLI flags).

    ``fric`` is a list of n strings, or the single string ``"0"`` for none.
    Strings are parsed by :func:`sls.expressions.parse_expression` (never
    evaluated as code).
    """
    if isinstance(fric, str):
        fric_exprs: object = parse_expression(fric, "fric")
        if fric_exprs != 0:
            fric_exprs = [fric_exprs]
    else:
        fric_exprs = [parse_expression(_text(f, f"fric[{i}]"), f"fric[{i}]") for i, f in enumerate(_as_list(fric, "fric"))]
    force_exprs = None
    if forces is not None:
        force_exprs = [parse_expression(_text(f, f"forces[{i}]"), f"forces[{i}]") for i, f in enumerate(_as_list(forces, "forces"))]
    return build_model(
        state=[_text(s, "state") for s in _as_list(state, "state")],
        T=parse_expression(_text(T, "T"), "T"),
        V=parse_expression(_text(V, "V"), "V"),
        fric=fric_exprs,
        params=params,
        inputs=None if inputs is None else [_text(i, "inputs") for i in _as_list(inputs, "inputs")],
        forces=force_exprs,
        name=name,
        source=source,
    )


def _text(value: object, what: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ModelError(f"{what}: expected a string, got {value!r}")
    return str(value)


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
) -> Model:
    """Build a model from sympy objects (Python model files and the API).

    ``x`` is a list/Matrix of 2n sympy symbols (or names), ``fric`` a
    list/Matrix of n expressions or ``0``; ``params`` maps symbols or names to
    values. Symbols are renamed onto sls's real symbols. Functions of time
    (``sympy.physics.mechanics.dynamicsymbols``) are accepted in ``x`` and
    ``inputs``: ``q(t)`` becomes the symbol ``q`` and ``q(t).diff(t)`` the
    symbol ``dq``, in ``T``, ``V``, ``fric`` and ``forces`` too.
    """
    timed, time = _time_functions(_as_list(x, "x") + ([] if inputs is None else _as_list(inputs, "inputs")))
    if timed:
        x = [timed.get(s, s) for s in _as_list(x, "x")]
        inputs = None if inputs is None else [timed.get(s, s) for s in _as_list(inputs, "inputs")]
    state = _as_list(x, "x")
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
        for s in _as_list(inputs, "inputs"):
            if not isinstance(s, (sympy.Symbol, str)):
                raise ModelTypeError(f"inputs: entries must be sympy symbols or names, got {s!r}")
            input_list.append(s.name if isinstance(s, sympy.Symbol) else s)

    def canonical(value: object, what: str) -> object:
        if isinstance(value, str):
            raise ModelTypeError(f"{what}: expected a sympy expression, got a string (use a TOML model file for strings)")
        if isinstance(value, sympy.Basic):
            if timed:
                value = value.xreplace(timed)
                if time in value.free_symbols:
                    raise ModelError(
                        f"{what}: depends on the time {time} other than through the state "
                        f"[{', '.join(str(s) for s in state)}]: {brief(value, 80)}"
                    )
            mapping = {}
            for s in value.free_symbols:
                if not isinstance(s, sympy.Symbol):
                    continue
                check_name(s.name, f"{what}: symbol")
                mapping[s] = symbol(s.name)
            return value.xreplace(mapping)
        return value

    def canonical_list(value: object, what: str) -> object:
        if isinstance(value, (list, tuple, sympy.MatrixBase, sympy.NDimArray)):
            return [canonical(v, f"{what}[{i}]") for i, v in enumerate(_as_list(value, what))]
        return canonical(value, what)

    return build_model(
        state=[names.get(s, s) for s in state],
        T=canonical(T, "T"),
        V=canonical(V, "V"),
        fric=canonical_list(fric, "fric"),
        params=param_values,
        inputs=input_list,
        forces=None if forces is None else canonical_list(forces, "forces"),
        name=name,
        source=source,
    )


def _time_functions(entries: list) -> tuple[dict, object]:
    """Map dynamicsymbols in ``entries`` onto plain symbols: ``q(t)`` → ``q``, ``q(t).diff(t)`` → ``dq``; and the time symbol."""
    mapping, time = {}, None
    for entry in entries:
        base = entry.expr if isinstance(entry, sympy.Derivative) else entry
        if not (isinstance(base, sympy.core.function.AppliedUndef) and len(base.args) == 1 and base.args[0].is_Symbol):
            continue
        if isinstance(entry, sympy.Derivative) and entry.variables != (base.args[0],):
            raise ModelTypeError(f"x: {entry} is a higher derivative; the state holds q(t) and q(t).diff(t) only")
        time = base.args[0]
        name = getattr(base.func, "__name__", str(base.func))
        mapping[entry] = sympy.Symbol(f"d{name}" if isinstance(entry, sympy.Derivative) else name)
    return mapping, time


def load_toml(path: str | Path, *, name: str | None = None, source: str | None = None, text: str | None = None) -> Model:
    """Read a TOML model file (see the README for the format)."""
    path = Path(path)
    real_file = text is None
    if text is None:
        text = read_model_text(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ModelFileError(f"{path}: not valid TOML: {exc}") from None
    model = model_from_mapping(data, name=name or path.stem, source=source or f"model file {path.name}", filename=str(path))
    return replace(model, file=str(path)) if real_file else model


#: Keys a TOML model may have.
MODEL_KEYS = ("state", "T", "V", "fric", "params", "inputs", "forces")


def model_from_mapping(data: dict, *, name: str, source: str, filename: str) -> Model:
    """Build a model from the parsed TOML table ``data``."""
    unknown = sorted(set(data) - set(MODEL_KEYS))
    if unknown:
        raise ModelFileError(f"{filename}: unknown key '{unknown[0]}' (allowed: {', '.join(MODEL_KEYS)})")
    for key in ("state", "T", "V", "fric"):
        if key not in data:
            raise ModelFileError(f"{filename}: missing key '{key}'")
    params = data.get("params", {})
    if not isinstance(params, dict):
        raise ModelFileError(f"{filename}: key 'params' must be a table of NAME = NUMBER")
    for key in ("state", "inputs", "forces"):
        if key in data and not isinstance(data[key], list):
            raise ModelFileError(f"{filename}: key '{key}' must be a list of strings")
    if isinstance(data["fric"], (int, float)) and not isinstance(data["fric"], bool) and data["fric"] == 0:
        data = {**data, "fric": "0"}  # fric = 0 means no friction, like fric = "0"
    if not isinstance(data["fric"], (list, str)):
        raise ModelFileError(f"{filename}: key 'fric' must be a list of n strings (or 0 for none)")
    for key in ("T", "V"):
        if not isinstance(data[key], str):
            raise ModelFileError(f"{filename}: key '{key}' must be an expression string")
    try:
        return model_from_strings(
            state=data["state"],
            T=data["T"],
            V=data["V"],
            fric=data["fric"],
            params=params,
            inputs=data.get("inputs"),
            forces=data.get("forces"),
            name=name,
            source=source,
        )
    except SlsError as exc:  # ModelError, ModelTypeError, ExpressionError: name the file
        if str(exc).startswith(filename):
            raise
        raise type(exc)(f"{filename}: {exc}") from None


def load_python(path: str | Path) -> Model:
    """Run a Python model file (the user's own code) and read its model.

    The file defines ``T``, ``V``, ``fric``, ``x`` and optionally ``params``,
    ``inputs`` and ``forces`` at module level.
    """
    import runpy

    path = Path(path)
    read_model_text(path)
    folder = str(path.resolve().parent)
    sys.path.insert(0, folder)  # like `python model.py`: modules next to the file can be imported
    try:
        namespace = runpy.run_path(str(path), run_name="__sls_model__")
    except SystemExit as exc:
        raise ModelFileError(f"{path}: the model file called exit({exc.code})") from None
    except Exception as exc:  # the user's own code failed: say so in one line
        raise ModelFileError(f"{path}: running the model file failed: {type(exc).__name__}: {exc}") from None
    finally:
        if folder in sys.path:
            sys.path.remove(folder)
    for key in ("T", "V", "fric", "x"):
        if key not in namespace:
            raise ModelFileError(f"{path}: the model file does not define '{key}' (it must define T, V, fric and x)")
    try:
        model = model_from_sympy(
            namespace["T"],
            namespace["V"],
            namespace["fric"],
            namespace["x"],
            params=namespace.get("params"),
            inputs=namespace.get("inputs"),
            forces=namespace.get("forces"),
            name=path.stem,
            source=f"model file {path.name}",
        )
    except SlsError as exc:
        raise type(exc)(f"{path}: {exc}") from None
    return replace(model, file=str(path))


def safe_label(text: object, default: str) -> str:
    """``text`` made safe for a comment or docstring of generated code.

    Model names and sources come from file names and API arguments; they are
    written into headers, so line breaks, quotes and backslashes (which could
    end a comment or a docstring) and non-ASCII characters become ``_``.
    """
    if not isinstance(text, str) or not text:
        return default
    cleaned = "".join(c if c.isascii() and c.isprintable() and c not in "\"'\\`" else "_" for c in text)
    return cleaned[:120]


def read_model_text(path: Path) -> str:
    if not path.exists():
        raise ModelFileError(f"{path}: no such model file")
    if path.is_dir():
        raise ModelFileError(f"{path}: is a directory, not a model file")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelFileError(f"{path}: cannot read the model file: {exc}") from None


# --------------------------------------------------------------------------
# bundled examples

#: The example generated by a bare ``sls generate``.
DEFAULT_EXAMPLE = "two_link_arm"


#: Suffixes of bundled example files: TOML models and URDF robots.
EXAMPLE_SUFFIXES = (".toml", ".urdf")


def example_names() -> list[str]:
    """Names of the bundled example models, sorted."""
    folder = resources.files("sls") / "examples"
    return sorted(p.name.rsplit(".", 1)[0] for p in folder.iterdir() if p.name.endswith(EXAMPLE_SUFFIXES))


def _example_file(name: str):
    """The bundled file of example ``name`` (a ``Traversable``), or ``None``."""
    folder = resources.files("sls") / "examples"
    for suffix in EXAMPLE_SUFFIXES:
        candidate = folder / f"{name}{suffix}"
        if candidate.is_file():
            return candidate
    return None


def example_description(name: str) -> str:
    """The one-line description of a bundled example: its first comment (``# ...`` or ``<!-- ... -->``)."""
    file = _example_file(name)
    text = file.read_text(encoding="utf-8")
    if file.name.endswith(".urdf"):
        start, end = text.find("<!--"), text.find("-->")
        return " ".join(text[start + 4 : end].split()) if 0 <= start < end else ""
    for line in text.splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""


def load_example(name: str) -> Model:
    """Load the bundled example ``name`` (see :func:`example_names`)."""
    names = example_names()
    if name not in names:
        raise ModelFileError(f"unknown example '{name}' (bundled examples: {', '.join(names)})")
    file = _example_file(name)
    text = file.read_text(encoding="utf-8")
    if file.name.endswith(".urdf"):
        from .urdf import load_urdf  # sls.urdf builds on this module

        return load_urdf(file.name, name=name, source=f"bundled example {name}", text=text)
    return load_toml(file.name, name=name, source=f"bundled example {name}", text=text)
