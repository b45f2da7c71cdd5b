"""Kinematic equations ``q̇ = S(q) v``: the speed basis, its left inverse and its structure coefficients.

A model with *generalized speeds* (quasi-velocities) ``v`` (n_v of them) next to
its coordinates ``q`` (n_q ≥ n_v) gives one kinematic equation per coordinate,
``q̇_k = Σ_r S_kr(q) v_r``, linear in the speeds. The columns ``s_r`` of ``S``
are vector fields on the coordinates (the directions the speeds move ``q``);
everything the equations of motion need from them is built here:

* ``S`` (n_q, n_v): the coefficients, read off the kinematic equations
  (:func:`kinematic_matrix`, which refuses equations that are not of this form);
* ``W`` (n_v, n_q): a left inverse, ``W S = I`` (:func:`left_inverse`), computed
  block by block over the connected blocks of ``S``'s sparsity, so identity
  blocks stay identity and only small blocks are inverted; a connected block
  that is block-triangular (a chain whose speeds are absolute: each link's
  rates use its own and its parent's speeds) is solved by forward substitution
  over its irreducible blocks (:func:`triangular_blocks`);
* ``γ`` (n_v, n_v, n_v): the structure coefficients ``γ[j][a][b] = γ^j_ab`` with
  ``[s_a, s_b] = Σ_j γ^j_ab s_j`` (:func:`structure_coefficients`), where the Lie
  bracket of vector fields is ``[s_a, s_b] = (∂s_b/∂q) s_a − (∂s_a/∂q) s_b``
  (:func:`lie_bracket`); ``γ^j_ab = −γ^j_ba``. For ``v = q̇`` (``S = I``) all vanish.

When ``n_v < n_q`` the brackets must stay in the span of ``S`` (the speeds move
``q`` on a manifold of dimension n_v, as a unit quaternion's four coordinates
under three angular velocity components); otherwise the kinematics are
nonholonomic (a rolling constraint hidden in ``S``) and the speed-space
equations cannot be written from ``T(q, v)`` alone: refused with a
:class:`~sls.errors.ModelError`.

Every simplification is bounded (:func:`sls.algebra.bounded.bounded`): expressions
larger than :data:`SIMPLIFY_LIMIT` operations, or a simplification running longer
than :data:`SIMPLIFY_SECONDS` of CPU time, are kept exact and unsimplified, so a
large model costs longer code, never a derivation that does not finish.

Array conventions: nested tuples of sympy expressions, as :mod:`sls.derive`.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from sls.algebra.bounded import (
    bounded,
    cancelled,
    settled,
    tidy,
    vanishes_at_random_points,
)
from sls.algebra.calculus import diff
from sls.errors import ModelError, brief

ZERO = sympy.Integer(0)
ONE = sympy.Integer(1)


@dataclass(frozen=True)
class Kinematics:
    """The kinematic equations ``q̇ = S(q) v`` of a model, with what the dynamics need of them.

    ``q`` (n_q) and ``v`` (n_v) are the coordinate and speed symbols;
    ``rates`` (n_q) the kinematic equations as given (``q̇ = rates = S v``);
    ``S`` (n_q, n_v), ``W`` (n_v, n_q) with ``W S = I``, and ``structure``
    (n_v, n_v, n_v) with ``structure[j][a][b] = γ^j_ab`` (see the module
    docstring). Build it with :func:`kinematics`.
    """

    q: tuple
    v: tuple
    rates: tuple
    S: tuple
    W: tuple
    structure: tuple

    @property
    def n_q(self) -> int:
        """Number of coordinates."""
        return len(self.q)

    @property
    def n_v(self) -> int:
        """Number of speeds."""
        return len(self.v)

    @property
    def identity(self) -> bool:
        """``True`` when ``S`` is the identity (``v = q̇``, the classic case)."""
        return is_identity(self.S)

    @property
    def commuting(self) -> bool:
        """``True`` when every structure coefficient vanishes (no gyroscopic term from the speed basis)."""
        return all(g == 0 for plane in self.structure for row in plane for g in row)


def kinematics(rates: Sequence[sympy.Expr], q: Sequence[sympy.Symbol], v: Sequence[sympy.Symbol]) -> Kinematics:
    """Check the kinematic equations ``q̇_k = rates[k]`` and build :class:`Kinematics`.

    ``rates`` has one expression per coordinate ``q`` (n_q), each linear and
    homogeneous in the speeds ``v`` (n_v ≤ n_q) with coefficients that may
    depend on ``q`` and parameters. Raises :class:`~sls.errors.ModelError`
    (one line) for a wrong count, an entry nonlinear in the speeds or with a
    speed-free part, a speed in no equation, speeds that are not independent,
    or nonholonomic kinematics (see the module docstring).
    """
    return _kinematics(tuple(rates), tuple(q), tuple(v))


@functools.lru_cache(maxsize=16)
def _kinematics(rates: tuple, q: tuple, v: tuple) -> Kinematics:
    """:func:`kinematics`, remembered: a reader that checks the kinematics and the derivation that uses them ask
    for the same (a refusal is not remembered)."""
    S = kinematic_matrix(rates, q, v)
    W = left_inverse(S, q, v)
    return Kinematics(q=q, v=v, rates=rates, S=S, W=W, structure=structure_coefficients(S, W, q, v))


def identity_kinematics(q: Sequence[sympy.Symbol], v: Sequence[sympy.Symbol]) -> Kinematics:
    """``q̇ = v`` (``S = W = I``, no structure coefficients) without any symbolic work."""
    q, v = tuple(q), tuple(v)
    if len(q) != len(v):
        raise ModelError(f"kinematics: v = q̇ needs as many speeds as coordinates, got {len(v)} and {len(q)}")
    n = len(q)
    eye = tuple(tuple(ONE if i == j else ZERO for j in range(n)) for i in range(n))
    zeros = tuple(tuple(tuple(ZERO for _ in range(n)) for _ in range(n)) for _ in range(n))
    return Kinematics(q=q, v=v, rates=v, S=eye, W=eye, structure=zeros)


def is_identity(S: tuple) -> bool:
    """Whether the nested tuple ``S`` is a square identity matrix (entries exactly ``1`` and ``0``)."""
    return (
        len(S) > 0
        and all(len(row) == len(S) for row in S)
        and all(entry == (1 if i == j else 0) for i, row in enumerate(S) for j, entry in enumerate(row))
    )


def kinematic_matrix(rates: Sequence[sympy.Expr], q: Sequence[sympy.Symbol], v: Sequence[sympy.Symbol]) -> tuple:
    """``S`` (n_q, n_v) with ``rates[k] = Σ_r S[k][r] v_r``: the coefficients of the speeds.

    Raises :class:`~sls.errors.ModelError` when ``len(rates) != len(q)``,
    when there are more speeds than coordinates, when an entry is not linear
    and homogeneous in the speeds (a speed-free part, a product or a function
    of speeds), or when a speed appears in no equation.
    """
    names = ", ".join(s.name for s in q)
    if len(rates) != len(q):
        raise ModelError(
            f"kinematics: expected {len(q)} {'entry' if len(q) == 1 else 'entries'} "
            f"(one q̇ per coordinate {names}), got {len(rates)}"
        )
    if len(v) > len(q):
        raise ModelError(f"kinematics: {len(v)} speeds but only {len(q)} coordinates ({names}); need n_v ≤ n_q")
    speeds = set(v)
    at_rest = dict.fromkeys(v, ZERO)
    rows = []
    for k, rate in enumerate(rates):
        what = f"kinematics[{k}] (q̇ of {q[k].name})"
        rate = sympy.sympify(rate)
        rest = rate.xreplace(at_rest)
        if rest.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
            raise ModelError(f"{what} must be linear in the speeds: {brief(rate)}")
        if rest != 0 and sympy.expand(rest) != 0:
            raise ModelError(f"{what} must be linear in the speeds; it has a part without speeds: {brief(rest)}")
        row = tuple(diff(rate, s) if s in rate.free_symbols else ZERO for s in v)
        for coefficient, s in zip(row, v):
            moving = coefficient.free_symbols & speeds
            if moving and any(sympy.expand(diff(coefficient, t)) != 0 for t in moving):
                raise ModelError(f"{what} must be linear in the speeds; it is not in {s.name}: {brief(rate)}")
        rows.append(row)
    for r, s in enumerate(v):
        if all(row[r] == 0 for row in rows):
            raise ModelError(f"kinematics: the speed {s.name} appears in no kinematic equation")
    return tuple(rows)


def blocks(S: tuple) -> list[tuple[list[int], list[int]]]:
    """The connected blocks ``(rows, columns)`` of ``S``'s sparsity, ordered by their first row.

    Rows and columns are joined when the entry between them is not zero; a
    row of zeros (a coordinate no speed moves) is a block without columns.
    """
    n_q = len(S)
    n_v = len(S[0]) if n_q else 0
    parent = list(range(n_q + n_v))  # rows 0..n_q−1, then columns n_q..n_q+n_v−1

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for k in range(n_q):
        for r in range(n_v):
            if S[k][r] != 0:
                parent[root(n_q + r)] = root(k)
    found: dict[int, tuple[list[int], list[int]]] = {}
    for k in range(n_q):
        found.setdefault(root(k), ([], []))[0].append(k)
    for r in range(n_v):
        found[root(n_q + r)][1].append(r)
    return sorted(found.values(), key=lambda block: block[0][0])


def triangular_blocks(S: Sequence[Sequence[sympy.Expr]], rows: Sequence[int], columns: Sequence[int]) -> list:
    """The rows and columns of ``S[rows, columns]`` split into irreducible blocks ``(rows, columns)`` in an order in
    which the matrix is block lower-triangular: a block's rows are zero in every later block's columns.

    A maximum matching of the columns onto rows with nonzero entries comes first; rows that no matching can spare
    (reached from an unmatched row by alternating paths) and their columns form the tall part (the Dulmage–Mendelsohn
    horizontal tail: a quaternion's four rates of three speeds), one block per connected piece; the square rest is
    split into the strongly connected components of its matched columns, dependencies first. Raises ``ValueError``
    when a column cannot be matched (the speeds are structurally dependent). Only the sparsity is read.
    """
    rows, columns = list(rows), list(columns)
    nonzero = {k: [r for r in columns if S[k][r] != 0] for k in rows}
    by_column = {r: [k for k in rows if S[k][r] != 0] for r in columns}
    match: dict[int, int] = {}  # column -> its row
    taken: dict[int, int] = {}  # row -> its column

    def augment(column: int, seen: set) -> bool:  # Kuhn's augmenting path from an unmatched column
        for k in by_column[column]:
            if k not in seen:
                seen.add(k)
                if k not in taken or augment(taken[k], seen):
                    taken[k], match[column] = column, k
                    return True
        return False

    for r in columns:
        if not augment(r, set()):
            raise ValueError(f"column {r} cannot be matched")
    tail_rows = [k for k in rows if k not in taken]
    tail_columns: list[int] = []
    queue = list(tail_rows)
    while queue:  # alternating paths from the unmatched rows
        k = queue.pop(0)
        for r in nonzero[k]:
            if r not in tail_columns:
                tail_columns.append(r)
                if match[r] not in tail_rows:
                    tail_rows.append(match[r])
                    queue.append(match[r])
    tail = _connected(S, sorted(tail_rows), sorted(tail_columns))
    square = [r for r in columns if r not in tail_columns]
    edges = {r: [c for c in nonzero[match[r]] if c in square and c != r] for r in square}
    found = []
    for component in _strong_components(square, edges):
        component = sorted(component)
        found.append((sorted(match[r] for r in component), component))
    return tail + found


def _connected(S: Sequence[Sequence[sympy.Expr]], rows: list, columns: list) -> list:
    """The connected pieces ``(rows, columns)`` of ``S[rows, columns]``'s sparsity, by first row."""
    parent = {("r", k): ("r", k) for k in rows} | {("c", r): ("c", r) for r in columns}

    def root(node: tuple) -> tuple:
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    for k in rows:
        for r in columns:
            if S[k][r] != 0:
                parent[root(("c", r))] = root(("r", k))
    pieces: dict = {}
    for k in rows:
        pieces.setdefault(root(("r", k)), ([], []))[0].append(k)
    for r in columns:
        pieces.setdefault(root(("c", r)), ([], []))[1].append(r)
    return sorted(pieces.values(), key=lambda piece: piece[0][0] if piece[0] else -1)


def _strong_components(nodes: list, edges: dict) -> list:
    """Tarjan's strongly connected components of ``nodes`` under ``edges``, each after those it reaches."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on_stack: set = set()
    found: list = []
    counter = [0]

    def visit(node: int) -> None:
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for other in edges[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in on_stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            found.append(component)

    for node in nodes:
        if node not in index:
            visit(node)
    return found


def left_inverse(S: tuple, q: Sequence[sympy.Symbol] = (), v: Sequence[sympy.Symbol] = ()) -> tuple:
    """``W`` (n_v, n_q) with ``W S = I``, block by block (:func:`blocks`).

    A block that is one entry ``1`` stays ``1``; a square block is inverted,
    a tall one (more coordinates than speeds) gets ``(SᵀS)⁻¹Sᵀ``; entries are
    simplified (within the bounds of :func:`bounded`). A block that is
    block-triangular (:func:`triangular_blocks`) is solved by forward
    substitution over its irreducible blocks. ``q`` and ``v`` (the symbols,
    optional) only name things in the errors: a block with more speeds than
    coordinates, or a singular one.
    """
    n_q = len(S)
    n_v = len(S[0]) if n_q else 0
    W = [[ZERO] * n_q for _ in range(n_v)]
    for rows, columns in blocks(S):
        if not columns:
            continue
        speeds = ", ".join(v[r].name for r in columns) if v else f"columns {columns}"
        coordinates = ", ".join(q[k].name for k in rows) if q else f"rows {rows}"
        if len(columns) > len(rows):
            raise ModelError(f"kinematics: the speeds {speeds} are not independent (they move only {coordinates})")
        singular = ModelError(f"kinematics: the speeds {speeds} are not independent (S is singular on {coordinates})")
        try:
            parts = triangular_blocks(S, rows, columns)
        except ValueError:
            raise singular from None
        if len(parts) == 1:
            inverse = _irreducible_inverse(sympy.Matrix([[S[k][r] for r in columns] for k in rows]), singular)
            for a, r in enumerate(columns):
                for b, k in enumerate(rows):
                    W[r][k] = inverse[a][b]
        else:
            _substitute_forward(S, W, rows, parts, singular)
    return tuple(tuple(row) for row in W)


def _substitute_forward(S: tuple, W: list, rows: Sequence[int], parts: list, singular: ModelError) -> None:
    """The rows of ``W`` of a block-triangular block (``rows``, its irreducible ``parts`` in order) by forward
    substitution: ``x_C = L (y_R − Σ S[R, C_j] x_Cj)`` over the earlier parts ``j`` (``L`` the part's inverse)."""
    solved: list = []
    for part_rows, part_columns in parts:
        inverse = _irreducible_inverse(sympy.Matrix([[S[k][r] for r in part_columns] for k in part_rows]), singular)
        rest = {k: {k2: (ONE if k2 == k else ZERO) for k2 in rows} for k in part_rows}
        for k in part_rows:
            for r in (r for earlier in solved for r in earlier if S[k][r] != 0):
                for k2 in rows:
                    if W[r][k2] != 0:
                        rest[k][k2] = rest[k][k2] - S[k][r] * W[r][k2]
        for a, r in enumerate(part_columns):  # cancelled only: W serves the structure coefficients, settled
            for k2 in rows:
                W[r][k2] = cancelled(
                    sympy.Add(*(inverse[a][b] * rest[k][k2] for b, k in enumerate(part_rows) if inverse[a][b] != 0))
                )
        solved.append(part_columns)


def square_inverse(block: sympy.Matrix) -> sympy.Matrix:
    """``block⁻¹`` as ``adjugate / det`` (what ``Matrix.inv(method="ADJ")`` returns), with the determinant tested
    for zero at random points instead of by ``rref(simplify=True)``, which can take minutes on a quaternion's
    rates. Raises ``ValueError`` when the determinant vanishes."""
    determinant = block.det(method="berkowitz")
    if determinant == 0 or vanishes_at_random_points(determinant):
        raise ValueError("the matrix is singular")
    return block.adjugate() / determinant


def _irreducible_inverse(block: sympy.Matrix, singular: ModelError) -> list:
    """A left inverse (nested lists) of one block: ``1`` for the entry ``1``, the inverse of a square block,
    ``(SᵀS)⁻¹Sᵀ`` of a tall one, entries tidied; ``singular`` raised when it has none."""
    if block.shape == (1, 1) and block[0, 0] == 1:
        return [[ONE]]
    tall = block.shape[1] < block.shape[0]
    square = (block.T * block).applyfunc(tidy) if tall else block
    determinant = tidy(square.det(method="berkowitz"))
    if determinant == 0 or vanishes_at_random_points(determinant):
        raise singular
    adjugate = square.adjugate(method="berkowitz")
    if tall:
        adjugate = adjugate * block.T
    return [[tidy(adjugate[a, b] / determinant) for b in range(block.shape[0])] for a in range(block.shape[1])]


def lie_bracket(s_a: Sequence[sympy.Expr], s_b: Sequence[sympy.Expr], q: Sequence[sympy.Symbol]) -> tuple:
    """``[s_a, s_b] = (∂s_b/∂q) s_a − (∂s_a/∂q) s_b`` (n_q) of two vector fields given by their components."""
    return tuple(directional(s_b[k], s_a, q) - directional(s_a[k], s_b, q) for k in range(len(q)))


def directional(expr: sympy.Expr, field: Sequence[sympy.Expr], q: Sequence[sympy.Symbol]) -> sympy.Expr:
    """``Σ_l field[l] ∂expr/∂q_l``: the derivative of ``expr`` along the vector field ``field``.

    Terms whose ``field`` entry is zero, or whose coordinate ``expr`` does
    not contain, are skipped (so along a unit column this is exactly one
    ``diff``).
    """
    symbols = expr.free_symbols
    terms = [field[k] * diff(expr, q[k]) for k in range(len(q)) if field[k] != 0 and q[k] in symbols]
    return sympy.Add(*terms)


def structure_coefficients(S: tuple, W: tuple, q: Sequence[sympy.Symbol], v: Sequence[sympy.Symbol] = ()) -> tuple:
    """``γ`` (n_v, n_v, n_v), ``γ[j][a][b] = (W [s_a, s_b])_j``, antisymmetric in ``a, b``.

    ``s_r`` are the columns of ``S`` and ``W`` a left inverse (``W S = I``).
    For square ``S`` the brackets are always combinations of the columns;
    for ``n_v < n_q`` each nonzero bracket is checked to be ``S γ`` (exactly
    after simplification, else at :data:`BRACKET_PROBES` random points), and
    a :class:`~sls.errors.ModelError` names the pair of speeds when it is not
    (nonholonomic kinematics). Pairs of columns that do not depend on ``q``
    are skipped (their bracket vanishes), so identity blocks cost nothing.
    A coefficient that is a rational constant at random points
    (:func:`constant_value`) is that constant, however large its expression
    (the coefficients of rigid bodies' angular velocities are 0 and ±1); any
    other is tidied within the bounds of :func:`bounded`.
    """
    n_q = len(S)
    n_v = len(S[0]) if n_q else 0
    columns = [tuple(S[k][r] for k in range(n_q)) for r in range(n_v)]
    moving = [any(entry.free_symbols & set(q) for entry in column) for column in columns]
    gamma = [[[ZERO] * n_v for _ in range(n_v)] for _ in range(n_v)]
    for a in range(n_v):
        for b in range(a + 1, n_v):
            if not (moving[a] or moving[b]):
                continue
            bracket = lie_bracket(columns[a], columns[b], q)
            if all(e == 0 for e in bracket):
                continue
            coefficients = [
                settled(sympy.Add(*(W[j][k] * bracket[k] for k in range(n_q) if W[j][k] != 0 and bracket[k] != 0)))
                for j in range(n_v)
            ]
            if n_v < n_q:
                _check_in_span(bracket, coefficients, columns, (a, b), v)
            for j in range(n_v):
                gamma[j][a][b] = coefficients[j]
                gamma[j][b][a] = -coefficients[j]
    return tuple(tuple(tuple(row) for row in plane) for plane in gamma)


def _check_in_span(
    bracket: tuple, coefficients: list, columns: list, pair: tuple[int, int], v: Sequence[sympy.Symbol]
) -> None:
    """Refuse a bracket that is not ``Σ_j coefficients[j] s_j`` (nonholonomic kinematics)."""
    residual = [
        bracket[k] - sympy.Add(*(coefficients[j] * columns[j][k] for j in range(len(columns))))
        for k in range(len(bracket))
    ]
    residual = [e for e in residual if bounded(lambda e: sympy.cancel(sympy.expand(e)), e) != 0]
    if not residual or all(vanishes_at_random_points(e) for e in residual):
        return
    a, b = (v[i].name for i in pair) if v else (f"#{pair[0]}", f"#{pair[1]}")
    raise ModelError(
        f"kinematics are nonholonomic: the bracket of the directions of the speeds {a} and {b} leaves the span of S; "
        "give a speed for every coordinate and the rolling condition as velocity_constraints"
    )
