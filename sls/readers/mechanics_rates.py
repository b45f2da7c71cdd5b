"""A sympy.physics.mechanics model as its object holds it (:class:`Written`), and its kinematic differential equations
solved for the rates, ``q̇ = S(q) u`` (:func:`speed_rates`): block by block, by forward substitution over
block-triangular blocks (:mod:`sls.model.kinematics`), each coefficient simplified within bounds
(:func:`sls.algebra.bounded.bounded`); the speeds put in the coordinates' order when each rate is one speed
(:func:`speeds_as_rates`). :mod:`sls.readers.mechanics_terms` builds the model's terms on them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import sympy

from sls.algebra.bounded import bounded
from sls.errors import ModelError
from sls.model.kinematics import blocks, square_inverse, triangular_blocks

ZERO = sympy.Integer(0)


@dataclass(frozen=True)
class Written:
    """A sympy.physics.mechanics model as its object holds it (functions of time and vectors).

    ``kind`` names the object in messages. ``q`` (n_q) are the coordinates ``q(t)``; ``u`` (n_v ≤ n_q) the speeds
    ``u(t)``, or the rates ``q(t).diff(t)`` when ``kdes`` is ``None`` (the speeds are the rates). ``kdes`` are the
    kinematic differential equations (expressions equal to zero, linear in ``q̇`` and ``u``). ``bodies`` are its
    ``RigidBody`` and ``Particle`` objects, ``loads`` its ``(Point, force)`` and ``(ReferenceFrame, torque)``
    pairs, ``potential`` the potential energies written on it, ``lagrangian`` its Lagrangian (``None``: ``T`` from
    the bodies). ``holonomic`` are configuration constraints in ``q``; ``velocity`` velocity constraints (in ``q``,
    ``q̇``, ``u``), which list the time derivatives of the holonomic ones when ``velocity_lists_holonomic``.
    ``auxiliary`` speeds are set to zero. ``fixed_points`` are points known to be at rest in ``frame``.
    """

    kind: str
    frame: Any
    q: tuple
    u: tuple
    kdes: tuple | None
    bodies: tuple
    loads: tuple
    potential: sympy.Expr
    lagrangian: sympy.Expr | None
    holonomic: tuple
    velocity: tuple
    velocity_lists_holonomic: bool
    auxiliary: tuple
    fixed_points: tuple
    time: sympy.Symbol


def speed_rates(written: Written, simplify: bool = True) -> dict:
    """``{q̇_k: S_k(q) u}``: the kinematic differential equations solved for the rates (functions of time),
    block by block, each coefficient tidied when ``simplify``.

    Raises :class:`ModelError` (one line) when they are not linear in ``q̇`` and ``u`` or cannot be solved for q̇.
    """
    t = written.time
    qdots = [qk.diff(t) for qk in written.q]
    if written.kdes is None:
        return dict(zip(qdots, qdots))
    kind = written.kind
    equations = sympy.Matrix(list(written.kdes))
    if len(equations) != len(qdots):
        raise ModelError(
            f"{kind}: {len(equations)} kinematic differential equations for {len(qdots)} coordinates; give one each"
        )
    speeds = sympy.Matrix(list(written.u))
    K = equations.jacobian(qdots)
    K_u = equations.jacobian(speeds)
    rest = equations.xreplace({s: ZERO for s in [*qdots, *written.u]})
    moving = set(qdots) | set(written.u)
    if any(e.has(*moving) for e in (*K, *K_u)):
        raise ModelError(f"{kind}: the kinematic differential equations must be linear in the rates q̇ and the speeds")
    solved = [ZERO] * len(qdots)
    pattern = tuple(tuple(row) for row in K.tolist())
    for rows, columns in blocks(pattern):
        unsolvable = ModelError(
            f"{kind}: the kinematic differential equations {', '.join(str(k) for k in rows)} (from 0) cannot be "
            f"solved for the rates of {', '.join(str(written.q[k]) for k in columns) or 'any coordinate'}"
        )
        if len(rows) != len(columns):
            raise unsolvable
        try:
            parts = triangular_blocks(pattern, rows, columns)
        except ValueError:
            raise unsolvable from None
        for part_rows, part_columns in parts:  # forward substitution over the irreducible blocks
            if len(part_rows) != len(part_columns):
                raise unsolvable
            right = -(K_u.extract(part_rows, list(range(len(written.u)))) * speeds + rest.extract(part_rows, [0]))
            for k in part_rows:
                for column in sorted(set(range(len(qdots))) - set(part_columns)):
                    if K[k, column] != 0:
                        right[part_rows.index(k), 0] -= K[k, column] * solved[column]
            block = K.extract(part_rows, part_columns)
            if block == sympy.eye(len(part_rows)):
                values = list(right)
            else:
                try:
                    inverse = square_inverse(block)
                except ValueError:
                    raise unsolvable from None
                values = list(inverse * right)
            for column, value in zip(part_columns, values):
                solved[column] = _collect(bounded(sympy.expand, value), written.u) if simplify else value
    return dict(zip(qdots, solved))


def _collect(expr: sympy.Expr, speeds: tuple) -> sympy.Expr:
    """``expr`` (linear in ``speeds``) as ``Σ tidy(coefficient) · speed`` plus a tidied speed-free part."""
    terms = sympy.collect(expr, list(speeds), evaluate=False)
    return sympy.Add(*(_tidy(coefficient) * speed for speed, coefficient in terms.items()))


#: Largest expression (``sympy.count_ops``) :func:`tidy_in_speeds` expands, and largest coefficient :func:`_tidy`
#: simplifies: beyond them simplification costs minutes (a bicycle's inertia forces) and they are left as they are.
TIDY_LIMIT = 400
COEFFICIENT_LIMIT = 60


def tidy_in_speeds(expr: sympy.Expr, speeds: tuple) -> sympy.Expr:
    """``expr``, a polynomial in the (plain) ``speeds``, with each coefficient tidied (unchanged if not one, or
    larger than :data:`TIDY_LIMIT`, or when tidying takes longer than :func:`sls.algebra.bounded.bounded` allows)."""
    if expr == 0:
        return expr
    return bounded(lambda e: _tidy_polynomial(e, speeds), expr, TIDY_LIMIT)


def _tidy_polynomial(expr: sympy.Expr, speeds: tuple) -> sympy.Expr:
    if not expr.free_symbols & set(speeds):
        return _tidy(expr)
    try:
        polynomial = sympy.Poly(sympy.expand(expr), *speeds)
    except sympy.PolynomialError:
        return expr
    return sympy.Add(
        *(
            _tidy(coefficient) * sympy.Mul(*(s**k for s, k in zip(speeds, powers)))
            for powers, coefficient in polynomial.as_dict(native=False).items()
        )
    )


def _tidy(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` simplified cheaply: rational functions cancelled, then (up to :data:`COEFFICIENT_LIMIT`
    operations) trigonometric identities; unchanged when simplifying does not make it shorter. Every step is
    bounded (:func:`sls.algebra.bounded.bounded`): past the bounds the expression is kept as it is."""
    if expr.is_number:
        return expr
    size = sympy.count_ops(expr)
    if size > COEFFICIENT_LIMIT:
        cancelled = bounded(lambda e: sympy.cancel(sympy.together(e)), expr)
        return cancelled if sympy.count_ops(cancelled) <= size else expr
    tidied = bounded(lambda e: sympy.trigsimp(sympy.cancel(sympy.together(e))), expr)
    return tidied if sympy.count_ops(tidied) <= size else expr


def speeds_as_rates(written: Written, rates: dict) -> Written:
    """``written`` with its speeds in the order of the coordinates when each coordinate's rate is one speed
    (``q̇_k = u_j``, as a bicycle's coordinates with its independent speeds listed first): the model is then
    written in the rates (no kinematics), whose derivation is the classic one."""
    if written.kdes is None or len(written.u) != len(written.q):
        return written
    order = [rates[qk.diff(written.time)] for qk in written.q]
    if tuple(order) == tuple(written.u) or set(order) != set(written.u):
        return written
    return replace(written, u=tuple(order))
