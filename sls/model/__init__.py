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
  :func:`sls.algebra.expressions.symbol`); sympy symbols given through the API are
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
import re
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import SupportsFloat, SupportsIndex

import sympy
from sympy.matrices.expressions.matexpr import MatrixElement

from sls.algebra.calculus import diff
from sls.algebra.expressions import CONSTANTS, FUNCTIONS, parse_expression, symbol
from sls.errors import ModelError, ModelFileError, ModelTypeError, SlsError, brief

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
        Every generalized force on the left-hand side that no input produces:
        ``M q̈ + C q̇ + φ + fric = B_u u``. This is the user's friction minus
        the input-free part of ``forces`` and of the loads (affine forces, see
        the README), so every generated function sees it.
    inputs : tuple of sympy.Symbol, length m
        Input symbols. When the model declares no input map this is
        ``u1 … un`` and ``forces == inputs`` (``B_u = I``).
    forces : tuple of sympy.Expr, length n
        Generalized forces produced by the inputs, linear in ``inputs`` (the
        input part of the declared forces and loads; ``B_u = ∂forces/∂u``).
    params : dict str → float or None
        Every parameter in signature order with its default (``None``: required).
    actuated : bool
        ``True`` when the model declared no input map (the classic SLS case).
    unused_params : tuple of str
        Parameters given a value that appear in no expression.
    file : str or None
        The model file it was read from (errors found later name it).
    constraints : tuple of sympy.Expr
        Holonomic constraints ``c(q) = 0`` (expressions in q).
    velocity_constraints : tuple of sympy.Expr
        Rolling/velocity constraints ``a(q) q̇ = 0``, each linear in q̇.
    stabilization : float
        Baumgarte rate ω (0: off): the constraints are kept as
        ``A q̈ + Ȧ q̇ + 2ω A q̇ + ω² c = 0``.
    friction : tuple of sympy.Expr
        The user's own friction (``fric`` before the input-free forces were folded in).
    renamed : tuple of (str, str)
        Symbol names given through the Python API that were mapped onto
        identifiers (e.g. ``I_{1zz}`` → ``I_1zz``).
    tree : object or None
        The kinematic tree a robot model was read from (a parsed
        :class:`sls.readers.urdf.Robot`), for derivations that follow the tree; ``None``
        for models given by their energies.
    functions : tuple of str or None
        The generated functions chosen (their dependencies are added, see
        :func:`sls.functions.for_model`); ``None``: every one.
    ranges : dict str → (float, float)
        Where the model lives: declared ``(low, high)`` intervals of state
        variables (coordinates or rates), in state order. The checks of
        :mod:`sls.derive.validate` sample only there; undeclared coordinates are
        sampled in [−π, π], undeclared rates in [−1, 1] (:meth:`sample_box`).
        They do not change the generated code.
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
    constraints: tuple = ()
    velocity_constraints: tuple = ()
    stabilization: float = 0.0
    friction: tuple | None = None
    renamed: tuple = ()
    tree: object | None = None
    functions: tuple | None = None
    ranges: dict = field(default_factory=dict)

    def sample_box(self) -> tuple[list, list]:
        """``(low, high)``, each of length 2n: the interval the checks sample every state variable in.

        Declared :attr:`ranges` first; else [−π, π] for a coordinate and [−1, 1] for a rate.
        """
        low = [-math.pi] * self.n + [-1.0] * self.n
        high = [math.pi] * self.n + [1.0] * self.n
        for i, s in enumerate(self.state):
            if s.name in self.ranges:
                low[i], high[i] = self.ranges[s.name]
        return low, high

    def warnings(self) -> list[str]:
        """Likely mistakes worth a warning: parameters given a value but unused, and
        names that became required parameters although the model gives parameter values."""
        notes = [f"parameter '{name}' is not used by the model" for name in self.unused_params]
        notes += [f"symbol '{old}' is named '{new}' in the generated code" for old, new in self.renamed]
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

    @property
    def k(self) -> int:
        """Number of constraints (holonomic first, then velocity constraints)."""
        return len(self.constraints) + len(self.velocity_constraints)

    @property
    def constrained(self) -> bool:
        return self.k > 0


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
        raise ModelError(
            f"{what}: {name!r} is not a plain identifier (letters, digits and '_', not starting with a digit)"
        )
    if name.startswith("_"):
        raise ModelError(f"{what}: {name!r} starts with '_', which is reserved for generated code")
    if name in RESERVED_NAMES or hasattr(builtins, name):
        raise ModelError(
            f"{what}: {name!r} is a reserved name (function, constant, Python builtin or generated-code argument)"
        )
    if parameter and name in ARGUMENT_NAMES:
        raise ModelError(
            f"{what}: {name!r} cannot be a parameter: it is an argument of the generated functions "
            f"({', '.join(sorted(ARGUMENT_NAMES))}); rename it"
        )
    return name


def check_value(name: str, value: object, what: str | None = None) -> float:
    """Return a parameter value as a finite float, or raise :class:`ModelError`.

    ``what`` names the value in the message (default: ``parameter 'NAME'``).
    """
    label = what or f"parameter '{name}'"
    problem = f"{label}: value must be a finite number, got {brief(repr(value), 60)}"
    if isinstance(value, (bool, str, bytes)) or (isinstance(value, sympy.Basic) and not value.is_number):
        raise ModelError(problem)
    if not isinstance(value, (SupportsFloat, SupportsIndex)):  # what float() takes, strings and buffers aside
        raise ModelError(problem)
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError, AttributeError):
        raise ModelError(problem) from None
    if not math.isfinite(number):
        raise ModelError(problem)
    return number


# --------------------------------------------------------------------------
# the one constructor every input goes through


def build_model(
    *,
    state: list,
    T: sympy.Expr,
    V: sympy.Expr,
    fric: object,
    params: dict | None = None,
    inputs: list | None = None,
    forces: object | None = None,
    name: str = "model",
    source: str = "Python API",
    constraints: object | None = None,
    velocity_constraints: object | None = None,
    loads: list | None = None,
    stabilization: float = 0.0,
    renamed: tuple = (),
    tree: object | None = None,
    ranges: dict | None = None,
) -> Model:
    """Check the structure of a model and return it as a :class:`Model`.

    ``state`` is a list of 2n names (``str``); ``T``, ``V`` and the entries
    of ``fric`` and ``forces`` are sympy expressions over real symbols;
    ``params`` maps names to default values. ``inputs`` come with ``forces``,
    with ``loads`` whose forces or torques use them, or both (``forces``
    alone is refused). ``constraints`` (expressions in q),
    ``velocity_constraints`` (linear in q̇) and ``loads`` (dicts, see
    :func:`load_forces`) are optional. ``ranges`` maps state names to
    ``(low, high)``: where the model lives, the only states the checks of
    :mod:`sls.derive.validate` sample (see :func:`check_ranges`). Raises
    :class:`ModelError` naming the problem.
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
        if inputs is None:
            raise ModelError("forces need inputs: declare the m input names the n generalized forces are linear in")
        if forces is None and not loads:
            raise ModelError(
                "inputs need forces or loads to act through: give forces (n generalized forces linear in the inputs) "
                "or [[loads]] whose force/torque uses them"
            )
        input_names = [check_name(iname, "input") for iname in _as_list(inputs, "inputs")]
        if not input_names:
            raise ModelError("inputs: at least one input is needed when an input map is declared")
        if len(set(input_names)) != len(input_names):
            raise ModelError(f"inputs: duplicate names in {input_names}")
        for iname in input_names:
            if iname in state_names or iname in params:
                raise ModelError(f"input '{iname}' has the same name as a state variable or parameter")
        input_symbols = tuple(symbol(iname) for iname in input_names)
        force_exprs = _vector(0 if forces is None else forces, n, "forces", "generalized force")
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
    user_fric = fric
    if loads:
        loaded = load_forces(loads, q, dq, input_symbols, actuated)
        force_exprs = tuple(f + g if g != 0 else f for f, g in zip(force_exprs, loaded))
    force_exprs, input_free = _check_forces(force_exprs, input_symbols, actuated)
    if any(f != 0 for f in input_free):  # the input-free generalized forces move to the left-hand side
        fric = tuple(f - g if g != 0 else f for f, g in zip(fric, input_free))
    holonomic, rolling = _check_constraints(constraints, velocity_constraints, q, dq, input_symbols)
    declared_ranges = check_ranges(ranges, q + dq)
    stabilization = check_value("constraint_stabilization", stabilization)
    if stabilization < 0:
        raise ModelError(f"constraint_stabilization: the Baumgarte rate must be >= 0 (0: off), got {stabilization:g}")

    used = set().union(*(symbols_in(e) for e in (T, V, *fric, *force_exprs, *holonomic, *rolling)))
    known = set(q + dq + input_symbols)
    free_names = sorted(s.name for s in used - known)
    for pname in free_names:
        check_name(pname, "parameter", parameter=True)
    ordered: dict[str, float | None] = {pname: defaults[pname] for pname in defaults}
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
        constraints=holonomic,
        velocity_constraints=rolling,
        stabilization=stabilization,
        friction=user_fric,
        renamed=tuple(renamed),
        tree=tree,
        ranges=declared_ranges,
    )


def check_ranges(ranges: object, state: tuple) -> dict:
    """Declared ranges as ``{name: (low, high)}`` in state order, checked.

    ``ranges`` maps state names (or symbols) to two finite numbers
    ``[low, high]`` with ``low <= high`` (equal: the checks hold that variable
    at one value); an end may be a constant expression string (``"pi/2"``).
    Raises :class:`ModelError` naming the entry.
    """
    if ranges is None:
        return {}
    if not isinstance(ranges, dict):
        raise ModelTypeError(f"ranges: expected a table of NAME = [LOW, HIGH], got {type(ranges).__name__}")
    names = [s.name for s in state]
    found = {}
    for key, value in ranges.items():
        name = key.name if isinstance(key, sympy.Symbol) else key
        if not isinstance(name, str) or name not in names:
            raise ModelError(
                f"ranges: {brief(repr(name), 60)} is not a state variable (ranges are given for: {', '.join(names)})"
            )
        if not isinstance(value, (list, tuple)) or len(value) != 2:
            raise ModelError(f"ranges.{name}: expected [LOW, HIGH], two numbers, got {brief(repr(value), 60)}")
        low, high = (check_value(name, _range_end(v, f"ranges.{name}"), f"ranges.{name}") for v in value)
        if low > high:
            raise ModelError(f"ranges.{name}: the low end {low:g} is above the high end {high:g}")
        found[name] = (low, high)
    return {name: found[name] for name in names if name in found}


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
    for node in distinct_nodes(expr):
        problem = _forbidden(node)
        if problem:
            raise ModelError(f"{what}: {problem}: {brief(node, 80)}")
    return expr


def distinct_nodes(expr: sympy.Basic) -> Iterator[sympy.Basic]:
    """Every subexpression of ``expr`` once, parents before children.

    A robot's energies share subtrees (a link's velocity appears in every link below it):
    a tree walk such as ``sympy.preorder_traversal`` visits a shared subtree once per use,
    exponentially often in the depth of the robot; this walk visits each object once.
    """
    seen: set[int] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(reversed(node.args))


def symbols_in(expr: sympy.Basic) -> set[sympy.Symbol]:
    """The symbols of ``expr`` (its ``free_symbols``: sls refuses binding constructs such as
    integrals), each distinct subexpression visited once (see :func:`distinct_nodes`)."""
    return {node for node in distinct_nodes(expr) if isinstance(node, sympy.Symbol)}


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
    if isinstance(
        node, (sympy.MatrixBase, sympy.MatrixExpr, MatrixElement, sympy.Indexed, sympy.IndexedBase, sympy.Idx)
    ):
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
            f"{what}: expected {n} {'entry' if n == 1 else 'entries'} (one {noun} per degree of freedom), "
            f"got {len(entries)}"
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
        velocities: list[int] = []
        monomial = True  # a product of positive integer powers of velocities
        for base, exponent in powers.items():
            if base not in dq_set or not exponent.is_Integer or exponent < 1:
                monomial = False
                break
            velocities += [index[base]] * int(exponent)
        if not monomial or len(velocities) != 2 or coefficient.free_symbols & dq_set:
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
    from sls.algebra.graph import Graph, Unsupported

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


def _check_forces(forces: tuple, inputs: tuple, actuated: bool) -> tuple[tuple, tuple]:
    """Split affine generalized forces into ``(input part, input-free part)``; refuse forces nonlinear in an input."""
    if actuated and not any(f.free_symbols & set(inputs) - {u} for f, u in zip(forces, inputs)) and forces == inputs:
        return forces, (sympy.Integer(0),) * len(forces)
    parts, rests = [], []
    zero = {u: sympy.Integer(0) for u in inputs}
    for k, force in enumerate(forces):
        for u in inputs:
            slope = diff_piecewise(force, u)
            if slope.free_symbols & set(inputs):
                raise ModelError(
                    f"forces[{k}]: generalized force must be linear in the inputs (an input-free part is allowed); "
                    f"{brief(force, 100)} is not linear in {u}"
                )
        if not force.free_symbols & set(inputs):
            parts.append(sympy.Integer(0))
            rests.append(force)
            continue
        rest = force.xreplace(zero)
        if rest.free_symbols & set(inputs) or _has_non_finite(rest):
            raise ModelError(f"forces[{k}]: generalized force must be linear in the inputs; {brief(force, 100)} is not")
        parts.append(sympy.Add(*(diff_piecewise(force, u) * u for u in inputs)) if rest != 0 else force)
        rests.append(rest)
    driving = set().union(*(force.free_symbols for force in parts))
    idle = [u.name for u in inputs if u not in driving]
    if idle and not actuated:
        raise ModelError(
            f"input '{idle[0]}' appears in no generalized force; every declared input must drive some coordinate"
        )
    return tuple(parts), tuple(rests)


def _has_non_finite(expr: sympy.Expr) -> bool:
    return expr.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo)


def diff_piecewise(expr: sympy.Expr, s: sympy.Symbol) -> sympy.Expr:
    """``∂expr/∂s`` as :func:`sls.algebra.calculus.diff` takes it (``Heaviside`` piece by piece)."""
    return diff(expr, s)


# --------------------------------------------------------------------------
# loads and constraints

#: The kinds of load: the keys of a ``[[loads]]`` table.
LOAD_KINDS = (("point", "force"), ("angle", "torque"), ("angular_velocity", "torque"))


def load_forces(loads: list, q: tuple, dq: tuple, inputs: tuple, actuated: bool) -> tuple:
    """The generalized forces of ``loads`` (length n), summed.

    Each load is a dict: ``point`` (2 or 3 position expressions in q) with
    ``force`` (components in the same axes): ``(∂point/∂q)ᵀ force``;
    ``angle`` (planar, an expression in q) with ``torque`` (one expression):
    ``(∂angle/∂q)ᵀ torque``; or ``angular_velocity`` (3 expressions linear in
    q̇) with ``torque`` (3 components): ``(∂ω/∂q̇)ᵀ torque``. Force and torque
    components may use inputs, states and parameters.
    """
    n = len(q)
    total = [sympy.Integer(0)] * n
    for i, load in enumerate(_as_list(loads, "loads")):
        what = f"loads[{i}]"
        if not isinstance(load, dict):
            raise ModelTypeError(
                f"{what}: expected a table (dict) with point and force, angle and torque, "
                "or angular_velocity and torque"
            )
        keys = set(load)
        kind = next((pair for pair in LOAD_KINDS if set(pair) == keys), None)
        if kind is None:
            raise ModelError(
                f"{what}: expected the keys point and force, angle and torque, or angular_velocity and torque; "
                f"got {', '.join(sorted(map(str, keys))) or 'none'}"
            )
        where, load_of = kind
        if where == "angle":
            position = (_expression(load["angle"], f"{what}.angle"),)
            amount = (_expression(load["torque"], f"{what}.torque"),)
        else:
            position = tuple(
                _expression(e, f"{what}.{where}[{j}]") for j, e in enumerate(_as_list(load[where], f"{what}.{where}"))
            )
            amount = tuple(
                _expression(e, f"{what}.{load_of}[{j}]")
                for j, e in enumerate(_as_list(load[load_of], f"{what}.{load_of}"))
            )
            sizes = (3,) if where == "angular_velocity" else (2, 3)
            if len(position) not in sizes:
                raise ModelError(
                    f"{what}.{where}: expected {' or '.join(map(str, sizes))} components, got {len(position)}"
                )
            if len(amount) != len(position):
                raise ModelError(
                    f"{what}: {where} has {len(position)} components but {load_of} has {len(amount)}; give one per axis"
                )
        for j, e in enumerate(position):
            label = f"{what}.{where}" + (f"[{j}]" if where != "angle" else "")
            if e.free_symbols & set(inputs):
                raise ModelError(
                    f"{label}: depends on the input {sorted(s.name for s in e.free_symbols & set(inputs))[0]}; "
                    f"only the {load_of} may"
                )
            if where != "angular_velocity" and e.free_symbols & set(dq):
                velocities = ", ".join(sorted(s.name for s in e.free_symbols & set(dq)))
                raise ModelError(f"{label}: a load {where} depends on the coordinates q only; it contains {velocities}")
        if actuated:
            for e in amount:
                if e.free_symbols & set(inputs):
                    raise ModelError(
                        f"{what}.{load_of}: uses the input {sorted(s.name for s in e.free_symbols & set(inputs))[0]} "
                        "of a model without an input map; declare inputs and forces to drive a load"
                    )
        if where == "angular_velocity":
            jac = [
                [_velocity_coefficient(e, v, dq, f"{what}.angular_velocity[{j}]") for v in dq]
                for j, e in enumerate(position)
            ]
        else:
            jac = [[diff_piecewise(e, c) for c in q] for e in position]
        for k in range(n):
            term = sympy.Add(*(jac[j][k] * amount[j] for j in range(len(position))))
            if term != 0:
                total[k] = total[k] + term
    return tuple(total)


def _velocity_coefficient(expr: sympy.Expr, v: sympy.Symbol, dq: tuple, what: str) -> sympy.Expr:
    """``∂expr/∂v`` for ``expr`` linear in the velocities ``dq`` (refused otherwise, naming the term)."""
    if expr == 0:
        return sympy.Integer(0)
    _check_linear_in_velocities(expr, dq, what)
    return sympy.diff(expr, v)


def _check_linear_in_velocities(expr: sympy.Expr, dq: tuple, what: str) -> None:
    """Refuse ``expr`` unless it is ``Σ a_j(q) q̇_j``, naming the first offending term."""
    dq_set = set(dq)
    slopes_free = all(not (sympy.diff(expr, v).free_symbols & dq_set) for v in dq)
    rest = expr.xreplace({v: sympy.Integer(0) for v in dq})
    if slopes_free and rest == 0 and expr.free_symbols & dq_set:
        return
    if not expr.free_symbols & dq_set:
        raise ModelError(
            f"{what}: must be linear in the velocities (a(q) qdot), "
            f"but contains none of {', '.join(v.name for v in dq)}"
        )
    for term in sympy.Add.make_args(sympy.expand(expr)):
        _, velocity_part = term.as_independent(*dq, as_Add=False)
        if velocity_part not in dq_set:
            raise ModelError(f"{what}: must be linear in the velocities (a(q) qdot); offending term: {brief(term, 80)}")
    raise ModelError(f"{what}: must be linear in the velocities (a(q) qdot): {brief(expr, 80)}")


def _check_constraints(
    constraints: object | None, velocity_constraints: object | None, q: tuple, dq: tuple, inputs: tuple
) -> tuple:
    """The holonomic and velocity constraints as tuples of expressions, checked."""
    n = len(q)
    holonomic = tuple(
        _expression(e, f"constraints[{i}]") for i, e in enumerate(_as_list(constraints, "constraints"))
    ) if constraints is not None else ()
    rolling = (
        tuple(
            _expression(e, f"velocity_constraints[{i}]")
            for i, e in enumerate(_as_list(velocity_constraints, "velocity_constraints"))
        )
        if velocity_constraints is not None
        else ()
    )
    for label, group in (("constraints", holonomic), ("velocity_constraints", rolling)):
        for i, e in enumerate(group):
            used = e.free_symbols & set(inputs)
            if used:
                raise ModelError(
                    f"{label}[{i}]: a constraint cannot depend on the input {sorted(s.name for s in used)[0]}"
                )
    for i, e in enumerate(holonomic):
        velocities = sorted(s.name for s in e.free_symbols & set(dq))
        if velocities:
            raise ModelError(
                f"constraints[{i}]: a holonomic constraint depends on the coordinates q only; {brief(e, 60)} contains "
                f"{', '.join(velocities)} (give constraints on velocities as velocity_constraints, linear in qdot)"
            )
        if not e.free_symbols & set(q):
            raise ModelError(f"constraints[{i}]: {brief(e, 60)} depends on no coordinate, so it constrains nothing")
    for i, e in enumerate(rolling):
        _check_linear_in_velocities(e, dq, f"velocity_constraints[{i}]")
    k = len(holonomic) + len(rolling)
    if k >= n and k:
        raise ModelError(
            f"{k} constraint{'s' if k > 1 else ''} on {n} coordinate{'s' if n > 1 else ''} "
            f"{'is more than there are coordinates' if k > n else 'leave no degree of freedom'}; "
            f"a constrained model has at most n - 1 = {n - 1} independent constraints"
        )
    return holonomic, rolling


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
    constraints: list | None = None,
    velocity_constraints: list | None = None,
    loads: list | None = None,
    stabilization: float = 0.0,
    ranges: dict | None = None,
) -> Model:
    """Build a model from expression strings (TOML files and CLI flags).

    ``fric`` is a list of n strings, or the single string ``"0"`` for none.
    ``constraints``/``velocity_constraints`` are lists of strings, ``loads``
    a list of tables of strings (see :func:`load_forces`), ``ranges`` a dict
    of state name → ``[low, high]`` (see :func:`check_ranges`). Strings are parsed
    by :func:`sls.algebra.expressions.parse_expression` (never evaluated as code).
    """
    if isinstance(fric, str):
        fric_exprs: object = parse_expression(fric, "fric")
        if fric_exprs != 0:
            fric_exprs = [fric_exprs]
    else:
        fric_exprs = [
            parse_expression(_text(f, f"fric[{i}]"), f"fric[{i}]") for i, f in enumerate(_as_list(fric, "fric"))
        ]
    force_exprs = None
    if forces is not None:
        force_exprs = [
            parse_expression(_text(f, f"forces[{i}]"), f"forces[{i}]") for i, f in enumerate(_as_list(forces, "forces"))
        ]
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
        constraints=_parse_list(constraints, "constraints"),
        velocity_constraints=_parse_list(velocity_constraints, "velocity_constraints"),
        loads=(
            None if loads is None else _map_loads(loads, lambda value, what: parse_expression(_text(value, what), what))
        ),
        stabilization=stabilization,
        ranges=ranges,
    )


def _parse_list(values: list | None, what: str) -> list | None:
    if values is None:
        return None
    return [parse_expression(_text(v, f"{what}[{i}]"), f"{what}[{i}]") for i, v in enumerate(_as_list(values, what))]


def _map_loads(loads: object, convert) -> list:
    """``loads`` (a list of tables) with every component passed through ``convert(value, what)``."""
    result = []
    for i, load in enumerate(_as_list(loads, "loads")):
        if not isinstance(load, dict):
            raise ModelTypeError(
                f"loads[{i}]: expected a table (dict) with point and force, angle and torque, "
                "or angular_velocity and torque"
            )
        entry = {}
        for key, value in load.items():
            what = f"loads[{i}].{key}"
            if isinstance(value, (list, tuple, sympy.MatrixBase)):
                entry[key] = [convert(v, f"{what}[{j}]") for j, v in enumerate(_as_list(value, what))]
            else:
                entry[key] = convert(value, what)
        result.append(entry)
    return result


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
    constraints: object = None,
    velocity_constraints: object = None,
    loads: object = None,
    stabilization: float = 0.0,
    ranges: dict | None = None,
) -> Model:
    """Build a model from sympy objects (Python model files and the API).

    ``x`` is a list/Matrix of 2n sympy symbols (or names), ``fric`` a
    list/Matrix of n expressions or ``0``; ``params`` maps symbols or names to
    values. Symbols are renamed onto sls's real symbols. Functions of time
    (``sympy.physics.mechanics.dynamicsymbols``) are accepted in ``x`` and
    ``inputs``: ``q(t)`` becomes the symbol ``q`` and ``q(t).diff(t)`` the
    symbol ``dq``, in ``T``, ``V``, ``fric`` and ``forces`` too. Names that
    are not identifiers (sympy.physics.mechanics style, ``I_{1zz}``) are
    mapped onto identifiers (``I_1zz``); :attr:`Model.renamed` lists them.
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

    renamed: dict = {}
    taken = {names.get(s, s) for s in state} | set(param_values) | set(input_list or ())
    taken |= _symbol_names([T, V, fric, forces, constraints, velocity_constraints, loads])

    def identifier(name: str, what: str) -> str:
        if name.isascii() and name.isidentifier() or name in names.values() or not _MECHANICS_NAME.fullmatch(name):
            return name  # identifiers stay; anything but a mechanics-style name is refused by check_name
        if name not in renamed:
            renamed[name] = _identifier(name, taken)
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
        constraints=None if constraints is None else canonical_list(constraints, "constraints"),
        velocity_constraints=(
            None if velocity_constraints is None else canonical_list(velocity_constraints, "velocity_constraints")
        ),
        loads=None if loads is None else _map_loads(loads, canonical),
        stabilization=stabilization,
        renamed=tuple(renamed.items()),
        ranges=_ranges_by_name(ranges, timed, names),
    )


def with_ranges(model: Model, ranges: dict) -> Model:
    """``model`` with ``ranges`` declared in addition to (and over) its own, checked by :func:`check_ranges`."""
    try:
        declared = check_ranges(ranges, model.state)
    except SlsError as exc:
        if model.file and not str(exc).startswith(model.file):
            raise type(exc)(f"{model.file}: {exc}") from None
        raise
    merged = {**model.ranges, **declared}
    return replace(model, ranges={s.name: merged[s.name] for s in model.state if s.name in merged})


def _range_end(value: object, what: str) -> object:
    """One end of a range: numbers as they are, a string parsed as a constant expression (``"-pi/2"``)."""
    if not isinstance(value, str):
        return value
    parsed = parse_expression(value, what)
    if parsed.free_symbols:
        raise ModelError(f"{what}: {value!r} is not a number (only constants such as pi may appear)")
    return parsed


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


#: sympy.physics.mechanics-style names mapped onto identifiers: ``I_{1zz}``, ``m_{1}``, ``\\theta``, ``q'``.
_MECHANICS_NAME = re.compile(r"\\?[A-Za-z][A-Za-z0-9_{}^\\',]*")


def _symbol_names(values: object) -> set:
    """The names of the symbols in (nested lists and dicts of) sympy objects."""
    found, stack = set(), [values]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack += list(value.values())
        elif isinstance(value, (list, tuple, sympy.MatrixBase)):
            stack += list(value)
        elif isinstance(value, sympy.Basic):
            found |= {s.name for s in value.free_symbols if isinstance(s, sympy.Symbol)}
    return found


def _identifier(name: str, taken: set) -> str:
    """A plain identifier for a sympy.physics.mechanics-style name.

    ``I_{1zz}`` → ``I_1zz``, ``\\theta`` → ``theta``.
    """
    text = "_".join(part for part in re.split(r"[^0-9A-Za-z]+", name.encode("ascii", "ignore").decode()) if part)
    if not text or text[0].isdigit():
        text = "p_" + text
    if keyword.iskeyword(text) or text in RESERVED_NAMES or hasattr(builtins, text):
        text += "_"
    candidate, count = text, 2
    while candidate in taken:
        candidate, count = f"{text}_{count}", count + 1
    return candidate


def _time_functions(entries: list) -> tuple[dict, object]:
    """Map dynamicsymbols in ``entries`` onto plain symbols; and the time symbol.

    ``q(t)`` → ``q``, ``q(t).diff(t)`` → ``dq``.
    """
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
