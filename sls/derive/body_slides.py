"""Each body's origin slid along its own joint axis so that its children's offsets have fewer numbers (:func:`slid`).

A revolute joint turns its body about a line; any point of that line serves as the body's origin. Sliding the
origin of body ``B`` by ``δ`` along its axis ``e_k`` (a coordinate axis of ``B``'s frame) changes nothing
physical: the offset of every child ``C`` of ``B`` loses ``δ e_k`` (``t_C − δ e_k``), ``B``'s own offset in its
parent's frame gains ``δ R_o e_k`` (``R_q e_k = e_k``), its first moment becomes ``h − m δ e_k`` and its inertia
about the new origin ``I + (m |d|² − 2 h·d) 1 + h dᵀ + d hᵀ − m d dᵀ`` (``d = δ e_k``); the links carried by
``B`` move by ``−δ e_k`` in its frame. Every offset is crossed with forces and velocities in the recursions of
:mod:`sls.derive.rigid_body` (``p × f`` on the way up, ``ω × p`` and ``ω × (ω × p)`` on the way down, the
parallel-axis shift of the composite inertias), so a zero in it saves operations at every level above.

A body is slid by the ``k``-th component of one child's offset (that component then zero) where that leaves
fewer numbers in its own offset and its children's (offsets of bodies on the root count nothing: the root does
not move), leaves first, so a parent sees the offsets its children's slides left; :func:`sls.derive.body_frames.spun`
keeps the slides only where the count of operations drops.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

#: Entries within this of zero are zero (as :func:`sls.derive.tree_bodies.constant` folds them).
ZERO = 1e-14


def _numbers(v: Sequence[float]) -> int:
    return sum(abs(x) > ZERO for x in v)


def slid(bodies: Sequence, placements: dict, axes: Sequence[int | None]) -> tuple:
    """``(bodies, placements)`` with origins slid (module docstring); ``axes[b]`` is the index of body ``b``'s
    coordinate joint axis where it may slide (a revolute joint about ``±e_k``), else ``None``."""
    n = len(bodies)
    children: list[list[int]] = [[] for _ in range(n)]
    for c, body in enumerate(bodies):
        if body.parent >= 0:
            children[body.parent].append(c)
    offsets = [list(body.offset) for body in bodies]
    slide = [0.0] * n

    def cost(b: int, delta: float, k: int, along: Sequence[float]) -> int:
        own = [t + a * delta for t, a in zip(offsets[b], along)] if bodies[b].parent >= 0 else []
        moved = [[t - delta if i == k else t for i, t in enumerate(offsets[c])] for c in children[b]]
        return _numbers(own) + sum(map(_numbers, moved))

    for b in reversed(range(n)):
        k = axes[b]
        if k is None or not children[b]:
            continue
        along = [row[k] for row in bodies[b].rotation]  # R_o e_k, the slide in the parent's frame
        best, fewest = 0.0, cost(b, 0.0, k, along)
        for c in children[b]:
            delta = offsets[c][k]
            if abs(delta) > ZERO and (count := cost(b, delta, k, along)) < fewest:
                best, fewest = delta, count
        if best == 0.0:
            continue
        slide[b] = best
        offsets[b] = [t + a * best for t, a in zip(offsets[b], along)]
        for c in children[b]:
            offsets[c][k] -= best
    if not any(slide):
        return tuple(bodies), placements
    result = []
    for b, body in enumerate(bodies):
        k = axes[b]
        d = [0.0, 0.0, 0.0]
        if k is not None:
            d[k] = slide[b]
        m, h, inertia = body.mass, body.moment, body.inertia
        hd = sum(x * y for x, y in zip(h, d))
        dd = sum(x * x for x in d)
        moved = tuple(
            tuple(
                inertia[i][j] + ((m * dd - 2.0 * hd) if i == j else 0.0) + h[i] * d[j] + d[i] * h[j] - m * d[i] * d[j]
                for j in range(3)
            )
            for i in range(3)
        )
        result.append(
            replace(
                body,
                offset=tuple(offsets[b]),
                moment=tuple(x - m * y for x, y in zip(h, d)),
                inertia=moved if slide[b] else inertia,
            )
        )
    where = {}
    for link, (b, R, t) in placements.items():
        k = axes[b] if b >= 0 else None
        if k is not None and slide[b]:
            t = tuple(x - slide[b] if i == k else x for i, x in enumerate(t))
        where[link] = (b, R, t)
    return tuple(result), where
