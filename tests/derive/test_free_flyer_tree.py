"""Quaternion free-flyer bases on the tree route against Pinocchio's JointModelFreeFlyer (same URDF, same layout).

vdot_fun = aba, M_fun = crba, tau_fun = rnea, phi_fun = the generalized gravity, C v = the bias force, the dynamics
rows of linearized_model = computeABADerivatives (tangent space), its kinematic rows = d/dt of pinocchio.difference
along the motion, integrate / difference = Pinocchio's; on 1 000 random states, a tenth pitched to ±90°.
"""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

import sls
from sls.readers.urdf import load_urdf

pin = pytest.importorskip("pinocchio")
ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"

DRONE = """<robot name="drone"><link name="body"><inertial><origin xyz="0.01 -0.02 0.03" rpy="0.1 0.2 0.3"/>
<mass value="1.2"/><inertia ixx="0.011" ixy="0.001" ixz="0.0005" iyy="0.013" iyz="-0.0007" izz="0.02"/>
</inertial></link></robot>"""

CASES = {
    "drone (a joint-less body)": None,
    "quadruped (Solo-12)": "solo_description/robots/solo12.urdf",
    "quadruped (ANYmal)": "anymal_b_simple_description/robots/anymal.urdf",
}
SAMPLES = 1000


@pytest.fixture(scope="module", params=list(CASES))
def robot(request, tmp_path_factory):
    """(generated package, Pinocchio model) for one case, with the default quaternion base."""
    folder = tmp_path_factory.mktemp("free")
    relative = CASES[request.param]
    path = folder / "drone.urdf" if relative is None else ROBOTS / relative
    if relative is None:
        path.write_text(DRONE)
    model = load_urdf(path, floating_base=relative is not None, name="robot_" + folder.name.replace("-", "_"))
    sls.generate(model, folder / model.name, target="python")
    sys.path.insert(0, str(folder))
    try:
        package = importlib.import_module(model.name)
    finally:
        sys.path.remove(str(folder))
    peer = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    return package, Peer(peer, package.STATE[7 : package.N_Q])


class Peer:
    """A Pinocchio model seen in sls's joint order (Pinocchio may order sibling joints otherwise): ``q``, ``v`` and
    the arrays of its functions permuted to sls's."""

    def __init__(self, model, joints: tuple) -> None:
        self.model, self.nq, self.nv = model, model.nq, model.nv
        self.q_order = list(range(7)) + [model.idx_qs[model.getJointId(name)] for name in joints]
        self.v_order = list(range(6)) + [model.idx_vs[model.getJointId(name)] for name in joints]
        self.q_back, self.v_back = np.argsort(self.q_order), np.argsort(self.v_order)

    def vector(self, values):
        """A Pinocchio vector over the speeds in sls's order."""
        return np.asarray(values)[self.v_order]

    def matrix(self, values):
        return np.asarray(values)[np.ix_(self.v_order, self.v_order)]


def states(peer: "Peer", count: int, seed: int = 7) -> tuple:
    """``count`` random (q, v, a) in sls's order with unit quaternions, every tenth pitched to ±90°."""
    rng = np.random.default_rng(seed)
    model = peer.model
    q = np.array([pin.randomConfiguration(model, -np.ones(peer.nq), np.ones(peer.nq)) for _ in range(count)])
    q[:, :3] = rng.normal(size=(count, 3))
    for k in range(0, count, 10):
        pitch = np.pi / 2 * (1 if k % 20 else -1)
        q[k, 3:7] = pin.Quaternion(pin.rpy.rpyToMatrix(rng.normal(), pitch, rng.normal())).coeffs()
    return q[:, peer.q_order], rng.normal(size=(count, peer.nv)), rng.normal(size=(count, peer.nv))


def relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def test_layout_is_pinocchios(robot):
    package, peer = robot
    assert (package.N_Q, package.N_V) == (peer.nq, peer.nv)
    assert package.STATE[:7] == ("base_x", "base_y", "base_z", "base_qx", "base_qy", "base_qz", "base_qw")
    assert package.STATE[peer.nq : peer.nq + 6] == ("base_vx", "base_vy", "base_vz", "base_wx", "base_wy", "base_wz")
    assert package.INPUTS[:6] == ("base_fx", "base_fy", "base_fz", "base_mx", "base_my", "base_mz")


def test_dynamics_equal_pinocchio(robot):
    package, peer = robot
    data = peer.model.createData()
    q, v, a = states(peer, SAMPLES)
    u = np.random.default_rng(1).normal(size=(SAMPLES, package.N_INPUTS))
    x = np.concatenate([q, v], axis=1)
    M, tau, vdot = package.M_fun(x), package.tau_fun(x, a), package.vdot_fun(x, u)
    phi, C, B_u = package.phi_fun(x), package.C_fun(x), package.input_matrix_fun(x)
    model = peer.model
    for k in range(SAMPLES):
        qk, vk, ak = q[k][peer.q_back], v[k][peer.v_back], a[k][peer.v_back]  # Pinocchio's order
        reference = pin.crba(model, data, qk)
        assert relative(M[k], peer.matrix(np.triu(reference) + np.triu(reference, 1).T)) < 1e-9
        assert relative(tau[k], peer.vector(pin.rnea(model, data, qk, vk, ak))) < 1e-9
        force = (B_u[k] @ u[k])[peer.v_back]
        assert relative(vdot[k], peer.vector(pin.aba(model, data, qk, vk, force))) < 1e-9
        gravity = pin.computeGeneralizedGravity(model, data, qk)
        assert relative(phi[k], peer.vector(gravity)) < 1e-9
        bias = pin.rnea(model, data, qk, vk, np.zeros(peer.nv)) - gravity
        assert relative(C[k] @ v[k], peer.vector(bias)) < 1e-9


def test_linearization_is_pinocchios_in_the_tangent_space(robot):
    package, peer = robot
    data = peer.model.createData()
    n = peer.nv
    q, v, _ = states(peer, SAMPLES // 10, seed=11)
    u = np.random.default_rng(2).normal(size=(len(q), package.N_INPUTS))
    x = np.concatenate([q, v], axis=1)
    A, B = package.linearized_model(x, u)
    B_u = package.input_matrix_fun(x)
    assert A.shape == (len(q), 2 * n, 2 * n) and B.shape == (len(q), 2 * n, package.N_INPUTS)
    for k in range(len(q)):
        force = (B_u[k] @ u[k])[peer.v_back]
        pin.computeABADerivatives(peer.model, data, q[k][peer.q_back], v[k][peer.v_back], force)
        Minv = peer.matrix(np.triu(data.Minv) + np.triu(data.Minv, 1).T)
        assert relative(A[k, n:, :n], peer.matrix(data.ddq_dq)) < 1e-6
        assert relative(A[k, n:, n:], peer.matrix(data.ddq_dv)) < 1e-6
        assert relative(B[k, n:], Minv @ B_u[k]) < 1e-6
        assert np.array_equal(B[k, :n], np.zeros_like(B[k, :n]))
    at_rest = package.linearized_model(np.concatenate([q[0], np.zeros(n)]), u[0])[0]
    assert np.array_equal(at_rest[:n], np.hstack([np.zeros((n, n)), np.eye(n)]))


def test_kinematic_rows_follow_pinocchios_difference(robot):
    """Row block [K, I]: d/dt difference(q̄, q(t)) with q(0) = integrate(q̄, δ), to first order in δ."""
    package, peer = robot
    n, h, step = peer.nv, 1e-6, 1e-4
    q, v, _ = states(peer, 3, seed=5)
    for k in range(3):
        A = package.linearized_model(np.concatenate([q[k], v[k]]), np.zeros(package.N_INPUTS))[0]

        def rate(delta, k=k):
            moved = package.integrate(q[k], delta)
            qdot = package.qdot_fun(np.concatenate([moved, v[k]]))
            ahead, behind = moved + h * qdot, moved - h * qdot
            start, model = q[k][peer.q_back], peer.model
            return peer.vector(
                pin.difference(model, start, ahead[peer.q_back]) - pin.difference(model, start, behind[peer.q_back])
            ) / (2 * h)

        K = np.column_stack([(rate(step * e) - rate(-step * e)) / (2 * step) for e in np.eye(n)])
        assert np.abs(K - A[:n, :n]).max() < 1e-5 * max(1.0, np.abs(K).max())
        assert np.abs(rate(np.zeros(n)) - v[k]).max() < 1e-8


def test_integrate_difference_and_normalize_are_pinocchios(robot):
    package, peer = robot
    rng = np.random.default_rng(4)
    q0, _, _ = states(peer, 20, seed=3)
    q1, _, _ = states(peer, 20, seed=4)
    dq = rng.normal(size=(20, peer.nv))
    moved = package.integrate(q0, dq)
    for k in range(20):
        reference = pin.integrate(peer.model, q0[k][peer.q_back], dq[k][peer.v_back])[peer.q_order]
        sign = np.sign(reference[6] * moved[k, 6])  # q and -q are one orientation: sls keeps the product's sign
        assert np.abs(moved[k, :3] - reference[:3]).max() < 1e-12
        assert np.abs(sign * moved[k, 3:7] - reference[3:7]).max() < 1e-12
        if len(reference) > 7:
            assert np.abs(moved[k, 7:] - reference[7:]).max() < 1e-12
        assert np.abs(package.integrate(q0[k], dq[k]) - moved[k]).max() < 1e-15
        reference = peer.vector(pin.difference(peer.model, q0[k][peer.q_back], q1[k][peer.q_back]))
        assert np.abs(package.difference(q0[k], q1[k]) - reference).max() < 1e-10
        assert np.abs(package.difference(q0[k], moved[k]) - dq[k]).max() < 1e-10 or np.linalg.norm(dq[k, 3:6]) > np.pi
    scaled = q0.copy()
    scaled[:, 3:7] *= 3.0
    assert np.abs(package.normalize(scaled) - q0).max() < 1e-15


def test_mujoco_layout_round_trips(robot):
    package, peer = robot
    q, v, _ = states(peer, 5, seed=9)
    x = np.concatenate([q, v], axis=1)
    qpos, qvel = package.to_mujoco(x)
    assert np.array_equal(qpos[:, 3:7], np.concatenate([q[:, 6:7], q[:, 3:6]], axis=1))
    world = np.array([pin.Quaternion(qk[3:7]).toRotationMatrix() @ vk[:3] for qk, vk in zip(q, v)])
    assert np.abs(qvel[:, :3] - world).max() < 1e-14
    assert np.abs(package.from_mujoco(qpos, qvel) - x).max() < 1e-14


def test_euler_base_stays_on_request(tmp_path):
    path = tmp_path / "drone.urdf"
    path.write_text(DRONE)
    model = load_urdf(path, base_orientation="euler")
    assert [s.name for s in model.q][3:] == ["base_yaw", "base_pitch", "base_roll"] and model.kinematics is None
    with pytest.raises(sls.SlsError, match="base orientation must be one of quaternion, euler"):
        load_urdf(path, base_orientation="matrix")
