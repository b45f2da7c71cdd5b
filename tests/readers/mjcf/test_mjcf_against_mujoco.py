"""Packages generated from MJCF files against MuJoCo itself: ``M_fun`` = ``mj_fullM`` (armature included),
``qddot_fun`` = ``mj_forward``'s ``qacc`` and ``tau_fun`` = ``mj_inverse``'s ``qfrc_inverse`` with contacts and
constraints (so frictionloss) disabled, on random states and controls, the state taken through the package's own
``from_mujoco``; the dynamics rows of ``linearized_model`` against central differences of ``mj_forward``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import import_package

import sls
from sls.readers.mjcf import load_mjcf

mujoco = pytest.importorskip("mujoco")
#: MuJoCo 4 says settotalmass (half_cheetah.xml) is deprecated: not what these tests check.
pytestmark = pytest.mark.filterwarnings("ignore::sls.readers.mjcf.MujocoWarning")

DATA = Path(__file__).resolve().parents[2] / "data" / "mjcf"
RELATIVE = 1e-9
#: The functions the checks call (a subset: faster to generate).
FUNCTIONS = ["M_fun", "qddot_fun", "tau_fun", "fric_fun"]

#: A 3-D arm that uses what the reader converts: body frames from quat, euler and axisangle (one exactly and one
#: nearly at pitch 90°), joint anchors (pos) and ref, two hinges with different anchors and a slide in one body,
#: oblique axes, armature, damping, springs with springref, frictionloss, and every actuator kind on joints and on
#: a fixed tendon (unnamed ones, and one named after its joint).
ARM = """
<mujoco model="test arm">
  <compiler angle="radian"/>
  <option gravity="0 0 -9.81"/>
  <default><joint damping="0.05" armature="0.01"/><geom type="capsule" size="0.04"/></default>
  <worldbody>
    <body name="base" pos="0.1 -0.2 0.3" quat="0.9 0.1 -0.2 0.3">
      <joint name="yaw" axis="0 0 1" pos="0.05 0 0" ref="0.2" stiffness="3" springref="0.4" frictionloss="0.2"/>
      <geom fromto="0 0 0 0 0 0.4" mass="2"/>
      <body name="upper" pos="0 0 0.4" euler="0.3 1.5707963267948966 -0.2">
        <joint name="shoulder" axis="0 1 0" pos="0 0.02 -0.03" armature="0.2"/>
        <joint name="twist" axis="1 1 0" pos="0.1 0 0.05" ref="-0.3"/>
        <joint name="extend" type="slide" axis="0.3 0 1" ref="0.1" damping="0.7"/>
        <geom fromto="0 0 0 0.35 0 0.05" mass="1.2"/>
        <body name="fore" pos="0.35 0 0" axisangle="0.2 0.9 0.1 1.57079"/>
      </body>
    </body>
  </worldbody>
  <tendon><fixed name="coupling"><joint joint="yaw" coef="0.5"/><joint joint="extend" coef="-2"/></fixed></tendon>
  <actuator>
    <motor joint="yaw" gear="2"/>
    <position name="shoulder" joint="shoulder" kp="30" kv="2"/>
    <velocity name="twist servo" joint="twist" kv="4" gear="1.5"/>
    <general joint="extend" gaintype="affine" gainprm="2 0.5 0.1" biastype="affine" biasprm="0.3 -1 -0.2"/>
    <position name="pull" tendon="coupling" kp="5" gear="0.8"/>
  </actuator>
</mujoco>
"""
#: The arm's last body is empty in ARM (a frame only); this one gives it mass, so the file compiles.
ARM = ARM.replace('axisangle="0.2 0.9 0.1 1.57079"/>', 'axisangle="0.2 0.9 0.1 1.57079"><geom size="0.05 0.1"/></body>')


def gravity_variant(text: str, option: str) -> str:
    return text.replace('<option gravity="0 0 -9.81"/>', option)


def full_mass_matrix(m, d) -> np.ndarray:
    """``mj_fullM`` in MuJoCo 3 (``m, dst, qM``) and 4 (``m, d, dst``)."""
    M = np.zeros((m.nv, m.nv))
    try:
        mujoco.mj_fullM(m, d, M)
    except TypeError:
        mujoco.mj_fullM(m, M, d.qM)
    return M


def smooth(m):
    """``m`` with contacts and constraints (joint limits, frictionloss, equality) off and no clamping of the
    controls or forces: the smooth dynamics sls models."""
    flags = mujoco.mjtDisableBit
    m.opt.disableflags |= flags.mjDSBL_CONTACT | flags.mjDSBL_CONSTRAINT
    m.actuator_ctrllimited[:] = 0
    m.actuator_forcelimited[:] = 0
    m.jnt_actfrclimited[:] = 0
    return m


def compiled(text: str):
    """MuJoCo's own model of ``text`` (its compiler's warnings kept out of a ``MUJOCO_LOG.TXT`` here), made smooth."""
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(lambda message: None)
    try:
        return smooth(mujoco.MjModel.from_xml_string(text))
    finally:
        mujoco.set_mju_user_warning(previous)


def no_friction(package) -> dict:
    """MuJoCo's frictionloss is a constraint (off here): the smooth friction's parameters set to 0."""
    return {p: 0.0 for p in package.PARAMS if p.startswith("friction_") and p != "friction_velocity"}


def no_damping(package, x, params: dict) -> np.ndarray:
    """``fric`` without the joints' damping: what is left is minus the actuators' input-free forces."""
    return package.fric_fun(x, **params, **{p: 0.0 for p in package.PARAMS if p.startswith("damping_")})


def relative(a, b) -> float:
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / max(np.abs(b).max(), 1.0))


def check_against_mujoco(package, m, rng, states: int = 6) -> None:
    d = mujoco.MjData(m)
    params = no_friction(package)
    for _ in range(states):
        d.qpos[:] = rng.uniform(-1.2, 1.2, m.nq)
        d.qvel[:] = rng.uniform(-1.5, 1.5, m.nv)
        d.ctrl[:] = rng.uniform(-1, 1, m.nu)
        mujoco.mj_forward(m, d)
        x = package.from_mujoco(d.qpos, d.qvel)
        u = d.ctrl.copy() if m.nu else np.zeros(package.N_INPUTS)
        assert relative(package.M_fun(x, **params), full_mass_matrix(m, d)) <= RELATIVE
        assert relative(package.qddot_fun(x, u, **params), d.qacc) <= RELATIVE
        qacc = rng.uniform(-2, 2, m.nv)
        d.qacc[:] = qacc
        mujoco.mj_inverse(m, d)  # qfrc_inverse = M qacc + bias - passive forces (springs, dampers)
        actuators = no_damping(package, x, params)  # minus the actuators' input-free forces (not in qfrc_inverse)
        assert relative(package.tau_fun(x, qacc, **params) - actuators, d.qfrc_inverse) <= RELATIVE


@pytest.fixture(scope="module")
def arm_package(tmp_path_factory):
    return import_package(_generate(load_mjcf("arm.xml", text=ARM), tmp_path_factory.mktemp("arm") / "pkg"))


def _generate(model: sls.Model, folder: Path, **options) -> Path:
    sls.generate(model, folder, **options)
    return folder


@pytest.mark.parametrize(
    "name", ["inverted_pendulum", "inverted_double_pendulum", "reacher", "hopper", "half_cheetah", "swimmer"]
)
def test_gymnasium_models_equal_mujoco(name, tmp_path):
    path = DATA / f"{name}.xml"
    text = path.read_text()
    if name == "swimmer":  # its fluid forces are not modelled (refused, see test_mjcf_files.py)
        text = text.replace('density="4000"', 'density="0"').replace('viscosity="0.1"', 'viscosity="0"')
    model = load_mjcf(path, text=None if name != "swimmer" else text)
    package = import_package(_generate(model, tmp_path / name, functions=FUNCTIONS))
    check_against_mujoco(package, compiled(text), np.random.default_rng(27))


def test_arm_equals_mujoco(arm_package):
    check_against_mujoco(arm_package, compiled(ARM), np.random.default_rng(1))


@pytest.mark.parametrize(
    "option",
    [
        '<option gravity="0 0 0"/>',
        '<option gravity="0 0 9.81"/>',
        '<option gravity="3 -2 -9"/>',
        '<option gravity="0 0 -9.81"><flag gravity="disable" spring="disable" damper="disable"/></option>',
    ],
)
def test_gravity_and_flags(option, tmp_path):
    text = gravity_variant(ARM, option)
    package = import_package(_generate(load_mjcf("arm.xml", text=text), tmp_path / "pkg", functions=FUNCTIONS))
    check_against_mujoco(package, compiled(text), np.random.default_rng(2), states=3)


def test_expanded_route_equals_mujoco(tmp_path):
    """``T`` and ``V`` of the model (armature and springs included) give the same dynamics as the tree route."""
    text = gravity_variant(ARM, '<option gravity="1 0 -9.81"/>')
    model = load_mjcf("arm.xml", text=text)
    package = import_package(_generate(model, tmp_path / "pkg", method="graph", functions=FUNCTIONS))
    check_against_mujoco(package, compiled(text), np.random.default_rng(3), states=3)


def test_linearized_model_equals_central_differences(arm_package):
    """The rows of ``A`` and ``B`` for q̈ against central differences of ``mj_forward`` (qpos of hinges and slides
    adds like the state)."""
    m = compiled(ARM)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, 2 * m.nv)
    u = rng.uniform(-1, 1, m.nu)
    params = no_friction(arm_package)
    A, B = arm_package.linearized_model(x, u, **params)

    def qacc(state, control):
        d.qpos[:], d.qvel[:] = arm_package.to_mujoco(state)
        d.ctrl[:] = control
        mujoco.mj_forward(m, d)
        return d.qacc.copy()

    h = 1e-6
    n = m.nv
    A_fd = np.column_stack([(qacc(x + h * e, u) - qacc(x - h * e, u)) / (2 * h) for e in np.eye(2 * n)])
    B_fd = np.column_stack([(qacc(x, u + h * e) - qacc(x, u - h * e)) / (2 * h) for e in np.eye(m.nu)])
    assert relative(A[n:], A_fd) <= 1e-5
    assert relative(B[n:], B_fd) <= 1e-5


def test_converters_round_trip(arm_package):
    rng = np.random.default_rng(5)
    x = rng.normal(size=(4, 3, 2 * arm_package.N_DOF))
    qpos, qvel = arm_package.to_mujoco(x)
    assert qpos.shape == (4, 3, arm_package.MUJOCO_NQ) and qvel.shape == (4, 3, arm_package.MUJOCO_NV)
    assert np.array_equal(arm_package.from_mujoco(qpos, qvel), x)
    one = arm_package.from_mujoco(qpos[0, 0], qvel)  # broadcast: one qpos against a batch of qvel
    assert one.shape == (4, 3, 2 * arm_package.N_DOF)
    with pytest.raises(ValueError, match="nq"):
        arm_package.from_mujoco(np.zeros(2), qvel[0, 0])
    with pytest.raises(ValueError, match="state"):
        arm_package.to_mujoco(np.zeros(3))


def test_c_target_has_the_converters(tmp_path):
    from sls.backends import backend

    try:
        backend("c").check_environment()
    except sls.SlsError as exc:
        pytest.skip(str(exc))
    text = DATA.joinpath("hopper.xml").read_text()
    model = load_mjcf(DATA / "hopper.xml")
    package = import_package(_generate(model, tmp_path / "pkg", target="c", functions=FUNCTIONS))
    check_against_mujoco(package, compiled(text), np.random.default_rng(6), states=3)
