"""Differentiating the expression graph by the chain rule: forward mode (a directional derivative of many
outputs), reverse mode (the gradient of one output) and Jacobians (:class:`GraphCalculus`, part of
:class:`~sls.algebra.graph.Graph`).

Derivatives are new nodes built from existing ones, the way automatic-differentiation tools build
derivative graphs; their cost is proportional to the size of the graph, not to the size of the expanded
expressions.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sympy

from sls.algebra.graph_nodes import ADD, FN, MUL, POW, GraphNodes


class GraphCalculus(GraphNodes):
    """Derivatives of nodes, as nodes: :meth:`forward`, :meth:`gradient`, :meth:`jacobian`."""

    def __init__(self) -> None:
        super().__init__()
        #: per (sympy function, arity): the dummies and the function's partial derivatives in them
        self._partials: dict = {}
        #: per ``pow`` or ``fn`` node: its partial derivatives by child, as nodes
        self._node_partials: dict = {}

    def partials(self, node: int, active: Sequence[int] | None = None) -> dict:
        """``{i: ∂node/∂child_i}`` for the children ``active`` (default: all), as nodes."""
        kind, args = self.kind[node], self.args[node]
        if active is None:
            active = range(len(args))
        if kind == ADD:
            return {i: self.one for i in active}
        if kind == MUL:
            return {i: self.mul(args[:i] + args[i + 1 :]) for i in active}
        cached = self._node_partials.get(node)
        if cached is None:
            cached = self._node_partials[node] = dict(enumerate(self._local_partials(node)))
        return cached

    def _local_partials(self, node: int) -> list:
        kind, args = self.kind[node], self.args[node]
        if kind == POW:
            base, exponent = args
            if self.is_number(exponent):
                e = self.payload[exponent]
                return [self.mul((exponent, self.pow(base, self.number(e - 1)))), self.zero]
            log_base = self.function(sympy.log, (base,))
            return [
                self.mul((exponent, self.pow(base, self.add((exponent, self.minus_one))))),
                self.mul((node, log_base)),
            ]
        if kind == FN:
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
            if self.kind[node] == ADD:
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
            partials = self.partials(node, active) if self.kind[node] != ADD else None
            for i in active:
                term = adjoint[node] if partials is None else self.mul((adjoint[node], partials[i]))
                contributions.setdefault(args[i], []).append(term)
        return [adjoint.get(w, self.zero) for w in wrt]

    def jacobian(self, outputs: Sequence[int], wrt: Sequence[int]) -> list:
        """``J[a][l] = ∂outputs[a]/∂wrt[l]`` (forward mode, one pass per column)."""
        columns = [self.forward(outputs, {w: self.one}) for w in wrt]
        return [[columns[col][a] for col in range(len(wrt))] for a in range(len(outputs))]
