"""Real robot files against Pinocchio: floating bases (free-flyer), mimic joints, joint friction.

Pinocchio's free-flyer uses ``q = [p_world, quaternion (x, y, z, w)]`` and ``v = [Rᵀ ṗ, ω_body]``; sls
uses ``q = [p_world, yaw, pitch, roll]`` (``R = Rz(yaw) Ry(pitch) Rx(roll)``) and ``q̇``. So
``v = S(q) q̇`` with ``S = blockdiag(Rᵀ, E_body)``, and ``M_sls = Sᵀ M_pin S``,
``τ_sls = Sᵀ τ_pin(q, S q̇, S q̈ + Ṡ q̇)``, ``q̈_sls = S⁻¹ (aba(q, S q̇, u) − Ṡ q̇)`` (sls's inputs are
Pinocchio's ``τ``: the base's body wrench, then the joint torques), and ``(A, B)`` against central
differences of that Pinocchio route.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import sympy
from conftest import import_package

import sls
from sls.readers.urdf import load_urdf, numeric_mass_matrix

pin = pytest.importorskip("pinocchio")

DATA = Path(__file__).resolve().parents[2] / "data"
ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"
RNG = np.random.default_rng(20261123)

needs_robots = pytest.mark.skipif(not ROBOTS.is_dir(), reason="example-robot-data is not installed")


# --------------------------------------------------------------------------
# the map between the two parametrizations


def euler(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    cy, sy, cp, sp, cr, sr = (
        math.cos(yaw),
        math.sin(yaw),
        math.cos(pitch),
        math.sin(pitch),
        math.cos(roll),
        math.sin(roll),
    )
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    return Rz @ Ry @ Rx


def body_rates(pitch: float, roll: float) -> np.ndarray:
    """``E`` with ``ω_body = E [yaw', pitch', roll']``."""
    cp, sp, cr, sr = math.cos(pitch), math.sin(pitch), math.cos(roll), math.sin(roll)
    return np.array([[-sp, 0, 1], [cp * sr, cr, 0], [cp * cr, -sr, 0]])


def body_rates_dot(pitch: float, roll: float, dpitch: float, droll: float) -> np.ndarray:
    """``dE/dt``."""
    cp, sp, cr, sr = math.cos(pitch), math.sin(pitch), math.cos(roll), math.sin(roll)
    return np.array(
        [
            [-cp * dpitch, 0, 0],
            [-sp * sr * dpitch + cp * cr * droll, -sr * droll, 0],
            [-sp * cr * dpitch - cp * sr * droll, -cr * droll, 0],
        ]
    )


def skew(w: np.ndarray) -> np.ndarray:
    return np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])


class Peer:
    """Pinocchio's model of a URDF file with sls's coordinates mapped onto it by name.

    ``floating``: a free-flyer root (sls's first six coordinates ``base_x … base_roll``).
    """

    def __init__(self, path: Path, state: tuple, inputs: tuple, *, floating: bool, mimic: bool = True):
        root = (pin.JointModelFreeFlyer(),) if floating else ()
        self.model = pin.buildModelFromUrdf(str(path), *root, mimic=mimic)
        self.data = self.model.createData()
        self.floating = floating
        self.mimic = any(j.shortname() == "JointModelMimic" for j in self.model.joints)
        self.n = len(state) // 2
        names = list(state[: self.n])[6 if floating else 0 :]
        joints = [self.model.joints[self.model.getJointId(name)] for name in names]
        self.iq = [j.idx_q for j in joints]
        self.nq = [j.nq for j in joints]
        self.iv = [j.idx_v for j in joints]
        offset = 6 if floating else 0
        assert self.model.nv == offset + len(names), "every Pinocchio velocity is an sls coordinate"
        # sls input k → Pinocchio tau index: the wrench is the free-flyer's tau, tau_<joint> the joint's
        self.input_index = [k for k in range(6)] if floating else []
        self.input_index += [self.iv[names.index(u[len("tau_") :])] for u in inputs[6 if floating else 0 :]]

    def configuration(self, q: np.ndarray) -> np.ndarray:
        out = np.zeros(self.model.nq)
        start = 0
        if self.floating:
            out[:3] = q[:3]
            out[3:7] = pin.Quaternion(euler(*q[3:6])).coeffs()
            start = 6
        for value, i, nq in zip(q[start:], self.iq, self.nq):
            out[i : i + nq] = [value] if nq == 1 else [math.cos(value), math.sin(value)]
        return out

    def S(self, q: np.ndarray) -> np.ndarray:
        """``v = S q̇`` (nv × n)."""
        S = np.zeros((self.model.nv, self.n))
        start = 0
        if self.floating:
            S[:3, :3] = euler(*q[3:6]).T
            S[3:6, 3:6] = body_rates(q[4], q[5])
            start = 6
        for k, i in enumerate(self.iv):
            S[i, start + k] = 1.0
        return S

    def S_dot_qdot(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        """``Ṡ q̇``."""
        out = np.zeros(self.model.nv)
        if self.floating:
            R = euler(*q[3:6])
            omega = body_rates(q[4], q[5]) @ dq[3:6]
            out[:3] = -skew(omega) @ R.T @ dq[:3]
            out[3:6] = body_rates_dot(q[4], q[5], dq[4], dq[5]) @ dq[3:6]
        return out

    def mass_matrix(self, q: np.ndarray) -> np.ndarray:
        M = pin.crba(self.model, self.data, self.configuration(q))
        M = np.triu(M) + np.triu(M, 1).T
        S = self.S(q)
        return S.T @ M @ S

    def inverse_dynamics(self, q: np.ndarray, dq: np.ndarray, ddq: np.ndarray) -> np.ndarray:
        S = self.S(q)
        tau = pin.rnea(self.model, self.data, self.configuration(q), S @ dq, S @ ddq + self.S_dot_qdot(q, dq))
        return S.T @ tau

    def tau(self, u: np.ndarray) -> np.ndarray:
        out = np.zeros(self.model.nv)
        out[self.input_index] = u
        return out

    def acceleration(self, q: np.ndarray, dq: np.ndarray, u: np.ndarray) -> np.ndarray:
        S = self.S(q)
        if self.mimic:  # Pinocchio's aba does not take mimic joints: solve crba's M against rnea's bias
            config, v = self.configuration(q), S @ dq
            M = pin.crba(self.model, self.data, config)
            M = np.triu(M) + np.triu(M, 1).T
            bias = pin.rnea(self.model, self.data, config, v, np.zeros(self.model.nv))
            a = np.linalg.solve(M, self.tau(u) - bias)
        else:
            a = pin.aba(self.model, self.data, self.configuration(q), S @ dq, self.tau(u))
        return np.linalg.solve(S, a - self.S_dot_qdot(q, dq))

    def linearized(self, x: np.ndarray, u: np.ndarray, h: float = 1e-6) -> tuple:
        """``(A, B)`` of ``ẋ = [q̇; q̈]`` by central differences of the Pinocchio route."""
        n = self.n

        def f(x, u):
            return np.concatenate([x[n:], self.acceleration(x[:n], x[n:], u)])

        A = np.column_stack([(f(x + h * e, u) - f(x - h * e, u)) / (2 * h) for e in np.eye(2 * n)])
        B = np.column_stack([(f(x, u + h * e) - f(x, u - h * e)) / (2 * h) for e in np.eye(len(u))])
        return A, B


def friction_off(package) -> dict:
    """Every damping and Coulomb friction parameter at 0 (Pinocchio's dynamics have no joint friction)."""
    return {p: 0.0 for p in package.PARAMS if p.startswith(("damping_", "friction_")) and p != "friction_velocity"}


def compare(package, peer: Peer, samples: int = 4, *, linearization: bool = True) -> None:
    """M, τ, q̈ to 1e-9 and (A, B) to 1e-6 (relative to each quantity's scale) at random states."""
    n = package.N_DOF
    off = friction_off(package)
    for _ in range(samples):
        q = RNG.uniform(-1.2, 1.2, n)
        dq, ddq, u = RNG.uniform(-1, 1, n), RNG.uniform(-1, 1, n), RNG.uniform(-2, 2, package.N_INPUTS)
        x = np.concatenate([q, dq])
        M = peer.mass_matrix(q)
        np.testing.assert_allclose(package.M_fun(x), M, rtol=0, atol=1e-9 * np.abs(M).max())
        tau = peer.inverse_dynamics(q, dq, ddq)
        np.testing.assert_allclose(package.tau_fun(x, ddq, **off), tau, rtol=0, atol=1e-9 * np.abs(tau).max())
        qddot = peer.acceleration(q, dq, u)
        np.testing.assert_allclose(
            package.qddot_fun(x, u, **off), qddot, rtol=0, atol=1e-9 * max(np.abs(qddot).max(), 1.0)
        )
        if linearization:
            A, B = package.linearized_model(x, u, **off)
            A_ref, B_ref = peer.linearized(x, u)
            np.testing.assert_allclose(A, A_ref, rtol=0, atol=1e-6 * np.abs(A_ref).max())
            np.testing.assert_allclose(B, B_ref, rtol=0, atol=1e-6 * np.abs(B_ref).max())


def generated(model: sls.Model, folder: Path):
    sls.generate(model, folder)
    return import_package(folder)


# --------------------------------------------------------------------------
# floating bases against Pinocchio's free-flyer


FLOATING = {
    "drone (hector quadrotor: one link, floating automatically)": (
        "hector_description/robots/quadrotor_base.urdf",
        False,
    ),
    "biped (Bolt)": ("bolt_description/robots/bolt.urdf", True),
    "quadruped (Solo-12)": ("solo_description/robots/solo12.urdf", True),
}


@needs_robots
@pytest.mark.parametrize("case", list(FLOATING))
def test_floating_base_matches_pinocchio_free_flyer(case, tmp_path):
    relative, option = FLOATING[case]
    path = ROBOTS / relative
    model = load_urdf(path, floating_base=option, base_orientation="euler")
    assert [s.name for s in model.q[:6]] == ["base_x", "base_y", "base_z", "base_yaw", "base_pitch", "base_roll"]
    assert [u.name for u in model.inputs[:6]] == ["base_fx", "base_fy", "base_fz", "base_mx", "base_my", "base_mz"]
    package = generated(model, tmp_path / "pkg")
    compare(package, Peer(path, package.STATE, package.INPUTS, floating=True))


@needs_robots
def test_drone_hovers_with_its_weight_as_thrust(drone):
    """The quadrotor at rest: the input that holds it is a body-frame thrust m·g along z, and nothing else."""
    from sls.control import equilibrium_input

    path = ROBOTS / "hector_description/robots/quadrotor_base.urdf"
    package = drone
    mass = float(ET.parse(path).getroot().find("link/inertial/mass").get("value"))
    x = np.zeros(12)
    x[2] = 1.0
    u, _ = equilibrium_input(package, x)
    np.testing.assert_allclose(u, [0, 0, mass * 9.81, 0, 0, 0], atol=1e-12)
    yawed = x.copy()
    yawed[3] = 0.7  # a yawed drone hovers with the same body-frame thrust
    np.testing.assert_allclose(equilibrium_input(package, yawed)[0], u, atol=1e-12)


@pytest.fixture(scope="module")
def drone(tmp_path_factory):
    return generated(
        load_urdf(ROBOTS / "hector_description/robots/quadrotor_base.urdf", base_orientation="euler"),
        tmp_path_factory.mktemp("drone") / "pkg",
    )


@needs_robots
@pytest.mark.parametrize("pitch", [math.pi / 2, -math.pi / 2, math.pi / 2 - 1e-6, 3 * math.pi / 2 + 5e-4])
def test_floating_base_singularity_raises(pitch, drone):
    """At pitch = ±π/2 (yaw and roll turn about the same axis) M is singular; within the chart's margin
    (|cos(pitch)| < CHART_MARGIN) qddot_fun and linearized_model refuse the state in one line (a ValueError) that
    names the pitch and the margin, instead of the huge numbers of a nearly singular M."""
    x = np.zeros(12)
    x[4] = pitch
    assert np.linalg.eigvalsh(drone.M_fun(x))[0] < 1e-8
    assert drone.CHART_PITCH == ("base_pitch",) and drone.CHART_MARGIN == 1e-3
    for call in (drone.qddot_fun, drone.linearized_model):
        with pytest.raises(ValueError, match=r"base_pitch = \+-90 degrees and base_pitch is within 0.001 rad") as error:
            call(x, np.zeros(6))
        assert "\n" not in str(error.value) and str(error.value).startswith(call.__name__)


@needs_robots
def test_floating_base_singularity_error_names_the_state(drone):
    x = np.zeros(12)
    x[4] = math.pi / 2
    with pytest.raises(ValueError, match="base_pitch=1.5708"):
        drone.qddot_fun(x, np.zeros(6))
    batch = np.zeros((3, 12))
    batch[2, 4] = -math.pi / 2
    with pytest.raises(ValueError, match="base_pitch=-1.5708"):
        drone.linearized_model(batch, np.zeros(6))


# --------------------------------------------------------------------------
# floating and planar joints written in the file


#: Pinocchio's URDF reader wants limits on revolute and prismatic joints.
LIMIT = '<limit lower="-10" upper="10" effort="1" velocity="1"/>'


def _box_link(name: str, mass: float = 1.0) -> str:
    return (
        f'<link name="{name}"><inertial><origin xyz="0.05 -0.02 0.1" rpy="0.1 0.2 0.3"/><mass value="{mass}"/>'
        '<inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="0.002" izz="0.04"/></inertial></link>'
    )


def test_floating_joint_in_the_file_is_the_same_as_the_floating_base_option():
    """A file's floating joint from a massless world link equals --floating-base on the file without it."""
    body = _box_link("body") + _box_link("arm", 0.5)
    arm = (
        '<joint name="elbow" type="revolute"><parent link="body"/><child link="arm"/><origin xyz="0.2 0 0"/>'
        '<axis xyz="0 1 0"/></joint>'
    )
    with_joint = (
        '<robot name="r"><link name="world"/><joint name="base" type="floating"><parent link="world"/>'
        f'<child link="body"/></joint>{body}{arm}</robot>'
    )
    without = f'<robot name="r">{body}{arm}</robot>'
    a = load_urdf("a.urdf", text=with_joint, base_orientation="euler")
    b = load_urdf("b.urdf", text=without, floating_base=True, base_orientation="euler")
    assert a.q == b.q and a.inputs == b.inputs
    assert sympy.simplify(a.T - b.T) == 0 and a.V == b.V and a.forces == b.forces


def test_floating_base_option_refuses_a_file_that_already_floats():
    text = (
        '<robot name="r"><link name="world"/><joint name="free" type="floating"><parent link="world"/>'
        f'<child link="body"/></joint>{_box_link("body")}</robot>'
    )
    with pytest.raises(sls.ModelFileError, match="already joins the robot through the floating joint 'free'"):
        load_urdf("f.urdf", text=text, floating_base=True, base_orientation="euler")


def test_a_rigid_robot_floats():
    """A file whose joints are all fixed (a drone with rotors) is one rigid body, free in space."""
    text = (
        f'<robot name="r">{_box_link("body")}{_box_link("rotor", 0.1)}'
        '<joint name="mount" type="fixed"><parent link="body"/><child link="rotor"/><origin xyz="0.2 0 0.05"/></joint>'
        "</robot>"
    )
    model = load_urdf("rigid.urdf", text=text, base_orientation="euler")
    assert model.n == 6 and model.m == 6 and not model.actuated


@pytest.mark.parametrize("normal", ["0 0 1", "1 0 0", "0 0.6 0.8"])
def test_planar_joint_matches_a_hand_written_chain(normal, tmp_path):
    """A planar joint is two prismatic joints along in-plane axes e1, e2 and a revolute joint about the normal.

    The reference: the same robot with that chain written out as URDF joints (e1, e2 from the documented
    rule), and the body wrench's generalized forces from the link's body Jacobian computed by Pinocchio.
    """
    from sls.readers.urdf.structure import planar_axes

    n = np.array([float(v) for v in normal.split()])
    e1, e2 = planar_axes(tuple(n / np.linalg.norm(n)))
    assert (
        abs(np.dot(e1, n)) < 1e-15
        and abs(np.dot(e2, n)) < 1e-15
        and np.allclose(np.cross(e1, e2), n / np.linalg.norm(n))
    )
    origin = '<origin xyz="0.1 0.2 0.3" rpy="0.3 -0.2 0.1"/>'
    body = _box_link("body") + _box_link("arm", 0.5)
    arm = (
        '<joint name="elbow" type="revolute"><parent link="body"/><child link="arm"/><origin xyz="0.2 0 0"/>'
        f'<axis xyz="0 1 0"/>{LIMIT}</joint>'
    )
    planar = (
        '<robot name="r"><link name="ground"/><joint name="slide" type="planar"><parent link="ground"/>'
        f'<child link="body"/>{origin}<axis xyz="{normal}"/></joint>{body}{arm}</robot>'
    )

    def axis(v):
        return " ".join(repr(float(c)) for c in v)

    chain = (
        '<robot name="r"><link name="ground"/><link name="l1"/><link name="l2"/>'
        '<joint name="slide_x" type="prismatic"><parent link="ground"/><child link="l1"/>'
        f'{origin}<axis xyz="{axis(e1)}"/>{LIMIT}</joint>'
        '<joint name="slide_y" type="prismatic"><parent link="l1"/><child link="l2"/>'
        f'<axis xyz="{axis(e2)}"/>{LIMIT}</joint>'
        '<joint name="slide_theta" type="revolute"><parent link="l2"/><child link="body"/>'
        f'<axis xyz="{normal}"/>{LIMIT}</joint>'
        f"{body}{arm}</robot>"
    )
    a = load_urdf("planar.urdf", text=planar, base_orientation="euler")
    b = load_urdf("chain.urdf", text=chain, base_orientation="euler")
    assert [s.name for s in a.q] == ["slide_x", "slide_y", "slide_theta", "elbow"]
    assert [u.name for u in a.inputs] == ["slide_fx", "slide_fy", "slide_mz", "tau_elbow"]
    assert a.q == b.q and a.V == b.V and sympy.expand(a.T - b.T) == 0
    # the wrench: forces along e1, e2 of the body frame and a moment about n, through the body Jacobian
    (tmp_path / "chain.urdf").write_text(chain)
    peer = pin.buildModelFromUrdf(str(tmp_path / "chain.urdf"))
    data = peer.createData()
    frame = peer.getFrameId("body")
    forces = sympy.lambdify(list(a.q) + list(a.inputs), list(a.forces))
    for _ in range(3):
        q, u = RNG.uniform(-1, 1, 4), RNG.uniform(-1, 1, 4)
        J = pin.computeFrameJacobian(peer, data, q, frame, pin.LOCAL)  # body frame: [v; ω]
        wrench = np.concatenate([u[0] * np.array(e1) + u[1] * np.array(e2), u[2] * n / np.linalg.norm(n)])
        expected = J.T @ wrench
        expected[3] += u[3]
        np.testing.assert_allclose(forces(*q, *u), expected, atol=1e-12)


# --------------------------------------------------------------------------
# mimic joints


@needs_robots
def test_mimic_gripper_matches_pinocchio_mimic_model(tmp_path):
    """Franka Panda: panda_finger_joint2 mimics panda_finger_joint1; Pinocchio's mimic joints have no q or v."""
    path = ROBOTS / "panda_description/urdf/panda.urdf"
    model = load_urdf(path, base_orientation="euler")
    assert model.n == 8 and "panda_finger_joint2" not in {s.name for s in model.q}
    assert "damping_panda_finger_joint2" in model.params  # its damping acts through panda_finger_joint1
    package = generated(model, tmp_path / "pkg")
    compare(package, Peer(path, package.STATE, package.INPUTS, floating=False, mimic=True), samples=3)


MIMIC_ARM = """<robot name="m">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0 0 0.2"/><mass value="1.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.03"/></inertial></link>
  <link name="b"><inertial><origin xyz="0.1 0 0.1"/><mass value="0.6"/>
    <inertia ixx="0.004" ixy="0.001" ixz="0" iyy="0.005" iyz="0" izz="0.006"/></inertial></link>
  <link name="c"><inertial><origin xyz="0 0.1 0"/><mass value="0.3"/>
    <inertia ixx="0.002" ixy="0" ixz="0" iyy="0.003" iyz="0" izz="0.001"/></inertial></link>
  <link name="d"><inertial><origin xyz="0.05 0 0"/><mass value="0.2"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial></link>
  <joint name="lead" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <dynamics damping="0.2" friction="0.5"/></joint>
  <joint name="follow" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 0.4" rpy="0.2 0 0"/>
    <axis xyz="0 1 0"/>
    <mimic joint="lead" multiplier="-2.0" offset="0.3"/><dynamics damping="0.1" friction="0.25"/></joint>
  <joint name="slide" type="prismatic"><parent link="b"/><child link="c"/><origin xyz="0.2 0 0"/><axis xyz="1 0 0"/>
    <mimic joint="follow" multiplier="0.5" offset="-0.1"/></joint>
  <joint name="wrist" type="revolute"><parent link="c"/><child link="d"/><origin xyz="0 0 0.1"/>
    <axis xyz="1 0 0"/></joint>
  <joint name="glued" type="fixed"><parent link="d"/><child link="e"/><mimic joint="wrist"/></joint>
  <link name="e"/>
</robot>"""


def test_mimic_joints_are_the_coupling_written_by_hand():
    """Mimic chains (slide follows follow follows lead) equal the unmimicked robot with q_m = m·q + o
    substituted by hand; friction maps back through the multipliers."""
    coupled = load_urdf("mimic.urdf", text=MIMIC_ARM, base_orientation="euler")
    free = load_urdf("free.urdf", text=MIMIC_ARM.replace("<mimic", "<nomimic"), base_orientation="euler")
    lead, follow, slide, wrist = (sympy.Symbol(s, real=True) for s in ("lead", "follow", "slide", "wrist"))
    dlead, dfollow, dslide, dwrist = (sympy.Symbol(f"d_{s}", real=True) for s in ("lead", "follow", "slide", "wrist"))
    assert coupled.q == (lead, wrist)
    q_follow, q_slide = -2.0 * lead + 0.3, 0.5 * (-2.0 * lead + 0.3) - 0.1
    by_hand = {follow: q_follow, slide: q_slide, dfollow: -2.0 * dlead, dslide: -1.0 * dlead}
    T_hand, V_hand = free.T.subs(by_hand), free.V.subs(by_hand)
    args = [lead, wrist, dlead, dwrist, sympy.Symbol("g", real=True)]
    for _ in range(5):
        values = [*RNG.uniform(-2, 2, 4), 9.81]
        for mine, hand in ((coupled.T, T_hand), (coupled.V, V_hand)):
            assert float(mine.subs(dict(zip(args, values)))) == pytest.approx(
                float(hand.subs(dict(zip(args, values)))), abs=1e-12
            )
    # the friction of the mimic joint acts on its own rate -2·q̇_lead and maps back through -2
    params = {sympy.Symbol(k, real=True): v for k, v in coupled.params.items()}
    assert coupled.params == {
        "g": 9.81,
        "damping_lead": 0.2,
        "damping_follow": 0.1,
        "friction_lead": 0.5,
        "friction_follow": 0.25,
        "friction_velocity": 0.01,
    }
    fric = sympy.lambdify([dlead], coupled.fric[0].subs(params))
    for rate in (-0.3, 0.004, 1.7):
        expected = (
            0.2 * rate
            + 0.5 * math.tanh(rate / 0.01)
            - 2.0 * (0.1 * (-2.0 * rate) + 0.25 * math.tanh(-2.0 * rate / 0.01))
        )
        assert fric(rate) == pytest.approx(expected, abs=1e-14)
    assert coupled.fric[1] == 0
    # the numeric mass matrix (world Jacobians, mimic columns summed with their multipliers) agrees with T
    from test_urdf import numeric

    mass_matrix = numeric(coupled)[0]
    for _ in range(3):
        q = RNG.uniform(-2, 2, 2)
        np.testing.assert_allclose(numeric_mass_matrix(coupled.tree, q), mass_matrix(q), atol=1e-12)


# --------------------------------------------------------------------------
# friction


def test_friction_parameters_default_to_the_file_and_switch_off(tmp_path):
    """One generation serves friction on (the file's values) and off (parameters at 0)."""
    text = (
        (DATA / "arm.urdf").read_text().replace('<dynamics damping="0.1"/>', '<dynamics damping="0.1" friction="0.3"/>')
    )
    path = tmp_path / "arm.urdf"
    path.write_text(text)
    package = generated(load_urdf(path, base_orientation="euler"), tmp_path / "pkg")
    assert package.PARAMS == {"g": 9.81, "damping_shoulder": 0.1, "friction_shoulder": 0.3, "friction_velocity": 0.01}
    assert package.INPUTS == ("tau_shoulder", "tau_elbow")
    for rate in (-1.0, -0.005, 0.0, 0.02, 2.0):
        x = np.array([0.3, -0.2, rate, 0.7])
        np.testing.assert_allclose(package.fric_fun(x), [0.1 * rate + 0.3 * np.tanh(rate / 0.01), 0.0], atol=1e-15)
        np.testing.assert_allclose(package.fric_fun(x, damping_shoulder=0, friction_shoulder=0), [0.0, 0.0], atol=0)
        np.testing.assert_allclose(
            package.fric_fun(x, friction_velocity=0.5), [0.1 * rate + 0.3 * np.tanh(rate / 0.5), 0.0], atol=1e-15
        )
    # the Jacobian of the smooth law at rest: the slope f_c / v_s
    A, _ = package.linearized_model(np.zeros(4), np.zeros(2))
    M = package.M_fun(np.zeros(4))
    expected = -np.linalg.solve(M, np.diag([0.1 + 0.3 / 0.01, 0.0]))
    np.testing.assert_allclose(A[2:, 2:], expected, rtol=1e-12, atol=1e-12)


def test_no_friction_no_parameters():
    """Zero damping and friction (the UR5 writes both as 0.0): no parameters, the model is as before."""
    model = sls.load_example("ur5")
    assert model.params == {"g": 9.81} and all(f == 0 for f in model.fric)
    assert [u.name for u in model.inputs][:2] == [
        "tau_shoulder_pan_joint",
        "tau_shoulder_lift_joint",
    ] and model.actuated


def test_generated_names_that_clash_are_refused():
    text = MIMIC_ARM.replace('name="wrist"', 'name="damping_lead"')
    with pytest.raises(
        sls.ModelFileError,
        match="the parameter 'damping_lead' made from a joint's name is also the state name 'damping_lead'",
    ):
        load_urdf("clash.urdf", text=text, base_orientation="euler")


# --------------------------------------------------------------------------
# inertias


def test_inertia_positive_semidefinite_up_to_rounding():
    """iCub's head: zero diagonal and 1e-35 off-diagonal; a tiny negative eigenvalue relative to the trace."""
    from sls.readers.urdf.inertia import positive_semidefinite

    assert positive_semidefinite(((0.0, 2.4e-35, 0.0), (2.4e-35, 0.0, 1e-35), (0.0, 1e-35, 0.0)))
    assert positive_semidefinite(((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, -1e-7)))
    assert not positive_semidefinite(((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, -1e-5)))
    assert not positive_semidefinite(((0.0, 1e-9, 0.0), (1e-9, 0.0, 0.0), (0.0, 0.0, 0.0)))


def test_an_indefinite_inertia_on_a_link_fixed_to_the_world_is_ignored():
    text = (
        (DATA / "arm.urdf")
        .read_text()
        .replace(
            '<link name="base"/>',
            '<link name="base"><inertial><mass value="1"/>'
            '<inertia ixx="1" ixy="5" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>',
        )
    )
    model = load_urdf("arm.urdf", text=text, base_orientation="euler")
    assert model.n == 2 and model.tree.inertials["base"] is None
    with pytest.raises(sls.ModelFileError, match="link 'base'"):  # with a floating base it moves: refused
        load_urdf("arm.urdf", text=text, floating_base=True, base_orientation="euler")


@pytest.mark.parametrize("mass", ["-1", "-1e-3"])
def test_a_negative_mass_is_refused_on_every_link(mass):
    """No body has a negative mass, fixed to the world or not (MuJoCo's compiler refuses it too)."""
    text = (
        (DATA / "arm.urdf")
        .read_text()
        .replace(
            '<link name="base"/>',
            f'<link name="base"><inertial><mass value="{mass}"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>',
        )
    )
    with pytest.raises(
        sls.ModelFileError, match=rf"link 'base': <mass value=\"{mass}\">: the mass must not be negative"
    ):
        load_urdf("arm.urdf", text=text)


PLANAR2_UPPER = '<inertia ixx="0.03" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.001"/>'
PLANAR2_LOWER = '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.0005"/>'


@pytest.mark.parametrize(
    ("upper", "lower", "refused"),
    [
        ((1, 1, 3), None, "link 'upper': <inertia>: its principal moments 1, 1, 3 break the triangle inequality"),
        ((0.03, 0.03, 0.001), (0.01, 0.01, 0.025), None),  # a light link 17 % of the largest moment off: accepted
        ((0.03, 0.03, 0.001), (0.001, 0.001, 0.0025), None),  # 2 % off, as the xArm's link 2
        ((0.03, 0.03, 0.001), (0.01, 0.01, 0.03), "link 'lower': .* 0.01, 0.01, 0.03 break the triangle"),
    ],
)
def test_principal_moments_satisfy_the_triangle_inequality_beyond_a_tolerance(upper, lower, refused):
    """c ≤ a + b up to a quarter of the robot's largest principal moment (real files break it by up to 14 %)."""
    text = (DATA / "planar2.urdf").read_text()
    text = text.replace(PLANAR2_UPPER, '<inertia ixx="{}" ixy="0" ixz="0" iyy="{}" iyz="0" izz="{}"/>'.format(*upper))
    if lower is not None:
        text = text.replace(
            PLANAR2_LOWER, '<inertia ixx="{}" ixy="0" ixz="0" iyy="{}" iyz="0" izz="{}"/>'.format(*lower)
        )
    if refused is None:
        assert load_urdf("planar2.urdf", text=text).n == 2
    else:
        with pytest.raises(sls.ModelFileError, match=refused):
            load_urdf("planar2.urdf", text=text)


def test_the_triangle_inequality_is_not_asked_of_a_link_that_never_moves():
    text = (
        (DATA / "arm.urdf")
        .read_text()
        .replace(
            '<link name="base"/>',
            '<link name="base"><inertial><mass value="1"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="30"/></inertial></link>',
        )
    )
    assert load_urdf("arm.urdf", text=text, base_orientation="euler").n == 2


# --------------------------------------------------------------------------
# a humanoid at the model level (generating 35 coordinates takes minutes today)


class Energies:
    """A model's ``T``, ``V`` and input map as numbers: M from T at unit velocities, derivatives by complex steps.

    Complex steps (``Im f(q + i h e) / h``, ``h = 1e-30``) differentiate to machine precision, so
    ``τ = M q̈ + Ṁ q̇ − ∂T/∂q + ∂V/∂q`` (Euler–Lagrange) is exact without deriving anything symbolically.
    """

    STEP = 1e-30

    def __init__(self, model: sls.Model):
        self.n = model.n
        g = sympy.Symbol("g", real=True)
        args = list(model.q) + list(model.dq)
        self.T = sympy.lambdify(args, model.T, "numpy", cse=True)
        self.V = sympy.lambdify(list(model.q), model.V.subs(g, 9.81), "numpy", cse=True)
        self.forces = sympy.lambdify(list(model.q) + list(model.inputs), list(model.forces), "numpy", cse=True)
        self.m = model.m

    def mass_matrix(self, q) -> np.ndarray:
        n, E = self.n, np.eye(self.n)
        diagonal = [2 * self.T(*q, *E[i]) for i in range(n)]
        M = np.diag(diagonal).astype(np.result_type(*diagonal))
        for i in range(n):
            for j in range(i + 1, n):
                M[i, j] = M[j, i] = self.T(*q, *(E[i] + E[j])) - (diagonal[i] + diagonal[j]) / 2
        return M

    def inverse_dynamics(self, q, dq, ddq) -> np.ndarray:
        h, E = self.STEP, np.eye(self.n)
        M_dot = self.mass_matrix(q + 1j * h * dq).imag / h
        dT = np.array([self.T(*(q + 1j * h * E[k]), *dq).imag / h for k in range(self.n)])
        dV = np.array([self.V(*(q + 1j * h * E[k])).imag / h for k in range(self.n)])
        return self.mass_matrix(q) @ ddq + M_dot @ dq - dT + dV

    def input_matrix(self, q) -> np.ndarray:
        return np.column_stack([np.array(self.forces(*q, *e), dtype=float) for e in np.eye(self.m)])


@needs_robots
def test_humanoid_free_flyer_model_matches_pinocchio():
    """simple_humanoid (29 joints) with --floating-base: M, τ (Euler–Lagrange on T and V), B_u = Sᵀ and q̈."""
    path = ROBOTS / "simple_humanoid_description/urdf/simple_humanoid.urdf"
    model = load_urdf(path, floating_base=True, base_orientation="euler")
    assert model.n == 35 and model.m == 35
    numbers = Energies(model)
    state = tuple(s.name for s in model.state)
    peer = Peer(path, state, tuple(u.name for u in model.inputs), floating=True)
    for _ in range(2):
        q, dq, ddq, u = (
            RNG.uniform(-1.2, 1.2, 35),
            RNG.uniform(-1, 1, 35),
            RNG.uniform(-1, 1, 35),
            RNG.uniform(-2, 2, 35),
        )
        M = numbers.mass_matrix(q)
        np.testing.assert_allclose(M, peer.mass_matrix(q), rtol=0, atol=1e-9 * np.abs(M).max())
        tau = peer.inverse_dynamics(q, dq, ddq)
        np.testing.assert_allclose(numbers.inverse_dynamics(q, dq, ddq), tau, rtol=0, atol=1e-9 * np.abs(tau).max())
        B = numbers.input_matrix(q)
        np.testing.assert_allclose(B, peer.S(q).T[:, peer.input_index], rtol=0, atol=1e-12)
        qddot = np.linalg.solve(M, B @ u - numbers.inverse_dynamics(q, dq, np.zeros(35)))
        expected = peer.acceleration(q, dq, u)
        np.testing.assert_allclose(qddot, expected, rtol=0, atol=1e-9 * np.abs(expected).max())


# --------------------------------------------------------------------------
# the option in the command line and in a TOML model file


#: The arm of the bad-file tests with a mass on its root link (a floating base needs one).
HEAVY_BASE = (
    (DATA / "arm.urdf")
    .read_text()
    .replace(
        '<link name="base"/>',
        '<link name="base"><inertial><mass value="2"/>'
        '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>',
    )
)


def test_massless_floating_base_link_is_explained():
    with pytest.raises(
        sls.ModelFileError,
        match="link 'base' of the floating joint 'base' has no mass, so the joints next to it turn it for free",
    ):
        load_urdf(DATA / "arm.urdf", floating_base=True, base_orientation="euler")


def test_toml_urdf_table_is_the_floating_base_option(tmp_path):
    (tmp_path / "arm.urdf").write_text(HEAVY_BASE)
    (tmp_path / "robot.toml").write_text(
        '[urdf]\nfile = "arm.urdf"\nfloating_base = true\nbase_orientation = "euler"\n\n'
        "[params]\ndamping_shoulder = 0.0\n"
    )
    model = sls.load_toml(tmp_path / "robot.toml")
    direct = load_urdf(tmp_path / "arm.urdf", floating_base=True, base_orientation="euler")
    assert model.q == direct.q and model.T == direct.T and model.forces == direct.forces
    assert model.params == {**direct.params, "damping_shoulder": 0.0} and model.name == "robot"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[urdf]\nfile = "arm.urdf"\nfloating_base = "yes"\n', "'floating_base' must be true or false"),
        ("[urdf]\nfloating_base = true\n", "'file' must name the URDF file"),
        ('[urdf]\nfile = "arm.urdf"\nbase = 1\n', "unknown key 'base'"),
        ('T = "0"\n[urdf]\nfile = "arm.urdf"\n', "key 'T' cannot go with a [urdf] table"),
        ('[urdf]\nfile = "arm.urdf"\n[params]\nmass = 1\n', "[params] mass: the robot has no parameter of that name"),
        ('[urdf]\nfile = "nowhere.urdf"\n', "nowhere.urdf: no such model file"),
    ],
)
def test_toml_urdf_table_mistakes_are_one_line(text, message, tmp_path):
    (tmp_path / "arm.urdf").write_text((DATA / "arm.urdf").read_text())
    (tmp_path / "robot.toml").write_text(text)
    with pytest.raises(sls.ModelFileError) as info:
        sls.load_toml(tmp_path / "robot.toml")
    assert message in str(info.value) and "\n" not in str(info.value)


def test_cli_floating_base(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from sls.cli.app import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "arm.urdf").write_text(HEAVY_BASE)
    result = CliRunner().invoke(
        main, ["generate", "arm.urdf", "--floating-base", "--base-orientation", "euler", "--out", "free"]
    )
    assert result.exit_code == 0, result.output
    assert "arm: n = 8, m = 8" in result.output
    package = import_package(tmp_path / "free")
    assert package.STATE[:7] == ("base_x", "base_y", "base_z", "base_yaw", "base_pitch", "base_roll", "shoulder")
    assert package.INPUTS == (
        "base_fx",
        "base_fy",
        "base_fz",
        "base_mx",
        "base_my",
        "base_mz",
        "tau_shoulder",
        "tau_elbow",
    )
    refused = CliRunner().invoke(main, ["generate", "pendulum", "--floating-base", "--out", "p"])
    assert refused.exit_code == 2
    assert refused.stderr.startswith("error: --floating-base goes with a URDF robot (a file NAME.urdf or a bundled")


@needs_robots
def test_real_file_with_coulomb_friction_matches_pinocchio(tmp_path):
    """Unitree Z1 (damping and friction on every joint, once refused): Pinocchio with friction at 0, and the
    friction term against the file's numbers."""
    path = ROBOTS / "z1_description/urdf/z1.urdf"
    package = generated(load_urdf(path, base_orientation="euler"), tmp_path / "pkg")
    compare(package, Peer(path, package.STATE, package.INPUTS, floating=False), samples=3)
    dynamics = {j.get("name"): j.find("dynamics") for j in ET.parse(path).getroot().findall("joint")}
    names = package.STATE[: package.N_DOF]
    damping = np.array([float(dynamics[s].get("damping")) for s in names])
    friction = np.array([float(dynamics[s].get("friction")) for s in names])
    assert package.PARAMS["friction_velocity"] == 0.01
    for _ in range(3):
        x = np.concatenate([RNG.uniform(-1, 1, package.N_DOF), RNG.uniform(-0.05, 0.05, package.N_DOF)])
        v = x[package.N_DOF :]
        np.testing.assert_allclose(
            package.fric_fun(x), damping * v + friction * np.tanh(v / 0.01), rtol=1e-14, atol=1e-15
        )
