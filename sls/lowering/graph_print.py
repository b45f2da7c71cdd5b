"""Printing a derivative graph (:mod:`sls.algebra.graph`) as straight-line code, without sympy objects.

The graph route never turns its (large, shared) derivative graph back into
sympy trees: each node prints in microseconds from its children's text. Nodes
used more than once become temporaries ``_g0, _g1, …`` (numbered per
function, in evaluation order); single-use nodes are inlined into their
parent, up to a nesting depth that keeps lines readable and parsable.

Operators and numbers print the same in every language sls targets; the
*functions* (``sin``, ``atan2``, ``sign``, …) come from the target's sympy
code printer (:class:`~sls.backends.python.printer.ScalarPrinter` for
Python floats, :class:`~sls.backends.c.printer.CPrinter` for C, …), applied
once per function to placeholders, so the graph prints exactly the calls the
expanded route prints. Names print marked (:func:`~sls.lowering.expr.mark_name`)
and every result is an :class:`~sls.lowering.expr.Expr`.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy

from sls.algebra.graph import Graph
from sls.lowering.expr import Expr, mark_name

#: Precedence levels of printed text: what may stand unparenthesized where
#: (``NEG`` is a negated product or a negative number, ``-a*b``).
LOW, ADD, NEG, MUL, POW, ATOM = 0, 1, 2, 3, 4, 5
#: Deepest nesting of inlined single-use nodes before a temporary is introduced.
MAX_INLINE_DEPTH = 12


def _same(name: str) -> str:
    return name


@dataclass(frozen=True)
class Style:
    """How one path prints.

    ``printer`` is the sympy code printer used for function calls (and
    constants such as ``pi``); ``scalar`` writes small integer powers as
    products; ``power(base, exponent)`` gives ``(text, precedence)`` of a
    power whose operands are printed atoms (Python ``base**exponent``, C
    ``pow(...)``, MATLAB ``base^exponent``): every target says how it writes
    one. The other hooks have neutral defaults: ``integer(k)`` prints an
    integer literal (plain digits; C prints ``2.0``, so no division is an
    integer division); ``names`` renames symbols (a backend's reserved
    names); ``local(name)`` is how a generated local (``_g0``, ``_qddot1``)
    reads (MATLAB names cannot start with ``_``: ``g0_``).
    """

    printer: Any
    scalar: bool
    power: Callable[[str, str], tuple[str, int]]
    integer: Callable[[int], str] = str
    names: dict[str, str] = field(default_factory=dict)
    local: Callable[[str], str] = _same


#: What printing a set of outputs takes, whatever the style: the nodes in evaluation order and those bound
#: to temporaries (used more than once, or nested deeper than :data:`MAX_INLINE_DEPTH`).
Plan = tuple[list[int], set[int]]


def make_plan(g: Graph, outputs: Sequence[int]) -> Plan:
    """The :data:`Plan` of printing ``outputs``. (Uses and depths are arrays over the whole graph, not
    dictionaries of the reachable nodes: a large robot's Jacobian reaches a million nodes.)"""
    order = g.reachable(outputs)
    size = len(g.kind)
    uses = array("q", bytes(8 * size))
    for o in outputs:
        uses[o] += 1
    kinds, arguments = g.kind, g.args
    for node in order:
        for a in arguments[node]:
            uses[a] += 1
    depth = array("b", bytes(size))  # nesting of inlined nodes, at most MAX_INLINE_DEPTH
    named: set[int] = set()
    for node in order:
        if kinds[node] in ("sym", "num"):
            continue
        d = 1 + max((depth[a] for a in arguments[node]), default=0)
        if uses[node] > 1 or d > MAX_INLINE_DEPTH:
            named.add(node)
            d = 0
        depth[node] = d
    return order, named


class GraphPrinter:
    """Print graph nodes for one :class:`Style` (see the module docstring)."""

    def __init__(self, graph: Graph, style: Style) -> None:
        self.graph = graph
        self.style = style
        self._templates: dict[tuple[Any, int], tuple[str, list[str], bool]] = {}
        self._coefficients: dict = {}

    def program(self, outputs: Sequence[int], prefix: str = "_g") -> tuple[list[str], list[str]]:
        """``(lines, texts)``: assignments ``name = text`` of the shared temporaries, and each output's text
        (a convenience to check the printer; the lowering reads :meth:`phased_program`)."""
        temporaries, _, values = self.phased_program(outputs, 0, prefix)
        return [f"{name} = {value.text()}" for name, value in temporaries], [value.text() for value in values]

    def phased_program(
        self, outputs: Sequence[int], late_mask: int, prefix: str = "_g", plan: Plan | None = None
    ) -> tuple[list[tuple[str, Expr]], list[tuple[str, Expr]], list[Expr]]:
        """``(temporaries, late, values)``: the shared temporaries as ``(name, value)`` pairs in evaluation
        order, each output's value, and apart from them (``late``) the temporaries depending on the symbols
        of ``late_mask`` (a :meth:`~sls.algebra.graph.Graph.mask`), to be bound once those symbols have values;
        ``temporaries`` never read them. ``plan``: :func:`make_plan` of ``outputs``, when already made (it does
        not depend on the style)."""
        g = self.graph
        order, named = plan if plan is not None else make_plan(g, outputs)
        printed: dict[int, tuple[str, int]] = {}
        lines: list[tuple[str, Expr]] = []
        late: list[tuple[str, Expr]] = []
        count = 0
        node_text = self._node
        kinds, arguments = g.kind, g.args
        for node in order:
            text, prec = node_text(node, printed)
            if kinds[node] not in ("pow", "sym", "num"):  # (a product reads the base of a power it divides by)
                for a in arguments[node]:  # an inlined child's text is now part of this node's: free it
                    if a not in named and kinds[a] not in ("sym", "num"):
                        printed.pop(a, None)
            if node in named:
                name = self.style.local(f"{prefix}{count}")
                count += 1
                (late if g.deps[node] & late_mask else lines).append((name, Expr(text)))
                text, prec = mark_name(name), ATOM
            printed[node] = (text, prec)
        values: dict[int, Expr] = {}  # one expression per output node (outputs share nodes: zeros, ...)
        for o in outputs:
            if o not in values:
                values[o] = Expr(printed[o][0])
        return lines, late, [values[o] for o in outputs]

    # ------------------------------------------------------------------

    def _number(self, value: sympy.Expr) -> tuple[str, int]:
        integer = self.style.integer
        if value.is_Integer:
            return integer(int(value)), ATOM if value >= 0 else NEG
        if value.is_Rational:
            return f"{integer(int(value.p))}/{integer(int(value.q))}", MUL if value > 0 else NEG
        if value.is_Float:
            number = float(value)
            return repr(number), ATOM if number >= 0 else NEG
        return self.style.printer.doprint(value), ATOM

    def _node(self, node: int, printed: dict) -> tuple[str, int]:
        g = self.graph
        kind, args = g.kind[node], g.args[node]
        if kind == "sym":
            name = g.payload[node].name
            return mark_name(self.style.names.get(name) or self.style.local(name)), ATOM
        if kind == "num":
            return self._number(g.payload[node])
        if kind == "add":
            return self._add(args, printed)
        if kind == "mul":
            return self._mul(args, printed)
        if kind == "pow":
            return self._pow(args[0], args[1], printed)
        return self._call(g.payload[node], args, printed)

    @staticmethod
    def _wrap(item: tuple, level: int) -> str:
        text, prec = item
        return text if prec >= level else f"({text})"

    def _add(self, args: tuple, printed: dict) -> tuple[str, int]:
        terms = [self._wrap(printed[a], NEG) for a in args]
        # Positive terms first, so the sum reads "a + b - c".
        terms.sort(key=lambda t: t.startswith("-"))
        text = terms[0]
        for t in terms[1:]:
            text += f" - {t[1:]}" if t.startswith("-") else f" + {t}"
        return text, ADD

    def _mul(self, args: tuple, printed: dict) -> tuple[str, int]:
        g = self.graph
        sign = ""
        numerator: list[str] = []
        denominator: list[tuple[str, int]] = []
        for a in args:
            if g.is_number(a):  # at most one: the graph folds constants
                sign, head, tail = self._coefficient(a)
                numerator[:0] = head
                denominator[:0] = tail
                continue
            if g.kind[a] == "pow" and g.is_number(g.args[a][1]) and g.payload[g.args[a][1]].is_negative:
                base, exponent = g.args[a]
                denominator.append(self._power_text(base, -g.payload[exponent], printed))
                continue
            numerator.append(self._wrap(printed[a], MUL))
        text = "*".join(numerator) if numerator else self.style.integer(1)
        for item in denominator:
            text += "/" + self._wrap(item, POW)
        return sign + text, NEG if sign else MUL

    def _coefficient(self, node: int) -> tuple:
        """``(sign, numerator texts, denominator items)`` of a numeric factor (remembered per node)."""
        found = self._coefficients.get(node)
        if found is None:
            value = self.graph.payload[node]
            sign = "-" if value.is_negative else ""
            value = -value if sign else value
            integer = self.style.integer
            if value.is_Rational and not value.is_Integer:
                found = (sign, [integer(int(value.p))] if value.p != 1 else [], [(integer(int(value.q)), ATOM)])
            else:
                found = (sign, [self._number(value)[0]] if value != 1 else [], [])
            self._coefficients[node] = found
        return found

    def _power_text(self, base: int, exponent: sympy.Expr, printed: dict) -> tuple[str, int]:
        """``base**exponent`` for a positive constant ``exponent``."""
        if exponent == 1:
            return printed[base]
        if exponent == sympy.Rational(1, 2):
            return self._template(sympy.sqrt, 1, [printed[base]])
        b = self._wrap(printed[base], ATOM)
        if self.style.scalar and exponent in (2, 3):
            # x*x is several times faster than x**2 on Python floats.
            return "*".join([b] * int(exponent)), MUL
        return self.style.power(b, self._wrap(self._number(exponent), ATOM))

    def _pow(self, base: int, exponent: int, printed: dict) -> tuple[str, int]:
        g = self.graph
        if g.is_number(exponent):
            e = g.payload[exponent]
            if e > 0:
                return self._power_text(base, e, printed)
            return f"{self.style.integer(1)}/{self._wrap(self._power_text(base, -e, printed), POW)}", MUL
        return self.style.power(self._wrap(printed[base], ATOM), self._wrap(printed[exponent], ATOM))

    def _call(self, func: Any, args: tuple, printed: dict) -> tuple[str, int]:
        return self._template(func, len(args), [printed[a] for a in args])

    def _template(self, func: Any, arity: int, items: list) -> tuple[str, int]:
        key = (func, arity)
        if key not in self._templates:
            placeholders = sympy.symbols(f"_arg0:{arity}", real=True)
            text = self.style.printer.doprint(func(*placeholders))
            marks = [self.style.printer.doprint(p) for p in placeholders]  # as the printer names them
            atomic = _starts_with_call(Expr.parse(text).text()) and _closes_at_end(text)
            self._templates[key] = (text, marks, atomic)
        text, marks, atomic = self._templates[key]
        for k in reversed(range(arity)):  # _arg10 before _arg1
            mark = marks[k]
            text = text.replace(mark, self._wrap(items[k], ATOM) if not _is_sole_argument(text, mark) else items[k][0])
        return text, ATOM if atomic else LOW


def _starts_with_call(text: str) -> bool:
    """True when ``text`` starts with a call: a (dotted) name, then ``(``."""
    head, paren, _ = text.partition("(")
    return (
        bool(paren)
        and head[:1].isidentifier()
        and all(char.isidentifier() or char.isdigit() or char == "." for char in head)
    )


def _closes_at_end(text: str) -> bool:
    """True when the first opening parenthesis of ``text`` closes at its last character."""
    depth = 0
    for position, char in enumerate(text):
        depth += char == "("
        depth -= char == ")"
        if depth == 0 and char == ")":
            return position == len(text) - 1
    return False


def _is_sole_argument(template: str, mark: str) -> bool:
    """True when the placeholder ``mark`` stands alone between a call's delimiters (no parentheses needed)."""
    if template.count(mark) != 1:
        return False
    before, _, after = template.partition(mark)
    before = before.removesuffix(" ")
    return before.endswith(("(", ",")) and after.startswith((",", ")"))
