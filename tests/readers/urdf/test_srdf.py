"""Stances from the robot's SRDF file (sls.readers.urdf.srdf) and the inputs of a robot on its feet.

Against Pinocchio's ``loadReferenceConfigurations`` on example-robot-data's Solo-12: the stances' coordinates, and
the contacts' default places = the feet at the stance (``framesForwardKinematics``); small hand-written files for
the rules (joints skipped, quaternions, a continuous joint's cos/sin, a yaw-pitch-roll base) and the one-line
refusals; with contacts the inputs are the joint motors alone unless the base wrench is asked for."""

from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

import sls
from sls.cli.app import main
from sls.readers.urdf import load_urdf
from sls.readers.urdf.srdf import read_stances

pin = pytest.importorskip("pinocchio")
ROBOTS = Path(pin.__file__).resolve().parents[4] / "share/example-robot-data/robots"
SOLO = ROBOTS / "solo_description/robots/solo12.urdf"
SOLO_SRDF = ROBOTS / "solo_description/srdf/solo.srdf"
FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]


@pytest.fixture(scope="module")
def peer():
    model = pin.buildModelFromUrdf(str(SOLO), pin.JointModelFreeFlyer())
    pin.loadReferenceConfigurations(model, str(SOLO_SRDF), False)
    return model


@pytest.mark.parametrize("stance", ["standing", "straight_standing"])
def test_solo_stances_and_feet_are_pinocchios(peer, stance):
    model = load_urdf(SOLO, floating_base=True, contacts=FEET, srdf=SOLO_SRDF, stance=stance)
    q = np.asarray(peer.referenceConfigurations[stance])
    states = dict(model.stances)
    assert list(states) == ["standing", "straight_standing"]
    np.testing.assert_allclose(states[stance], np.concatenate([q, np.zeros(peer.nv)]), atol=1e-15)
    data = peer.createData()
    pin.framesForwardKinematics(peer, data, q)
    for foot in FEET:
        place = [model.params[f"contact_{foot}_{axis}"] for axis in "xyz"]
        np.testing.assert_allclose(place, data.oMf[peer.getFrameId(foot)].translation, atol=1e-12)


def test_the_srdf_alone_keeps_the_stances_and_the_neutral_places(peer):
    model = load_urdf(SOLO, floating_base=True, contacts=["FL_FOOT:6d"], srdf=SOLO_SRDF)
    assert [name for name, _ in model.stances] == ["standing", "straight_standing"]
    data = peer.createData()
    pin.framesForwardKinematics(peer, data, pin.neutral(peer))
    frame = data.oMf[peer.getFrameId("FL_FOOT")]
    assert model.params["contact_FL_FOOT_z"] == pytest.approx(frame.translation[2], abs=1e-12)
    assert load_urdf(SOLO, floating_base=True).stances == ()


ARM = """<robot name="arm">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="b"><inertial><mass value="1"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <link name="tip"/>
  <joint name="turn" type="continuous"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/></joint>
  <joint name="lift" type="revolute"><parent link="a"/><child link="b"/><origin xyz="0 0 0.5"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="fix" type="fixed"><parent link="b"/><child link="tip"/><origin xyz="0.4 0 0"/></joint>
</robot>
"""
ARM_SRDF = """<?xml version="1.0"?>
<robot name="arm">
  <group_state name="up" group="all">
    <joint name="root_joint" value="1 2 3 0 0 0 1"/>
    <joint name="turn" value="0 1"/>
    <joint name="lift" value="-0.5"/>
    <joint name="gripper" value="0.1"/>
  </group_state>
  <group_state name="half" group="all"><joint name="lift" value="0.3"/></group_state>
</robot>
"""


def test_the_rules_of_a_small_file(tmp_path):
    (tmp_path / "arm.srdf").write_text(ARM_SRDF)
    model = load_urdf("arm.urdf", text=ARM, srdf=tmp_path / "arm.srdf")
    # root_joint of a fixed-base robot and a joint the robot lacks are skipped; cos/sin of a continuous joint
    assert dict(model.stances) == {"up": (np.pi / 2, -0.5, 0.0, 0.0), "half": (0.0, 0.3, 0.0, 0.0)}
    placed = load_urdf("arm.urdf", text=ARM, srdf=tmp_path / "arm.srdf", stance="up", contacts=["tip"])
    # the tip at turn = 90 deg, lift = -0.5 (about y: the arm tilts up), by hand
    expected = [0.0, 0.4 * np.cos(-0.5), 0.5 - 0.4 * np.sin(-0.5)]
    got = [placed.params[f"contact_tip_{a}"] for a in "xyz"]
    np.testing.assert_allclose(got, expected, atol=1e-12)


def test_a_yaw_pitch_roll_base_takes_the_quaternion_as_angles(peer):
    quaternion = load_urdf(SOLO, floating_base=True, contacts=FEET, srdf=SOLO_SRDF, stance="standing")
    euler = load_urdf(
        SOLO, floating_base=True, base_orientation="euler", contacts=FEET, srdf=SOLO_SRDF, stance="standing"
    )
    for key, value in quaternion.params.items():
        if key.startswith("contact_"):
            assert euler.params[key] == pytest.approx(value, abs=1e-12)
    assert dict(euler.stances)["standing"][:6] == (0.0, 0.0, 0.235, 0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("text", "stance", "message"),
    [
        (ARM_SRDF, "upp", "arm.srdf: no stance 'upp'; did you mean 'up'?"),
        (ARM_SRDF, "sitting", "arm.srdf: no stance 'sitting' (its stances: up, half)"),
        (ARM_SRDF.replace('value="-0.5"', 'value="-0.5 1"'), "up", "stance 'up', joint 'lift': expected one number"),
        (ARM_SRDF.replace('value="-0.5"', 'value="a"'), "up", "joint 'lift': 'a' is not a number"),
        (ARM_SRDF.replace('value="-0.5"', 'value="nan"'), "up", "joint 'lift': 'nan' is not a finite number"),
        (ARM_SRDF.replace('value="-0.5"', 'value="1e20"'), "up", "joint 'lift': '1e20' is too large"),
        (ARM_SRDF.replace('value="-0.5"', 'value=""'), "up", "joint 'lift': value must be finite numbers"),
        ("<robot><group_state/></robot>", None, "a <group_state> has no name"),
        ("<robt/>", None, "the root element is <robt>, expected <robot>"),
        ("<robot", None, "arm.srdf: not valid XML"),
        ('<!DOCTYPE x [<!ENTITY a "b">]><robot/>', None, "DTDs and entities are not allowed"),
    ],
)
def test_bad_files_and_names_are_one_line(tmp_path, text, stance, message):
    (tmp_path / "arm.srdf").write_text(text)
    with pytest.raises(sls.SlsError) as error:
        load_urdf("arm.urdf", text=ARM, srdf=tmp_path / "arm.srdf", stance=stance)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_a_free_flyer_needs_seven_numbers_and_a_unit_quaternion(tmp_path):
    text = SOLO_SRDF.read_text()
    (tmp_path / "bad.srdf").write_text(text.replace('value="0. 0. 0.235 0. 0. 0. 1."', 'value="0 0 0.2 0 0 0 2"', 1))
    with pytest.raises(sls.SlsError, match=r"joint 'root_joint': the quaternion \(qx qy qz qw\) must have unit norm"):
        load_urdf(SOLO, floating_base=True, srdf=tmp_path / "bad.srdf")
    (tmp_path / "bad.srdf").write_text(text.replace('value="0. 0. 0.235 0. 0. 0. 1."', 'value="0 0 0.2"', 1))
    with pytest.raises(sls.SlsError, match=r"joint 'root_joint': expected x y z qx qy qz qw, got 3 numbers"):
        load_urdf(SOLO, floating_base=True, srdf=tmp_path / "bad.srdf")
    with pytest.raises(sls.SlsError, match="name it with srdf too"):
        load_urdf(SOLO, floating_base=True, stance="standing")
    with pytest.raises(sls.SlsError, match="cannot read the SRDF file"):
        read_stances(tmp_path / "missing.srdf")


def test_on_contacts_the_inputs_are_the_motors_unless_the_base_wrench_is_asked_for():
    motors = load_urdf(SOLO, floating_base=True, contacts=FEET)
    assert [u.name for u in motors.inputs] == [
        f"tau_{leg}_{j}" for leg in ("FL", "FR", "HL", "HR") for j in ("HAA", "HFE", "KFE")
    ]
    # the base's six speeds get no generalized force from any input; each joint its own motor
    assert all(f == 0 for f in motors.forces[:6])
    assert [str(f) for f in motors.forces[6:]] == [u.name for u in motors.inputs]
    wrench = load_urdf(SOLO, floating_base=True, contacts=FEET, base_wrench=True)
    assert [u.name for u in wrench.inputs][:6] == ["base_fx", "base_fy", "base_fz", "base_mx", "base_my", "base_mz"]
    assert [u.name for u in load_urdf(SOLO, floating_base=True).inputs][:1] == ["base_fx"]  # no contacts: as before
    driven = load_urdf(SOLO, floating_base=True, contacts=FEET, inputs=["lift"], actuation={"base_fz": "lift"})
    assert [u.name for u in driven.inputs] == ["lift"]  # an [actuation] table says it all


def test_a_model_file_reads_the_stance(tmp_path):
    (tmp_path / "solo.toml").write_text(
        f'contacts = {FEET!r}\nsrdf = "{SOLO_SRDF}"\nstance = "standing"\nbase_wrench = true\n\n'
        f'[urdf]\nfile = "{SOLO}"\nfloating_base = true\n'.replace("'", '"')
    )
    model = sls.load_toml(tmp_path / "solo.toml")
    direct = load_urdf(SOLO, floating_base=True, contacts=FEET, srdf=SOLO_SRDF, stance="standing", base_wrench=True)
    assert model.params == direct.params and model.stances == direct.stances and model.inputs == direct.inputs
    (tmp_path / "solo.toml").write_text(f'contacts = ["FL_FOOT"]\nstance = "standing"\n\n[urdf]\nfile = "{SOLO}"\n')
    with pytest.raises(sls.SlsError, match="solo.toml: stance 'standing': a stance is read from the robot's SRDF"):
        sls.load_toml(tmp_path / "solo.toml")


def test_the_command_line_names_the_inputs_and_checks_the_options(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    base = ["generate", str(SOLO), "--floating-base", "--contacts", ",".join(FEET), "--functions", "constraint_fun"]
    result = runner.invoke(main, base + ["--srdf", str(SOLO_SRDF), "--stance", "standing", "-o", "p"])
    assert result.exit_code == 0, result.output
    line = result.output.strip().splitlines()[-1]
    assert line.startswith("inputs: tau_FL_HAA, tau_FL_HFE,") and "(the joint motors alone; --base-wrench adds" in line
    init = (tmp_path / "p" / "__init__.py").read_text()
    assert "STANCES = {'standing': (0.0, 0.0, 0.235, 0.0, 0.0, 0.0, 1.0, 0.1, 0.8, -1.6," in init
    result = runner.invoke(main, base + ["--base-wrench", "-o", "w"])
    assert (
        result.exit_code == 0 and "inputs: base_fx, base_fy, base_fz, base_mx, base_my, base_mz, tau_" in result.output
    )
    for arguments, message in (
        (base + ["--stance", "standing"], "--stance NAME names a <group_state> of the robot's SRDF file"),
        (["generate", "cart_pole", "--srdf", str(SOLO_SRDF)], "--srdf goes with a URDF robot file"),
        (["generate", str(SOLO), "--floating-base", "--base-wrench"], "--base-wrench keeps a floating base's"),
        (base + ["--srdf", str(SOLO_SRDF), "--stance", "lying"], "no stance 'lying' (its stances: standing,"),
    ):
        result = runner.invoke(main, arguments + ["-o", "x"])
        assert result.exit_code != 0 and message in result.output, result.output
        assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize("target", ["python", "c", "jax", "casadi"])
def test_every_python_facing_target_keeps_the_stances(tmp_path, target):
    (tmp_path / "arm.urdf").write_text(ARM)
    (tmp_path / "arm.srdf").write_text(ARM_SRDF)
    model = load_urdf(tmp_path / "arm.urdf", srdf=tmp_path / "arm.srdf")
    plain = load_urdf(tmp_path / "arm.urdf")
    assert sls.generate(model, tmp_path / "with", target=target).files
    sls.generate(plain, tmp_path / "without", target=target)
    text = (tmp_path / "with" / "__init__.py").read_text()
    assert f"STANCES = {{'up': ({np.pi / 2!r}, -0.5, 0.0, 0.0), 'half': (0.0, 0.3, 0.0, 0.0)}}" in text
    without = (tmp_path / "without" / "__init__.py").read_text()
    assert "STANCES" not in without
    # the stances (the constant and its comment) are the only difference besides the fingerprint

    def kept(source: str) -> list:
        skipped = ("STANCES", "Named states at rest", "fingerprint", "FINGERPRINT")
        return [line for line in source.splitlines() if line.strip() and not any(s in line for s in skipped)]

    assert kept(text) == kept(without)
