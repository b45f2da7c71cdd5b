"""Restructuring passes over the expression graph: the same values with less arithmetic
(:class:`GraphPasses`, part of :class:`~sls.algebra.graph.Graph`).

:meth:`~GraphPasses.share_sums` makes sums that share terms share their partial sums;
:meth:`~GraphPasses.collect_rates` and :meth:`~GraphPasses.collect_products` regroup a kinetic energy's
velocity sums the way a recursive formulation writes them; :meth:`~GraphPasses.operation_count` measures
the result.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import combinations

import sympy

from sls.algebra.graph_nodes import ADD, MUL, POW, GraphNodes


class GraphPasses(GraphNodes):
    """Passes rebuilding a set of roots with their values unchanged (only the grouping of the arithmetic)."""

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
        items = {n: list(self.args[n]) for n in order if self.kind[n] == ADD and len(self.args[n]) > 2}
        pairs = merge_pairs(items)
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
            elif kind == ADD:
                rebuilt[node] = self.add([rebuilt[a] for a in args])
            elif kind == MUL:
                rebuilt[node] = self.mul([rebuilt[a] for a in args])
            elif kind == POW:
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
            if self.kind[term] != MUL:
                return None
            factors = self.args[term]
            with_rates = [f for f in factors if self.deps[f] & rate_mask]
            if len(with_rates) != 1 or with_rates[0] not in rate_set:
                return None
            rest = [f for f in factors if f != with_rates[0]]
            sums = [f for f in rest if self.kind[f] == ADD]
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
            if kind == ADD and self.deps[node] & rate_mask:
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
            factors = list(self.args[term]) if self.kind[term] == MUL else [term]
            sums = [f for f in factors if self.kind[f] == ADD and self.deps[f] & rate_mask and f not in rate_set]
            whole = split(factors)
            if len(sums) != 1:
                return None if whole is None else [whole]
            others = [f for f in factors if f != sums[0]]
            found = []
            for t in self.args[sums[0]]:
                inner = list(self.args[t]) if self.kind[t] == MUL else [t]
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
            if kind == ADD and self.deps[node] & rate_mask:
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
        if kind == ADD:
            return self.add(args)
        if kind == MUL:
            return self.mul(args)
        if kind == POW:
            return self.pow(args[0], args[1])
        return self.function(self.payload[node], tuple(args))

    def operation_count(self, outputs: Iterable[int]) -> int:
        """Arithmetic operations evaluating ``outputs`` takes (an n-ary sum or product counts n − 1, a call 1)."""
        return sum(max(len(self.args[n]) - 1, 1) for n in self.reachable(outputs) if self.args[n])


def merge_pairs(items: dict) -> list:
    """Greedy pair merging for :meth:`GraphPasses.share_sums`: ``items`` (a sum's node → its terms, more than two)
    rewritten in place, the pair of terms found in the most sums replaced by a virtual node ``("pair", k)`` while
    some pair occurs in two sums or more; returns the pairs (``pairs[k]``: the two items pair ``k`` adds)."""
    pairs: list = []
    while True:
        counts: Counter = Counter()
        uniques = {key: sorted(set(terms), key=repr) for key, terms in items.items()}
        for unique in uniques.values():
            counts.update(combinations(unique, 2))
        best = [(pair, c) for pair, c in counts.most_common() if c >= 2]
        if not best:
            return pairs
        # the sums holding each repeated pair, in the order of ``items``: a sum only loses terms of the pairs
        # counted here (the names it gains are new), so only these can hold a pair when its turn comes
        holders: dict = {pair: [] for pair, _ in best}
        for key, unique in uniques.items():
            for pair in combinations(unique, 2):
                if pair in holders:
                    holders[pair].append(key)
        for (a, b), _ in best:
            _merge(items, holders[a, b], a, b, pairs)


def _merge(items: dict, holders: list, a: object, b: object, pairs: list) -> None:
    """The terms ``a`` and ``b`` replaced by one new pair in each of ``holders``' sums that still hold both and
    more (the pair appended to ``pairs`` at its first use)."""
    name = None
    for key in holders:
        terms = items[key]
        if len(terms) > 2 and a in terms and b in terms:
            if name is None:
                name = ("pair", len(pairs))
                pairs.append((a, b))
            terms.remove(a)
            terms.remove(b)
            terms.append(name)
