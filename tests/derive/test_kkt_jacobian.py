"""``kkt_jac`` (``constrained_residual_jac_fun``, sls.derive.named_arrays.kkt_jacobian and the graph routes'
GraphTerms._kkt_jac): the Jacobian of the constrained residual ``[r − Aᵀλ; A a − g]`` at fixed accelerations ``a``,
multipliers ``λ`` and inputs ``u``, against central differences of the package's own ``tau_fun``,
``input_matrix_fun``, ``constraint_jac_fun`` and ``constraint_bias_fun`` (``r = tau_fun(x, a) − B_u(x) u``), on a
holonomic model (the four-bar), velocity constraints (a rolling disc) and generalized speeds, on each route."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import import_package
from systems import ARM_SPEEDS, ROLLING_DISC

import sls

MODELS = {
    "four_bar": lambda: sls.load_example("four_bar"),
    "rolling_disc": lambda: sls.model_from_strings(**ROLLING_DISC),
    "arm_speeds": lambda: sls.model_from_strings(**ARM_SPEEDS, constraints=["sin(q1) + sin(q2) - 0.5"]),
}


def residual(package, x: np.ndarray, u: np.ndarray, a: np.ndarray, lam: np.ndarray) -> np.ndarray:
    """``[r − Aᵀλ; A a − g]`` from the package's functions."""
    A = package.constraint_jac_fun(x)
    r = package.tau_fun(x, a) - package.input_matrix_fun(x) @ u - A.T @ lam
    return np.concatenate([r, A @ a - package.constraint_bias_fun(x)])


@pytest.mark.parametrize("method", ["expanded", "graph"])
@pytest.mark.parametrize("name", list(MODELS))
def test_the_constrained_residual_jacobian_is_its_difference(name, method, tmp_path):
    if name == "arm_speeds" and method == "graph":
        pytest.skip("generalized speeds are derived on the expanded route")
    sls.generate(MODELS[name](), tmp_path / "pkg", method=method)
    package = import_package(tmp_path / "pkg")
    rng = np.random.default_rng(7)
    n, k, h = package.N_DOF, package.N_CONSTRAINTS, 1e-6
    for _ in range(4):
        x = rng.uniform(-1.2, 1.2, len(package.STATE))
        u, a, lam = rng.normal(size=package.N_INPUTS), rng.normal(size=n), rng.normal(size=k)
        got = package.constrained_residual_jac_fun(x, u, a, lam)
        assert got.shape == (n + k, len(x))
        expected = np.empty_like(got)
        for col in range(len(x)):
            step = np.zeros(len(x))
            step[col] = h
            expected[:, col] = (residual(package, x + step, u, a, lam) - residual(package, x - step, u, a, lam)) / (
                2 * h
            )
        assert np.abs(got - expected).max() <= 1e-6 * max(1.0, np.abs(expected).max())
    # a batch of states, each argument broadcast against the others
    states = rng.uniform(-1.2, 1.2, (3, len(package.STATE)))
    batch = package.constrained_residual_jac_fun(states, u, a, lam)
    assert batch.shape == (3, n + k, len(x))
    assert np.abs(batch[1] - package.constrained_residual_jac_fun(states[1], u, a, lam)).max() <= 1e-12 * max(
        1.0, np.abs(batch[1]).max()
    )
