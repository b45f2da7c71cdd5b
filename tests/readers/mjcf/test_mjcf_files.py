"""The MJCF front end as a user meets it: ``sls generate robot.xml``, ``[mjcf]`` in a TOML file, ``sls.load_mjcf``;
the names it gives; every refusal one line on the command line (no traceback, nothing written)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import import_package

import sls
from sls.cli.app import main
from sls.readers.mjcf import INSTALL_HINT, load_mjcf

mujoco = pytest.importorskip("mujoco")

DATA = Path(__file__).resolve().parents[2] / "data" / "mjcf"

#: Two bodies: a slider with its hinge (two joints in one body, one without a name) and a second hinge; an
#: actuator named after its joint, one with a space in its name, one unnamed.
SMALL = """
<mujoco model="small-bot (v2)">
  <compiler angle="radian"/>
  <worldbody>
    <body name="cart">
      <joint name="slide x" type="slide" axis="1 0 0" damping="0.5" frictionloss="0.1"/>
      <joint axis="0 1 0" stiffness="4" springref="0.2" armature="0.3"/>
      <geom type="box" size="0.2 0.1 0.1" mass="1"/>
      <body name="pole" pos="0 0 0.1">
        <joint name="lambda" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0 0 0.6" size="0.03" mass="0.2"/>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="lambda" joint="lambda" gear="3"/>
    <position name="hold x" joint="slide x" kp="2"/>
    <velocity joint="lambda" kv="0.5"/>
  </actuator>
</mujoco>
"""


def body(joint: str, extra: str = "") -> str:
    """A model with one body moved by ``joint`` (an XML element), and ``extra`` after the worldbody."""
    return f'<mujoco><worldbody><body name="b">{joint}<geom size="0.1" mass="1"/></body></worldbody>{extra}</mujoco>'


HINGE = '<joint name="h" axis="0 1 0"/>'


def one_line_error(tmp_path: Path, text: str, name: str = "bad.xml") -> str:
    """``sls generate`` on ``text``: exit code 1, one ``error:`` line (returned), nothing written."""
    path = tmp_path / name
    path.write_text(text)
    result = CliRunner().invoke(main, ["generate", str(path), "--out", str(tmp_path / "out")])
    lines = result.stderr.splitlines()
    assert result.exit_code == 1 and len(lines) == 1 and lines[0].startswith(f"error: {path}: "), result.stderr
    assert not (tmp_path / "out").exists()
    return lines[0]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("hello", "MuJoCo cannot compile it: XML parse error"),
        ("<foo/>", "MuJoCo cannot compile it: XML Error: Unrecognized XML model type"),
        (body('<joint type="bad"/>'), "MuJoCo cannot compile it: XML Error: invalid keyword"),
        ('<robot name="r"><link name="a"/></robot>', "a URDF file (its root element is <robot>), not MJCF"),
        (
            body('<joint name="ball" type="ball" stiffness="2"/>'),
            "ball joint 'ball' has stiffness (a spring): not read on a ball joint",
        ),
        (
            body('<joint name="root" type="free" frictionloss="0.1"/>'),
            "free joint 'root' has frictionloss: not read on a free joint",
        ),
        (
            body('<joint name="root" type="free" stiffness="2"/>'),
            "free joint 'root' has stiffness (a spring): not read on a free joint",
        ),
        (
            body('<freejoint name="root"/>', '<actuator><motor name="push" joint="root"/></actuator>'),
            "actuator 'push' drives the free joint 'root'",
        ),
        ('<mujoco><worldbody><body><geom size="1"/></body></worldbody></mujoco>', "the model has no joints"),
        (
            body(HINGE, '<equality><weld name="lock" body1="b"/></equality>'),
            "equality constraint 'lock' (weld): only joint and fixed-tendon equalities are read from MJCF",
        ),
        (body(HINGE).replace("<mujoco>", '<mujoco><option viscosity="0.1"/>'), "fluid forces are not modelled"),
        (body(HINGE).replace('name="b"', 'name="b" gravcomp="1"'), "body 'b' has gravcomp"),
        (
            body(HINGE, '<actuator><general name="a" joint="h" dyntype="integrator"/></actuator>'),
            "actuator 'a' has activation dynamics (dyntype)",
        ),
        (
            body(HINGE, '<actuator><general joint="h" gaintype="user"/></actuator>'),
            "actuator 'act0': its gaintype is not fixed or affine",
        ),
        (
            body(HINGE + '<site name="s"/>', '<actuator><motor site="s"/></actuator>'),
            "actuator 'act0' acts through a site, body or slider-crank",
        ),
        (
            body(HINGE, '<tendon><fixed name="t" stiffness="1"><joint joint="h" coef="1"/></fixed></tendon>'),
            "tendon 't' has stiffness: tendon springs, dampers, friction and armature are not read",
        ),
        (
            body(
                HINGE + '<site name="s1"/><site name="s2" pos="0 0 1"/>',
                '<tendon><spatial name="rope"><site site="s1"/><site site="s2"/></spatial></tendon>'
                '<actuator><motor tendon="rope"/></actuator>',
            ),
            "actuator on tendon 'rope': a spatial tendon's length is not modelled",
        ),
    ],
)
def test_refused_in_one_line(tmp_path, text, says):
    assert says in one_line_error(tmp_path, text)


def test_fluid_forces_of_the_swimmer_are_refused(tmp_path):
    line = one_line_error(tmp_path, DATA.joinpath("swimmer.xml").read_text(), "swimmer.xml")
    assert '<option density="4000" viscosity="0.1">' in line and 'set density="0" and viscosity="0"' in line


def test_missing_file(tmp_path):
    result = CliRunner().invoke(main, ["generate", str(tmp_path / "nowhere.xml")])
    assert result.exit_code == 1 and result.stderr.strip() == f"error: {tmp_path / 'nowhere.xml'}: no such model file"


def test_without_mujoco(monkeypatch):
    monkeypatch.setitem(sys.modules, "mujoco", None)  # import mujoco raises ImportError
    with pytest.raises(sls.MissingDependencyError) as caught:
        load_mjcf("robot.xml", text=body(HINGE))
    assert str(caught.value) == INSTALL_HINT == 'reading MJCF needs the mujoco package: pip install "sls[mujoco]"'


def test_inactive_equalities_and_unactuated_spatial_tendons_are_left_out():
    text = body(
        HINGE + '<site name="s1"/><site name="s2" pos="0 0 1"/>',
        '<equality><joint joint1="h" active="false"/></equality>'
        '<tendon><spatial limited="true" range="0 2"><site site="s1"/><site site="s2"/></spatial></tendon>',
    )
    assert load_mjcf("robot.xml", text=text).n == 1


def test_names_parameters_and_inputs():
    model = load_mjcf("small.xml", text=SMALL)
    assert model.name == "small_bot_v2" and model.source == "MJCF file small.xml"
    assert [s.name for s in model.state] == ["slide_x", "jnt1", "q_lambda", "d_slide_x", "d_jnt1", "d_q_lambda"]
    # an actuator named after its joint gets u_ only if its name is taken: 'lambda' is not (the coordinate is
    # q_lambda), but it is reserved in Python, so it becomes u_lambda like an unusable name
    assert [u.name for u in model.inputs] == ["u_lambda", "hold_x", "act2"]
    assert model.params == {
        "g": 9.81,
        "damping_slide_x": 0.5,
        "friction_slide_x": 0.1,
        "friction_velocity": 0.01,
        "stiffness_jnt1": 4.0,
        "springref_jnt1": 0.2,
    }
    assert model.tree.armature == (0.0, 0.3, 0.0)


def test_an_actuator_named_after_its_joint():
    text = body('<joint name="elbow" axis="0 1 0"/>', '<actuator><motor name="elbow" joint="elbow"/></actuator>')
    model = load_mjcf("robot.xml", text=text)
    assert [s.name for s in model.q] == ["elbow"] and [u.name for u in model.inputs] == ["u_elbow"]


def test_without_actuators_every_joint_gets_a_torque():
    model = load_mjcf("robot.xml", text=body(HINGE).replace("<mujoco>", '<mujoco><option gravity="0 0 0"/>'))
    assert [u.name for u in model.inputs] == ["tau_h"] and model.actuated and model.params == {}


FILTERED = body(HINGE, '<actuator><general name="slow" joint="h" dyntype="filter" dynprm="0.1"/></actuator>')


def test_without_its_actuators_a_file_reads_as_one_that_has_none(tmp_path):
    """``actuators=False`` (``--no-actuators``, ``[mjcf] actuators = false``): the model of the same file without
    its ``<actuator>`` block; refused actuators say so in their one line."""
    with pytest.raises(sls.SlsError, match=r"activation dynamics .*--no-actuators \(\[mjcf\] actuators = false\)"):
        load_mjcf("robot.xml", text=FILTERED)
    read = load_mjcf("robot.xml", text=FILTERED, actuators=False)
    stripped = load_mjcf("robot.xml", text=body(HINGE))
    assert [u.name for u in read.inputs] == ["tau_h"]
    for field in ("state", "inputs", "forces", "fric", "params"):
        assert getattr(read, field) == getattr(stripped, field), field
    assert read.T == stripped.T and read.V == stripped.V
    (tmp_path / "filtered.xml").write_text(FILTERED)
    runner = CliRunner()
    result = runner.invoke(main, ["generate", str(tmp_path / "filtered.xml"), "--out", str(tmp_path / "refused")])
    assert result.exit_code == 1 and "--no-actuators" in result.stderr and not (tmp_path / "refused").exists()
    result = runner.invoke(
        main, ["generate", str(tmp_path / "filtered.xml"), "--no-actuators", "--out", str(tmp_path / "pkg")]
    )
    assert result.exit_code == 0, result.stderr
    assert import_package(tmp_path / "pkg").INPUTS == ("tau_h",)
    (tmp_path / "model.toml").write_text('[mjcf]\nfile = "filtered.xml"\nactuators = false\n')
    assert [u.name for u in sls.load_toml(tmp_path / "model.toml").inputs] == ["tau_h"]
    for args, says in [
        (["--no-actuators"], "--no-actuators goes with an MJCF file (NAME.xml)"),
        (["ur5", "--no-actuators"], "--no-actuators goes with an MJCF file (NAME.xml)"),
    ]:
        result = runner.invoke(main, ["generate", *args, "--out", str(tmp_path / "out")])
        assert result.exit_code != 0 and says in result.stderr, result.stderr
    (tmp_path / "bad.toml").write_text('[mjcf]\nfile = "filtered.xml"\nactuators = "no"\n')
    with pytest.raises(sls.SlsError, match="'actuators' must be true or false"):
        sls.load_toml(tmp_path / "bad.toml")


def test_generate_from_the_command_line(tmp_path):
    (tmp_path / "small.xml").write_text(SMALL)
    result = CliRunner().invoke(main, ["generate", str(tmp_path / "small.xml"), "--out", str(tmp_path / "pkg")])
    assert result.exit_code == 0, result.stderr
    package = import_package(tmp_path / "pkg")
    assert package.INPUTS == ("u_lambda", "hold_x", "act2") and package.MUJOCO_QPOS == [0, 1, 2]


def test_toml_table(tmp_path):
    (tmp_path / "robots").mkdir()
    (tmp_path / "robots" / "small.xml").write_text(SMALL)
    (tmp_path / "model.toml").write_text('[mjcf]\nfile = "robots/small.xml"\n[params]\ndamping_slide_x = 0.25\n')
    model = sls.load_toml(tmp_path / "model.toml")
    assert model.params["damping_slide_x"] == 0.25 and model.name == "model" and model.tree.mujoco is not None
    for text, says in [
        ('[mjcf]\nfile = "robots/small.xml"\n[params]\nmass = 1\n', "[params] mass: the robot has no parameter"),
        ('[mjcf]\nfiles = "robots/small.xml"\n', "[mjcf]: unknown key 'files'"),
        ("[mjcf]\nfile = 3\n", "[mjcf]: 'file' must name the MJCF file"),
        ('[mjcf]\nfile = "robots/small.xml"\n[urdf]\nfile = "x.urdf"\n', "cannot go with a [urdf] table"),
        ('mjcf = "robots/small.xml"\n', '[mjcf] must be a table: [mjcf] file = "robot.xml"'),
    ]:
        (tmp_path / "bad.toml").write_text(text)
        result = CliRunner().invoke(main, ["generate", str(tmp_path / "bad.toml"), "--out", str(tmp_path / "out")])
        lines = result.stderr.splitlines()
        assert result.exit_code == 1 and len(lines) == 1 and says in lines[0], (text, result.stderr)


def test_compiler_warnings_are_warning_lines(tmp_path, monkeypatch):
    """A warning of MuJoCo's compiler is one ``warning:`` line, and no MUJOCO_LOG.TXT appears."""
    text = body(HINGE).replace("<mujoco>", '<mujoco><compiler settotalmass="2"/>')
    (tmp_path / "robot.xml").write_text(text)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["generate", "robot.xml", "--out", "pkg", "-q"])
    assert result.exit_code == 0, result.stderr
    assert all(line.startswith("warning: robot.xml: MuJoCo: ") for line in result.stderr.splitlines())
    assert not (tmp_path / "MUJOCO_LOG.TXT").exists()
