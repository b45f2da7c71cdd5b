"""An expression graph with symbolic differentiation, for models too large to expand.

sympy expressions are trees: differentiating ``T`` of a 10-link arm entry by
entry repeats the same work on the same subtrees thousands of times and writes
every matrix entry out as one flat expression. This module keeps a model as a
*graph* instead: every distinct subexpression is one node (hash-consed, so
``sin(q1 + q2)`` exists once however often it is used), and derivatives are
new nodes built from existing ones by the chain rule — forward mode (a
directional derivative of many outputs) and reverse mode (the gradient of one
output) — exactly the way automatic differentiation tools build derivative
graphs. The cost of a derivative is then proportional to the size of the
graph, not to the size of the expanded expressions.

Nodes are integers; a node's children always have smaller ids, so increasing
id order is a topological order. Node kinds:

``num``  a constant (a sympy number or constant such as ``pi``);
``sym``  a symbol (a state, input, parameter or placeholder);
``add``  a sum of children, ``mul`` a product of children (both sorted);
``pow``  ``base ** exponent`` (two children);
``fn``   a sympy function (``sin``, ``atan2``, ``tanh``, ...) of its children.

:func:`Graph.to_sympy` lowers a set of output nodes back to sympy: nodes used
more than once become numbered temporaries (straight-line definitions),
single-use nodes are inlined into their parent.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import sympy

_ADD, _MUL, _POW, _FN, _SYM, _NUM = "add", "mul", "pow", "fn", "sym", "num"


class Unsupported(Exception):
    """The expression holds a construct the graph does not model (e.g. ``Piecewise``)."""


class Graph:
    """A hash-consed expression DAG (see the module docstring).

    ``kind[i]``, ``args[i]`` (child ids) and ``payload[i]`` (the number, the
    symbol or the sympy function) describe node ``i``; ``deps[i]`` is a
    bitmask of the symbols node ``i`` depends on.
    """

    def __init__(self) -> None:
        self.kind: list = []
        self.args: list = []
        self.payload: list = []
        self.deps: list = []
        self._index: dict = {}
        self._bits: dict = {}
        self._partials: dict = {}
        self._numbers: set = set()
        #: per number node: 0 (the value is zero), 1 (one) or 2 (anything else)
        self._unit: dict = {}
        self._node_partials: dict = {}
        self.zero = self.number(sympy.Integer(0))
        self.one = self.number(sympy.Integer(1))
        self.minus_one = self.number(sympy.Integer(-1))

    # ------------------------------------------------------------------
    # construction (with the folding every simplifier agrees on)

    def _node(self, kind: str, args: tuple, payload: object = None) -> int:
        key = (kind, args, payload)
        found = self._index.get(key)
        if found is not None:
            return found
        node = len(self.kind)
        self.kind.append(kind)
        self.args.append(args)
        self.payload.append(payload)
        deps = 0
        for a in args:
            deps |= self.deps[a]
        if kind == _SYM:
            deps = 1 << self._bits.setdefault(payload, len(self._bits))
        self.deps.append(deps)
        self._index[key] = node
        return node

    def number(self, value: sympy.Expr) -> int:
        """A constant node (a sympy number, or a constant such as ``pi``)."""
        value = sympy.sympify(value)
        node = self._node(_NUM, (), value)
        if value.is_Number and node not in self._numbers:
            self._numbers.add(node)
            self._unit[node] = 0 if value == 0 else 1 if value == 1 else 2
        return node

    def symbol(self, symbol: sympy.Symbol) -> int:
        """The node of ``symbol``."""
        return self._node(_SYM, (), symbol)

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
        return self._node(_ADD, tuple(items))

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
        if constant is not None and len(items) == 1 and self.kind[items[0]] == _MUL:
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
        return self._node(_MUL, tuple(items))

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
        return self._node(_POW, (base, exponent))

    def function(self, func: Callable, args: tuple) -> int:
        if all(self.is_number(a) for a in args):
            value = func(*(self.payload[a] for a in args))
            if value.is_Number:
                return self.number(value)
        return self._node(_FN, tuple(args), func)

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
            if kind == _SYM or kind == _NUM:
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
        if kind == _ADD:
            return sympy.Add(*args)
        if kind == _MUL:
            return sympy.Mul(*args)
        if kind == _POW:
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

    # ------------------------------------------------------------------
    # sharing partial sums

    def share_sums(self, roots: Sequence[int]) -> list:
        """``roots`` rebuilt so that sums sharing terms share their partial sums.

        Hash-consing shares equal subexpressions, not equal *parts* of sums:
        a chain's velocity coefficients ``c_i + … + c_k`` for every ``i ≤ k``
        are separate sums. Greedy pair merging (the pair of terms found in the
        most sums becomes one node, repeated while some pair occurs twice)
        turns them into shared partial sums, so everything derived from them
        is smaller. Values are unchanged (only the grouping of additions).
        """
        order = self.reachable(roots)
        items = {n: list(self.args[n]) for n in order if self.kind[n] == _ADD and len(self.args[n]) > 2}
        pairs: list = []  # virtual nodes: pair k is ("pair", k) made of two items
        while True:
            counts: Counter = Counter()
            for terms in items.values():
                unique = sorted(set(terms), key=repr)
                for i in range(len(unique)):
                    for j in range(i + 1, len(unique)):
                        counts[unique[i], unique[j]] += 1
            best = [(pair, c) for pair, c in counts.most_common() if c >= 2]
            if not best:
                break
            for (a, b), _ in best:
                name = None
                for terms in items.values():
                    if len(terms) > 2 and a in terms and b in terms:
                        if name is None:
                            name = ("pair", len(pairs))
                            pairs.append((a, b))
                        terms.remove(a)
                        terms.remove(b)
                        terms.append(name)
        rebuilt: dict = {}

        def item(x: object) -> int:
            if isinstance(x, tuple):
                a, b = pairs[x[1]]
                return self.add((item(a), item(b)))
            return rebuilt[x]

        for node in order:
            kind, args = self.kind[node], self.args[node]
            if not args:
                rebuilt[node] = node
            elif node in items:
                rebuilt[node] = self.add([item(x) for x in items[node]])
            elif kind == _ADD:
                rebuilt[node] = self.add([rebuilt[a] for a in args])
            elif kind == _MUL:
                rebuilt[node] = self.mul([rebuilt[a] for a in args])
            elif kind == _POW:
                rebuilt[node] = self.pow(rebuilt[args[0]], rebuilt[args[1]])
            else:
                rebuilt[node] = self.function(self.payload[node], tuple(rebuilt[a] for a in args))
        return [rebuilt[r] for r in roots]

    def collect_rates(self, roots: Sequence[int], rates: Sequence[int]) -> list:
        """``roots`` rebuilt with every sum linear in ``rates`` collected by its rate-free parts.

        Users write a body's velocity as the Jacobian of its position times
        the rates, ``v = Σ_j q̇_j (Σ_{i∈I_j} t_i)`` (on a chain with relative
        angles ``I_j`` are nested, ``t_i`` are ``l_i cos(q_1 + … + q_i)``).
        The same sum collected by the ``t_i`` reads ``Σ_i t_i (Σ_{j: i∈I_j} q̇_j)``:
        the rate sums are the same nodes for every body (hash-consing) and
        the bodies' velocities share their partial sums, as in a recursive
        formulation, so everything differentiated from ``T`` shrinks (about
        2× on the chain). A sum is collected when each of its terms is one
        rate times rate-free factors (at most one of them a sum, which is
        distributed) and collecting gives no more products than it had.
        Values are unchanged (only the grouping of the arithmetic).
        """
        rate_set = set(rates)
        rate_mask = self.mask(rates)

        def pairs(term: int) -> list | None:
            """``[(rate, rate-free part), …]`` summing to ``term``, or ``None`` when it has another shape."""
            if term in rate_set:
                return [(term, self.one)]
            if self.kind[term] != _MUL:
                return None
            factors = self.args[term]
            with_rates = [f for f in factors if self.deps[f] & rate_mask]
            if len(with_rates) != 1 or with_rates[0] not in rate_set:
                return None
            rest = [f for f in factors if f != with_rates[0]]
            sums = [f for f in rest if self.kind[f] == _ADD]
            if len(sums) != 1:
                return [(with_rates[0], self.mul(rest))]
            others = [f for f in rest if f != sums[0]]
            return [(with_rates[0], self.mul(others + [t])) for t in self.args[sums[0]]]

        def all_pairs(terms: list) -> list | None:
            """The :func:`pairs` of every term in turn, or ``None`` at the first term of another shape."""
            found: list = []
            for t in terms:
                found_t = pairs(t)
                if found_t is None:
                    return None
                found.extend(found_t)
            return found

        rebuilt: dict = {}
        for node in self.reachable(roots):
            kind, args = self.kind[node], self.args[node]
            if not args:
                rebuilt[node] = node
                continue
            new = [rebuilt[a] for a in args]
            if kind == _ADD and self.deps[node] & rate_mask:
                found = all_pairs(new)
                if found is not None:
                    groups: dict = {}
                    for rate, part in found:
                        groups.setdefault(part, []).append(rate)
                    if len(groups) <= len(new):
                        rebuilt[node] = self.add([self.mul((part, self.add(r))) for part, r in groups.items()])
                        continue
            rebuilt[node] = self._rebuild(node, new)
        return [rebuilt[r] for r in roots]

    def collect_products(self, roots: Sequence[int], rates: Sequence[int]) -> list:
        """``roots`` with sums of ``rate × rate-free factors × W`` regrouped by the rate-dependent part ``W``.

        ``sympy.physics.vector`` writes a body's rotational energy ``½ ω·(I ω)``
        with the left ``ω`` distributed over its rates: ``Σ_r q̇_r (Σ_k I_k a_rk
        ω_k) / 2`` (``a_rk`` the direction-cosine products of rate ``r`` on axis
        ``k``, ``ω_k`` the components as sums). Collected by ``W = ω_k`` it reads
        ``Σ_k I_k/2 · ω_k · (Σ_r q̇_r a_rk)``, where the rate sum is ``ω_k``
        again: after :meth:`collect_rates` the same node, so ``T = Σ_k I_k ω_k²/2``
        as a recursive formulation would write it, and its derivatives stay
        products of the components instead of n sums of them. A term is taken
        apart when it is (after distributing at most one sum factor) one rate
        times rate-free factors times rate-dependent factors none of which is
        a rate; factors common to a group are moved out of its sum. A sum is
        rebuilt only when some group has two terms or more. Values are unchanged.
        """
        rate_set = set(rates)
        rate_mask = self.mask(rates)

        def split(factors: list) -> tuple | None:
            """``(rate, rate-free factors, W)`` of one product, or ``None``."""
            bare = [f for f in factors if f in rate_set]
            if len(bare) != 1:
                return None
            free = [f for f in factors if not self.deps[f] & rate_mask]
            dependent = [f for f in factors if self.deps[f] & rate_mask and f != bare[0]]
            if not dependent or any(f in rate_set for f in dependent):
                return None
            return bare[0], free, tuple(sorted(dependent))

        def parts(term: int) -> list | None:
            factors = list(self.args[term]) if self.kind[term] == _MUL else [term]
            sums = [f for f in factors if self.kind[f] == _ADD and self.deps[f] & rate_mask and f not in rate_set]
            whole = split(factors)
            if len(sums) != 1:
                return None if whole is None else [whole]
            others = [f for f in factors if f != sums[0]]
            found = []
            for t in self.args[sums[0]]:
                inner = list(self.args[t]) if self.kind[t] == _MUL else [t]
                got = split(others + inner)
                if got is None:
                    return None if whole is None else [whole]
                found.append(got)
            return found

        rebuilt: dict = {}
        for node in self.reachable(roots):
            kind, args = self.kind[node], self.args[node]
            if not args:
                rebuilt[node] = node
                continue
            new = [rebuilt[a] for a in args]
            if kind == _ADD and self.deps[node] & rate_mask:
                groups: dict = {}
                kept = []
                for t in new:
                    found = parts(t) if self.args[t] else None
                    if found is None:
                        kept.append(t)
                        continue
                    for rate, free, key in found:
                        groups.setdefault(key, []).append((rate, free))
                if any(len(g) > 1 for g in groups.values()):
                    for key, entries in groups.items():
                        kept.append(self.mul(self._common_factor(entries) + list(key)))
                    rebuilt[node] = self.add(kept)
                    continue
            rebuilt[node] = self._rebuild(node, new)
        return [rebuilt[r] for r in roots]

    def _common_factor(self, entries: list) -> list:
        """``Σ rate × Π free`` over ``entries`` as factors ``[common…, Σ rate × Π rest]``.

        Symbols and other nodes common to every entry move out of the sum, and
        so does a numeric factor common up to sign (``±½``), so the rate sum is
        the same node as the sum a user wrote without it.
        """
        common = Counter(f for f in entries[0][1] if f not in self._numbers)
        for _, free in entries[1:]:
            common &= Counter(f for f in free if f not in self._numbers)
        scales = [
            math.prod((self.payload[f] for f in free if f in self._numbers), start=sympy.Integer(1))
            for _, free in entries
        ]
        scale = abs(scales[0]) if all(abs(c) == abs(scales[0]) for c in scales) else sympy.Integer(1)
        inner = []
        for (rate, free), c in zip(entries, scales):
            rest = list((Counter(f for f in free if f not in self._numbers) - common).elements())
            inner.append(self.mul([rate, self.number(c / scale)] + rest))
        return list(common.elements()) + [self.number(scale), self.add(inner)]

    def _rebuild(self, node: int, args: list) -> int:
        """``node``'s operation applied to new ``args`` (with the usual folding)."""
        kind = self.kind[node]
        if kind == _ADD:
            return self.add(args)
        if kind == _MUL:
            return self.mul(args)
        if kind == _POW:
            return self.pow(args[0], args[1])
        return self.function(self.payload[node], tuple(args))

    def operation_count(self, outputs: Iterable[int]) -> int:
        """Arithmetic operations evaluating ``outputs`` takes (an n-ary sum or product counts n − 1, a call 1)."""
        return sum(max(len(self.args[n]) - 1, 1) for n in self.reachable(outputs) if self.args[n])

    # ------------------------------------------------------------------
    # differentiation

    def mask(self, symbols: Iterable[int]) -> int:
        bits = 0
        for s in symbols:
            bits |= self.deps[s]
        return bits

    def partials(self, node: int, active: Sequence[int] | None = None) -> dict:
        """``{i: ∂node/∂child_i}`` for the children ``active`` (default: all), as nodes."""
        kind, args = self.kind[node], self.args[node]
        if active is None:
            active = range(len(args))
        if kind == _ADD:
            return {i: self.one for i in active}
        if kind == _MUL:
            return {i: self.mul(args[:i] + args[i + 1 :]) for i in active}
        cached = self._node_partials.get(node)
        if cached is None:
            cached = self._node_partials[node] = dict(enumerate(self._local_partials(node)))
        return cached

    def _local_partials(self, node: int) -> list:
        kind, args = self.kind[node], self.args[node]
        if kind == _POW:
            base, exponent = args
            if self.is_number(exponent):
                e = self.payload[exponent]
                return [self.mul((exponent, self.pow(base, self.number(e - 1)))), self.zero]
            log_base = self.function(sympy.log, (base,))
            return [
                self.mul((exponent, self.pow(base, self.add((exponent, self.minus_one))))),
                self.mul((node, log_base)),
            ]
        if kind == _FN:
            return self._function_partials(self.payload[node], args)
        return []

    def _function_partials(self, func: Callable, args: tuple) -> list:
        if func is sympy.Heaviside:  # differentiated piece by piece: zero away from the switch (no DiracDelta)
            return [self.zero] * len(args)
        key = (func, len(args))
        if key not in self._partials:
            dummies = sympy.symbols(f"_a0:{len(args)}", real=True)
            value = func(*dummies)
            self._partials[key] = (dummies, [sympy.diff(value, d) for d in dummies])
        dummies, derivatives = self._partials[key]
        bound = dict(zip(dummies, args))
        return [self.from_sympy(d, bound) for d in derivatives]

    def forward(self, outputs: Sequence[int], seeds: dict) -> list:
        """Directional derivative of every output: ``Σ_s ∂output/∂s · seeds[s]``.

        ``seeds`` maps symbol nodes to tangent nodes.
        """
        mask = self.mask(seeds)
        tangent = dict(seeds)
        for node in self.reachable(outputs, mask):
            if node in tangent:
                continue
            args = self.args[node]
            active = [i for i, a in enumerate(args) if self.deps[a] & mask]
            if not active:
                tangent[node] = self.zero
                continue
            if self.kind[node] == _ADD:
                tangent[node] = self.add(tangent[args[i]] for i in active)
                continue
            partials = self.partials(node, active)
            tangent[node] = self.add(self.mul((partials[i], tangent[args[i]])) for i in active)
        return [tangent.get(o, self.zero) if self.deps[o] & mask else self.zero for o in outputs]

    def gradient(self, output: int, wrt: Sequence[int]) -> list:
        """``∂output/∂w`` for each symbol node ``w`` of ``wrt`` (reverse mode)."""
        mask = self.mask(wrt)
        order = self.reachable([output], mask)
        contributions: dict = {output: [self.one]}
        adjoint: dict = {}
        for node in reversed(order):
            adjoint[node] = self.add(contributions.pop(node, ()))
            args = self.args[node]
            if adjoint[node] == self.zero or not args:
                continue
            active = [i for i, a in enumerate(args) if self.deps[a] & mask]
            partials = self.partials(node, active) if self.kind[node] != _ADD else None
            for i in active:
                term = adjoint[node] if partials is None else self.mul((adjoint[node], partials[i]))
                contributions.setdefault(args[i], []).append(term)
        return [adjoint.get(w, self.zero) for w in wrt]

    def jacobian(self, outputs: Sequence[int], wrt: Sequence[int]) -> list:
        """``J[a][l] = ∂outputs[a]/∂wrt[l]`` (forward mode, one pass per column)."""
        columns = [self.forward(outputs, {w: self.one}) for w in wrt]
        return [[columns[col][a] for col in range(len(wrt))] for a in range(len(outputs))]

    # ------------------------------------------------------------------
    # inspection

    def atoms(self, outputs: Iterable[int]) -> set:
        """The sympy function classes used by the nodes ``outputs`` need."""
        return {self.payload[n] for n in self.reachable(outputs) if self.kind[n] == _FN}

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
            elif kind == _SYM:
                bounds[n] = (1, 1)
            elif kind == _ADD:
                bounds[n] = (min(bounds[a][0] for a in args), max(bounds[a][1] for a in args))
            elif kind == _MUL:
                bounds[n] = (sum(bounds[a][0] for a in args), sum(bounds[a][1] for a in args))
            elif (
                kind == _POW
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
            if kind == _ADD:
                counts[n] = sum(counts[a] for a in args)
            elif kind == _MUL:
                counts[n] = math.prod(counts[a] for a in args)
            elif (
                kind == _POW
                and self.is_number(args[1])
                and self.payload[args[1]].is_Integer
                and 0 < self.payload[args[1]] <= 8
            ):
                counts[n] = counts[args[0]] ** int(self.payload[args[1]])
            elif kind == _POW:
                counts[n] = counts[args[0]] ** 2
            else:
                counts[n] = 1
            counts[n] = min(counts[n], 1e30)
        return counts[node]

    def evaluator(self, outputs: Sequence[int], symbols: Sequence[sympy.Symbol]):
        """A function of the values of ``symbols`` returning the outputs as floats (``math`` functions)."""
        order = self.reachable(outputs)
        position = {self.symbol(s): i for i, s in enumerate(symbols)}
        functions = {}
        for node in order:
            if self.kind[node] == _FN and self.payload[node] not in functions:
                func = self.payload[node]
                dummies = sympy.symbols(f"_a0:{len(self.args[node])}", real=True)
                functions[func] = sympy.lambdify(dummies, func(*dummies), modules="math")
        # (node, kind, data): kind is a node kind, "sym", "num" or the math function of an ``fn`` node; data
        # the position of a symbol among ``symbols``, a constant's value or the children.
        steps: list[tuple[int, Any, Any]] = []
        for node in order:
            kind, args = self.kind[node], self.args[node]
            if kind == _SYM:
                steps.append((node, "sym", position[node]))
            elif kind == _NUM:
                steps.append((node, "num", float(self.payload[node])))
            elif kind == _FN:
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
                elif kind == _ADD:
                    v[node] = math.fsum(v[a] for a in data)
                elif kind == _MUL:
                    product = 1.0
                    for a in data:
                        product *= v[a]
                    v[node] = product
                elif kind == _POW:
                    v[node] = v[data[0]] ** v[data[1]]
                else:
                    v[node] = kind(*(v[a] for a in data))
            return [v[o] for o in outputs]

        return evaluate
