"""MJCF models with ball joints and several free joints against MuJoCo itself.

A ball joint is Pinocchio's spherical joint: coordinates ``qx qy qz qw`` (MuJoCo's ``qpos`` ``qw qx qy qz``), speeds
the child's angular velocity relative to its parent in the child's frame (MuJoCo's ``qvel``). Each free joint is a
free-flyer (``x y z qx qy qz qw``, speeds in its body's frame) wherever it sits in MuJoCo's joint order. With ``J``
the identity but for each free joint's linear block, its body's orientation ``R`` (``qvel = J ν``):
``M_fun = Jᵀ mj_fullM J`` and ``qacc = J ν̇ + [R (ω × v)]`` on each free joint's linear rows. ``integrate`` of the
ball and hinge entries is MuJoCo's ``mj_integratePos``; the dynamics rows of ``linearized_model`` are central
differences of ``mj_forward`` along ``integrate``.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import import_package

import sls
from sls.readers.mjcf import load_mjcf

mujoco = pytest.importorskip("mujoco")

from mujoco_peers import BALL, FREE, full_mass_matrix, random_state, relative, smooth, speed_map, speed_rates  # noqa: E402

RELATIVE = 1e-9
FUNCTIONS = ["M_fun", "qddot_fun", "tau_fun", "fric_fun", "linearized_model", "qdot_fun", "qdot_jac_fun"]
FUNCTIONS += ["T_fun", "V_fun", "input_matrix_fun"]

#: Three links on two ball joints with a hinge between them (anchors off the bodies' origins, a hinge ref).
BALL_CHAIN = """
<mujoco model="ball_chain">
  <option gravity="0.3 -0.2 -9.81"/>
  <worldbody>
    <body name="l1" pos="0 0 2" quat="0.9 0.1 0.2 0.3">
      <joint name="b1" type="ball" pos="0 0 0.1" damping="0.2"/>
      <geom type="capsule" fromto="0 0 0 0.3 0.1 -0.5" size="0.05" mass="1.3"/>
      <body name="l2" pos="0.3 0.1 -0.5" euler="10 20 30">
        <joint name="h" type="hinge" axis="0.3 1 0.2" pos="0.01 0.02 0" ref="0.2"/>
        <geom type="box" size="0.05 0.1 0.2" pos="0.1 0 -0.2" euler="5 40 7" mass="0.7"/>
        <body name="l3" pos="0.1 -0.1 -0.4" quat="0.8 0.3 -0.1 0.2">
          <joint name="b3" type="ball" pos="0.02 0 0.05"/>
          <geom type="ellipsoid" size="0.05 0.1 0.3" pos="0.05 0.02 -0.2" mass="0.5"/>
        </body>
      </body>
    </body>
  </worldbody>
</mujoco>
"""

#: Two free bodies (the second after the first one's joints, as dm_control's dog and its ball), a hinge, a ball
#: joint in the first body's subtree, and damping on all; armature on the second free joint and the ball joint.
TWO_FREE = """
<mujoco model="two_free">
  <worldbody>
    <body name="torso" pos="0 0 1">
      <freejoint name="root"/>
      <geom type="box" size="0.2 0.1 0.05" mass="3" pos="0.02 0.01 0"/>
      <body name="arm" pos="0.2 0 0">
        <joint name="shoulder" type="hinge" axis="0 1 0" damping="0.3"/>
        <geom type="capsule" fromto="0 0 0 0.3 0 -0.1" size="0.03" mass="0.5"/>
        <body name="hand" pos="0.3 0 -0.1">
          <joint name="wrist" type="ball" damping="0.2" armature="0.02"/>
          <geom type="box" size="0.03 0.05 0.07" pos="0.02 0.01 0.03" mass="0.2"/>
        </body>
      </body>
    </body>
    <body name="ball" pos="1 0 0.5" quat="0.9 0.2 0.1 0">
      <joint name="ball_root" type="free" damping="0.1" armature="0.05"/>
      <geom type="ellipsoid" size="0.1 0.15 0.2" mass="0.8" pos="0.01 0.02 0.03"/>
    </body>
  </worldbody>
  <actuator>
    <motor joint="shoulder" gear="2"/>
  </actuator>
</mujoco>
"""

TEXTS = {"ball_chain": BALL_CHAIN, "two_free": TWO_FREE}


@pytest.fixture(scope="module", params=sorted(TEXTS))
def case(request, tmp_path_factory):
    """``(package, MuJoCo's model, the model's name)`` of one model."""
    text = TEXTS[request.param]
    package_dir = tmp_path_factory.mktemp(request.param) / "pkg"
    sls.generate(load_mjcf(f"{request.param}.xml", text=text), package_dir, functions=FUNCTIONS)
    return import_package(package_dir), smooth(mujoco.MjModel.from_xml_string(text)), request.param


def test_names_and_layout(case):
    """Coordinates in MuJoCo's joint order, named after the joints; speeds in ``qvel``'s order."""
    package, m, _ = case
    assert (package.N_Q, package.N_V) == (m.nq, m.nv)
    names = []
    for j in range(m.njnt):
        name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j)
        kind = int(m.jnt_type[j])
        names += [f"{name}_{s}" for s in ("x", "y", "z")] if kind == FREE else []
        names += [f"{name}_{s}" for s in ("qx", "qy", "qz", "qw")] if kind in (FREE, BALL) else [name]
    assert list(package.STATE[: m.nq]) == names
    assert package.MUJOCO_QVEL == list(range(m.nv))


def test_converters_against_mujoco_kinematics(case):
    """A free body's coordinates and speeds are its pose and body-frame velocity; a ball joint's speeds are its
    child's angular velocity relative to its parent, in the child's frame; ``to_mujoco`` inverts ``from_mujoco``."""
    package, m, _ = case
    d = mujoco.MjData(m)
    random_state(m, d, np.random.default_rng(1))
    mujoco.mj_forward(m, d)
    x = package.from_mujoco(d.qpos, d.qvel)
    q, v = x[: m.nq], x[m.nq :]

    def velocity(body):  # [ω; v] of a body in its own frame
        out = np.zeros(6)
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, body, out, 1)
        return out

    for j in range(m.njnt):
        a, b, body = m.jnt_qposadr[j], m.jnt_dofadr[j], m.jnt_bodyid[j]
        if m.jnt_type[j] == FREE:
            assert np.allclose(q[a : a + 3], d.xpos[body], rtol=0, atol=1e-14)
            assert np.allclose(np.r_[q[a + 6], q[a + 3 : a + 6]], d.xquat[body], rtol=0, atol=1e-14)
            assert np.allclose(v[b : b + 6], np.r_[velocity(body)[3:], velocity(body)[:3]], rtol=0, atol=1e-13)
        elif m.jnt_type[j] == BALL:
            R, R_parent = d.xmat[body].reshape(3, 3), d.xmat[m.body_parentid[body]].reshape(3, 3)
            relative_omega = velocity(body)[:3] - R.T @ R_parent @ velocity(m.body_parentid[body])[:3]
            assert np.allclose(v[b : b + 3], relative_omega, rtol=0, atol=1e-13)
    qpos, qvel = package.to_mujoco(x)
    assert np.allclose(qpos, d.qpos, rtol=0, atol=1e-15) and np.allclose(qvel, d.qvel, rtol=0, atol=1e-14)


def test_equal_mujoco(case):
    """``M_fun``, ``vdot_fun`` and ``tau_fun`` against ``mj_fullM``, ``qacc`` and ``qfrc_inverse``."""
    package, m, _ = case
    d = mujoco.MjData(m)
    rng = np.random.default_rng(27)
    for _ in range(5):
        random_state(m, d, rng)
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        mujoco.mj_forward(m, d)
        x = package.from_mujoco(d.qpos, d.qvel)
        v = x[m.nq :]
        J = speed_map(m, d)
        u = d.ctrl.copy() if m.nu else np.zeros(package.N_INPUTS)
        assert relative(package.M_fun(x), J.T @ full_mass_matrix(m, d) @ J) <= RELATIVE
        assert relative(package.vdot_fun(x, u), speed_rates(m, d, v)) <= RELATIVE
        d.qacc[:] = rng.uniform(-2, 2, m.nv)
        rates = speed_rates(m, d, v)
        mujoco.mj_inverse(m, d)  # qfrc_inverse: M qacc + bias − passive forces (+ the dampers' D qvel)
        assert relative(package.tau_fun(x, rates), J.T @ d.qfrc_inverse) <= RELATIVE


def test_integrate_and_difference(case):
    """``integrate`` moves ball and hinge coordinates as ``mj_integratePos``; ``difference`` inverts it; ``normalize``
    scales every quaternion to unit norm."""
    package, m, _ = case
    d = mujoco.MjData(m)
    rng = np.random.default_rng(3)
    random_state(m, d, rng)
    q0 = package.from_mujoco(d.qpos, d.qvel)[: m.nq]
    dq = rng.uniform(-1, 1, m.nv)
    q1 = package.integrate(q0, dq)
    assert np.allclose(package.difference(q0, q1), dq, rtol=0, atol=1e-12)
    assert np.allclose(package.integrate(q0, package.difference(q0, q1)), q1, rtol=0, atol=1e-12)
    qpos = d.qpos.copy()
    mujoco.mj_integratePos(m, qpos, dq, 1.0)
    moved = package.to_mujoco(np.r_[q1, np.zeros(m.nv)])[0]
    for j in range(m.njnt):
        if m.jnt_type[j] != FREE:  # MuJoCo moves a free joint's position along the world frame, not along SE(3)
            a = m.jnt_qposadr[j]
            size = 4 if m.jnt_type[j] == BALL else 1
            assert np.allclose(moved[a : a + size], qpos[a : a + size], rtol=0, atol=1e-12)
    scaled = package.normalize(2.5 * q1)
    back = package.to_mujoco(np.r_[scaled, np.zeros(m.nv)])[0]
    for j in range(m.njnt):
        if m.jnt_type[j] in (FREE, BALL):
            a = m.jnt_qposadr[j] + (3 if m.jnt_type[j] == FREE else 0)
            assert abs(np.linalg.norm(back[a : a + 4]) - 1) <= 1e-15


def test_linearized_model_equals_central_differences(case):
    """The rows of ``A`` and ``B`` for ``ν̇`` against central differences of ``mj_forward`` at ``x ⊕ δ``; the
    kinematic rows are those of ``integrate``: at ``v = 0``, ``[0 I]``."""
    package, m, _ = case
    d = mujoco.MjData(m)
    rng = np.random.default_rng(4)
    random_state(m, d, rng)
    x = package.from_mujoco(d.qpos, d.qvel)
    u = rng.uniform(-1, 1, package.N_INPUTS)
    A, B = package.linearized_model(x, u)
    n = m.nv

    def rates(delta, control):
        state = np.r_[package.integrate(x[: m.nq], delta[:n]), x[m.nq :] + delta[n:]]
        d.qpos[:], d.qvel[:] = package.to_mujoco(state)
        d.qfrc_applied[:] = 0
        if m.nu:
            d.ctrl[:] = control
        else:  # no actuators: the inputs are the joints' torques (the speeds' forces)
            mujoco.mj_forward(m, d)
            d.qfrc_applied[:] = np.linalg.solve(speed_map(m, d).T, control)
        mujoco.mj_forward(m, d)
        return speed_rates(m, d, state[m.nq :])

    h = 1e-6
    zero = np.zeros(2 * n)
    A_fd = np.column_stack([(rates(h * e, u) - rates(-h * e, u)) / (2 * h) for e in np.eye(2 * n)])
    B_fd = np.column_stack([(rates(zero, u + h * e) - rates(zero, u - h * e)) / (2 * h) for e in np.eye(len(u))])
    assert relative(A[n:], A_fd) <= 1e-5
    assert relative(B[n:], B_fd) <= 1e-5
    # the kinematic rows: d/dt of δ for q = integrate(q_bar, δ), by differences of difference(q_bar, q(t))
    q_bar, v = x[: m.nq], x[m.nq :]
    delta = 1e-4 * rng.uniform(-1, 1, n)
    start = package.integrate(q_bar, delta)
    step = 1e-6
    moved = package.integrate(start, step * v)  # q(t + dt) ≈ q ⊕ v dt
    slope = (package.difference(q_bar, moved) - delta) / step
    assert np.allclose(slope, A[:n, :n] @ delta + v, rtol=0, atol=1e-5)
    at_rest = package.linearized_model(np.r_[q_bar, np.zeros(n)], u)[0]
    assert np.array_equal(at_rest[:n], np.hstack([np.zeros((n, n)), np.eye(n)]))


def test_simulate_and_lqr_in_the_tangent_space(case):
    """``sls.control.simulate`` keeps every quaternion unit-norm and the energy of the undamped ball chain; an LQR
    designed in the tangent space (2 N_V) brings the chain back to a held pose."""
    from sls import control

    package, m, name = case
    if name != "ball_chain":
        pytest.skip("the ball chain only")
    x0 = package.from_mujoco(np.r_[1, 0, 0, 0, 0.3, 0.8, 0.6, 0, 0], np.r_[0.5, -1, 2, 1, 0.3, 0.2, -0.4])
    free = {"damping_b1": 0.0}
    result = control.simulate(package, x0, (0, 2), params=free, rtol=1e-10, atol=1e-12)
    q = result.y[: m.nq]
    assert result.success
    assert np.abs(np.linalg.norm(q[0:4], axis=0) - 1).max() <= 1e-12
    assert np.abs(np.linalg.norm(q[5:9], axis=0) - 1).max() <= 1e-12
    energy = package.T_fun(result.y.T, **free) + package.V_fun(result.y.T)
    assert np.abs(energy - energy[0]).max() <= 1e-8 * abs(energy[0])
    held = package.from_mujoco(np.r_[0.7, 0.1, 0.7, 0.1, 0.3, 0.8, 0.6, 0, 0], np.zeros(m.nv))
    held[: m.nq] = package.normalize(held[: m.nq])
    design = control.lqr(package, held, package.tau_fun(held, np.zeros(m.nv)), Q=10.0, R=1.0)
    assert design.K.shape == (package.N_INPUTS, 2 * m.nv)
    start = np.r_[package.integrate(held[: m.nq], np.r_[0.2, -0.1, 0.15, 0.1, -0.2, 0.1, 0.05]), np.zeros(m.nv)]
    result = control.simulate(package, start, (0, 8), design, method="Radau", rtol=1e-8, atol=1e-10)
    assert result.success
    assert np.abs(package.difference(held[: m.nq], result.y[: m.nq, -1])).max() <= 1e-3


def test_c_target_equals_python(case, tmp_path):
    """The C target computes ``M``, ``v̇`` and the tangent-space linearization as the Python one."""
    from sls.backends import backend

    try:
        backend("c").check_environment()
    except sls.SlsError as exc:
        pytest.skip(str(exc))
    package, m, name = case
    folder = tmp_path / "c"
    functions = ["M_fun", "qddot_fun", "linearized_model"]
    sls.generate(load_mjcf(f"{name}.xml", text=TEXTS[name]), folder, target="c", functions=functions)
    c = import_package(folder)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(8)
    for _ in range(3):
        random_state(m, d, rng)
        x = c.from_mujoco(d.qpos, d.qvel)
        u = rng.uniform(-1, 1, c.N_INPUTS)
        assert relative(c.M_fun(x), package.M_fun(x)) <= 1e-12
        assert relative(c.vdot_fun(x, u), package.vdot_fun(x, u)) <= 1e-11
        for mine, theirs in zip(c.linearized_model(x, u), package.linearized_model(x, u)):
            assert relative(mine, theirs) <= 1e-10
        q = x[: m.nq]
        dq = rng.uniform(-1, 1, m.nv)
        assert np.allclose(c.integrate(q, dq), package.integrate(q, dq), rtol=0, atol=1e-15)


def _dm_control_suite():
    """dm_control's ``suite`` folder (its MJCF files), or skip."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("dm_control")
    if spec is None or spec.origin is None:
        pytest.skip("dm_control is not installed")
    return Path(spec.origin).parent / "suite"


def test_dm_control_quadruped_reads_without_its_actuators(tmp_path):
    """quadruped.xml (a free joint, tendon equalities): refused for its actuators' activation dynamics; read without
    them (``actuators=False``), its tendon equalities are constraints and ``M_fun`` equals ``mj_fullM``."""
    suite = _dm_control_suite()
    with pytest.raises(sls.SlsError, match="activation dynamics.*--no-actuators"):
        load_mjcf(suite / "quadruped.xml")
    model = load_mjcf(suite / "quadruped.xml", actuators=False)
    assert model.constrained and len(model.constraints) == 4 and model.m == model.n
    sls.generate(model, tmp_path / "pkg", functions=["M_fun"])
    package = import_package(tmp_path / "pkg")
    spec = mujoco.MjSpec.from_file(str(suite / "quadruped.xml"))
    for actuator in list(spec.actuators):
        spec.delete(actuator)
    _equal_mujoco(package, smooth(spec.compile()), rounds=3, seed=28, rates=False)


def test_dm_control_dog_equals_mujoco(tmp_path):
    """dog.xml (two free joints, nv = 85): refused for its filtered actuators (activation dynamics); read without
    them (``actuators=False``), ``M_fun`` and ``vdot_fun`` equal MuJoCo's on random states of the file with its
    ``<actuator>`` block removed."""
    import re
    import shutil

    suite = _dm_control_suite()
    with pytest.raises(sls.SlsError, match="activation dynamics"):
        load_mjcf(suite / "dog.xml")
    for name in ("dog_assets", "common"):
        shutil.copytree(suite / name, tmp_path / name)
    path = tmp_path / "dog.xml"
    path.write_text(re.sub(r"<actuator>.*?</actuator>", "", (suite / "dog.xml").read_text(), flags=re.S))
    model = load_mjcf(suite / "dog.xml", actuators=False)
    assert (model.n_q, model.n) == (87, 85)
    sls.generate(model, tmp_path / "pkg", functions=["M_fun", "qddot_fun"])
    package = import_package(tmp_path / "pkg")
    _equal_mujoco(package, smooth(mujoco.MjModel.from_xml_path(str(path))), rounds=2, seed=85, rates=True)


def _equal_mujoco(package, m, rounds: int, seed: int, rates: bool) -> None:
    """``M_fun`` (and with ``rates`` ``vdot_fun`` at zero input) against MuJoCo's on random states of ``m``."""
    d = mujoco.MjData(m)
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        random_state(m, d, rng)
        mujoco.mj_forward(m, d)
        x = package.from_mujoco(d.qpos, d.qvel)
        J = speed_map(m, d)
        assert relative(package.M_fun(x), J.T @ full_mass_matrix(m, d) @ J) <= RELATIVE
        if rates:
            vdot = package.vdot_fun(x, np.zeros(package.N_INPUTS))
            assert relative(vdot, speed_rates(m, d, x[m.nq :])) <= RELATIVE
