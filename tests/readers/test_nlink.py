"""The scalable benchmark models (sls/nlink.py) against energies computed here from the geometry.

:func:`sls.readers.nlink.nlink_pendulum` (point masses on massless rods, absolute angles) and
:func:`sls.readers.nlink.relative_chain` (uniform rods, relative angles) write T and V as text; here T and V are
evaluated numerically from the positions and velocities of the masses (the chain's rods integrated along
their length by Gauss–Legendre quadrature, exact for the quadratic integrand) and compared at random states.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import sls
from sls.readers.nlink import MAX_LINKS, chain_toml, nlink_pendulum, nlink_toml, relative_chain

RNG = np.random.default_rng(11)


def _energies(model: sls.Model):
    """``(T, V)`` of ``model`` as numpy functions of ``(x, params)``."""
    symbols = list(model.state) + [sp.Symbol(name, real=True) for name in model.params]
    by_name = {s.name: s for s in symbols}
    T = model.T.subs({s: by_name[s.name] for s in model.T.free_symbols})
    V = model.V.subs({s: by_name[s.name] for s in model.V.free_symbols})
    return sp.lambdify(symbols, T, "numpy"), sp.lambdify(symbols, V, "numpy")


def _point_masses(q, dq, m, lengths, g):
    """T and V of point masses ``m`` at the tips of massless rods hanging at absolute angles ``q``."""
    T = V = 0.0
    x = y = vx = vy = 0.0
    for k in range(len(q)):
        x, y = x + lengths[k] * np.sin(q[k]), y - lengths[k] * np.cos(q[k])
        vx, vy = vx + lengths[k] * np.cos(q[k]) * dq[k], vy + lengths[k] * np.sin(q[k]) * dq[k]
        T += m[k] * (vx**2 + vy**2) / 2
        V += m[k] * g * y
    return T, V


def _uniform_rods(q, dq, m, lengths, g):
    """T and V of uniform rods chained at relative angles ``q``, integrated along each rod."""
    nodes, weights = np.polynomial.legendre.leggauss(3)
    T = V = 0.0
    angle = rate = 0.0
    base = np.zeros(2)
    base_velocity = np.zeros(2)
    for k in range(len(q)):
        angle, rate = angle + q[k], rate + dq[k]
        direction = np.array([np.sin(angle), -np.cos(angle)])
        turning = np.array([np.cos(angle), np.sin(angle)]) * rate
        for node, weight in zip(nodes, weights):
            s = lengths[k] * (node + 1) / 2  # a point of the rod, s from its joint
            density = m[k] / lengths[k] * weight * lengths[k] / 2
            velocity = base_velocity + s * turning
            T += density * velocity @ velocity / 2
            V += density * g * (base + s * direction)[1]
        base = base + lengths[k] * direction
        base_velocity = base_velocity + lengths[k] * turning
    return T, V


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_nlink_energies_are_those_of_point_masses_on_rods(n):
    model = nlink_pendulum(n)
    T, V = _energies(model)
    for _ in range(5):
        q, dq = RNG.uniform(-np.pi, np.pi, n), RNG.normal(size=n)
        m, lengths, g = RNG.uniform(0.5, 2, n), RNG.uniform(0.3, 1.5, n), RNG.uniform(5, 12)
        params = {**{f"m{k + 1}": m[k] for k in range(n)}, **{f"l{k + 1}": lengths[k] for k in range(n)}, "g": g}
        values = [*q, *dq, *(params[name] for name in model.params)]
        expected = _point_masses(q, dq, m, lengths, g)
        np.testing.assert_allclose([T(*values), V(*values)], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n", [1, 2, 4])
def test_relative_chain_energies_are_those_of_uniform_rods(n):
    model = relative_chain(n)
    T, V = _energies(model)
    for _ in range(5):
        q, dq = RNG.uniform(-np.pi, np.pi, n), RNG.normal(size=n)
        m, lengths, g = RNG.uniform(0.5, 2, n), RNG.uniform(0.3, 1.5, n), RNG.uniform(5, 12)
        params = {
            **{f"m{k + 1}": m[k] for k in range(n)},
            **{f"l{k + 1}": lengths[k] for k in range(n)},
            "g": g,
            "b": 0.1,
        }
        values = [*q, *dq, *(params[name] for name in model.params)]
        expected = _uniform_rods(q, dq, m, lengths, g)
        np.testing.assert_allclose([T(*values), V(*values)], expected, rtol=1e-11, atol=1e-11)


def test_the_models_are_named_and_parametrized_as_documented():
    pendulum = nlink_pendulum(3)
    assert pendulum.name == "nlink3" and pendulum.n == 3
    assert [s.name for s in pendulum.state] == ["q1", "q2", "q3", "dq1", "dq2", "dq3"]
    assert pendulum.params == {"m1": 1.0, "m2": 1.0, "m3": 1.0, "l1": 1.0, "l2": 1.0, "l3": 1.0, "g": 9.81}
    assert all(f == 0 for f in pendulum.fric)
    chain = relative_chain(2)
    assert chain.name == "chain2" and chain.params["b"] == 0.1 and chain.params["l1"] == 0.5
    assert [str(f) for f in chain.fric] == ["b*dq1", "b*dq2"]


def test_the_largest_pendulum_stays_within_the_parser_limit():
    assert nlink_pendulum(MAX_LINKS).n == MAX_LINKS
    assert nlink_toml(MAX_LINKS).startswith(f"# Planar {MAX_LINKS}-link pendulum")


@pytest.mark.parametrize("n", [0, MAX_LINKS + 1, -1, 2.0, True, "3", None])
def test_a_bad_number_of_links_is_one_model_error(n):
    for make, label in ((nlink_toml, "nlink"), (chain_toml, "chain")):
        with pytest.raises(sls.ModelError, match=rf"^{label}: n must be an integer from 1 to {MAX_LINKS}, got "):
            make(n)
