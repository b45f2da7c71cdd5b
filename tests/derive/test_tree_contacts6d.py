"""6-D contacts of a robot (sls.derive.tree_frames.contact_terms with LINK:6d) against Pinocchio's
constraintDynamics with CONTACT_6D rigid contacts in LOCAL_WORLD_ALIGNED: the G1 humanoid with both feet flat, and
Solo-12 with one foot held flat and three point feet (a mix: contact_forces_fun is (4, 6), the point feet's moments
zero); the orientation rows against finite differences of the pose on the contact manifold, with the anchors taken
from Pinocchio's own frame placement and roll-pitch-yaw (pin.rpy.matrixToRpy)."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

import sls
from sls.readers.urdf import load_urdf

pin = pytest.importorskip("pinocchio")
ROBOTS = Path(pin.__file__).resolve().parents[4] / "share/example-robot-data/robots"
G1 = ROBOTS / "g1_description/urdf/g1_29dof_rev_1_0.urdf"
SOLO = ROBOTS / "solo_description/robots/solo12.urdf"
G1_FEET = ["left_ankle_roll_link", "right_ankle_roll_link"]
SOLO_FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
SAMPLES = 100


#: The functions the tests below call (and what they need) on G1 and Solo-12 with flat feet; every function of a
#: robot on its feet is generated in tests/derive/test_tree_contacts.py, G1's free base in test_free_flyer_tree.py
#: (G1 with all of its functions took four times as long to generate).
CALLED = (
    "vdot_fun",
    "xdot_fun",
    "contact_forces_fun",
    "contact_forces_jac_fun",
    "input_matrix_fun",
    "linearized_model",
    "constraint_fun",
    "constraint_jac_fun",
)


def generated(model: sls.Model, folder: Path):
    sls.generate(model, folder / model.name, functions=CALLED)
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(model.name)
    finally:
        sys.path.remove(str(folder))


class Peer:
    """Pinocchio's model of a floating-base robot with rigid contacts (kind per frame), its state mapped onto sls's
    (joints matched by name)."""

    def __init__(self, path: Path, contacts: list, package) -> None:
        self.model = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        self.data = self.model.createData()
        ids = [self.model.getJointId(name) for name in package.STATE[7 : package.N_DOF + 1]]
        self.q_index = list(range(7)) + [self.model.joints[i].idx_q for i in ids]
        self.v_index = list(range(6)) + [self.model.joints[i].idx_v for i in ids]
        self.contacts = pin.StdVec_RigidConstraintModel()
        for frame_name, kind in contacts:
            frame = self.model.frames[self.model.getFrameId(frame_name)]
            contact_type = pin.ContactType.CONTACT_6D if kind == "6d" else pin.ContactType.CONTACT_3D
            self.contacts.append(
                pin.RigidConstraintModel(
                    contact_type, self.model, frame.parentJoint, frame.placement, pin.LOCAL_WORLD_ALIGNED
                )
            )
        self.datas = pin.StdVec_RigidConstraintData()
        for contact in self.contacts:
            self.datas.append(contact.createData())
        pin.initConstraintDynamics(self.model, self.data, self.contacts, self.datas)

    def random_state(self, rng) -> np.ndarray:
        q = pin.randomConfiguration(self.model, -np.ones(self.model.nq), np.ones(self.model.nq))
        x = np.empty(self.model.nq + self.model.nv)
        x[: self.model.nq] = q[self.q_index]
        x[self.model.nq :] = rng.normal(size=self.model.nv)
        return x

    def solve(self, x: np.ndarray, tau: np.ndarray) -> tuple:
        """(v̇, λ_c) of constraintDynamics at sls's state x and generalized force tau (sls's order)."""
        nq, nv = self.model.nq, self.model.nv
        q, v, t = np.empty(nq), np.empty(nv), np.empty(nv)
        q[self.q_index], v[self.v_index], t[self.v_index] = x[:nq], x[nq:], tau
        settings = pin.ProximalSettings(1e-12, 0, 1)
        a = pin.constraintDynamics(self.model, self.data, q, v, t, self.contacts, self.datas, settings)
        return a[self.v_index], self.data.lambda_c.copy()

    def derivatives(self, x: np.ndarray, tau: np.ndarray) -> tuple:
        """Pinocchio's computeConstraintDynamicsDerivatives at sls's x and tau, in sls's order: ([ddq_dq, ddq_dv]
        (nv x 2 nv, tangent columns), ddq_dtau, [dlambda_dq, dlambda_dv], dlambda_dtau)."""
        self.solve(x, tau)
        pin.computeConstraintDynamicsDerivatives(
            self.model, self.data, self.contacts, self.datas, pin.ProximalSettings(1e-12, 0, 1)
        )
        d, rows, columns = self.data, self.v_index, self.v_index

        def tangent(dq: np.ndarray, dv: np.ndarray) -> np.ndarray:
            return np.hstack([dq[:, columns], dv[:, columns]])

        return (
            tangent(d.ddq_dq, d.ddq_dv)[rows],
            d.ddq_dtau[rows][:, columns],
            tangent(d.dlambda_dq, d.dlambda_dv),
            d.dlambda_dtau[:, columns],
        )


@pytest.fixture(scope="module")
def g1_flat(tmp_path_factory):
    model = load_urdf(G1, floating_base=True, contacts=[f"{foot}:6d" for foot in G1_FEET], name="g1_flat_feet")
    package = generated(model, tmp_path_factory.mktemp("g1_flat"))
    return package, Peer(G1, [(foot, "6d") for foot in G1_FEET], package)


@pytest.fixture(scope="module")
def solo_mixed(tmp_path_factory):
    contacts = ["FL_FOOT:6d", "FR_FOOT", "HL_FOOT:point", "HR_FOOT"]
    model = load_urdf(SOLO, floating_base=True, contacts=contacts, name="solo_mixed_feet")
    package = generated(model, tmp_path_factory.mktemp("solo_mixed"))
    return package, Peer(SOLO, [("FL_FOOT", "6d")] + [(foot, "point") for foot in SOLO_FEET[1:]], package)


def test_both_feet_flat_equal_constraint_dynamics(g1_flat):
    package, peer = g1_flat
    assert package.CONTACTS == tuple(G1_FEET) and package.N_CONSTRAINTS == 12 and package.N_HOLONOMIC == 12
    rng = np.random.default_rng(11)
    for _ in range(SAMPLES):
        x, u = peer.random_state(rng), rng.normal(size=package.N_INPUTS)
        accelerations, forces = peer.solve(x, package.input_matrix_fun(x) @ u)
        assert np.abs(package.vdot_fun(x, u) - accelerations).max() <= 1e-8 * max(1.0, np.abs(accelerations).max())
        wrenches = forces.reshape(2, 6)
        assert np.abs(package.contact_forces_fun(x, u) - wrenches).max() <= 1e-8 * max(1.0, np.abs(wrenches).max())
    batch = np.array([peer.random_state(rng) for _ in range(3)])
    assert package.contact_forces_fun(batch, rng.normal(size=(3, package.N_INPUTS))).shape == (3, 2, 6)


def check_derivatives(package, peer: Peer, samples: int, seed: int, wrench_rows) -> None:
    """linearized_model's lower rows and contact_forces_jac_fun = Pinocchio's computeConstraintDynamicsDerivatives
    (ddq_dq, ddq_dv, ddq_dtau; dlambda_dq, dlambda_dv, dlambda_dtau) to 1e-8 relative at random states, B through
    B_u = input_matrix_fun; ``wrench_rows`` maps contact_forces_fun's flattened entries to lambda_c's rows (None:
    a point contact's moment, zero)."""
    rng = np.random.default_rng(seed)
    n = peer.model.nv
    states = np.array([peer.random_state(rng) for _ in range(samples)])
    inputs = rng.normal(size=(samples, package.N_INPUTS))
    A, B = package.linearized_model(states, inputs)  # one batch
    F_x, F_u = package.contact_forces_jac_fun(states, inputs)
    for k in range(samples):
        B_u = package.input_matrix_fun(states[k])
        accelerations, by_tau, forces, forces_by_tau = peer.derivatives(states[k], B_u @ inputs[k])
        for ours, theirs in (
            (A[k, n:], accelerations),
            (B[k, n:], by_tau @ B_u),
            (F_x[k].reshape(-1, 2 * n), expand(forces, wrench_rows)),
            (F_u[k].reshape(-1, package.N_INPUTS), expand(forces_by_tau @ B_u, wrench_rows)),
        ):
            assert np.abs(ours - theirs).max() <= 1e-8 * max(1.0, np.abs(theirs).max())


def expand(rows: np.ndarray, where) -> np.ndarray:
    """``rows`` (Pinocchio's, one per multiplier) placed at contact_forces_fun's flattened entries (zero rows where
    ``where`` holds None)."""
    return np.array([np.zeros(rows.shape[1]) if i is None else rows[i] for i in where])


def test_both_feet_flat_derivatives_equal_constraint_dynamics_derivatives(g1_flat):
    """G1 (29 joints) on two 6-D feet, 300 random states: the structured derivatives (constrained_residual_jac_fun,
    one solve with the forward factors) = Pinocchio's."""
    package, peer = g1_flat
    check_derivatives(package, peer, 300, 21, list(range(12)))


def test_a_mix_of_6d_and_point_feet_equal_constraint_dynamics(solo_mixed):
    """lambda_c is [FL's force, FL's moment, FR's force, HL's force, HR's force]: contact_forces_fun's rows are
    (force, moment) with the point feet's moments zero."""
    package, peer = solo_mixed
    assert package.N_CONSTRAINTS == 15
    rng = np.random.default_rng(12)
    for _ in range(SAMPLES):
        x, u = peer.random_state(rng), rng.normal(size=package.N_INPUTS)
        accelerations, forces = peer.solve(x, package.input_matrix_fun(x) @ u)
        assert np.abs(package.vdot_fun(x, u) - accelerations).max() <= 1e-8 * max(1.0, np.abs(accelerations).max())
        wrenches = np.zeros((4, 6))
        wrenches[0] = forces[:6]
        wrenches[1:, :3] = forces[6:].reshape(3, 3)
        assert np.abs(package.contact_forces_fun(x, u) - wrenches).max() <= 1e-8 * max(1.0, np.abs(forces).max())


def test_a_mix_of_6d_and_point_feet_derivatives(solo_mixed):
    """FL held flat, three point feet: contact_forces_jac_fun's rows of the point feet's moments are zero."""
    package, peer = solo_mixed
    where = list(range(6)) + [i for foot in range(3) for i in (6 + 3 * foot + np.arange(3)).tolist() + [None] * 3]
    check_derivatives(package, peer, 40, 22, where)


def test_the_default_anchors_are_the_neutral_pose(g1_flat):
    package, peer = g1_flat
    data = peer.model.createData()
    pin.framesForwardKinematics(peer.model, data, pin.neutral(peer.model))
    for foot in G1_FEET:
        placement = data.oMf[peer.model.getFrameId(foot)]
        where = [package.PARAMS[f"contact_{foot}_{axis}"] for axis in ("x", "y", "z", "roll", "pitch", "yaw")]
        assert where == pytest.approx(list(placement.translation) + list(pin.rpy.matrixToRpy(placement.rotation)))
    x = np.concatenate([pin.neutral(peer.model)[peer.q_index], np.zeros(peer.model.nv)])
    assert np.abs(package.constraint_fun(x)).max() <= 1e-12


def test_the_orientation_rows_are_the_rate_of_the_pose_error(solo_mixed):
    """At a random pose, the anchors set where Pinocchio places the feet (roll, pitch, yaw by pin.rpy): the
    constraints vanish, and their rate along any tangent direction dq is A dq (central differences)."""
    package, peer = solo_mixed
    rng = np.random.default_rng(13)
    data = peer.model.createData()
    for _ in range(5):
        x = peer.random_state(rng)
        q = np.empty(peer.model.nq)
        q[peer.q_index] = x[: peer.model.nq]
        pin.framesForwardKinematics(peer.model, data, q)
        params = {}
        for foot in SOLO_FEET:
            placement = data.oMf[peer.model.getFrameId(foot)]
            pose = list(placement.translation) + list(pin.rpy.matrixToRpy(placement.rotation))
            for axis, value in zip(("x", "y", "z", "roll", "pitch", "yaw"), pose):
                if f"contact_{foot}_{axis}" in package.PARAMS:
                    params[f"contact_{foot}_{axis}"] = float(value)
        assert np.abs(package.constraint_fun(x, **params)).max() <= 1e-12
        n, h = package.N_DOF, 1e-6
        A = package.constraint_jac_fun(x, **params)
        for direction in rng.normal(size=(3, n)):

            def c(step, x=x, direction=direction, params=params):
                moved = package.integrate(x[: peer.model.nq], step * direction)
                return package.constraint_fun(np.concatenate([moved, x[peer.model.nq :]]), **params)

            rate = (c(h) - c(-h)) / (2 * h)
            assert np.abs(rate - A @ direction).max() <= 1e-7 * max(1.0, np.abs(rate).max())


def test_the_constrained_linearization_is_the_tangent_space_difference(solo_mixed):
    """linearized_model's lower rows = d vdot / d[dq; dv] at x = (integrate(q, dq), v + dv), central differences."""
    package, peer = solo_mixed
    rng = np.random.default_rng(14)
    n, n_q, h = package.N_DOF, peer.model.nq, 1e-6
    for _ in range(2):
        x, u = peer.random_state(rng), rng.normal(size=package.N_INPUTS)
        A = package.linearized_model(x, u)[0]

        def vdot(delta, x=x, u=u):
            return package.vdot_fun(np.concatenate([package.integrate(x[:n_q], delta[:n]), x[n_q:] + delta[n:]]), u)

        numeric = np.column_stack([(vdot(h * e) - vdot(-h * e)) / (2 * h) for e in np.eye(2 * n)])
        assert np.abs(A[n:] - numeric).max() <= 1e-5 * max(1.0, np.abs(numeric).max())


def test_baumgarte_brings_a_tilted_flat_foot_back(tmp_path):
    """With constraint_stabilization = 20/s, a state that breaks the 6-D contact (the foot tilted and moved, at rest)
    returns to it: after 1 s the place and orientation errors are a thousandth of what they were."""
    from scipy.integrate import solve_ivp

    model = load_urdf(
        SOLO, floating_base=True, contacts=["FL_FOOT:6d", "HR_FOOT"], constraint_stabilization=20.0, name="solo_baum"
    )
    package = generated(model, tmp_path)
    x = np.concatenate([pin.neutral(pin.buildModelFromUrdf(str(SOLO), pin.JointModelFreeFlyer())), np.zeros(18)])
    x[[7, 8, 9]] += [0.05, -0.04, 0.03]  # FL's three joints: the foot moves and tilts away from its anchor
    start = np.abs(package.constraint_fun(x)).max()
    assert start > 1e-3
    u = np.zeros(package.N_INPUTS)
    solution = solve_ivp(lambda t, y: package.xdot_fun(y, u), (0.0, 1.0), x, rtol=1e-9, atol=1e-11)
    assert solution.success and np.abs(package.constraint_fun(solution.y[:, -1])).max() <= 1e-3 * start
