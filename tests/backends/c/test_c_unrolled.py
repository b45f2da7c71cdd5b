"""The C target's straight-line constrained solve (``sls/backends/c/unrolled.py``) on its own: its lines, read as
Python (each ``const double name = value;`` an assignment), against numpy's dense KKT solve of the same matrices.

A tree-like sparse ``M`` (positive definite) and a sparse ``A``: the solve's ``q̈``, ``λ`` and stored factors
(``solve_lines``), then the factors reused for several right-hand-side columns at once (``column_lines``), as
``linearized_model``'s derivatives use them. The reference is ``numpy.linalg.solve`` of ``[M −Aᵀ; A 0]``: no code in
common with the unrolled Cholesky and Schur complement.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from sls.backends.c.unrolled import UNROLL_LIMIT, column_lines, solve_lines, solve_pattern, unrolled_solve

#: Parents of a small tree (speeds parents first, as a robot's): a trunk of three, two branches of three.
PARENTS = [-1, 0, 1, 2, 3, 4, 2, 6, 7]


def _tree_matrices(rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``M`` (n × n, positive definite, nonzero only between a speed and its ancestors) and ``A`` (k × n, each row on
    one branch's chain to the root)."""
    n = len(PARENTS)
    ancestors = [set() for _ in range(n)]
    for i, parent in enumerate(PARENTS):
        if parent >= 0:
            ancestors[i] = ancestors[parent] | {parent}
    mask = np.eye(n, dtype=bool)
    for i in range(n):
        for j in ancestors[i]:
            mask[i, j] = mask[j, i] = True
    B = rng.normal(size=(n, n))
    M = np.where(mask, B @ B.T + n * np.eye(n), 0.0)
    M = (M + M.T) / 2
    M += np.eye(n) * (abs(np.linalg.eigvalsh(M).min()) + 1.0)
    A = np.zeros((k, n))
    for c in range(k):
        leaf = [5, 8][c % 2]
        for j in ancestors[leaf] | {leaf}:
            A[c, j] = rng.normal()
    return M, A


def _run(lines: list[str], names: dict) -> dict:
    """The C lines as Python: declarations and stores become assignments, ``return -1`` an exception."""
    code = []
    for line in lines:
        if line in ("if (F != NULL) {", "}"):
            continue
        line = line.strip()
        line = re.sub(r"^const double ", "", line).rstrip(";")
        line = re.sub(r"^if \(!\((.*)\)\) return -1$", r"assert \1, 'pivot'", line)
        line = line.replace("F->", "F_")
        code.append(line)
    scope = {"sqrt": math.sqrt, "fabs": abs, **names}
    exec(compile("\n".join(code), "<unrolled>", "exec"), scope)  # the test's own generated lines, not user input
    return scope


@pytest.mark.parametrize("k", [1, 3])
def test_the_unrolled_solve_and_its_columns_equal_the_dense_kkt_solve(k):
    rng = np.random.default_rng(k)
    M, A = _tree_matrices(rng, k)
    n = len(M)
    f, g = rng.normal(size=n), rng.normal(size=k)
    pattern = solve_pattern(n, k, {i for i in range(n * n) if M.flat[i] != 0}, {i for i in range(k * n) if A.flat[i]})
    kkt = np.block([[M, -A.T], [A, np.zeros((k, k))]])
    expected = np.linalg.solve(kkt, np.concatenate([f, g]))

    sizes = pattern.sizes
    factors = {
        "F_L": np.zeros(sizes["L"]),
        "F_r": np.zeros(n),
        "F_X": np.zeros(sizes["X"]),
        "F_LS": np.zeros(k * k),
        "F_rs": np.zeros(k),
    }
    scope = _run(
        solve_lines(pattern),
        {"M": M.ravel(), "A": A.ravel(), "f": f, "g": g, "qddot": np.zeros(n), "lam": np.zeros(k), **factors},
    )
    np.testing.assert_allclose(scope["qddot"], expected[:n], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(scope["lam"], expected[n:], rtol=1e-12, atol=1e-12)

    columns = 5  # the right-hand sides [D; dlam], D's rows in the speeds' reversed order
    D, dlam = rng.normal(size=(n, columns)), rng.normal(size=(k, columns))
    expected = np.linalg.solve(kkt, np.vstack([D[::-1], dlam]))
    body = column_lines(pattern)
    D_flat, dlam_flat = D.ravel().copy(), dlam.ravel().copy()
    arrays = {
        "L": factors["F_L"],
        "r": factors["F_r"],
        "X": factors["F_X"],
        "LS": factors["F_LS"],
        "rs": factors["F_rs"],
    }
    for c in range(columns):
        _run(body, {"D": D_flat, "dlam": dlam_flat, "CX_": columns, "c": c, **arrays})
    np.testing.assert_allclose(D_flat.reshape(n, columns)[::-1], expected[:n], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(dlam_flat.reshape(k, columns), expected[n:], rtol=1e-12, atol=1e-12)


def test_a_singular_mass_matrix_hands_the_state_to_the_loops():
    M = np.diag([1.0, 0.0, 2.0])
    A = np.array([[1.0, 1.0, 1.0]])
    pattern = solve_pattern(3, 1, {0, 4, 8}, {0, 1, 2})
    names = {"M": M.ravel(), "A": A.ravel(), "f": np.ones(3), "g": np.ones(1), "qddot": np.zeros(3), "lam": np.zeros(1)}
    with pytest.raises(AssertionError, match="pivot"):
        _run(solve_lines(pattern), {**names, "F_L": np.zeros(3), "F_r": np.zeros(3), "F_X": np.zeros(3)})


def test_a_solve_longer_than_the_limit_is_left_to_the_loops():
    n = 50  # a dense M: about n³/6 multiply-adds in its factor alone, beyond UNROLL_LIMIT
    assert n**3 / 6 > UNROLL_LIMIT
    assert unrolled_solve(n, 1, set(range(n * n)), set(range(n))) is None
    assert unrolled_solve(4, 1, set(range(16)), set(range(4))) is not None
