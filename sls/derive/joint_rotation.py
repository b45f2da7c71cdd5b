"""A revolute joint's whole rotation ``R = R_o R_q`` as nine graph nodes, when turning vectors by it is cheaper.

:mod:`sls.derive.rigid_body` turns a vector from a body's frame to its parent's by the constant ``R_o``
(a matrix of numbers) after the joint's rotation ``R_q`` about a coordinate axis (two components, four
multiplications). Where ``R_o`` is not axis-aligned — ``<origin rpy="1.5708 0 0">`` is a quarter turn off
by ``3.7e-6``, so all nine entries are numbers — each vector costs 21 operations one way and 15 through the
product ``R`` formed once per joint (its two turning columns ``c R_o e_i + s R_o e_j``, 18 operations).
The recursions turn many vectors per joint (velocities, accelerations and forces, the composite inertia's
seven, the mass matrix's forces on their way to the root), so :func:`premultiplied` forms ``R`` when
:data:`TURNS_PER_JOINT` vectors pay for it; an axis-aligned ``R_o`` keeps the two steps (their count is
already the lowest).

Operations are counted as the printed code evaluates them: a product by a number ``±1`` is free, every
other product and every sum of two terms is one.
"""

from __future__ import annotations

from collections.abc import Sequence

from sls.algebra.graph import Graph
from sls.derive.tree_bodies import constant

#: The fewest vectors a joint's transform turns in the recursions (velocity and acceleration down, force and
#: moment up, the composite inertia's three columns, three rows and first moment): what forming ``R`` must
#: pay for.
TURNS_PER_JOINT = 8


def _terms(row: Sequence[bool], units: Sequence[bool]) -> int:
    """Operations of one row of a matrix-vector product: a product per non-unit entry, sums between terms."""
    count = sum(row)
    return sum(nonzero and not unit for nonzero, unit in zip(row, units)) + max(count - 1, 0)


def _saving(rotation: Sequence[Sequence[float]], k: int) -> tuple[int, int]:
    """``(operations saved per vector turned, operations forming R)`` for a joint about axis ``k``."""
    i, j = (k + 1) % 3, (k + 2) % 3
    nonzero = [[constant(a) != 0 for a in row] for row in rotation]
    unit = [[abs(constant(a)) == 1 for a in row] for row in rotation]
    two_steps = sum(_terms(nonzero[r], unit[r]) for r in range(3)) + 6  # R_o v, then 4 products and 2 sums
    mixed = [nonzero[r][i] or nonzero[r][j] for r in range(3)]
    product_rows = []
    for r in range(3):
        row = [False] * 3
        row[i] = row[j] = mixed[r]
        row[k] = nonzero[r][k]
        product_units = [False] * 3
        product_units[k] = unit[r][k]
        product_rows.append(_terms(row, product_units))
    forming = 0
    for r in range(3):
        both = nonzero[r][i] and nonzero[r][j]
        single = (nonzero[r][i] and not unit[r][i]) or (nonzero[r][j] and not unit[r][j])
        forming += 2 * (3 if both else 1 if single else 0)  # the entry's cos and sin columns
    return two_steps - sum(product_rows), forming


def premultiplied(
    g: Graph, rotation: Sequence[Sequence[float]], axis: Sequence[float], c: int, s: int
) -> list[list[int]] | None:
    """``R = R_o R_q`` (3 × 3 nodes) of a revolute joint about a coordinate ``axis`` (``±e_k``) at the nodes
    ``c = cos q``, ``s = sin q``; ``None`` when turning :data:`TURNS_PER_JOINT` vectors by ``R_o`` and then
    ``R_q`` costs no more than forming ``R`` and turning them by it.

    ``R_q`` turns ``e_i`` to ``c e_i + s e_j`` and ``e_j`` to ``−s e_i + c e_j`` (``i, j = k+1, k+2``; ``s``
    negated for ``−e_k``), as :class:`sls.derive.rigid_body.AxisJoint` does.
    """
    k = next(index for index, a in enumerate(axis) if constant(a) != 0)
    saved, forming = _saving(rotation, k)
    if TURNS_PER_JOINT * saved <= forming:
        return None
    if constant(axis[k]) < 0:
        s = g.neg(s)
    i, j = (k + 1) % 3, (k + 2) % 3

    def num(value: float) -> int:
        return g.number(constant(value))

    R: list[list[int]] = [[g.zero] * 3 for _ in range(3)]
    for r, row in enumerate(rotation):
        R[r][i] = g.add((g.mul((num(row[i]), c)), g.mul((num(row[j]), s))))
        R[r][j] = g.sub(g.mul((num(row[j]), c)), g.mul((num(row[i]), s)))
        R[r][k] = num(row[k])
    return R


def turn(g: Graph, R: Sequence[Sequence[int]], v: Sequence[int]) -> list[int]:
    """``R v`` for a matrix of nodes ``R``."""
    return [g.add([g.mul((R[r][col], v[col])) for col in range(3)]) for r in range(3)]


def turn_back(g: Graph, R: Sequence[Sequence[int]], v: Sequence[int]) -> list[int]:
    """``Rᵀ v`` for a matrix of nodes ``R``."""
    return [g.add([g.mul((R[r][col], v[r])) for r in range(3)]) for col in range(3)]
