"""The JAX target's runtime (``sls/backends/jax/runtime/_runtime.py``): the Cholesky factor on the entries of ``M``
(known zeros skipped, the order chosen for the least fill-in) and ``separate``, against numpy."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax")

RUNTIME = Path(__file__).resolve().parents[3] / "sls" / "backends" / "jax" / "runtime" / "_runtime.py"


@pytest.fixture(scope="module")
def runtime():
    spec = importlib.util.spec_from_file_location("_sls_jax_runtime_under_test", RUNTIME)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tree_matrix(rng: np.random.Generator, root: int, legs: int, per_leg: int) -> np.ndarray:
    """A symmetric positive definite matrix shaped as a floating robot's ``M``: a dense root block, each leg's
    block dense and coupled to the root, no two legs coupled."""
    n = root + legs * per_leg
    A = rng.normal(size=(n, n))
    M = A @ A.T + n * np.eye(n)
    for a in range(legs):
        for b in range(legs):
            if a != b:
                rows = slice(root + a * per_leg, root + (a + 1) * per_leg)
                cols = slice(root + b * per_leg, root + (b + 1) * per_leg)
                M[rows, cols] = 0.0
    return M


def entries_of(M: np.ndarray) -> list:
    """The flat entries as the generated code passes them: Python zeros where known, arrays elsewhere."""
    return [0.0 if value == 0.0 else jax.numpy.asarray(value) for value in M.ravel()]


def test_a_tree_shaped_matrix_is_factored_leaves_first_without_fill_in(runtime):
    rng = np.random.default_rng(0)
    M = tree_matrix(rng, 6, 4, 3)
    n = M.shape[0]
    order, lower = runtime.cholesky(entries_of(M), n)
    assert order == list(range(n - 1, -1, -1))
    below = sum(lower[i][j] is not None for i in range(n) for j in range(i))
    assert below == int(np.count_nonzero(np.tril(M, -1)))  # no entry of the factor beyond M's own
    rhs = rng.normal(size=(n, 3))
    got = runtime.solve_factored((order, lower), jax.numpy.asarray(rhs))
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(M, rhs), rtol=1e-12, atol=1e-12)


def test_a_dense_matrix_is_factored_in_its_order_and_solves_as_numpy(runtime):
    rng = np.random.default_rng(1)
    A = rng.normal(size=(5, 5))
    M = A @ A.T + 5 * np.eye(5)
    rhs = rng.normal(size=5)
    assert runtime.elimination_order(entries_of(M), 5) == list(range(5))
    got = runtime.solve_spd(entries_of(M), [jax.numpy.asarray(v) for v in rhs])
    np.testing.assert_allclose(np.asarray(got), np.linalg.solve(M, rhs), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(runtime.solve_spd(jax.numpy.asarray(M), rhs)), np.linalg.solve(M, rhs))


def test_a_matrix_that_is_not_positive_definite_gives_nan(runtime):
    M = np.array([[1.0, 2.0], [2.0, 1.0]])
    assert np.isnan(np.asarray(runtime.solve_spd(entries_of(M), np.ones(2)))).any()


def test_separate_returns_its_values_exactly_under_jit_vmap_and_grad(runtime):
    jnp = jax.numpy
    values = np.random.default_rng(2).normal(size=(7, 40)) * 1e3

    def spread(v):
        return jnp.stack(runtime.separate(*[jnp.cos(v[k]) * v[k] for k in range(40)]))

    want = np.cos(values) * values
    got = jax.jit(jax.vmap(spread))(values)
    assert np.array_equal(np.asarray(got), want)
    grad = jax.grad(lambda v: spread(v).sum())(values[0])
    np.testing.assert_allclose(np.asarray(grad), np.cos(values[0]) - np.sin(values[0]) * values[0], rtol=1e-12)
    assert runtime.separate() == ()


def test_chunked_maps_a_long_batch_in_chunks_and_keeps_the_derivatives(runtime):
    jnp = jax.numpy

    def body(x, scale):
        return jnp.stack([jnp.sin(x[0]) * x[1], scale * x[0] * x[1]])

    f = runtime.chunked(body)
    states = np.random.default_rng(3).normal(size=(runtime.CHUNK * 2 + 17, 2))
    want = np.stack([np.sin(states[:, 0]) * states[:, 1], 2.0 * states[:, 0] * states[:, 1]], axis=1)
    mapped = jax.jit(jax.vmap(lambda x: f(x, 2.0)))
    assert "scan" in str(jax.make_jaxpr(mapped)(states))  # lax.map over chunks, not one vmap
    np.testing.assert_allclose(np.asarray(mapped(states)), want, rtol=1e-14)
    x = states[0]
    np.testing.assert_allclose(np.asarray(jax.jacfwd(f)(x, 2.0)), np.asarray(jax.jacfwd(body)(x, 2.0)))
    np.testing.assert_allclose(float(jax.grad(lambda s: f(x, s)[1])(2.0)), x[0] * x[1])
    grads = jax.vmap(jax.grad(lambda y: f(y, 2.0).sum()))(states[:5])
    plain = jax.vmap(jax.grad(lambda y: body(y, 2.0).sum()))(states[:5])
    np.testing.assert_allclose(np.asarray(grads), np.asarray(plain))


def test_a_call_on_one_state_is_compiled_with_its_temporaries_kept_and_a_batch_as_before(runtime):
    jnp = jax.numpy
    traced_kept = []

    def body(x):
        traced_kept.append(runtime._ONE.get() is not None)
        a = runtime.keep(x[..., 0] * x[..., 1] + x[..., 2])
        return jnp.stack([a * a, a + x[..., 0], *runtime.separate(jnp.cos(x[..., 1]), jnp.sin(x[..., 1]))], axis=-1)

    def want(x):
        a = x[..., 0] * x[..., 1] + x[..., 2]
        return np.stack([a * a, a + x[..., 0], np.cos(x[..., 1]), np.sin(x[..., 1])], axis=-1)

    f = runtime.jit(body)
    states = np.random.default_rng(4).normal(size=(5, 3)) * 10
    np.testing.assert_allclose(np.asarray(f(states[0])), want(states[0]), rtol=1e-13)  # one state: kept
    assert traced_kept == [True]
    np.testing.assert_allclose(np.asarray(f(states)), want(states), rtol=1e-13)  # a batch: not kept
    np.testing.assert_allclose(np.asarray(jax.jit(f)(states[1])), want(states[1]), rtol=1e-13)  # a caller's jit
    grad = jax.grad(lambda x: f(x)[0])(states[2])
    np.testing.assert_allclose(np.asarray(grad), np.asarray(jax.grad(lambda x: body(x)[0])(states[2])), rtol=1e-13)
    assert traced_kept[1:] == [False] * (len(traced_kept) - 1)
    value = jnp.asarray(2.5)
    assert runtime.keep(value) is value  # outside a call on one state: unchanged
    kept = jax.jit(lambda v, one: _with_one(runtime, one, v))(jnp.asarray(3.0, dtype=jnp.float32), 1.0)
    assert kept.dtype == jnp.float32 and float(kept) == 3.0
    single = np.float32(states[3])
    assert f(single).dtype == jnp.float32  # float32 states stay float32 on the path of one state


def _with_one(runtime, one, value):
    token = runtime._ONE.set(one)
    try:
        return runtime.keep(value)
    finally:
        runtime._ONE.reset(token)
