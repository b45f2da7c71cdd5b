"""A symmetric matrix turned from its six entries (:mod:`sls.derive.inertia_rotation`) against numpy's ``R S Rᵀ``."""

import math

import numpy as np
import pytest
import sympy

from sls.algebra.graph import Graph
from sls.derive.inertia_rotation import UPPER, AxisTurn, constant_symmetric, full, upper


def _about(k: int, angle: float) -> np.ndarray:
    """The turn by ``angle`` about the coordinate axis ``e_k``."""
    R = np.eye(3)
    i, j = (k + 1) % 3, (k + 2) % 3
    R[i, i] = R[j, j] = math.cos(angle)
    R[j, i], R[i, j] = math.sin(angle), -math.sin(angle)
    return R


def _symmetric(g: Graph) -> tuple:
    symbols = [sympy.Symbol(f"S{a}{b}") for a, b in UPPER]
    nodes = dict(zip(UPPER, (g.symbol(s) for s in symbols)))
    return symbols, nodes


@pytest.mark.parametrize("k", [0, 1, 2])
@pytest.mark.parametrize("negative", [False, True])
def test_axis_turn_is_the_product(k: int, negative: bool) -> None:
    g = Graph()
    theta = sympy.Symbol("theta")
    node = g.symbol(theta)
    c, s = g.function(sympy.cos, (node,)), g.function(sympy.sin, (node,))
    symbols, S = _symmetric(g)
    turned = full(AxisTurn(g, k, c, s, negative).symmetric(S))
    evaluate = g.evaluator([e for row in turned for e in row], [theta, *symbols])
    rng = np.random.default_rng(3)
    A = rng.normal(size=(3, 3))
    matrix = A + A.T
    angle = 0.83
    R = _about(k, -angle if negative else angle)
    got = np.array(evaluate([angle, *(matrix[a, b] for a, b in UPPER)])).reshape(3, 3)
    assert np.allclose(got, R @ matrix @ R.T, atol=1e-14)


@pytest.mark.parametrize("angles", [(0.0, 0.0), (math.pi / 2, 0.0), (1.5708, 0.4), (0.3, -2.2)])
def test_constant_turn_is_the_product(angles: tuple) -> None:
    g = Graph()
    symbols, S = _symmetric(g)
    R = _about(0, angles[0]) @ _about(2, angles[1])
    turned = full(constant_symmetric(g, R.tolist(), S))
    evaluate = g.evaluator([e for row in turned for e in row], symbols)
    A = np.random.default_rng(5).normal(size=(3, 3))
    matrix = A + A.T
    got = np.array(evaluate([matrix[a, b] for a, b in UPPER])).reshape(3, 3)
    assert np.allclose(got, R @ matrix @ R.T, atol=1e-13)
    assert upper(turned).keys() == set(UPPER)
