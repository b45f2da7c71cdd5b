"""The C target on a robot standing on point contacts: Solo-12 (example-robot-data) on its four feet, quaternion base.

References: Pinocchio's ``constraintDynamics`` with four 3-D rigid contacts in LOCAL_WORLD_ALIGNED on the same URDF
(``vdot_fun`` and ``contact_forces_fun``, 1e-8), the Python target's package (every function, 1e-12 relative), and
``sls.control.lqr`` / ``simulate`` on the C package: the trunk back at its height after a 0.3 m/s push, the feet
where they stand."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
from conftest import import_package

import sls
from sls.readers.urdf import load_urdf

pin = pytest.importorskip("pinocchio")
CC = os.environ.get("CC") or "cc"
pytestmark = pytest.mark.skipif(shutil.which(CC.split()[0]) is None, reason=f"no C compiler ({CC})")
from pinocchio_peers import FEET, SOLO, SOLO_JOINTS, SOLO_STANDING, feet_places, random_state  # noqa: E402
from pinocchio_peers import solo_on_feet as peer_contacts  # noqa: E402

#: The solves compared below (with what they need): every function of the robot on its feet is compiled in
#: test_lqr_brings_the_standing_robot_back_after_a_push; those the contacts leave as they are are compared with the
#: Python target's on Solo-12's free base in test_c_quaternion.py.
SOLVES = (
    "vdot_fun",
    "xdot_fun",
    "multipliers_fun",
    "contact_forces_fun",
    "linearized_model",
    "contact_forces_jac_fun",
)


@pytest.fixture(scope="module")
def standing(tmp_path_factory):
    """(C package, Python package) of Solo-12 on its four feet: the solves and input_matrix_fun."""
    folder = tmp_path_factory.mktemp("c_contacts")
    model = load_urdf(SOLO, floating_base=True, contacts=FEET, name="solo_on_feet")
    functions = (*SOLVES, "input_matrix_fun")
    sls.generate(model, folder / "c", target="c", functions=functions)
    sls.generate(model, folder / "py", functions=functions)
    return import_package(folder / "c"), import_package(folder / "py")


def test_constrained_dynamics_equal_constraint_dynamics(standing):
    c, _ = standing
    peer, contacts, datas = peer_contacts()
    data = peer.createData()
    pin.initConstraintDynamics(peer, data, contacts, datas)
    rng = np.random.default_rng(13)
    for _ in range(100):
        x = random_state(peer, rng)
        u = rng.normal(size=c.N_INPUTS)
        tau = c.input_matrix_fun(x) @ u
        settings = pin.ProximalSettings(1e-12, 0, 1)
        accelerations = pin.constraintDynamics(peer, data, x[: peer.nq], x[peer.nq :], tau, contacts, datas, settings)
        assert np.abs(c.vdot_fun(x, u) - accelerations).max() <= 1e-8 * max(1.0, np.abs(accelerations).max())
        forces = data.lambda_c.reshape(4, 3)
        assert np.abs(c.contact_forces_fun(x, u) - forces).max() <= 1e-8 * max(1.0, np.abs(forces).max())


def test_every_solve_equals_the_python_target(standing):
    c, py = standing
    peer, _, _ = peer_contacts()
    rng = np.random.default_rng(14)
    states = np.array([random_state(peer, rng) for _ in range(6)])
    inputs = rng.normal(size=(6, c.N_INPUTS))
    for name in SOLVES:
        for x, u in [*zip(states, inputs), (states, inputs)]:
            want, got = getattr(py, name)(x, u), getattr(c, name)(x, u)
            for w, g in zip(want if isinstance(want, tuple) else (want,), got if isinstance(got, tuple) else (got,)):
                assert g.shape == w.shape
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(w).max()), err_msg=name)


def test_a_flat_foot_beside_point_feet_equals_the_python_target(tmp_path):
    """One foot held flat (6-D) and three point feet: the C package's solves equal the Python target's (which
    tests/derive/test_tree_contacts6d.py checks against constraintDynamics), contact_forces_fun (4, 6) with the
    point feet's moments zero."""
    model = load_urdf(
        SOLO, floating_base=True, contacts=["FL_FOOT:6d", "FR_FOOT", "HL_FOOT", "HR_FOOT"], name="solo_mixed"
    )
    solves = ("vdot_fun", "multipliers_fun", "contact_forces_fun")
    sls.generate(model, tmp_path / "c", target="c", functions=solves)
    sls.generate(model, tmp_path / "py", functions=solves)
    c, py = import_package(tmp_path / "c"), import_package(tmp_path / "py")
    peer, _, _ = peer_contacts()
    rng = np.random.default_rng(15)
    states = np.array([random_state(peer, rng) for _ in range(5)])
    inputs = rng.normal(size=(5, c.N_INPUTS))
    for name in solves:
        for x, u in [*zip(states, inputs), (states, inputs)]:
            want, got = getattr(py, name)(x, u), getattr(c, name)(x, u)
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(want).max()), err_msg=name)
    forces = c.contact_forces_fun(states[0], inputs[0])
    assert forces.shape == (4, 6) and not forces[1:, 3:].any() and forces[0, 3:].any()


def test_lqr_brings_the_standing_robot_back_after_a_push(tmp_path):
    """Solo-12 on its four feet driven by its twelve joint motors, in C: sls.control.lqr at a standing pose, a 0.3 m/s
    push of the trunk: after 2 s the trunk is back at its height within 1 cm and the feet stay where they stand."""
    import sls.control as control

    model = load_urdf(
        SOLO,
        floating_base=True,
        contacts=FEET,
        constraint_stabilization=20.0,
        name="solo_standing_c",
        inputs=[f"m_{joint}" for joint in SOLO_JOINTS],
        actuation={f"tau_{joint}": f"m_{joint}" for joint in SOLO_JOINTS},
    )
    sls.generate(model, tmp_path / "c", target="c")
    package = import_package(tmp_path / "c")
    peer, _, _ = peer_contacts()
    q_eq = SOLO_STANDING
    params = {
        f"contact_{foot}_{axis}": float(c) for foot, at in feet_places(peer, q_eq).items() for axis, c in zip("xyz", at)
    }
    x_eq = np.concatenate([q_eq, np.zeros(peer.nv)])
    u_eq = control.equilibrium_input(package, x_eq, params=params)
    u_eq = u_eq[0] if isinstance(u_eq, tuple) else u_eq
    design = control.lqr(package, x_eq, u_eq, Q=1.0, R=1.0, params=params)
    pushed = x_eq.copy()
    pushed[peer.nq] = 0.3  # the trunk's forward speed
    # the push with the legs at rest moves the feet: projected onto the contacts (the feet still)
    result = control.simulate(package, pushed, (0.0, 2.0), design, params=params, project=True)
    end = result.y[:, -1]
    assert result.success and abs(end[2] - 0.24) < 0.01
    assert np.abs(package.constraint_fun(end, **params)).max() <= 1e-6
    weight = -sum(inertia.mass for inertia in peer.inertias) * peer.gravity.linear[2]
    forces = package.contact_forces_fun(end, design(2.0, end), **params)
    assert forces[:, 2].sum() == pytest.approx(weight, rel=1e-3)
