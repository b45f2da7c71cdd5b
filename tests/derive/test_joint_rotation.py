"""A revolute joint's rotation ``R_o R_q`` as nodes (:mod:`sls.derive.joint_rotation`) against numpy's product."""

import math

import numpy as np
import pytest
import sympy

from sls.algebra.graph import Graph
from sls.derive.joint_rotation import premultiplied, turn, turn_back


def _rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF's fixed-axis rotation ``Rz(yaw) Ry(pitch) Rx(roll)``."""
    cr, sr, cp, sp, cy, sy = (f(a) for a in (roll, pitch, yaw) for f in (math.cos, math.sin))
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def _about(axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues' rotation by ``angle`` about the unit ``axis``."""
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


@pytest.mark.parametrize("axis", [(1, 0, 0), (0, 1, 0), (0, 0, 1), (0, 0, -1), (-1, 0, 0)])
@pytest.mark.parametrize("rpy", [(0.3, -0.7, 2.1), (1.5708, -1.11e-16, -1.5708), (1.5708, 1.5708, 0)])
def test_nodes_turn_vectors_as_the_product(axis: tuple, rpy: tuple) -> None:
    g = Graph()
    theta = sympy.Symbol("theta")
    node = g.symbol(theta)
    c, s = g.function(sympy.cos, (node,)), g.function(sympy.sin, (node,))
    rotation = _rpy(*rpy)
    R = premultiplied(g, rotation.tolist(), axis, c, s)
    assert R is not None  # a rotation off the axes: forming R pays
    v = [g.symbol(sympy.Symbol(f"v{k}")) for k in range(3)]
    symbols = [theta, *(sympy.Symbol(f"v{k}") for k in range(3))]
    evaluate = g.evaluator([*turn(g, R, v), *turn_back(g, R, v)], symbols)
    rng = np.random.default_rng(3)
    for _ in range(3):
        angle, vector = rng.uniform(-3, 3), rng.uniform(-1, 1, 3)
        want = rotation @ _about(np.array(axis, dtype=float), angle)
        got = np.array(evaluate([angle, *vector]), dtype=float)
        np.testing.assert_allclose(got[:3], want @ vector, atol=1e-14)
        np.testing.assert_allclose(got[3:], want.T @ vector, atol=1e-14)


@pytest.mark.parametrize("rpy", [(0, 0, 0), (math.pi / 2, 0, 0), (0, math.pi, 0)])
def test_axis_aligned_origins_keep_two_steps(rpy: tuple) -> None:
    g = Graph()
    node = g.symbol(sympy.Symbol("theta"))
    c, s = g.function(sympy.cos, (node,)), g.function(sympy.sin, (node,))
    rotation = np.round(_rpy(*rpy), 15).tolist()
    assert premultiplied(g, rotation, (0, 0, 1), c, s) is None


def test_a_turn_about_the_joint_axis_itself_pays() -> None:
    """G1's hips: ``R_o`` about y by 0.1749 rad, the joint about y too: ``R`` has the pattern of a y-rotation."""
    g = Graph()
    node = g.symbol(sympy.Symbol("theta"))
    c, s = g.function(sympy.cos, (node,)), g.function(sympy.sin, (node,))
    assert premultiplied(g, _rpy(0, 0.1749, 0).tolist(), (0, 1, 0), c, s) is not None
    assert premultiplied(g, _rpy(0, 0.1749, 0).tolist(), (1, 0, 0), c, s) is None
