"""The C target's quaternion free-flyer base: ``linearized_model`` in the tangent space, written out.

A robot whose root is a quaternion free-flyer (:mod:`sls.model.free_flyer`, Pinocchio's layout) has
``n_q = n + 1`` coordinates ``[p, quat (qx, qy, qz, qw), joints]`` and ``n`` speeds ``[v, ω (body frame),
joint rates]``: its state ``x = [q; v]`` has ``n_x = n_q + n`` entries. Its linearization lives in the
tangent space (``2n``), as the Python target's wrapper computes it (``templates/python/linearized_model.py.j2``)
and as ``pinocchio.computeABADerivatives`` does:

* the upper rows are ``[K(v), I]`` with ``K = −ad(v_base)/2`` on the base's 6 × 6 block
  (:func:`kinematic_rows`; ``_free_flyer.tangent_kinematics`` of the package);
* the lower rows are ``[∂v̇/∂q S(q), ∂v̇/∂v]``: every row over the ``n_x`` state columns mapped by
  :func:`tangent_row`, with ``S = ∂q̇/∂v`` block diagonal: ``R(quat)`` for the position, ``½ quat ⊗ (0, ·)``
  for the quaternion, the identity for the joints. The phased (tree route) programs map the right-hand sides
  ``−∂r/∂x`` before their solves (``2n + m`` columns, as a model without a quaternion), the others map the
  solved rows.

The entries of ``S`` are bound once per call (:func:`basis_lets`, locals ``_ff_*``: names starting with ``_``
are the generated code's), from the same formulas as the model's kinematics (the unit quaternion's ``R``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sls.lowering import Expr, Let, Value

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model

#: The free-flyer's coordinates (the model's first 7; its speeds are the first 6).
N_Q = 7
#: Locals of ``S``'s base block (:func:`basis_lets`): the rotation's entries, the quaternion's halves.
ROTATION = tuple(tuple(f"_ff_R{i}{k}" for k in range(3)) for i in range(3))
HALVES = ("_ff_hx", "_ff_hy", "_ff_hz", "_ff_hw")


@dataclass(frozen=True)
class FreeFlyer:
    """The C locals of a free-flyer base: its ``quaternion`` (``qx, qy, qz, qw``), ``linear`` and ``angular``
    velocity (``vx, vy, vz``, ``wx, wy, wz``), and the model's ``n_q`` coordinates and ``n`` speeds."""

    quaternion: tuple[str, ...]
    linear: tuple[str, ...]
    angular: tuple[str, ...]
    n_q: int
    n: int


def free_flyer(model: Model, names: dict) -> FreeFlyer | None:
    """The :class:`FreeFlyer` of ``model`` (C locals: ``names`` renames the user's names), or ``None`` when its
    root is no quaternion free-flyer."""
    tree = getattr(model, "tree", None)
    if tree is None or tree.free is None:
        return None
    local = [names.get(s.name, s.name) for s in model.state]
    speeds = local[model.n_q :]
    return FreeFlyer(tuple(local[3:7]), tuple(speeds[0:3]), tuple(speeds[3:6]), model.n_q, model.n)


def basis_lets(base: FreeFlyer) -> list[Let]:
    """The entries of ``S``'s base block as locals: ``R`` of the unit quaternion (base to world, as
    :func:`sls.model.free_flyer.rotation_matrix`) and the quaternion's halves (``½ quat ⊗ (0, ω)``)."""
    x, y, z, w = (Expr.name(name) for name in base.quaternion)

    def product(a: Expr, b: Expr) -> Expr:
        return Expr.join(a, "*", b)

    square = {"x": product(x, x), "y": product(y, y), "z": product(z, z)}
    entries = [
        [
            Expr.join("1.0 - 2.0*(", square["y"], " + ", square["z"], ")"),
            Expr.join("2.0*(", product(x, y), " - ", product(z, w), ")"),
            Expr.join("2.0*(", product(x, z), " + ", product(y, w), ")"),
        ],
        [
            Expr.join("2.0*(", product(x, y), " + ", product(z, w), ")"),
            Expr.join("1.0 - 2.0*(", square["x"], " + ", square["z"], ")"),
            Expr.join("2.0*(", product(y, z), " - ", product(x, w), ")"),
        ],
        [
            Expr.join("2.0*(", product(x, z), " - ", product(y, w), ")"),
            Expr.join("2.0*(", product(y, z), " + ", product(x, w), ")"),
            Expr.join("1.0 - 2.0*(", square["x"], " + ", square["y"], ")"),
        ],
    ]
    lets = [Let(name, entries[i][k]) for i, row in enumerate(ROTATION) for k, name in enumerate(row)]
    halves = [Let(name, Expr.join("0.5*", Expr.name(q))) for name, q in zip(HALVES, base.quaternion)]
    return lets + halves


def _basis() -> list[list[tuple[float, str]]]:
    """``S``'s base block by column (6): the ``(sign, local)`` entries of each of the 7 coordinate rows
    (``(0.0, "")`` for a zero)."""
    R = ROTATION
    hx, hy, hz, hw = HALVES
    columns: list[list[tuple[float, str]]] = []
    for c in range(3):  # ṗ = R v
        columns.append([(1.0, R[i][c]) for i in range(3)] + [(0.0, "")] * 4)
    quaternion = [  # q̇_quat = ½ quat ⊗ (0, ω): rows qx, qy, qz, qw; columns ωx, ωy, ωz
        [(1.0, hw), (-1.0, hz), (1.0, hy)],
        [(1.0, hz), (1.0, hw), (-1.0, hx)],
        [(-1.0, hy), (1.0, hx), (1.0, hw)],
        [(-1.0, hx), (-1.0, hy), (-1.0, hz)],
    ]
    for c in range(3):
        columns.append([(0.0, "")] * 3 + [quaternion[i][c] for i in range(4)])
    return columns


def _atom(value: Expr) -> Expr:
    """``value`` as a factor of a product: a name as it is, anything else in parentheses."""
    return value if value.is_name else Expr.join("(", value, ")")


def _sum(terms: Sequence[tuple[float, Value, str]]) -> Value:
    """``Σ sign·value·local`` over ``terms`` (sign ``±1``, or ``0.0`` for a zero of ``S``; zero values dropped),
    the constant ``0.0`` when nothing is left."""
    parts: list[str | Expr] = []
    for sign, value, local in terms:
        if sign == 0.0 or (isinstance(value, float) and value == 0.0):
            continue
        if isinstance(value, float):
            negative = (sign * value) < 0
            size = abs(value)
            product = Expr.name(local) if size == 1.0 else Expr.join(repr(size), "*", Expr.name(local))
        else:
            negative = sign < 0
            product = Expr.join(_atom(value), "*", Expr.name(local))
        parts += [(" - " if negative else " + ") if parts else ("-" if negative else ""), product]
    return Expr.join(*parts) if parts else 0.0


def tangent_row(row: Sequence[Value], base: FreeFlyer, sign: float = 1.0) -> list[Value]:
    """A row over the ``n_x`` state columns (``∂/∂q`` then ``∂/∂v``) as a row over the ``2n`` tangent columns:
    ``[sign·(row_q S), sign·row_v]`` (``sign`` ``±1``: ``−1`` for the right-hand sides ``−∂r/∂x``)."""
    n_q, n = base.n_q, base.n
    mapped: list[Value] = [
        _sum([(sign * s, row[k], local) for k, (s, local) in enumerate(column)]) for column in _basis()
    ]
    rest = [row[k] for k in range(N_Q, n_q)] + [row[n_q + k] for k in range(n)]
    return mapped + [_signed(value, sign) for value in rest]


def _signed(value: Value, sign: float) -> Value:
    """``sign·value`` (a zero constant of either sign as ``0.0``)."""
    if isinstance(value, float):
        return 0.0 if value == 0.0 else sign * value
    return value if sign > 0 else Expr.join("-", _atom(value))


def kinematic_rows(base: FreeFlyer) -> list[Value]:
    """The upper ``n`` rows of ``A`` (``n × 2n``, row-major): ``[K, I]`` with ``K = −ad(v_base)/2`` on the
    base's block, ``ad(v) = [[ω×, v×], [0, ω×]]`` (``_free_flyer.tangent_kinematics``)."""
    n = base.n
    rows: list[list[Value]] = [[1.0 if c == n + r else 0.0 for c in range(2 * n)] for r in range(n)]

    def half(sign: float, local: str) -> Expr:
        return Expr.join("0.5*" if sign > 0 else "-0.5*", Expr.name(local))

    for (top, left), (a, b, c) in (((0, 0), base.angular), ((0, 3), base.linear), ((3, 3), base.angular)):
        # −½ [u]× for u = (a, b, c)
        block: list[list[Value]] = [
            [0.0, half(1, c), half(-1, b)],
            [half(-1, c), 0.0, half(1, a)],
            [half(1, b), half(-1, a), 0.0],
        ]
        for i in range(3):
            for k in range(3):
                rows[top + i][left + k] = block[i][k]
    return [value for row in rows for value in row]
