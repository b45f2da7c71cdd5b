"""The JAX target's functions under JAX's transforms: ``jax.jit``, ``jax.vmap``, ``jax.jacfwd`` and ``jax.grad``.

Compiled and mapped calls agree with the batch call and the numpy target; the gradient of an RK4 rollout cost
(``lax.scan``) with respect to a mass equals central finite differences; a batch of 10⁵ double-pendulum rollouts
runs by ``vmap`` and its rows equal an RK4 loop on the numpy package; the cart-pole's masses are identified from
simulated data by gradient descent.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import import_package

import sls
from sls.readers.examples import load_example

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

TOL = 1e-12
#: The test robots' URDF files (tests/data).
DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(scope="module")
def packages(tmp_path_factory):
    """``packages(name)`` → (numpy package, JAX package) of the bundled example ``name`` (or of the URDF file
    ``tests/data/<name>.urdf``)."""
    cache = {}

    def get(name: str):
        if name not in cache:
            folder = tmp_path_factory.mktemp(f"jax-{name}")
            urdf = DATA / f"{name}.urdf"
            model = sls.load_urdf(urdf) if urdf.is_file() else load_example(name)
            sls.generate(model, folder / "py")
            sls.generate(model, folder / "jx", target="jax")
            cache[name] = import_package(folder / "py"), import_package(folder / "jx")
        return cache[name]

    return get


def close(got, want) -> None:
    scale = max(1.0, float(np.max(np.abs(want))))
    np.testing.assert_allclose(np.asarray(got), want, rtol=TOL, atol=TOL * scale)


@pytest.mark.parametrize("name", ["double_pendulum"])
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
            jax.jit(jax.vmap(lambda x, u: f(x, u, **params)), compiler_options=jx.COMPILER_OPTIONS)(x, u),  # noqa: B023
            tuple(np.stack(parts) for parts in zip(*[f(x[i], u[i], **params) for i in range(5)]))
            if function == "linearized_model"
            else np.stack([f(x[i], u[i], **params) for i in range(5)]),
        ]
        for got in results:
            for g, w in zip(got if isinstance(want, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
                close(g, w)


def test_jacfwd_of_xdot_fun_is_linearized_model_and_grad_of_a_parameter_is_finite_differences(packages):
    """A robot arm from its URDF (the tree route, as UR5): two revolute joints on skewed axes and a prismatic one
    (with UR5's six joints, the compiles of this test were half of this file's time)."""
    py, jx = packages("spatial3")
    assert jx.N_DOF == 3
    rng = np.random.default_rng(4)
    x, u = rng.uniform(-1.0, 1.0, size=len(jx.STATE)), rng.normal(size=jx.N_INPUTS)
    A, B = jx.linearized_model(x, u)
    close(jax.jacfwd(jx.xdot_fun)(x, u), np.asarray(A))
    close(jax.jacfwd(jx.xdot_fun, argnums=1)(x, u), np.asarray(B))
    (name, value), *_ = ((k, v) for k, v in py.PARAMS.items() if v)
    grad = jax.grad(lambda p: jnp.sum(jx.qddot_fun(x, u, **{name: p}) ** 2))(value)
    h = 1e-6 * abs(value)
    fd = np.sum(py.qddot_fun(x, u, **{name: value + h}) ** 2) - np.sum(py.qddot_fun(x, u, **{name: value - h}) ** 2)
    np.testing.assert_allclose(float(grad), fd / (2 * h), rtol=1e-6)


def test_a_constrained_models_derivatives_are_the_implicit_ones(packages):
    """The four-bar's constrained solve differentiates implicitly (``_constrained.solution``'s custom_jvp: the terms'
    tangents through the factors of the solve): forward and reverse mode of xdot_fun and multipliers_fun equal
    linearized_model and central differences of the numpy package; a parameter's gradient too."""
    py, jx = packages("four_bar")
    rng = np.random.default_rng(6)
    x, u = rng.uniform(-1.0, 1.0, size=6), rng.normal(size=1)
    A, B = jx.linearized_model(x, u)
    close(jax.jacfwd(jx.xdot_fun)(x, u), np.asarray(A))
    close(jax.jacrev(jx.xdot_fun)(x, u), np.asarray(A))
    close(jax.jacrev(jx.xdot_fun, argnums=1)(x, u), np.asarray(B))
    h = 1e-6
    columns = [(py.multipliers_fun(x + h * e, u) - py.multipliers_fun(x - h * e, u)) / (2 * h) for e in np.eye(6)]
    np.testing.assert_allclose(np.asarray(jax.jacrev(jx.multipliers_fun)(x, u)), np.array(columns).T, atol=1e-6)
    grad = jax.grad(lambda mb: jnp.sum(jx.qddot_fun(x, u, mb=mb) ** 2))(2.0)
    fd = (np.sum(py.qddot_fun(x, u, mb=2.0 + h) ** 2) - np.sum(py.qddot_fun(x, u, mb=2.0 - h) ** 2)) / (2 * h)
    assert float(grad) != 0.0
    np.testing.assert_allclose(float(grad), fd, rtol=1e-6)


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


def test_the_cart_poles_masses_are_identified_from_simulated_data_by_gradient_descent(packages):
    """System identification: a cart-pole with masses mc = 1.3, mp = 0.25 (the package's defaults are 1.0 and 0.1)
    pushed by a known force is simulated by scipy on the numpy package (the data: 150 states 0.02 s apart); gradient
    descent (Adam steps on the log-masses) on the one-step RK4 prediction error of the JAX xdot_fun, with the masses
    as traced parameters, recovers both from the defaults."""
    from scipy.integrate import solve_ivp

    py, jx = packages("cart_pole")
    truth, dt, steps = {"mc": 1.3, "mp": 0.25}, 0.02, 150
    times = dt * np.arange(steps)
    forces = (5.0 * np.sin(2.0 * times) + 3.0 * np.cos(5.0 * times))[:, None]
    states = [np.array([0.0, 0.3, 0.0, 0.0])]
    for k in range(steps - 1):  # zero-order hold of the force between samples
        step = solve_ivp(
            lambda t, x, u: py.xdot_fun(x, u, **truth), (0.0, dt), states[-1], args=(forces[k],), rtol=1e-11, atol=1e-11
        )
        states.append(step.y[:, -1])
    x, u = jnp.asarray(np.array(states[:-1])), jnp.asarray(forces[:-1])
    following = jnp.asarray(np.array(states[1:]))

    def predicted(log_masses):
        mc, mp = jnp.exp(log_masses)
        f = lambda y: jx.xdot_fun(y, u, mc=mc, mp=mp)  # noqa: E731 (the batch of every sample at once)
        k1 = f(x)
        k2 = f(x + dt / 2 * k1)
        k3 = f(x + dt / 2 * k2)
        k4 = f(x + dt * k3)
        return x + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)

    def loss(log_masses):
        return jnp.sum((predicted(log_masses) - following) ** 2) / dt**2

    value_and_grad = jax.jit(jax.value_and_grad(loss))
    theta = jnp.log(jnp.array([jx.PARAMS["mc"], jx.PARAMS["mp"]]))
    first = jnp.zeros(2)
    second = jnp.zeros(2)
    for k in range(1, 251):  # Adam: step 0.05 decaying by 2 % a step, the usual moment decays
        value, gradient = value_and_grad(theta)
        first = 0.9 * first + 0.1 * gradient
        second = 0.999 * second + 0.001 * gradient**2
        step = 0.05 * (first / (1 - 0.9**k)) / (jnp.sqrt(second / (1 - 0.999**k)) + 1e-12)
        theta = theta - step * (0.98**k)
    mc, mp = np.exp(np.asarray(theta))
    assert abs(mc - truth["mc"]) < 1e-3 * truth["mc"] and abs(mp - truth["mp"]) < 1e-3 * truth["mp"], (mc, mp)
    assert float(loss(theta)) < 1e-6 * float(loss(jnp.log(jnp.array([1.0, 0.1]))))
