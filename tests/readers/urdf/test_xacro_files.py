"""xacro robots (sls.readers.urdf.xacro_files): expanded by the xacro package, packages found through
--package-path, arguments from --xacro-arg; the model equals the one of the URDF written out by hand."""

from pathlib import Path

import pytest
from click.testing import CliRunner

import sls
from sls.cli.app import main
from sls.readers.urdf import load_urdf

pytest.importorskip("xacro")

LINK = """  <link name="{name}">
    <inertial><origin xyz="0 0 {half}"/><mass value="{mass}"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.002"/></inertial>
  </link>
"""
JOINT = """  <joint name="{name}" type="revolute">
    <parent link="{parent}"/><child link="{child}"/><origin xyz="0 0 {length}"/><axis xyz="0 1 0"/>
    <limit effort="10" velocity="3" lower="-3" upper="3"/>
  </joint>
"""
MACROS = """<?xml version="1.0"?>
<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:macro name="segment" params="name parent length mass">
    <link name="${name}">
      <inertial><origin xyz="0 0 ${length/2}"/><mass value="${mass}"/>
        <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.002"/></inertial>
    </link>
    <joint name="${name}_joint" type="revolute">
      <parent link="${parent}"/><child link="${name}"/><origin xyz="0 0 ${length}"/><axis xyz="0 1 0"/>
      <limit effort="10" velocity="3" lower="-3" upper="3"/>
    </joint>
  </xacro:macro>
</robot>
"""
ROBOT = """<?xml version="1.0"?>
<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="mass" default="1.0"/>
  <xacro:include filename="$(find arm_description)/urdf/segment.xacro"/>
  <link name="base"/>
  <xacro:segment name="upper" parent="base" length="0" mass="$(arg mass)"/>
  <xacro:segment name="lower" parent="upper" length="0.5" mass="$(arg mass)"/>
</robot>
"""


def expanded_by_hand(mass: float) -> str:
    """The URDF the xacro file means, written out without xacro."""
    links = LINK.format(name="upper", half=0.0, mass=mass) + LINK.format(name="lower", half=0.25, mass=mass)
    joints = JOINT.format(name="upper_joint", parent="base", child="upper", length=0)
    joints += JOINT.format(name="lower_joint", parent="upper", child="lower", length=0.5)
    return f'<?xml version="1.0"?>\n<robot name="arm">\n  <link name="base"/>\n{links}{joints}</robot>\n'


@pytest.fixture
def description(tmp_path):
    """A ROS-style description package folder and a robot xacro file that includes its macros."""
    (tmp_path / "pkgs" / "arm_description" / "urdf").mkdir(parents=True)
    (tmp_path / "pkgs" / "arm_description" / "urdf" / "segment.xacro").write_text(MACROS)
    (tmp_path / "arm.urdf.xacro").write_text(ROBOT)
    return tmp_path


@pytest.mark.parametrize("mass", [None, 2.5])
def test_a_xacro_robot_is_its_expanded_urdf(description, mass):
    arguments = {} if mass is None else {"mass": str(mass)}
    model = load_urdf(description / "arm.urdf.xacro", xacro_args=arguments, package_paths=[description / "pkgs"])
    (description / "arm.urdf").write_text(expanded_by_hand(1.0 if mass is None else mass))
    reference = load_urdf(description / "arm.urdf")
    assert model.name == reference.name == "arm"
    assert model.state == reference.state and model.T == reference.T and model.V == reference.V
    assert model.tree == reference.tree


def test_the_command_line_and_a_model_file_take_arguments_and_package_paths(description, monkeypatch):
    monkeypatch.chdir(description)
    result = CliRunner().invoke(
        main,
        ["generate", "arm.urdf.xacro", "--xacro-arg", "mass:=2.5", "--package-path", "pkgs", "--out", "a", "-q"],
    )
    assert result.exit_code == 0, result.output
    (description / "arm.urdf").write_text(expanded_by_hand(2.5))
    result = CliRunner().invoke(main, ["generate", "arm.urdf", "--out", "b", "-q"])
    assert result.exit_code == 0, result.output
    for path in sorted((description / "b").glob("*.py")):
        assert (description / "a" / path.name).read_text().splitlines()[1:] == path.read_text().splitlines()[1:]
    (description / "arm.toml").write_text(
        '[urdf]\nfile = "arm.urdf.xacro"\npackage_paths = ["pkgs"]\nxacro_args = { mass = "2.5" }\n'
    )
    assert sls.load_toml(description / "arm.toml").T == load_urdf(description / "arm.urdf").T


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--package-path", "elsewhere"], "--package-path elsewhere: not a folder"),
        ([], "package 'arm_description' not found; pass --package-path DIR"),
        (["--xacro-arg", "mass", "--package-path", "pkgs"], "write NAME:=VALUE"),
    ],
)
def test_bad_xacro_input_is_one_line(description, monkeypatch, arguments, message):
    monkeypatch.chdir(description)
    result = CliRunner().invoke(main, ["generate", "arm.urdf.xacro", *arguments, "--out", "bad"])
    assert result.exit_code != 0 and message in result.output, result.output
    assert "Traceback" not in result.output and not (description / "bad").exists()


def test_a_missing_argument_is_named(description):
    (description / "needs.urdf.xacro").write_text(ROBOT.replace('<xacro:arg name="mass" default="1.0"/>', ""))
    with pytest.raises(sls.SlsError, match="the argument 'mass' is not given; pass --xacro-arg mass:=VALUE"):
        load_urdf(description / "needs.urdf.xacro", package_paths=[description / "pkgs"])


def test_a_description_package_installed_by_pip(tmp_path):
    """example-robot-data (pip) ships the hector quadrotor as a xacro macro: included through $(find ...), it is
    the package's own URDF."""
    pin = pytest.importorskip("pinocchio")
    share = Path(pin.__file__).resolve().parents[4] / "share"
    macro = "$(find example-robot-data)/robots/hector_description/robots/quadrotor_base.urdf.xacro"
    (tmp_path / "drone.urdf.xacro").write_text(
        f'<?xml version="1.0"?>\n<robot name="hector" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
        f'  <xacro:include filename="{macro}"/>\n  <xacro:quadrotor_base_macro/>\n</robot>\n'
    )
    model = load_urdf(tmp_path / "drone.urdf.xacro", package_paths=[share])
    reference = load_urdf(share / "example-robot-data/robots/hector_description/robots/quadrotor_base.urdf")
    assert model.state == reference.state and model.T == reference.T and model.V == reference.V
    assert model.forces == reference.forces
