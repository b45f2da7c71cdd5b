"""Each body's frame turned about its own joint axis so that the joint transforms are sparse (:func:`spun`).

A revolute joint about a coordinate axis turns a vector by its constant ``R_o`` (the ``<origin rpy>``, fixed
joints above it composed in) and by ``R_q`` about its axis. Where ``R_o`` is nearly but not exactly
axis-aligned — ``rpy="1.5708 0 0"`` is a quarter turn off by ``3.7e-6`` — all nine entries of ``R_o`` are
numbers and every vector turned costs 15 operations (:mod:`sls.derive.joint_rotation`) where an axis-aligned
one costs 6. Yet any rotation is a product of three turns about coordinate axes,
``R_o = R(e_a, φ₁) R(e_m, α) R(e_k, φ₂)`` with ``e_a`` the parent's joint axis and ``e_k`` the child's
(``m ≠ a, k``): the last turn commutes with ``R_q`` (a constant added to the joint's angle, the body's
``angle``) and the first is a turn of the parent's frame about its own axis — the parent's *spin* ``ψ``,
which changes nothing physical (its mass, first moment, inertia, its children's offsets and the placements
of its links are turned with it). With the parent spun by ``ψ = φ₁`` the child's constant transform is
``R(e_m, α)``: one turn about a coordinate axis, a vector costs 6 + 6 operations.

A body has one spin and may have several children: it is spun for the child whose subtree is largest among
those whose ``R_o`` is split (the transforms the mass matrix carries the most columns through); its other
children keep ``D_Pᵀ R_o`` (``D_P`` the parent's spin). Spinning also turns the parent's offsets and inertia,
which may then cost more than the split saves (an oblique ``R_o`` on a body with several children): the
frames are spun only where the count of operations says so (:func:`spun`), else left as they are. Only
revolute joints about a coordinate axis are spun or have their transform split; the physics (``M``, ``τ``,
energies, the frames' poses) is the same to rounding.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import sympy

from sls.algebra.graph import Graph
from sls.derive import tree_bodies
from sls.derive.body_slides import slid
from sls.derive.rigid_body import TreeDynamics
from sls.derive.tree_bodies import REVOLUTE
from sls.model.tree import BALL, FREE

if TYPE_CHECKING:
    from sls.model.tree import Robot

#: A decomposition is used only when its turns give ``R_o`` back to this accuracy.
TOLERANCE = 1e-12


def _turn(k: int, angle: float) -> tuple:
    """``R(e_k, angle)``: ``e_i → c e_i + s e_j``, ``e_j → −s e_i + c e_j`` (``i, j = k+1, k+2``); exact for 0."""
    c, s = (1.0, 0.0) if angle == 0.0 else (math.cos(angle), math.sin(angle))
    i, j = (k + 1) % 3, (k + 2) % 3
    R = [[0.0] * 3 for _ in range(3)]
    R[k][k] = 1.0
    R[i][i], R[j][i], R[i][j], R[j][j] = c, s, -s, c
    return tuple(tuple(row) for row in R)


def _mul(A: Sequence, B: Sequence) -> tuple:
    return tuple(tuple(sum(A[i][k] * B[k][j] for k in range(3)) for j in range(3)) for i in range(3))


def _t(A: Sequence) -> tuple:
    return tuple(tuple(A[j][i] for j in range(3)) for i in range(3))


def _tvec(A: Sequence, v: Sequence) -> tuple:
    """``Aᵀ v``."""
    return tuple(sum(A[k][i] * v[k] for k in range(3)) for i in range(3))


#: Numbers (entries not within 1e-14 of 0) from which an ``R_o`` is dense: one turn about a coordinate axis
#: has 5, and splitting it saves the least.
DENSE = 7


def _count(R: Sequence) -> int:
    """The entries of ``R`` that are not (within 1e-14) zero."""
    return sum(abs(x) > 1e-14 for row in R for x in row)


def _aligned(R: Sequence) -> bool:
    """True when every entry of ``R`` is (within 1e-14) 0 or ±1."""
    return all(min(abs(x), abs(abs(x) - 1.0)) <= 1e-14 for row in R for x in row)


def decompose(R: Sequence, a: int, k: int) -> tuple | None:
    """``(φ₁, m, α, φ₂)`` with ``R = R(e_a, φ₁) R(e_m, α) R(e_k, φ₂)`` (``m ≠ a, k``), or ``None``."""
    for m in [i for i in range(3) if i not in (a, k)]:
        u = [R[r][k] for r in range(3)]  # R e_k = R(e_a, φ₁) R(e_m, α) e_k, which has no e_m part after R(e_a, −φ₁)
        i, j = (a + 1) % 3, (a + 2) % 3
        theta = math.atan2(u[i], u[j]) if m == i else math.atan2(-u[j], u[i])
        if math.hypot(u[i], u[j]) < TOLERANCE:
            theta = 0.0
        w = _tvec(_turn(a, -theta), u)  # R(e_a, θ) u with θ = −φ₁ ... as rows: (R(e_a, −θ))ᵀ = R(e_a, θ)
        p, r = (m + 1) % 3, (m + 2) % 3
        alpha = math.atan2(w[r], w[p]) if k == p else math.atan2(-w[p], w[r])
        phi1 = -theta
        left = _mul(_turn(a, phi1), _turn(m, alpha))
        D = _mul(_t(left), R)
        i2, j2 = (k + 1) % 3, (k + 2) % 3
        phi2 = math.atan2(D[j2][i2], D[i2][i2])
        back = _mul(left, _turn(k, phi2))
        if max(abs(back[x][y] - R[x][y]) for x in range(3) for y in range(3)) <= TOLERANCE:
            return phi1, m, alpha, phi2
    return None


def _principal(axis: Sequence[float]) -> int | None:
    """The index of a coordinate axis ``±e_k`` (entries within 1e-14 of 0 and ±1), else ``None``."""
    big = [k for k, x in enumerate(axis) if abs(x) > 1e-14]
    return big[0] if len(big) == 1 and abs(abs(axis[big[0]]) - 1.0) <= 1e-14 else None


def bodies(robot: Robot) -> tuple:
    """The moving bodies of ``robot`` (:func:`sls.derive.tree_bodies.bodies`), their frames spun (:func:`spun`)."""
    return spun(tree_bodies.bodies(robot), tree_bodies.placements(robot), REVOLUTE)[0]


def placements(robot: Robot) -> dict:
    """Every link's place on its body (:func:`sls.derive.tree_bodies.placements`) in the frames of :func:`bodies`."""
    return spun(tree_bodies.bodies(robot), tree_bodies.placements(robot), REVOLUTE)[1]


def spun(bodies: Sequence, placements: dict, revolute: Sequence[str]) -> tuple:
    """``(bodies, placements)`` with frames spun (see the module docstring) where that makes the mass matrix and
    the bias forces take fewer operations (:func:`operations`: the frames as given, spun for the dense ``R_o``
    alone, or for every one not axis-aligned, whichever is least, the first of equals); ``bodies`` in tree order
    (parents first, :class:`~sls.derive.tree_bodies.Body`), ``placements`` as
    :func:`~sls.derive.tree_bodies.placements`, ``revolute`` the joint kinds that turn."""
    chosen, fewest = (tuple(bodies), placements), -1
    for least in (DENSE, 1):
        variant = _spin(bodies, placements, revolute, least)
        if variant[0] == chosen[0]:
            continue
        if fewest < 0:
            fewest = operations(chosen[0])
        count = operations(variant[0])
        if count < fewest:
            chosen, fewest = variant, count
    axes = [_principal(b.axis) if b.kind in revolute else None for b in chosen[0]]
    variant = slid(chosen[0], chosen[1], axes)
    if variant[0] != chosen[0]:
        if fewest < 0:
            fewest = operations(chosen[0])
        if operations(variant[0]) < fewest:
            chosen = variant
    return chosen


def operations(bodies: Sequence) -> int:
    """Operations of ``M`` (upper triangle) and the bias forces ``τ(q, q̇, 0)`` of ``bodies`` on a graph of their
    own: what the frames are chosen by."""
    size = {FREE: (7, 6), BALL: (4, 3)}
    n_q = max(b.coordinate + size.get(b.kind, (1, 1))[0] for b in bodies)
    n = max(b.speed + size.get(b.kind, (1, 1))[1] for b in bodies)
    g = Graph()
    q = [g.symbol(sympy.Symbol(f"q{k}", real=True)) for k in range(n_q)]
    dq = [g.symbol(sympy.Symbol(f"v{k}", real=True)) for k in range(n)]
    tree = TreeDynamics(g, tuple(bodies), q, n)
    M = tree.mass_matrix()
    bias = tree.inverse_dynamics(dq, [g.zero] * n, g.symbol(sympy.Symbol("g", real=True)))
    return g.operation_count([e for k, row in enumerate(M) for e in row[k:]] + bias)


def _spin(bodies: Sequence, placements: dict, revolute: Sequence[str], least: int) -> tuple:
    """``(bodies, placements)`` spun for the ``R_o`` with at least ``least`` numbers (see :func:`spun`)."""
    n = len(bodies)
    axis = [_principal(b.axis) if b.kind in revolute else None for b in bodies]
    split: dict[int, tuple] = {}  # body → (φ₁, m, α, φ₂): its R_o split, its parent spun for it if favoured
    for c, body in enumerate(bodies):
        own, up = axis[c], axis[body.parent] if body.parent >= 0 else None
        if own is None or up is None or _aligned(body.rotation) or _count(body.rotation) < least:
            continue
        found = decompose(body.rotation, up, own)
        if found is not None:
            split[c] = found
    if not split:
        return tuple(bodies), placements
    size = [1] * n
    for c in reversed(range(n)):
        if bodies[c].parent >= 0:
            size[bodies[c].parent] += size[c]
    spin = [0.0] * n
    favoured: dict[int, int] = {}
    for c in split:  # tree order: the first of equal subtrees wins
        p = bodies[c].parent
        if p not in favoured or size[c] > size[favoured[p]]:
            favoured[p] = c
    for p, c in favoured.items():
        spin[p] = split[c][0]
    frames = [_turn(k, turn) if k is not None else _turn(0, 0.0) for k, turn in zip(axis, spin)]
    result = []
    for c, body in enumerate(bodies):
        p, D = body.parent, frames[c]
        D_p = frames[p] if p >= 0 else _turn(0, 0.0)
        if c in split and favoured.get(p) == c:
            _, m, alpha, phi2 = split[c]
            rotation, gamma = _turn(m, alpha), -phi2
        elif c in split:
            phi1, m, alpha, phi2 = split[c]
            up = axis[p]
            assert up is not None  # a split body's parent turns about a coordinate axis
            rotation, gamma = _mul(_turn(up, phi1 - spin[p]), _turn(m, alpha)), -phi2
        else:
            gamma = 0.0  # D_Pᵀ R_o: the body's own spin is its angle's shift
            rotation = body.rotation if p < 0 or spin[p] == 0.0 else _mul(_t(D_p), body.rotation)
        beta = spin[c] - gamma  # R(e_k, β) after R(e_k, ±q): the joint's angle shifted by ±β
        sign = 1.0 if axis[c] is None or body.axis[axis[c]] > 0 else -1.0
        result.append(
            replace(
                body,
                rotation=rotation,
                offset=_tvec(D_p, body.offset) if p >= 0 else body.offset,
                moment=_tvec(D, body.moment),
                inertia=_mul(_mul(_t(D), body.inertia), D),
                angle=sign * beta if axis[c] is not None else 0.0,
            )
        )
    moved = {
        link: (b, _mul(_t(frames[b]), R), _tvec(frames[b], t)) if b >= 0 else (b, R, t)
        for link, (b, R, t) in placements.items()
    }
    return tuple(result), moved
