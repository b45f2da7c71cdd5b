"""The C target's quaternion joints (a free-flyer base; several free joints, ball joints): ``linearized_model`` in
the tangent space, written out.

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
  ``∂r/∂x`` before their solves (``2n + m`` columns, as a model without a quaternion), the others map the
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

#: Locals of ``S``'s block of the first free joint (:func:`basis_lets`): the rotation's entries, the quaternion's
#: halves; the other quaternion joints' are named alike with the tag ``_ff<k>`` (k from 1).
ROTATION = tuple(tuple(f"_ff_R{i}{k}" for k in range(3)) for i in range(3))
HALVES = ("_ff_hx", "_ff_hy", "_ff_hz", "_ff_hw")


@dataclass(frozen=True)
class Block:
    """One joint's place in ``q`` and ``v`` (:attr:`sls.model.tree.Robot.slots`): ``kind`` (``free``, ``ball`` or a
    one-coordinate joint), its first coordinate ``q`` and speed ``v``; a quaternion joint's C locals: its
    ``quaternion`` (``qx, qy, qz, qw``), ``linear`` (a free joint's ``vx, vy, vz``) and ``angular`` (``wx, wy, wz``)
    speeds and the ``tag`` of its ``S`` locals."""

    kind: str
    q: int
    v: int
    quaternion: tuple[str, ...] = ()
    linear: tuple[str, ...] = ()
    angular: tuple[str, ...] = ()
    tag: str = ""

    @property
    def rotation(self) -> tuple:
        """The locals of ``R(quat)`` (a free joint's block of ``S``)."""
        return tuple(tuple(name.replace("_ff", self.tag, 1) for name in row) for row in ROTATION)

    @property
    def halves(self) -> tuple:
        """The locals of ``½ quat``."""
        return tuple(name.replace("_ff", self.tag, 1) for name in HALVES)


@dataclass(frozen=True)
class FreeFlyer:
    """The quaternion joints of a model in the C target: every joint's :class:`Block` in order (``blocks``), and the
    model's ``n_q`` coordinates and ``n`` speeds."""

    blocks: tuple[Block, ...]
    n_q: int
    n: int


def free_flyer(model: Model, names: dict) -> FreeFlyer | None:
    """The :class:`FreeFlyer` of ``model`` (C locals: ``names`` renames the user's names), or ``None`` when it has
    no quaternion joint."""
    tree = getattr(model, "tree", None)
    if tree is None or not tree.quaternions:
        return None
    local = [names.get(s.name, s.name) for s in model.state]
    speeds = local[model.n_q :]
    blocks, count = [], 0
    for slot in tree.slots:
        if slot.kind == "free":
            quaternion, linear = local[slot.q + 3 : slot.q + 7], speeds[slot.v : slot.v + 3]
            angular = speeds[slot.v + 3 : slot.v + 6]
        elif slot.kind == "ball":
            quaternion, linear, angular = local[slot.q : slot.q + 4], [], speeds[slot.v : slot.v + 3]
        else:
            blocks.append(Block(slot.kind, slot.q, slot.v))
            continue
        tag = "_ff" if count == 0 else f"_ff{count}"
        count += 1
        blocks.append(Block(slot.kind, slot.q, slot.v, tuple(quaternion), tuple(linear), tuple(angular), tag))
    return FreeFlyer(tuple(blocks), model.n_q, model.n)


def basis_lets(base: FreeFlyer) -> list[Let]:
    """The entries of ``S``'s quaternion blocks as locals: per free joint ``R`` of the unit quaternion (body to
    parent, as :func:`sls.model.free_flyer.rotation_matrix`), per free and ball joint the quaternion's halves
    (``½ quat ⊗ (0, ω)``)."""
    lets: list[Let] = []
    for block in base.blocks:
        if block.quaternion:
            lets += _block_lets(block)
    return lets


def _block_lets(block: Block) -> list[Let]:
    x, y, z, w = (Expr.name(name) for name in block.quaternion)

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
    lets = []
    if block.kind == "free":
        lets = [Let(name, entries[i][k]) for i, row in enumerate(block.rotation) for k, name in enumerate(row)]
    halves = [Let(name, Expr.join("0.5*", Expr.name(q))) for name, q in zip(block.halves, block.quaternion)]
    return lets + halves


def _basis(block: Block) -> list[list[tuple[float, str]]]:
    """``S``'s block of one quaternion joint by column (a free joint's 6, a ball joint's 3): the ``(sign, local)``
    entries of each of its coordinate rows (7 or 4; ``(0.0, "")`` for a zero)."""
    R = block.rotation
    hx, hy, hz, hw = block.halves
    quaternion = [  # q̇_quat = ½ quat ⊗ (0, ω): rows qx, qy, qz, qw; columns ωx, ωy, ωz
        [(1.0, hw), (-1.0, hz), (1.0, hy)],
        [(1.0, hz), (1.0, hw), (-1.0, hx)],
        [(-1.0, hy), (1.0, hx), (1.0, hw)],
        [(-1.0, hx), (-1.0, hy), (-1.0, hz)],
    ]
    if block.kind == "ball":
        return [[quaternion[i][c] for i in range(4)] for c in range(3)]
    columns: list[list[tuple[float, str]]] = []
    for c in range(3):  # ṗ = R v
        columns.append([(1.0, R[i][c]) for i in range(3)] + [(0.0, "")] * 4)
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
    ``[sign·(row_q S), sign·row_v]`` (``sign`` ``±1``)."""
    n_q, n = base.n_q, base.n
    mapped: list[Value] = []
    for block in base.blocks:
        if not block.quaternion:
            mapped.append(_signed(row[block.q], sign))
            continue
        mapped += [
            _sum([(sign * s, row[block.q + k], local) for k, (s, local) in enumerate(column)])
            for column in _basis(block)
        ]
    return mapped + [_signed(row[n_q + k], sign) for k in range(n)]


def _signed(value: Value, sign: float) -> Value:
    """``sign·value`` (a zero constant of either sign as ``0.0``)."""
    if isinstance(value, float):
        return 0.0 if value == 0.0 else sign * value
    return value if sign > 0 else Expr.join("-", _atom(value))


def kinematic_rows(base: FreeFlyer) -> list[Value]:
    """The upper ``n`` rows of ``A`` (``n × 2n``, row-major): ``[K, I]`` with ``K = −ad(v)/2`` on each free joint's
    block, ``ad(v) = [[ω×, v×], [0, ω×]]``, and ``−[ω]×/2`` on each ball joint's
    (``_free_flyer.tangent_kinematics``)."""
    n = base.n
    rows: list[list[Value]] = [[1.0 if c == n + r else 0.0 for c in range(2 * n)] for r in range(n)]

    def half(sign: float, local: str) -> Expr:
        return Expr.join("0.5*" if sign > 0 else "-0.5*", Expr.name(local))

    for block in base.blocks:
        places: tuple
        if block.kind == "free":
            places = (((0, 0), block.angular), ((0, 3), block.linear), ((3, 3), block.angular))
        elif block.kind == "ball":
            places = (((0, 0), block.angular),)
        else:
            continue
        for (top, left), (a, b, c) in places:
            # −½ [u]× for u = (a, b, c)
            cross: list[list[Value]] = [
                [0.0, half(1, c), half(-1, b)],
                [half(-1, c), 0.0, half(1, a)],
                [half(1, b), half(-1, a), 0.0],
            ]
            for i in range(3):
                for k in range(3):
                    rows[block.v + top + i][block.v + left + k] = cross[i][k]
    return [value for row in rows for value in row]
