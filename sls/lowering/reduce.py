"""Reducing a set of entries to shared temporaries and printing them for each path of a backend.

Two routes reach one :class:`Printed` form: one ``sympy.cse`` over the
expanded entries (:func:`print_cse`), or the derivative graph's own sharing
(:class:`GraphReducer`, printed by :mod:`sls.lowering.graph_print`). A
:class:`Path` is how one code path of a backend prints; every printed
expression reaches the backend as an :class:`~sls.lowering.expr.Expr`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import sympy

from sls.algebra.graph import Graph
from sls.lowering.expr import Expr
from sls.lowering.graph_print import GraphPrinter, Style, make_plan
from sls.lowering.statements import Let


def default_prefix(array: str) -> str:
    """The name prefix of an array's bound entries (``_M0``, ``_rhs1``, ...)."""
    return f"_{array}"


def same(name: str) -> str:
    """A name as it is (a path whose generated locals read as the lowering names them)."""
    return name


@dataclass(frozen=True)
class Path:
    """How one code path of a backend prints.

    ``text`` prints a sympy expression (the expanded route) with the names it
    reads marked (:func:`~sls.lowering.expr.mark_name`; library names it
    calls may be marked too, :func:`~sls.lowering.expr.mark_library`);
    ``style`` is how the graph prints (the graph route). ``to_float`` is how
    the path makes a float of an entry that may be an integer at run time
    (its value involves parameters alone, which the caller may pass as
    integers): with it, every entry is a float whatever the parameters' types,
    and entries known at generation time print as float literals (the Python
    target's scalar path: ``float(...)``); without it (``None``), entries are
    used as printed. ``prefix(array)`` names an array's bound entries,
    ``local(name)`` how a generated local reads (the ``text`` printer and
    ``style`` name them the same way).
    """

    text: Callable[[sympy.Expr], str]
    style: Style
    to_float: Callable[[Expr], Expr] | None = None
    prefix: Callable[[str], str] = default_prefix
    local: Callable[[str], str] = same


@dataclass(frozen=True)
class Printed:
    """A set of entries reduced together and printed for one path.

    ``lines`` bind the shared temporaries (:class:`~sls.lowering.statements.Let`\\ s,
    in evaluation order); ``entries`` hold each entry's expression;
    ``constants`` holds an entry's value where it is a number known at
    generation time, else ``None``. ``late`` and ``late_entries``: see
    :class:`GraphReducer`.
    """

    lines: list[Let]
    entries: list[Expr]
    constants: list[float | None]
    late: list[Let] = field(default_factory=list)
    late_entries: list[bool] = field(default_factory=list)


class Reducer(Protocol):
    """Reduces entries together and prints them: one :class:`Printed` per path (:func:`print_cse`,
    :class:`GraphReducer`)."""

    def __call__(
        self, entries: list, floats: frozenset, paths: Sequence[Path], late: frozenset = frozenset()
    ) -> list[Printed]: ...


def print_cse(entries: list, floats: frozenset, paths: Sequence[Path], late: frozenset = frozenset()) -> list[Printed]:
    """The expanded route: one ``sympy.cse`` over ``entries``, printed for each path.

    ``floats`` are the symbols bound to floats at run time (states, inputs).
    Phased programs (``late``) are the graph route's (:class:`GraphReducer`).
    """
    if late:
        raise ValueError("the expanded route prints no phased programs")
    replacements, reduced = _cse([sympy.sympify(e) for e in entries])
    is_float = _float_flags(replacements, reduced, floats) if any(p.to_float for p in paths) else []
    result = []
    for path in paths:
        lines = [Let(path.local(str(sym)), Expr.parse(path.text(expr))) for sym, expr in replacements]
        if path.to_float is not None:
            printed = [_float_entry(path, path.to_float, e, f) for e, f in zip(reduced, is_float)]
        else:
            printed = [Expr.parse(path.text(e)) for e in reduced]
        result.append(Printed(lines, printed, [float(e) if e.is_Number else None for e in reduced]))
    return result


def _float_entry(path: Path, to_float: Callable[[Expr], Expr], expr: sympy.Expr, is_float: bool) -> Expr:
    """An entry on a path making floats of its entries (:attr:`Path.to_float`)."""
    if expr.is_Number:
        return Expr.number(float(expr))
    printed = Expr.parse(path.text(expr))
    return printed if is_float else to_float(printed)


def _float_flags(replacements: list, reduced: list, floats: frozenset) -> list[bool]:
    """For each reduced entry: is its value certainly a float at run time?

    ``floats`` are the symbols bound to floats (states, inputs); an
    expression is a float when it involves one of them (directly or through a
    temporary) or a float literal. Anything else (numbers, parameters alone)
    may be an ``int`` when the caller passes integer parameters.
    """
    known = set(floats)
    for sym, expr in replacements:
        if _is_float(expr, known):
            known.add(sym)
    return [_is_float(expr, known) for expr in reduced]


def _is_float(expr: sympy.Expr, known: set) -> bool:
    if expr.free_symbols & known:
        return True
    return any(not a.is_Integer for a in expr.atoms(sympy.Number))


def _cse(exprs: list) -> tuple[list, list]:
    """One common-subexpression elimination over ``exprs`` (temporaries ``_t0, _t1, …``)."""
    temporaries = sympy.numbered_symbols("_t", real=True)
    return sympy.cse(exprs, symbols=temporaries, order="none")


class GraphReducer:
    """The graph route: entries are nodes of one :class:`~sls.algebra.graph.Graph`, printed straight from it."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self._printers: dict[int, tuple[Style, GraphPrinter]] = {}

    def __call__(
        self, entries: list, floats: frozenset, paths: Sequence[Path], late: frozenset = frozenset()
    ) -> list[Printed]:
        """One :class:`Printed` per path; temporaries and entries depending on the symbols ``late``
        are kept apart (:attr:`Printed.late`, :attr:`Printed.late_entries`)."""
        g = self.graph
        mask = g.mask(g.symbol(s) for s in floats | late)
        late_mask = g.mask(g.symbol(s) for s in late) if late else 0
        numbers = {e: float(g.payload[e]) for e in set(entries) if g.is_number(e)}  # each distinct number once
        constants = [numbers.get(e) for e in entries]
        late_entries = [bool(g.deps[e] & late_mask) for e in entries]
        result = []
        plan = make_plan(g, entries)
        for path in paths:
            lines, late_lines, printed = self._printer(path.style).phased_program(entries, late_mask, plan=plan)
            to_float = path.to_float
            if to_float is not None:
                literals = {e: Expr.number(c) for e, c in numbers.items()}  # by node
                printed = [
                    literals[e] if c is not None else expr if g.deps[e] & mask else to_float(expr)
                    for e, expr, c in zip(entries, printed, constants)
                ]
            lets = [Let(name, expr) for name, expr in lines]
            late_lets = [Let(name, expr) for name, expr in late_lines]
            lines = late_lines = []  # (a large robot's Jacobian: free the pairs before the next path is printed)
            result.append(Printed(lets, printed, constants, late_lets, late_entries))
        return result

    def _printer(self, style: Style) -> GraphPrinter:
        """The printer of ``style`` (one per style: it remembers how each function prints)."""
        found = self._printers.get(id(style))
        if found is None:
            found = self._printers[id(style)] = (style, GraphPrinter(self.graph, style))
        return found[1]


def reducer(graph: Graph | None) -> Reducer:
    """How entries reduce: :func:`print_cse` (the expanded route, no ``graph``) or a :class:`GraphReducer`."""
    return print_cse if graph is None else GraphReducer(graph)
