"""Bodies' origins slid along their joint axes (sls.derive.body_slides): the same physics, fewer operations."""

import numpy as np
import pytest

from sls.derive import body_frames, tree_bodies
from sls.derive.body_slides import slid
from sls.derive.tree_bodies import REVOLUTE
from sls.readers import load_urdf

LINK = (
    '<link name="{name}"><inertial><mass value="{m}"/><origin xyz="{c}" rpy="0.3 -0.2 0.1"/>'
    '<inertia ixx="0.03" ixy="0.002" ixz="-0.001" iyy="0.02" iyz="0.003" izz="0.025"/></inertial></link>'
)
JOINT = (
    '<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
    '<origin xyz="{xyz}"/><axis xyz="{axis}"/><limit effort="1" velocity="1" lower="-3" upper="3"/></joint>'
)
#: A branching leg-like tree with axis-aligned frames and offsets of three numbers (as G1's), a fixed foot.
JOINTS = [
    ("j1", "base", "l1", "0 0.06 -0.1", "0 1 0"),
    ("j2", "l1", "l2", "-0.005 0.05 -0.03", "1 0 0"),
    ("j3", "l2", "l3", "0.025 0.01 -0.12", "0 0 1"),
    ("j4", "l3", "l4", "-0.08 0.002 -0.18", "0 1 0"),
    ("j5", "l4", "l5", "0.01 -0.001 -0.3", "0 1 0"),
    ("j6", "l3", "l6", "0.02 0.03 0.04", "1 0 0"),
]


@pytest.fixture(scope="module")
def robot(tmp_path_factory):
    links = ['<link name="base"/>', '<link name="foot"/>'] + [
        LINK.format(name=f"l{k}", m=1.0 + 0.1 * k, c=f"0.0{k} 0.01 -0.02") for k in range(1, 7)
    ]
    joints = [JOINT.format(name=n, parent=p, child=c, xyz=x, axis=a) for n, p, c, x, a in JOINTS]
    joints.append(
        '<joint name="fix" type="fixed"><parent link="l5"/><child link="foot"/><origin xyz="0.03 0.01 -0.04"/></joint>'
    )
    path = tmp_path_factory.mktemp("slide") / "leg.urdf"
    path.write_text('<robot name="leg">' + "".join(links + joints) + "</robot>")
    return load_urdf(path).tree


def _slid(robot):
    plain, where = tree_bodies.bodies(robot), tree_bodies.placements(robot)
    axes = [body_frames._principal(b.axis) for b in plain]
    return plain, where, *slid(plain, where, axes)


def test_slides_zero_offsets_and_the_operations_drop(robot):
    plain, _, moved, _ = _slid(robot)
    assert sum(abs(x) > 1e-14 for b in moved[1:] for x in b.offset) < sum(
        abs(x) > 1e-14 for b in plain[1:] for x in b.offset
    )
    assert body_frames.operations(moved) < body_frames.operations(plain)
    assert body_frames.spun(plain, tree_bodies.placements(robot), REVOLUTE)[0] == moved


def _world(bodies, where, q):
    """Every link's world pose ``(R, p)`` (its body's pose at ``q`` composed with its placement)."""
    from test_body_frames import _poses

    return _poses(bodies, where, q)


def test_slid_bodies_give_the_same_links_mass_matrix_and_forces(robot):
    from test_body_frames import _dynamics

    plain, where, moved, slid_where = _slid(robot)
    for q, v in np.random.default_rng(6).uniform(-3, 3, (2, 2, len(plain))):
        _, before = _world(plain, where, q)
        _, after = _world(moved, slid_where, q)
        for link, (R, p) in before.items():
            np.testing.assert_allclose(after[link][0], R, atol=1e-12)
            np.testing.assert_allclose(after[link][1], p, atol=1e-12)
        M0, tau0 = _dynamics(plain, q, v)
        M1, tau1 = _dynamics(moved, q, v)
        np.testing.assert_allclose(M1, M0, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(tau1, tau0, rtol=1e-12, atol=1e-12)
