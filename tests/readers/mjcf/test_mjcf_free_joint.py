"""MJCF models with a free joint (Gymnasium's ant and humanoid, and a small floating body) against MuJoCo itself.

The free joint is the quaternion free-flyer (Pinocchio's layout: ``x y z qx qy qz qw``, speeds in the body's frame);
MuJoCo's free joint is ``qpos = [x y z qw qx qy qz]``, ``qvel`` = the body's linear velocity in the world's frame and
its angular velocity in its own. With ``J = blockdiag(R, I)`` (``qvel = J ν``, ``R`` the body's orientation):
``M_fun = Jᵀ mj_fullM J``, ``qacc = J ν̇ + [R (ω × v); 0]`` and ``tau_fun = Jᵀ qfrc_inverse`` (power is the same in
both). The converters are checked against MuJoCo's own body pose and velocity (``xpos``, ``xquat``,
``mj_objectVelocity``); the dynamics rows of ``linearized_model`` against central differences of ``mj_forward``
along the package's own ``integrate``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import import_package

import sls
from sls.readers.mjcf import load_mjcf

mujoco = pytest.importorskip("mujoco")

from mujoco_peers import full_mass_matrix, random_state, relative, smooth, speed_map, speed_rates  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "data" / "mjcf"
RELATIVE = 1e-9
FUNCTIONS = ["M_fun", "qddot_fun", "tau_fun", "fric_fun", "linearized_model"]

#: A floating body with a damped free joint with armature (no actuators: its wrench and the hinge's torque are the
#: inputs), a hinged arm with a spring, and gravity tilted off −z.
FLOATER = """
<mujoco model="floater">
  <option gravity="1 -0.5 -9.81"/>
  <worldbody>
    <body name="hull" pos="0 0 1" quat="0.9 0.1 0.2 0.3">
      <joint name="base" type="free" damping="0.3" armature="0.2"/>
      <geom type="box" size="0.3 0.2 0.1" mass="3"/>
      <body name="arm" pos="0.3 0 0.1" euler="0.1 0.2 0.3">
        <joint name="elbow" axis="0 1 1" pos="0 0 0.05" stiffness="2" springref="0.3" damping="0.1"/>
        <geom type="capsule" fromto="0 0 0 0.4 0.1 0" size="0.03" mass="0.5"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def no_friction(package) -> dict:
    return {p: 0.0 for p in package.PARAMS if p.startswith("friction_") and p != "friction_velocity"}


def generate(model: sls.Model, folder: Path, **options):
    sls.generate(model, folder, **options)
    return import_package(folder)


@pytest.fixture(scope="module", params=["ant", "humanoid", "floater"])
def case(request, tmp_path_factory):
    """``(package, MuJoCo's model)`` of one free-joint model."""
    if request.param == "floater":
        model, text = load_mjcf("floater.xml", text=FLOATER), FLOATER
    else:
        path = DATA / f"{request.param}.xml"
        model, text = load_mjcf(path), path.read_text()
    package = generate(model, tmp_path_factory.mktemp(request.param) / "pkg", functions=FUNCTIONS)
    return package, smooth(mujoco.MjModel.from_xml_string(text))


def test_names_and_layout(case):
    package, m = case
    assert package.N_Q == m.nq and package.N_V == m.nv and package.MUJOCO_NQ == m.nq
    name = mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, 0)
    assert package.STATE[:7] == tuple(f"{name}_{s}" for s in ("x", "y", "z", "qx", "qy", "qz", "qw"))
    assert package.STATE[m.nq : m.nq + 6] == tuple(f"{name}_{s}" for s in ("vx", "vy", "vz", "wx", "wy", "wz"))
    assert package.MUJOCO_QPOS == [0, 1, 2, 4, 5, 6, 3] + list(range(7, m.nq))
    if m.nu:
        names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_ACTUATOR, i) or f"act{i}" for i in range(m.nu)]
        # an actuator named after its joint gets the prefix u_ (humanoid)
        assert [u.removeprefix("u_") if u[2:] in package.STATE else u for u in package.INPUTS] == names
    else:
        assert package.INPUTS == ("base_fx", "base_fy", "base_fz", "base_mx", "base_my", "base_mz", "tau_elbow")


def test_converters_against_mujoco_kinematics(case):
    """``from_mujoco``'s base is MuJoCo's body pose, and its speeds the body's velocity in its own frame."""
    package, m = case
    d = mujoco.MjData(m)
    rng = np.random.default_rng(1)
    body = m.jnt_bodyid[0]
    for _ in range(3):
        random_state(m, d, rng)
        mujoco.mj_forward(m, d)
        x = package.from_mujoco(d.qpos, d.qvel)
        assert np.allclose(x[0:3], d.xpos[body], rtol=0, atol=1e-14)
        quat = x[3:7]
        assert np.allclose(np.r_[quat[3], quat[:3]], d.xquat[body], rtol=0, atol=1e-14)
        local = np.zeros(6)
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_XBODY, body, local, 1)  # [ω; v], body frame
        v = x[m.nq :]
        assert np.allclose(v[0:3], local[3:6], rtol=0, atol=1e-13)
        assert np.allclose(v[3:6], local[0:3], rtol=0, atol=1e-13)
        assert np.array_equal(v[6:], d.qvel[6:]) and np.array_equal(x[7 : m.nq], d.qpos[7:])
        qpos, qvel = package.to_mujoco(x)
        assert np.allclose(qpos, d.qpos, rtol=0, atol=1e-15) and np.allclose(qvel, d.qvel, rtol=0, atol=1e-14)


def test_equal_mujoco(case):
    """``M_fun``, ``vdot_fun`` and ``tau_fun`` against ``mj_fullM``, ``qacc`` and ``qfrc_inverse``."""
    package, m = case
    d = mujoco.MjData(m)
    rng = np.random.default_rng(27)
    params = no_friction(package)
    for _ in range(4):
        random_state(m, d, rng)
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        mujoco.mj_forward(m, d)
        x = package.from_mujoco(d.qpos, d.qvel)
        u = d.ctrl.copy() if m.nu else np.zeros(package.N_INPUTS)
        J = speed_map(m, d)
        assert relative(package.M_fun(x, **params), J.T @ full_mass_matrix(m, d) @ J) <= RELATIVE
        assert relative(package.vdot_fun(x, u, **params), speed_rates(m, d, x[package.N_Q :])) <= RELATIVE
        d.qacc[:] = rng.uniform(-2, 2, m.nv)
        rates = speed_rates(m, d, x[package.N_Q :])
        mujoco.mj_inverse(m, d)  # qfrc_inverse: M qacc + bias − passive forces, no actuators
        actuators = package.fric_fun(x, **params, **{p: 0.0 for p in package.PARAMS if p.startswith("damping_")})
        assert relative(package.tau_fun(x, rates, **params) - actuators, J.T @ d.qfrc_inverse) <= RELATIVE


def test_linearized_model_equals_central_differences(case):
    """The rows of ``A`` and ``B`` for ``ν̇`` against central differences of ``mj_forward`` at ``x ⊕ δ``
    (``integrate`` on the coordinates, the speeds added)."""
    package, m = case
    d = mujoco.MjData(m)
    rng = np.random.default_rng(4)
    random_state(m, d, rng)
    x = package.from_mujoco(d.qpos, d.qvel)
    u = rng.uniform(-1, 1, package.N_INPUTS)
    params = no_friction(package)
    A, B = package.linearized_model(x, u, **params)
    n = m.nv

    def rates(delta, control):
        state = np.r_[package.integrate(x[: m.nq], delta[:n]), x[m.nq :] + delta[n:]]
        d.qpos[:], d.qvel[:] = package.to_mujoco(state)
        if m.nu:
            d.ctrl[:] = control
            d.qfrc_applied[:] = 0
        else:  # no actuators: the inputs are the free body's wrench and the joints' torques, in the speeds
            d.qfrc_applied[:] = control
            mujoco.mj_forward(m, d)
            d.qfrc_applied[:] = np.linalg.solve(speed_map(m, d).T, control)
        mujoco.mj_forward(m, d)
        return speed_rates(m, d, state[package.N_Q :])

    h = 1e-6
    zero = np.zeros(2 * n)
    A_fd = np.column_stack([(rates(h * e, u) - rates(-h * e, u)) / (2 * h) for e in np.eye(2 * n)])
    B_fd = np.column_stack([(rates(zero, u + h * e) - rates(zero, u - h * e)) / (2 * h) for e in np.eye(len(u))])
    assert relative(A[n:], A_fd) <= 1e-5
    assert relative(B[n:], B_fd) <= 1e-5


def test_c_target_has_the_converters(tmp_path):
    """The C target's package (its Python face and ``_free_flyer.py``) converts and computes as the Python one."""
    from sls.backends import backend

    try:
        backend("c").check_environment()
    except sls.SlsError as exc:
        pytest.skip(str(exc))
    path = DATA / "ant.xml"
    package = generate(load_mjcf(path), tmp_path / "pkg", target="c", functions=["M_fun", "qddot_fun"])
    m = smooth(mujoco.MjModel.from_xml_path(str(path)))
    d = mujoco.MjData(m)
    rng = np.random.default_rng(6)
    random_state(m, d, rng)
    d.ctrl[:] = rng.uniform(-1, 1, m.nu)
    mujoco.mj_forward(m, d)
    x = package.from_mujoco(d.qpos, d.qvel)
    J = speed_map(m, d)
    assert relative(package.M_fun(x), J.T @ full_mass_matrix(m, d) @ J) <= RELATIVE
    assert relative(package.vdot_fun(x, d.ctrl), speed_rates(m, d, x[package.N_Q :])) <= RELATIVE
    qpos, qvel = package.to_mujoco(x)
    assert np.allclose(qpos, d.qpos, rtol=0, atol=1e-15) and np.allclose(qvel, d.qvel, rtol=0, atol=1e-14)
