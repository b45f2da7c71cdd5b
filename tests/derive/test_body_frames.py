"""Bodies' frames spun about their joint axes (sls.derive.body_frames): the same physics, fewer operations."""

import math

import numpy as np
import pytest

from sls.derive import body_frames, tree_bodies
from sls.derive.tree_bodies import REVOLUTE
from sls.readers import load_urdf

LINK = (
    '<link name="{name}"><inertial><mass value="{m}"/><origin xyz="{c}" rpy="0.3 -0.2 0.1"/>'
    '<inertia ixx="0.03" ixy="0.002" ixz="-0.001" iyy="0.02" iyz="0.003" izz="0.025"/></inertial></link>'
)
JOINT = (
    '<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
    '<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/><limit effort="1" velocity="1" lower="-3" upper="3"/></joint>'
)
#: A branching arm whose origins are quarter turns written as 1.5708 (dense R_o, as iCub's), one oblique.
JOINTS = [
    ("j1", "base", "l1", "0 0 0.1", "1.5708 0 0", "0 0 1"),
    ("j2", "l1", "l2", "0.1 0 0", "0 -1.5708 0", "0 1 0"),
    ("j3", "l2", "l3", "0 0.2 0.01", "1.5708 0 1.5708", "0 0 -1"),
    ("j4", "l3", "l4", "0.05 0 0.1", "-1.5708 0 0", "1 0 0"),
    ("j5", "l2", "l5", "0 -0.1 0", "0.4 1.5708 0", "0 0 1"),
    ("j6", "l5", "l6", "0.1 0.02 0", "1.5708 0 0", "0 1 0"),
]


@pytest.fixture(scope="module")
def robot(tmp_path_factory):
    links = ['<link name="base"/>'] + [
        LINK.format(name=f"l{k}", m=1.0 + 0.1 * k, c=f"0.0{k} 0.01 -0.02") for k in range(1, 7)
    ]
    joints = [JOINT.format(name=n, parent=p, child=c, xyz=x, rpy=r, axis=a) for n, p, c, x, r, a in JOINTS]
    path = tmp_path_factory.mktemp("spin") / "arm.urdf"
    path.write_text('<robot name="arm">' + "".join(links + joints) + "</robot>")
    return load_urdf(path).tree


def _turn(k: int, angle: float) -> np.ndarray:
    return np.array(body_frames._turn(k, angle))


def _poses(bodies, where, q):
    """World rotation and origin of every body and link at joint angles ``q``, by plain matrix products."""
    world = []
    for body in bodies:
        k = int(np.argmax(np.abs(body.axis)))
        sign = np.sign(body.axis[k])
        R_q = _turn(k, sign * (body.multiplier * q[body.coordinate] + body.shift + body.angle))
        R_p, p_p = world[body.parent] if body.parent >= 0 else (np.eye(3), np.zeros(3))
        world.append((R_p @ np.array(body.rotation) @ R_q, p_p + R_p @ np.array(body.offset)))
    links = {}
    for link, (b, R, t) in where.items():
        R_b, p_b = world[b] if b >= 0 else (np.eye(3), np.zeros(3))
        links[link] = (R_b @ np.array(R), p_b + R_b @ np.array(t))
    return world, links


def test_decompose_gives_the_rotation_back():
    rng = np.random.default_rng(5)
    for a in range(3):
        for k in range(3):
            angles = rng.uniform(-math.pi, math.pi, 3)
            m = next(i for i in range(3) if i not in (a, k))
            R = _turn(a, angles[0]) @ _turn(m, angles[1]) @ _turn(k, angles[2])
            phi1, middle, alpha, phi2 = body_frames.decompose(R, a, k)
            assert middle not in (a, k)
            np.testing.assert_allclose(_turn(a, phi1) @ _turn(middle, alpha) @ _turn(k, phi2), R, atol=1e-12)


def test_spun_frames_move_every_link_as_before_and_cost_less(robot):
    plain, where = tree_bodies.bodies(robot), tree_bodies.placements(robot)
    turned, moved = body_frames.spun(plain, where, REVOLUTE)
    assert turned != plain  # the dense R_o were split
    assert body_frames.operations(turned) < body_frames.operations(plain)
    assert sum(tree_bodies.constant(x) != 0 for b in turned for row in b.rotation for x in row) < sum(
        tree_bodies.constant(x) != 0 for b in plain for row in b.rotation for x in row
    )
    for q in np.random.default_rng(2).uniform(-3, 3, (3, len(plain))):
        _, before = _poses(plain, where, q)
        _, after = _poses(turned, moved, q)
        for link, (R, p) in before.items():
            np.testing.assert_allclose(after[link][0], R, atol=1e-12)
            np.testing.assert_allclose(after[link][1], p, atol=1e-12)


def test_spun_bodies_carry_the_same_inertia_in_the_world(robot):
    plain, where = tree_bodies.bodies(robot), tree_bodies.placements(robot)
    turned, moved = body_frames.spun(plain, where, REVOLUTE)
    q = np.random.default_rng(3).uniform(-3, 3, len(plain))
    for (R0, p0), (R1, p1), b0, b1 in zip(_poses(plain, where, q)[0], _poses(turned, moved, q)[0], plain, turned):
        # origins may slide along their joint axes (sls.derive.body_slides): the first moment and the inertia
        # about the world's origin are what stays
        assert b1.mass == b0.mass
        np.testing.assert_allclose(R1 @ np.array(b1.moment) + b1.mass * p1, R0 @ np.array(b0.moment) + b0.mass * p0)
        np.testing.assert_allclose(_about_world(b1, R1, p1), _about_world(b0, R0, p0), atol=1e-12)


def _about_world(body, R: np.ndarray, p: np.ndarray) -> np.ndarray:
    """The body's inertia about the world's origin, world axes, from its inertia about its own origin."""
    h = R @ np.array(body.moment)
    shift = (2 * h @ p + body.mass * p @ p) * np.eye(3) - np.outer(h, p) - np.outer(p, h) - body.mass * np.outer(p, p)
    return R @ np.array(body.inertia) @ R.T + shift


def test_axis_aligned_robots_keep_their_frames(robot):
    plain, where = tree_bodies.bodies(robot), tree_bodies.placements(robot)
    square = tuple(
        b.__class__(**{**b.__dict__, "rotation": tuple(tuple(float(round(x)) for x in row) for row in b.rotation)})
        for b in plain
    )
    assert body_frames.spun(square, where, REVOLUTE) == (square, where)


def _dynamics(bodies, q, v):
    """``M`` and ``τ(q, q̇, 0)`` with gravity 9.81 of ``bodies`` at ``q``, ``v`` (the recursions on a graph)."""
    import sympy

    from sls.algebra.graph import Graph
    from sls.derive.rigid_body import TreeDynamics

    g = Graph()
    symbols = [sympy.Symbol(f"x{k}", real=True) for k in range(2 * len(q))]
    nodes = [g.symbol(s) for s in symbols]
    tree = TreeDynamics(g, tuple(bodies), nodes[: len(q)], len(q))
    M = [e for row in tree.mass_matrix() for e in row]
    bias = tree.inverse_dynamics(nodes[len(q) :], [g.zero] * len(q), g.number(sympy.Float(9.81)))
    values = g.evaluator(M + bias, symbols)([*q, *v])
    return np.array(values[: len(M)]).reshape(len(q), len(q)), np.array(values[len(M) :])


def test_spun_bodies_give_the_same_mass_matrix_and_forces(robot):
    plain, where = tree_bodies.bodies(robot), tree_bodies.placements(robot)
    turned, _ = body_frames.spun(plain, where, REVOLUTE)
    for q, v in np.random.default_rng(4).uniform(-3, 3, (2, 2, len(plain))):
        M0, tau0 = _dynamics(plain, q, v)
        M1, tau1 = _dynamics(turned, q, v)
        np.testing.assert_allclose(M1, M0, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(tau1, tau0, rtol=1e-12, atol=1e-12)
