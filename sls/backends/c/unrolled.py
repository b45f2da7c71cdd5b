"""The C target's constrained solve as straight-line code on the structure of ``M`` and ``A`` (their entries that are
not zero at every state, read from the fused kernel's code).

The speeds are reversed (a tree's leaves first: little fill-in), ``M = L Lᵀ``, ``X = L⁻¹ [f, Aᵀ]``,
``S = X_Aᵀ X_A = L_S L_Sᵀ``, ``λ = S⁻¹ (g − X_Aᵀ X_f)``, ``q̈ = L⁻ᵀ (X_f + X_A λ)``: the textbook Schur complement on
``M``, the same ``q̈`` and ``λ`` as the augmented solve of ``templates/c/constrained.c.j2``'s loops (the Python
target's, ``M + AᵀWA``) where ``M`` is positive definite. Three pieces of C come from one :class:`SolvePattern`:

* :func:`solve_lines`, the body of ``solve_unrolled``: the factors and the solution at one state, and the factors
  stored for the derivatives (``struct factors``: ``L``'s entries below its diagonal, ``1/L_ii``, ``X_A``'s entries
  that are not zero, ``L_S`` and ``1/L_S,ii``) when its caller asks for them;
* :func:`column_lines`, the body of ``solve_columns``' loop over the columns ``c`` of ``D`` (n × columns, rows in
  the reversed order) and ``dlam`` (k × columns): ``[M −Aᵀ; A 0] [D; dlam] = [D; dlam]`` in place with the stored
  factors, the same three steps; straight-line code over a loop the compiler vectorizes (one column per lane);
* the sizes of ``struct factors`` (:attr:`SolvePattern.sizes`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

#: Largest unrolled solve (multiply-adds) written as straight-line code; beyond, the loops alone.
UNROLL_LIMIT = 20000
#: The unrolled solve factors M alone: a pivot below this fraction of its diagonal entry (M singular or nearly, as
#: a unit quaternion's attitude makes it) hands the state to the augmented solve of the loops.
PIVOT = 1e-6
#: The Schur complement's pivots: below this fraction of the diagonal entry, the constraints are dependent there (a
#: pivot of rounding errors only), and the loops decide.
SCHUR_PIVOT = 1e-13


@dataclass(frozen=True)
class SolvePattern:
    """Where the factors of ``M`` (n × n) and ``A`` (k × n) are not zero at every state, speeds reversed.

    ``mass``: the stored entries of ``M`` (row-major indices, the kernel's order); ``rows[c]``: the reversed columns
    where row ``c`` of ``A`` is stored; ``lower[i]``/``upper[j]``: the columns ``q < i`` where ``L[i, q]`` may not be
    zero, the rows ``i > j`` where ``L[i, j]`` may not be; ``vectors[c]``: the entries of ``X``'s column ``c`` (0:
    ``L⁻¹ f``, ``1 + c``: ``L⁻¹ A_cᵀ``) that may not be zero."""

    n: int
    k: int
    mass: frozenset[int]
    rows: tuple[tuple[int, ...], ...]
    lower: dict[int, list[int]]
    upper: dict[int, list[int]]
    vectors: tuple[tuple[int, ...], ...]

    def rev(self, a: int) -> int:
        """The speed ``a`` in the reversed order, and back."""
        return self.n - 1 - a

    @property
    def below(self) -> list[tuple[int, int]]:
        """``L``'s entries below its diagonal that may not be zero, in ``struct factors``' order."""
        return [(i, q) for i in range(self.n) for q in self.lower[i]]

    @property
    def columns(self) -> list[tuple[int, int]]:
        """``X_A``'s entries ``(c, i)`` that may not be zero, in ``struct factors``' order."""
        return [(c, i) for c in range(self.k) for i in self.vectors[1 + c]]

    @property
    def sizes(self) -> dict[str, int]:
        """The lengths of ``struct factors``' arrays (at least 1: C has no empty arrays)."""
        return {"L": max(1, len(self.below)), "X": max(1, len(self.columns))}


def solve_pattern(n: int, k: int, mass: set[int], jacobian: set[int]) -> SolvePattern:
    """The :class:`SolvePattern` of ``M`` with stored entries ``mass`` (row-major n × n) and ``A`` with ``jacobian``
    (row-major k × n): ``L``'s pattern with its fill, and ``X``'s."""
    rows = tuple(tuple(sorted(n - 1 - a for a in range(n) if c * n + a in jacobian)) for c in range(k))
    pattern = factor_pattern(n, mass)
    lower = {i: [j for j in range(i) if (i, j) in pattern] for i in range(n)}
    upper = {j: [i for i in range(j + 1, n) if (i, j) in pattern] for j in range(n)}
    vectors = [tuple(range(n))]  # X = L^-1 [f, A']: f's column has every entry
    for row in rows:
        nonzero: list[int] = []
        for i in range(n):
            if i in row or any(q in nonzero for q in lower[i]):
                nonzero.append(i)
        vectors.append(tuple(nonzero))
    return SolvePattern(n, k, frozenset(mass), rows, lower, upper, tuple(vectors))


def factor_pattern(n: int, mass: set[int]) -> set[tuple[int, int]]:
    """The entries ``(i, j)``, ``i ≥ j``, of ``M``'s Cholesky factor (speeds reversed) that may not be zero: ``M``'s
    stored entries (``mass``, row-major n × n) and their fill."""
    pattern = {(i, i) for i in range(n)}
    for index in mass:
        i, j = n - 1 - index // n, n - 1 - index % n
        pattern.add((max(i, j), min(i, j)))
    for j in range(n):
        below = [i for i in range(j + 1, n) if (i, j) in pattern]
        pattern.update((p, q) for p in below for q in below if p > q)
    return pattern


def _minus(start: str, products: list[str]) -> str:
    return start + "".join(f" - {p}" for p in products)


def factor_lines(p: SolvePattern) -> list[str]:
    """``M = L Lᵀ`` (reversed): ``L{i}_{j}`` and ``r{j} = 1 / L_jj``; ``return -1`` at a pivot below :data:`PIVOT`."""

    def ma(i: int, j: int) -> str:
        a, b = p.rev(i), p.rev(j)
        return f"M[{a * p.n + b}]" if (a * p.n + b in p.mass or b * p.n + a in p.mass) else "0.0"

    lines = []
    for j in range(p.n):
        products = [f"L{j}_{q}*L{j}_{q}" for q in p.lower[j]]
        lines.append(f"const double d{j} = {_minus(ma(j, j), products)};")
        lines.append(f"if (!(d{j} > {PIVOT!r}*fabs({ma(j, j)}))) return -1;")
        lines.append(f"const double r{j} = 1.0/sqrt(d{j});")
        for i in p.upper[j]:
            products = [f"L{i}_{q}*L{j}_{q}" for q in p.lower[j] if q in p.lower[i]]
            lines.append(f"const double L{i}_{j} = ({_minus(ma(i, j), products)})*r{j};")
    return lines


def schur_lines(p: SolvePattern) -> list[str]:
    """``X_A = L⁻¹ Aᵀ`` (``X{1 + c}_{i}``) and ``S = X_Aᵀ X_A = L_S L_Sᵀ`` (``LS{i}_{j}``, ``rs{j}``); ``return -1``
    at a pivot below :data:`SCHUR_PIVOT`."""
    lines = []
    for c in range(p.k):
        for i in p.vectors[1 + c]:
            start = f"A[{c * p.n + p.rev(i)}]" if i in p.rows[c] else "0.0"
            products = [f"L{i}_{q}*X{c + 1}_{q}" for q in p.lower[i] if q in p.vectors[1 + c]]
            lines.append(f"const double X{c + 1}_{i} = ({_minus(start, products)})*r{i};")
    for c in range(p.k):
        for d in range(c + 1):
            common = sorted(set(p.vectors[1 + c]) & set(p.vectors[1 + d]))
            terms = [f"X{c + 1}_{i}*X{d + 1}_{i}" for i in common]
            lines.append(f"const double S{c}_{d} = {' + '.join(terms) or '0.0'};")
    for j in range(p.k):
        products = [f"LS{j}_{q}*LS{j}_{q}" for q in range(j)]
        lines.append(f"const double e{j} = {_minus(f'S{j}_{j}', products)};")
        lines.append(f"if (!(e{j} > {SCHUR_PIVOT!r}*fabs(S{j}_{j}))) return -1;")
        lines.append(f"const double rs{j} = 1.0/sqrt(e{j});")
        for i in range(j + 1, p.k):
            products = [f"LS{i}_{q}*LS{j}_{q}" for q in range(j)]
            lines.append(f"const double LS{i}_{j} = ({_minus(f'S{i}_{j}', products)})*rs{j};")
    return lines


def substitution_lines(
    p: SolvePattern,
    f: Callable[[int], str],
    g: Callable[[int], str],
    L: Callable[[int | str, int], str],
    X: Callable[[int, int], str],
    LS: Callable[[int | str, int], str],
    out: tuple[str, str],
) -> list[str]:
    """``[M −Aᵀ; A 0] [q̈; λ] = [f; g]`` with the factors: ``f(i)`` and ``g(c)`` print the right-hand side's
    entries (``i`` reversed); ``L(i, q)``, ``X(c, i)`` and ``LS(i, j)`` the factors' entries, ``L("r", i)`` and
    ``LS("rs", j)`` their inverse diagonals'; ``out`` the format strings of the stores of ``q̈`` (reversed index
    ``{i}``, speed ``{a}``, ``{value}``) and of ``λ`` (``{j}``, ``{value}``)."""
    lines = []
    for i in range(p.n):  # F = L^-1 f
        products = [f"{L(i, q)}*F{q}" for q in p.lower[i]]
        lines.append(f"const double F{i} = ({_minus(f(i), products)})*{L('r', i)};")
    for c in range(p.k):  # t = g - X_A' F, then S^-1 t
        products = [f"{X(c, i)}*F{i}" for i in p.vectors[1 + c]]
        lines.append(f"const double t{c} = {_minus(g(c), products)};")
    for j in range(p.k):
        products = [f"{LS(j, q)}*z{q}" for q in range(j)]
        lines.append(f"const double z{j} = ({_minus(f't{j}', products)})*{LS('rs', j)};")
    for j in reversed(range(p.k)):
        products = [f"{LS(i, j)}*m{i}" for i in range(j + 1, p.k)]
        lines.append(f"const double m{j} = ({_minus(f'z{j}', products)})*{LS('rs', j)};")
        lines.append(out[1].format(j=j, value=f"m{j}"))
    for i in reversed(range(p.n)):  # q̈ = L'^-1 (F + X_A λ)
        start = " + ".join([f"F{i}"] + [f"{X(c, i)}*m{c}" for c in range(p.k) if i in p.vectors[1 + c]])
        products = [f"{L(q, i)}*y{q}" for q in p.upper[i]]
        lines.append(f"const double y{i} = ({_minus(start, products)})*{L('r', i)};")
        lines.append(out[0].format(i=i, a=p.rev(i), value=f"y{i}"))
    return lines


def _named(prefix: str) -> Callable[[int | str, int], str]:
    def name(i: int | str, j: int) -> str:
        return f"{i}{j}" if isinstance(i, str) else f"{prefix}{i}_{j}"

    return name


def store_lines(p: SolvePattern) -> list[str]:
    """The factors into ``struct factors *F`` (``solve_unrolled``'s last lines, when ``F`` is not ``NULL``)."""
    lines = [f"F->L[{e}] = L{i}_{q};" for e, (i, q) in enumerate(p.below)]
    lines += [f"F->r[{i}] = r{i};" for i in range(p.n)]
    lines += [f"F->X[{e}] = X{c + 1}_{i};" for e, (c, i) in enumerate(p.columns)]
    lines += [f"F->LS[{i * p.k + j}] = LS{i}_{j};" for i in range(p.k) for j in range(i)]
    lines += [f"F->rs[{j}] = rs{j};" for j in range(p.k)]
    return lines


def solve_lines(p: SolvePattern) -> list[str]:
    """The body of ``solve_unrolled(M, A, f, g, qddot, lam, F)``: reads ``M``, ``A``, ``f``, ``g`` (the kernel's
    layout), writes ``qddot`` (n), ``lam`` (k) and, when ``F`` is not ``NULL``, the factors; ``-1`` at a pivot."""
    lines = factor_lines(p) + schur_lines(p)
    lines += substitution_lines(
        p,
        lambda i: f"f[{p.rev(i)}]",
        lambda c: f"g[{c}]",
        _named("L"),
        lambda c, i: f"X{c + 1}_{i}",
        _named("LS"),
        ("qddot[{a}] = {value};", "lam[{j}] = {value};"),
    )
    stores = store_lines(p)
    return [*lines, "if (F != NULL) {", *(f"    {line}" for line in stores), "}"]


def column_lines(p: SolvePattern) -> list[str]:
    """The body of ``solve_columns``' loop over ``c``: column ``c`` of ``D`` (rows reversed, ``CX_`` columns) and
    ``dlam`` solved in place with the factors ``L``, ``r``, ``X``, ``LS``, ``rs`` (``struct factors``' arrays)."""
    below = {entry: e for e, entry in enumerate(p.below)}
    columns = {entry: e for e, entry in enumerate(p.columns)}

    def L(i: int | str, q: int) -> str:
        return f"r[{q}]" if isinstance(i, str) else f"L[{below[i, q]}]"

    def LS(i: int | str, j: int) -> str:
        return f"rs[{j}]" if isinstance(i, str) else f"LS[{i * p.k + j}]"

    return substitution_lines(
        p,
        lambda i: f"D[{i}*CX_ + c]",
        lambda c: f"dlam[{c}*CX_ + c]",
        L,
        lambda c, i: f"X[{columns[c, i]}]",
        LS,
        ("D[{i}*CX_ + c] = {value};", "dlam[{j}*CX_ + c] = {value};"),
    )


def unrolled_solve(n: int, k: int, mass: set[int], jacobian: set[int]) -> dict | None:
    """``templates/c/constrained.c.j2``'s straight-line solve: ``{"solve": solve_lines, "columns": column_lines,
    "sizes": struct factors' sizes}`` of ``M`` (``mass``: its stored entries, row-major n × n) and ``A``
    (``jacobian``: k × n), or ``None`` when the solve would be longer than :data:`UNROLL_LIMIT` multiplications."""
    pattern = solve_pattern(n, k, mass, jacobian)
    solve = solve_lines(pattern)
    if sum(line.count("*") for line in solve) > UNROLL_LIMIT:
        return None
    return {"solve": solve, "columns": column_lines(pattern), "sizes": pattern.sizes}
