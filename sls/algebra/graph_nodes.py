"""The expression graph's node store: hash-consed construction with folding, sympy conversion both ways,
reachability, inspection and numeric evaluation (:class:`GraphNodes`, the base of
:class:`~sls.algebra.graph.Graph`).

Nodes are integers; a node's children always have smaller ids, so increasing
id order is a topological order. Node kinds (:data:`ADD` … :data:`NUM`):

``num``  a constant (a sympy number or constant such as ``pi``);
``sym``  a symbol (a state, input, parameter or placeholder);
``add``  a sum of children, ``mul`` a product of children (both sorted);
``pow``  ``base ** exponent`` (two children);
``fn``   a sympy function (``sin``, ``atan2``, ``tanh``, ...) of its children.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import sympy

#: The node kinds.
ADD, MUL, POW, FN, SYM, NUM = "add", "mul", "pow", "fn", "sym", "num"


class Unsupported(Exception):
    """The expression holds a construct the graph does not model (e.g. ``Piecewise``)."""


class GraphNodes:
    """A hash-consed expression DAG: its nodes, their construction and conversion (see the module docstring).

    ``kind[i]``, ``args[i]`` (child ids) and ``payload[i]`` (the number, the
    symbol or the sympy function) describe node ``i``; ``deps[i]`` is a
    bitmask of the symbols node ``i`` depends on.
    """

    def __init__(self) -> None:
        self.kind: list = []
        self.args: list = []
        self.payload: list = []
        self.deps: list = []
        #: per kind: ``args`` → node for the operators (their tuple of children is the key, shared with ``args``),
        #: ``(args, payload)`` → node for numbers, symbols and functions
        self._index: dict = {}
        #: one object per distinct ``deps`` mask (a large robot's million nodes share some ten thousand masks)
        self._masks: dict = {}
        self._bits: dict = {}
        self._numbers: set = set()
        #: per number node: 0 (the value is zero), 1 (one) or 2 (anything else)
        self._unit: dict = {}
        self.zero = self.number(sympy.Integer(0))
        self.one = self.number(sympy.Integer(1))
        self.minus_one = self.number(sympy.Integer(-1))

    # ------------------------------------------------------------------
    # construction (with the folding every simplifier agrees on)

    def _node(self, kind: str, args: tuple, payload: object = None) -> int:
        index = self._index.get(kind)
        if index is None:
            index = self._index[kind] = {}
        key = args if payload is None else (args, payload)
        found = index.get(key)
        if found is not None:
            return found
        node = len(self.kind)
        self.kind.append(kind)
        self.args.append(args)
        self.payload.append(payload)
        deps = 0
        for a in args:
            deps |= self.deps[a]
        if kind == SYM:
            deps = 1 << self._bits.setdefault(payload, len(self._bits))
        self.deps.append(self._masks.setdefault(deps, deps))
        index[key] = node
        return node

    def number(self, value: sympy.Expr) -> int:
        """A constant node (a sympy number, or a constant such as ``pi``)."""
        value = sympy.sympify(value)
        node = self._node(NUM, (), value)
        if value.is_Number and node not in self._numbers:
            self._numbers.add(node)
            self._unit[node] = 0 if value == 0 else 1 if value == 1 else 2
        return node

    def symbol(self, symbol: sympy.Symbol) -> int:
        """The node of ``symbol``."""
        return self._node(SYM, (), symbol)

    def is_number(self, node: int) -> bool:
        """True when ``node`` is a number (not a symbolic constant such as ``pi``)."""
        return node in self._numbers

    def add(self, terms: Iterable[int]) -> int:
        """``Σ terms``: constants summed, zeros dropped, equal terms counted."""
        numbers = self._numbers
        constant = None
        constant_node = None  # the one number term, reused as is
        counts: dict = {}
        for t in terms:
            if t in numbers:
                if constant is None:
                    constant, constant_node = self.payload[t], t
                else:
                    constant, constant_node = constant + self.payload[t], None
            else:
                counts[t] = counts.get(t, 0) + 1
        items = [t if c == 1 else self.mul((self.number(c), t)) for t, c in counts.items()]
        if constant is not None:
            if constant_node is not None:
                if self._unit[constant_node] != 0:
                    items.append(constant_node)
            elif constant != 0:
                items.append(self.number(constant))
        if not items:
            return self.zero
        if len(items) == 1:
            return items[0]
        items.sort()
        return self._node(ADD, tuple(items))

    def mul(self, factors: Iterable[int]) -> int:
        """``Π factors``: constants multiplied, ones dropped, zero absorbing."""
        numbers = self._numbers
        constant = None
        constant_node = None  # the one number factor, reused as is
        items = []
        for f in factors:
            if f in numbers:
                if constant is None:
                    constant, constant_node = self.payload[f], f
                else:
                    constant, constant_node = constant * self.payload[f], None
            else:
                items.append(f)
        if constant is not None and len(items) == 1 and self.kind[items[0]] == MUL:
            # c·(d·y) is (c d)·y: one multiplication fewer
            inner = self.args[items[0]]
            scales = [a for a in inner if a in numbers]
            if scales:
                (scale,) = scales
                constant, constant_node = constant * self.payload[scale], None
                items = [a for a in inner if a != scale]
        if constant is not None:
            if constant_node is not None:
                unit = self._unit[constant_node]
                if unit == 0:
                    return self.zero
                if unit != 1:
                    items.append(constant_node)
            else:
                if constant == 0:
                    return self.zero
                if constant != 1:
                    items.append(self.number(constant))
        if not items:
            return self.one
        if len(items) == 1:
            return items[0]
        items.sort()
        return self._node(MUL, tuple(items))

    def neg(self, node: int) -> int:
        return self.mul((self.minus_one, node))

    def sub(self, a: int, b: int) -> int:
        return self.add((a, self.neg(b)))

    def pow(self, base: int, exponent: int) -> int:
        if self.is_number(exponent):
            e = self.payload[exponent]
            if e == 0:
                return self.one
            if e == 1:
                return base
            if self.is_number(base):
                value = self.payload[base] ** e
                if value.is_Number:
                    return self.number(value)
        return self._node(POW, (base, exponent))

    def function(self, func: Callable, args: tuple) -> int:
        if all(self.is_number(a) for a in args):
            value = func(*(self.payload[a] for a in args))
            if value.is_Number:
                return self.number(value)
        return self._node(FN, tuple(args), func)

    # ------------------------------------------------------------------
    # sympy → graph

    def from_sympy(self, expr: sympy.Basic, bound: dict | None = None) -> int:
        """The node of the sympy expression ``expr``.

        ``bound`` maps sympy symbols to existing nodes (placeholders);
        other symbols become ``sym`` nodes. Raises :class:`Unsupported` for
        constructs the graph does not model.
        """
        memo: dict = dict(bound or {})
        stack = [(expr, False)]
        while stack:
            e, ready = stack.pop()
            if e in memo:
                continue
            if not ready and e.args and not e.is_Atom:
                stack.append((e, True))
                stack.extend((a, False) for a in e.args if a not in memo)
                continue
            memo[e] = self._convert(e, memo)
        return memo[expr]

    def _convert(self, e: sympy.Basic, memo: dict) -> int:
        if e.is_Symbol:
            return self.symbol(e)
        if e.is_number and e.is_Atom:
            return self.number(e)
        children = tuple(memo[a] for a in e.args)
        if e.is_Add:
            return self.add(children)
        if e.is_Mul:
            return self.mul(children)
        if e.is_Pow:
            return self.pow(*children)
        if isinstance(e, (sympy.Function, sympy.Max, sympy.Min)) and all(isinstance(a, sympy.Expr) for a in e.args):
            return self.function(e.func, children)
        raise Unsupported(type(e).__name__)

    # ------------------------------------------------------------------
    # graph → sympy

    def to_sympy(self, outputs: Sequence[int], prefix: str = "_t", start: int = 0) -> tuple[list, list]:
        """Lower ``outputs`` to ``(definitions, expressions)``.

        ``definitions`` is a list of ``(Symbol, sympy expression)`` in
        evaluation order, one per node (other than symbols and numbers) used
        more than once among the nodes ``outputs`` need; every other node is
        inlined. ``expressions[i]`` is output ``i`` over those temporaries.
        """
        order = self.reachable(outputs)
        uses: Counter = Counter(outputs)
        for node in order:
            for a in self.args[node]:
                uses[a] += 1
        names = sympy.numbered_symbols(prefix, real=True, start=start)
        text: dict = {}
        definitions = []
        for node in order:
            kind = self.kind[node]
            if kind == SYM or kind == NUM:
                text[node] = self.payload[node]
                continue
            expr = self._sympy_of(node, text)
            if uses[node] > 1:
                name = next(names)
                definitions.append((name, expr))
                expr = name
            text[node] = expr
        return definitions, [text[o] for o in outputs]

    def as_sympy(self, node: int) -> sympy.Expr:
        """``node`` as one sympy expression (temporaries substituted back: small nodes only)."""
        return self.as_sympy_list([node])[0]

    def as_sympy_list(self, nodes: Sequence[int]) -> list:
        """``nodes`` as self-contained sympy expressions (temporaries substituted back)."""
        definitions, exprs = self.to_sympy(nodes)
        substitution: dict = {}
        for sym, value in definitions:
            substitution[sym] = value.xreplace(substitution)
        return [e.xreplace(substitution) for e in exprs]

    def _sympy_of(self, node: int, text: dict) -> sympy.Expr:
        kind, args = self.kind[node], [text[a] for a in self.args[node]]
        if kind == ADD:
            return sympy.Add(*args)
        if kind == MUL:
            return sympy.Mul(*args)
        if kind == POW:
            return sympy.Pow(*args)
        return self.payload[node](*args)

    def reachable(self, outputs: Iterable[int], mask: int | None = None) -> list:
        """Nodes ``outputs`` depend on (children first); with ``mask``, only nodes depending on those symbols."""
        seen = set()
        stack = [o for o in outputs if mask is None or self.deps[o] & mask]
        while stack:
            node = stack.pop()
            if node in seen:
                continue
            seen.add(node)
            for a in self.args[node]:
                if a not in seen and (mask is None or self.deps[a] & mask):
                    stack.append(a)
        return sorted(seen)

    def mask(self, symbols: Iterable[int]) -> int:
        """The bitmask of the symbol nodes ``symbols`` (compare with ``deps``)."""
        bits = 0
        for s in symbols:
            bits |= self.deps[s]
        return bits

    # ------------------------------------------------------------------
    # inspection

    def atoms(self, outputs: Iterable[int]) -> set:
        """The sympy function classes used by the nodes ``outputs`` need."""
        return {self.payload[n] for n in self.reachable(outputs) if self.kind[n] == FN}

    def degree(self, node: int, variables: set) -> tuple:
        """``(lowest, highest)`` polynomial degree of ``node`` in the symbol nodes ``variables``.

        ``highest`` is ``math.inf`` where the node is not a polynomial in them
        (a function or fractional power of an expression containing one). The
        bounds ignore cancellation: ``lowest == highest == 2`` proves a node a
        homogeneous quadratic form.
        """
        mask = self.mask(variables)
        bounds: dict = {}
        for n in self.reachable([node]):
            kind, args = self.kind[n], self.args[n]
            if not self.deps[n] & mask:
                bounds[n] = (0, 0)
            elif kind == SYM:
                bounds[n] = (1, 1)
            elif kind == ADD:
                bounds[n] = (min(bounds[a][0] for a in args), max(bounds[a][1] for a in args))
            elif kind == MUL:
                bounds[n] = (sum(bounds[a][0] for a in args), sum(bounds[a][1] for a in args))
            elif (
                kind == POW
                and self.is_number(args[1])
                and self.payload[args[1]].is_Integer
                and self.payload[args[1]] > 0
            ):
                e = int(self.payload[args[1]])
                bounds[n] = (bounds[args[0]][0] * e, bounds[args[0]][1] * e)
            else:
                bounds[n] = (0, math.inf)
        return bounds[node]

    def term_estimate(self, node: int) -> float:
        """How many terms expanding ``node`` would give, at most (no expansion is done).

        A sum adds its terms' counts, a product multiplies them, a positive
        integer power raises them to that power; any other power (``1/s``,
        ``sqrt(s)``) counts its base's terms squared: it never expands, and
        each derivative taken through it (``M`` and ``∂M/∂q``) multiplies by
        the base's derivative (an ellipsoid's contact geometry,
        ``sqrt(Σ (a_k μ_k)²)``, made the expanded route 160 s where the graph
        takes 2 s); anything else counts one.
        """
        counts: dict = {}
        for n in self.reachable([node]):
            kind, args = self.kind[n], self.args[n]
            if kind == ADD:
                counts[n] = sum(counts[a] for a in args)
            elif kind == MUL:
                counts[n] = math.prod(counts[a] for a in args)
            elif (
                kind == POW
                and self.is_number(args[1])
                and self.payload[args[1]].is_Integer
                and 0 < self.payload[args[1]] <= 8
            ):
                counts[n] = counts[args[0]] ** int(self.payload[args[1]])
            elif kind == POW:
                counts[n] = counts[args[0]] ** 2
            else:
                counts[n] = 1
            counts[n] = min(counts[n], 1e30)
        return counts[node]

    def evaluator(self, outputs: Sequence[int], symbols: Sequence[sympy.Symbol]) -> Callable[[Sequence[float]], list]:
        """A function of the values of ``symbols`` returning the outputs as floats (``math`` functions)."""
        order = self.reachable(outputs)
        position = {self.symbol(s): i for i, s in enumerate(symbols)}
        functions = {}
        for node in order:
            if self.kind[node] == FN and self.payload[node] not in functions:
                func = self.payload[node]
                dummies = sympy.symbols(f"_a0:{len(self.args[node])}", real=True)
                functions[func] = sympy.lambdify(dummies, func(*dummies), modules="math")
        # (node, kind, data): kind is a node kind, "sym", "num" or the math function of an ``fn`` node; data
        # the position of a symbol among ``symbols``, a constant's value or the children.
        steps: list[tuple[int, Any, Any]] = []
        for node in order:
            kind, args = self.kind[node], self.args[node]
            if kind == SYM:
                steps.append((node, "sym", position[node]))
            elif kind == NUM:
                steps.append((node, "num", float(self.payload[node])))
            elif kind == FN:
                steps.append((node, functions[self.payload[node]], args))
            else:
                steps.append((node, kind, args))

        def evaluate(values: Sequence[float]) -> list:
            v: dict = {}
            for node, kind, data in steps:
                if kind == "sym":
                    v[node] = values[data]
                elif kind == "num":
                    v[node] = data
                elif kind == ADD:
                    v[node] = math.fsum(v[a] for a in data)
                elif kind == MUL:
                    product = 1.0
                    for a in data:
                        product *= v[a]
                    v[node] = product
                elif kind == POW:
                    v[node] = v[data[0]] ** v[data[1]]
                else:
                    v[node] = kind(*(v[a] for a in data))
            return [v[o] for o in outputs]

        return evaluate
