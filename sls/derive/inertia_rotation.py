"""A symmetric 3 × 3 matrix of graph nodes turned by a joint, ``R S Rᵀ``, from its six entries.

The composite-rigid-body recursion turns every body's composite inertia into its parent's frame by
``R = R_o R_q`` (:mod:`sls.derive.rigid_body`). Turning it as three columns and then three rows (six
vectors) costs about 36 operations per factor; from the six entries of the upper triangle:

* ``R_q``, a turn about the coordinate axis ``e_k`` (``c = cos q``, ``s = sin q``, ``i, j = k+1, k+2``):
  ``S'_kk = S_kk``, the pair ``(S_ik, S_jk)`` turns as a vector (6 operations), and with ``u = S_ii − S_jj``,
  ``t = s² u + 2cs S_ij``: ``S'_ii = S_ii − t``, ``S'_jj = S_jj + t``, ``S'_ij = cs u + (c² − s²) S_ij``
  (9 operations; ``s²``, ``cs``, ``2cs`` and ``c² − s²`` formed once per joint);
* the constant ``R_o`` (numbers): every entry a sum over the six of ``S`` with constant coefficients,
  ``(R S Rᵀ)_ab = Σ_{c≤d} (R_ac R_bd + R_ad R_bc [c≠d]) S_cd``, whose zero coefficients fold (an axis-aligned
  ``R_o`` costs nothing, a quarter turn off by ``1e-6`` two operations an entry on its turned plane).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from sls.algebra.graph import Graph
from sls.derive.tree_bodies import constant

#: The upper triangle's entries ``(a, b)``, ``a ≤ b``, in the order the six are listed.
UPPER = ((0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2))


def upper(S: Sequence[Sequence[int]]) -> dict:
    """``{(a, b): node}`` for ``a ≤ b`` of a symmetric 3 × 3 matrix of nodes (its upper triangle read)."""
    return {(a, b): S[a][b] for a, b in UPPER}


def full(entries: dict) -> list:
    """The 3 × 3 matrix (rows of nodes) of the upper-triangle ``entries``."""
    return [[entries[min(a, b), max(a, b)] for b in range(3)] for a in range(3)]


class AxisTurn:
    """The per-joint products of a turn about ``±e_k`` by ``q`` (nodes ``c = cos q``, ``s = sin q``)."""

    def __init__(self, g: Graph, k: int, c: int, s: int, negative: bool) -> None:
        self.g, self.k = g, k
        self.c, self.s, self.negative = c, s, negative  # −s on the products: no node −s per joint
        self._products: tuple | None = None

    def products(self) -> tuple:
        """``(s², cs, 2cs, c² − s²)``, formed on first use."""
        if self._products is None:
            g, c, s = self.g, self.c, self.s
            s2 = g.mul((s, s))
            cs = g.mul((c, s))
            self._products = (s2, cs, g.mul((g.number(2), cs)), g.sub(g.mul((c, c)), s2))
        return self._products

    def symmetric(self, S: dict) -> dict:
        """``R_q S R_qᵀ`` of the upper triangle ``S`` (``{(a, b): node}``, ``a ≤ b``)."""
        g, k, c, s = self.g, self.k, self.c, self.s
        i, j = (k + 1) % 3, (k + 2) % 3

        def at(a: int, b: int) -> int:
            return S[min(a, b), max(a, b)]

        s2, cs, two_cs, c2 = self.products()

        def signed(node: int) -> int:
            return g.neg(node) if self.negative else node

        u = g.sub(at(i, i), at(j, j))
        t = g.add((g.mul((s2, u)), signed(g.mul((two_cs, at(i, j))))))
        out = {
            (k, k): at(k, k),
            (i, i): g.sub(at(i, i), t),
            (j, j): g.add((at(j, j), t)),
        }
        out[min(i, j), max(i, j)] = g.add((signed(g.mul((cs, u))), g.mul((c2, at(i, j)))))
        ik = g.sub(g.mul((c, at(i, k))), signed(g.mul((s, at(j, k)))))
        jk = g.add((signed(g.mul((s, at(i, k)))), g.mul((c, at(j, k)))))
        out[min(i, k), max(i, k)] = ik
        out[min(j, k), max(j, k)] = jk
        return out


def constant_symmetric(g: Graph, R: Sequence[Sequence[float]], S: dict) -> dict:
    """``R S Rᵀ`` for a constant ``R`` (numbers) of the upper triangle ``S`` (``{(a, b): node}``, ``a ≤ b``)."""
    out = {}
    for a, b in UPPER:
        terms = []
        for c, d in UPPER:
            coefficient = R[a][c] * R[b][d] + (R[a][d] * R[b][c] if c != d else 0.0)
            value = constant(coefficient)
            if value != 0:
                terms.append(g.mul((g.number(value), S[c, d])))
        out[a, b] = g.add(terms)
    return out


class Turning(Protocol):
    """What :func:`rotated` reads of a joint (:class:`sls.derive.rigid_body.AxisJoint` or ``QuaternionJoint``)."""

    revolute: bool
    body: Any
    vec: Any

    def to_parent(self, v: list) -> list: ...


def symmetric_times(g: Graph, S: Sequence[Sequence[int]], v: Sequence[int]) -> list:
    """``S v`` for a symmetric 3 × 3 matrix of nodes (its upper triangle read)."""
    return [g.add([g.mul((S[min(a, b)][max(a, b)], v[b])) for b in range(3)]) for a in range(3)]


def rotated(joint: Turning, S: list) -> list:
    """``R S Rᵀ`` (``R = R_o R_q``, the joint's child-to-parent rotation) of a symmetric ``S`` (3 × 3 nodes, upper
    triangle read and valid): from the six entries where ``R_q`` is a turn about a coordinate axis (the joint's
    ``axis_turn``) or the identity (a prismatic joint), else as three columns and three rows turned."""
    turn = getattr(joint, "axis_turn", None)
    if turn is not None or (not joint.revolute and hasattr(joint, "axis_turn")):
        entries = upper(S) if turn is None else turn.symmetric(upper(S))
        return full(constant_symmetric(joint.vec.g, joint.body.rotation, entries))
    columns = [joint.to_parent([S[min(a, b)][max(a, b)] for a in range(3)]) for b in range(3)]  # R S, by columns
    rows_of_RS = [[columns[b][a] for b in range(3)] for a in range(3)]
    # (R S Rᵀ)[a][b] = Σ_k (R S)[a][k] R[b][k] = (R (R S)ᵀ)[b][a]: rotate the rows of R S as columns.
    turned = [joint.to_parent(rows_of_RS[a]) for a in range(3)]  # turned[a][b] = (R S Rᵀ)[b][a]
    return [[turned[b][a] for b in range(3)] for a in range(3)]
