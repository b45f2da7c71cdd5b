"""The JAX target's functions under JAX's transforms: ``jax.jit``, ``jax.vmap``, ``jax.jacfwd`` and ``jax.grad``.

Compiled and mapped calls agree with the batch call and the numpy target; the gradient of an RK4 rollout cost
(``lax.scan``) with respect to a mass equals central finite differences; a batch of 10⁵ double-pendulum rollouts
runs by ``vmap`` and its rows equal an RK4 loop on the numpy package.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import import_package

import sls
from sls.readers.examples import load_example

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

TOL = 1e-12


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    """``packages(name)`` → (numpy package, JAX package) of the bundled example ``name``."""
    cache = {}

    def get(name: str):
        if name not in cache:
            folder = tmp_path_factory.mktemp(f"jax-{name}")
            sls.generate(load_example(name), folder / "py")
            sls.generate(load_example(name), folder / "jx", target="jax")
            cache[name] = import_package(folder / "py"), import_package(folder / "jx")
        return cache[name]

    return get


def close(got, want) -> None:
    scale = max(1.0, float(np.max(np.abs(want))))
    np.testing.assert_allclose(np.asarray(got), want, rtol=TOL, atol=TOL * scale)


@pytest.mark.parametrize("name", ["double_pendulum", "ur5"])
def test_jit_and_vmap_of_qddot_fun_and_linearized_model_agree(name, packages):
    py, jx = packages(name)
    rng = np.random.default_rng(3)
    x = rng.uniform(-1.0, 1.0, size=(5, len(jx.STATE)))
    u = rng.normal(size=(5, jx.N_INPUTS))
    params = {k: 1.1 * v for k, v in py.PARAMS.items()}
    for function in ("qddot_fun", "linearized_model"):
        want = getattr(py, function)(x, u, **params)
        f = getattr(jx, function)
        results = [
            f(x, u, **params),
            jax.jit(f)(x, u, **params),
            jax.vmap(lambda x, u: f(x, u, **params))(x, u),  # noqa: B023 (called here)
            jax.jit(jax.vmap(lambda x, u: f(x, u, **params)))(x, u),  # noqa: B023
            tuple(np.stack(parts) for parts in zip(*[f(x[i], u[i], **params) for i in range(5)]))
            if function == "linearized_model"
            else np.stack([f(x[i], u[i], **params) for i in range(5)]),
        ]
        for got in results:
            for g, w in zip(got if isinstance(want, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                close(g, w)


def test_jacfwd_of_xdot_fun_is_linearized_model_and_grad_of_a_parameter_is_finite_differences(packages):
    py, jx = packages("ur5")
    rng = np.random.default_rng(4)
    x, u = rng.uniform(-1.0, 1.0, size=12), rng.normal(size=6)
    A, B = jx.linearized_model(x, u)
    close(jax.jacfwd(jx.xdot_fun)(x, u), np.asarray(A))
    close(jax.jacfwd(jx.xdot_fun, argnums=1)(x, u), np.asarray(B))
    (name, value), *_ = ((k, v) for k, v in py.PARAMS.items() if v)
    grad = jax.grad(lambda p: jnp.sum(jx.qddot_fun(x, u, **{name: p}) ** 2))(value)
    h = 1e-6 * abs(value)
    fd = np.sum(py.qddot_fun(x, u, **{name: value + h}) ** 2) - np.sum(py.qddot_fun(x, u, **{name: value - h}) ** 2)
    np.testing.assert_allclose(float(grad), fd / (2 * h), rtol=1e-6)


DT, STEPS = 0.01, 20


def rk4_rollout(xdot, x0, steps: int = STEPS, dt: float = DT):
    """States after each of ``steps`` RK4 steps of ``xdot(x)`` from ``x0`` (``lax.scan``)."""

    def step(x, _):
        k1 = xdot(x)
        k2 = xdot(x + dt / 2 * k1)
        k3 = xdot(x + dt / 2 * k2)
        k4 = xdot(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return x, x

    return jax.lax.scan(step, x0, None, length=steps)[1]


def numpy_rollout(xdot, x0: np.ndarray, steps: int = STEPS, dt: float = DT) -> np.ndarray:
    """The same RK4 steps in numpy (an independent loop on the numpy package)."""
    xs, x = [], x0
    for _ in range(steps):
        k1 = xdot(x)
        k2 = xdot(x + dt / 2 * k1)
        k3 = xdot(x + dt / 2 * k2)
        k4 = xdot(x + dt * k3)
        x = x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        xs.append(x)
    return np.array(xs)


def test_grad_of_a_rollout_cost_with_respect_to_a_mass_is_finite_differences(packages):
    py, jx = packages("double_pendulum")
    x0, u = np.array([0.8, -0.3, 0.0, 0.5]), np.array([0.2, -0.1])

    def cost(m2):
        xs = rk4_rollout(lambda x: jx.xdot_fun(x, u, m2=m2), jnp.asarray(x0))
        return jnp.sum(xs[:, :2] ** 2)

    def numpy_cost(m2: float) -> float:
        return float(np.sum(numpy_rollout(lambda x: py.xdot_fun(x, u, m2=m2), x0)[:, :2] ** 2))

    m2, h = 0.5, 1e-5
    np.testing.assert_allclose(float(jax.jit(cost)(m2)), numpy_cost(m2), rtol=1e-12)
    grad = float(jax.jit(jax.grad(cost))(m2))
    fd = (numpy_cost(m2 + h) - numpy_cost(m2 - h)) / (2 * h)
    assert grad != 0.0
    np.testing.assert_allclose(grad, fd, rtol=1e-7)


def test_a_batch_of_a_hundred_thousand_rollouts_runs_by_vmap(packages):
    py, jx = packages("double_pendulum")
    count = 100_000
    rng = np.random.default_rng(6)
    x0 = rng.uniform(-1.0, 1.0, size=(count, 4))
    u = np.zeros(2)
    rollouts = jax.jit(jax.vmap(lambda x: rk4_rollout(lambda y: jx.xdot_fun(y, u), x)))
    xs = np.asarray(rollouts(x0))
    assert xs.shape == (count, STEPS, 4) and np.all(np.isfinite(xs))
    for row in (0, 12_345, count - 1):
        close(xs[row], numpy_rollout(lambda x: py.xdot_fun(x, u), x0[row]))
