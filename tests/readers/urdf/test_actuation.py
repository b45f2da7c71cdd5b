"""Actuators for robot files (issue 25, item 3): ``inputs`` and ``[actuation]`` with ``[urdf]``,
``sls.load_urdf(..., inputs=..., actuation=...)``.

The references are independent of the code under test: the quadrotor's mixing matrix written by hand (and
permuted by hand onto the Euler chart's coordinates at level attitude), its mass read from the URDF file with
ElementTree, the acrobot's driven dynamics against the fully actuated package of the same file with the
undriven torque set to zero, and the gearbox against the direct torque scaled by hand.
"""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import sympy
from conftest import import_package
from scipy.spatial.transform import Rotation

import sls
from sls.algebra.expressions import symbol

pin = pytest.importorskip("pinocchio")

ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"
QUADROTOR = ROBOTS / "hector_description" / "robots" / "quadrotor_base.urdf"
needs_robots = pytest.mark.skipif(not QUADROTOR.is_file(), reason="example-robot-data is not installed")
RNG = np.random.default_rng(20261125)

#: Arm length and drag-to-thrust ratio of the rotors (values for the test; the URDF has neither).
ARM, DRAG = 0.275, 0.02
THRUSTS = ["f1", "f2", "f3", "f4"]
#: Rotors 1..4 at +x, +y, -x, -y of the body, 1 and 3 turning one way, 2 and 4 the other.
MIXING = {
    "base_fz": "f1 + f2 + f3 + f4",
    "base_mx": "l*(f2 - f4)",
    "base_my": "l*(f3 - f1)",
    "base_mz": "k*(f1 - f2 + f3 - f4)",
}


def mixing_matrix(arm: float, k: float) -> np.ndarray:
    """The body wrench ``[fx, fy, fz, mx, my, mz]`` per thrust, written out by hand."""
    return np.array(
        [
            [0, 0, 0, 0],
            [0, 0, 0, 0],
            [1, 1, 1, 1],
            [0, arm, 0, -arm],
            [-arm, 0, arm, 0],
            [k, -k, k, -k],
        ],
        dtype=float,
    )


def quadrotor_mass() -> float:
    return float(ET.parse(QUADROTOR).getroot().find("link/inertial/mass").get("value"))


def quadrotor(tmp_path: Path, orientation: str):
    """The quadrotor driven by its four thrusts, from a TOML model file, generated (Python)."""
    (tmp_path / "quadrotor.toml").write_text(
        f'inputs = ["f1", "f2", "f3", "f4"]\n\n[urdf]\nfile = "{QUADROTOR.as_posix()}"\n'
        f'base_orientation = "{orientation}"\n\n[actuation]\n'
        + "".join(f'{own} = "{expr}"\n' for own, expr in MIXING.items())
        + f"\n[params]\nl = {ARM}\nk = {DRAG}\n"
    )
    model = sls.load_toml(tmp_path / "quadrotor.toml")
    sls.generate(model, tmp_path / orientation)
    return model, import_package(tmp_path / orientation)


@needs_robots
def test_quadrotor_thrusts_map_through_the_mixing_matrix_and_hover_at_a_quarter_of_the_weight(tmp_path):
    """Quaternion base: the speeds are the body twist, so B_u = ∂forces/∂u is the mixing matrix at every state."""
    model, package = quadrotor(tmp_path, "quaternion")
    assert [u.name for u in model.inputs] == THRUSTS and not model.actuated
    assert package.INPUTS == tuple(THRUSTS) and package.PARAMS == {"g": 9.81, "k": DRAG, "l": ARM}
    arm, k = sympy.symbols("l k", real=True)
    B = sympy.Matrix(model.forces).jacobian([symbol(u) for u in THRUSTS])
    assert B[:6, :] == sympy.Matrix(
        [[0, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 1], [0, arm, 0, -arm], [-arm, 0, arm, 0], [k, -k, k, -k]]
    )
    for _ in range(3):
        quaternion = RNG.normal(size=4)
        x = np.concatenate([RNG.normal(size=3), quaternion / np.linalg.norm(quaternion), RNG.normal(size=6)])
        np.testing.assert_allclose(package.input_matrix_fun(x), mixing_matrix(ARM, DRAG), atol=1e-15)
        np.testing.assert_allclose(package.input_matrix_fun(x, l=0.3, k=0.01), mixing_matrix(0.3, 0.01), atol=1e-15)
    hover = np.zeros(13)
    hover[2], hover[6] = 1.0, 1.0  # 1 m up, level (qw = 1), at rest
    thrust = quadrotor_mass() * 9.81 / 4
    np.testing.assert_allclose(package.vdot_fun(hover, [thrust] * 4), np.zeros(6), atol=1e-12)
    assert abs(package.vdot_fun(hover, [thrust * 1.1] * 4)[2] - 0.1 * 9.81) < 1e-12  # 10 % more climbs at g/10


@needs_robots
def test_quadrotor_lqr_at_hover_recovers_from_a_30_degree_tilt(tmp_path):
    """Euler base (the chart sls.control works on today): at level hover B_u is the mixing matrix with the
    moments' rows on (yaw, pitch, roll) = (mz, my, mx); LQR at m g / 4 per rotor brings a 30° tilt back."""
    from sls.control import equilibrium_input, lqr, simulate

    _, package = quadrotor(tmp_path, "euler")
    hover = np.zeros(12)
    hover[2] = 1.0
    on_chart = mixing_matrix(ARM, DRAG)[[0, 1, 2, 5, 4, 3]]  # rows x, y, z, yaw, pitch, roll
    np.testing.assert_allclose(package.input_matrix_fun(hover), on_chart, atol=1e-15)
    thrust = quadrotor_mass() * 9.81 / 4
    np.testing.assert_allclose(package.qddot_fun(hover, [thrust] * 4), np.zeros(6), atol=1e-12)
    np.testing.assert_allclose(equilibrium_input(package, hover)[0], [thrust] * 4, rtol=1e-12)

    design = lqr(package, hover, [thrust] * 4, Q=10.0, R=1.0)
    axis = np.array([1.0, 2.0, 0.0]) / math.sqrt(5.0)  # a horizontal axis between the arms
    tilted = hover.copy()
    tilted[3:6] = Rotation.from_rotvec(math.radians(30) * axis).as_euler("ZYX")  # R = Rz(yaw) Ry(pitch) Rx(roll)
    assert math.degrees(tilt(tilted)) == pytest.approx(30.0)
    result = simulate(package, tilted, (0.0, 6.0), design, t_eval=np.linspace(0.0, 6.0, 61))
    assert result.success
    later = result.y[:, result.t >= 4.0]
    assert max(math.degrees(tilt(x)) for x in later.T) < 1.0
    assert np.degrees(np.abs(later[3])).max() < 1.0  # yaw too
    assert np.abs(result.y[2, -1] - 1.0) < 0.05


def tilt(x: np.ndarray) -> float:
    """The angle between the body's z axis and the world's (Euler chart: ``cos = cos(pitch) cos(roll)``)."""
    return math.acos(min(1.0, math.cos(x[4]) * math.cos(x[5])))


ACROBOT = """<robot name="acrobot">
  <link name="base"/>
  <joint name="shoulder" type="continuous"><parent link="base"/><child link="upper"/>
    <origin xyz="0 0 2"/><axis xyz="0 1 0"/></joint>
  <link name="upper"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
    <inertia ixx="0.083" ixy="0" ixz="0" iyy="0.083" iyz="0" izz="0.001"/></inertial></link>
  <joint name="elbow" type="continuous"><parent link="upper"/><child link="lower"/>
    <origin xyz="0 0 -1"/><axis xyz="0 1 0"/></joint>
  <link name="lower"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
    <inertia ixx="0.083" ixy="0" ixz="0" iyy="0.083" iyz="0" izz="0.001"/></inertial></link>
</robot>
"""


def _states(count: int = 4) -> list[np.ndarray]:
    return [RNG.uniform(-2, 2, 4) for _ in range(count)]


def test_acrobot_driven_at_the_elbow_only(tmp_path):
    (tmp_path / "acrobot.urdf").write_text(ACROBOT)
    (tmp_path / "acrobot.toml").write_text(
        'inputs = ["tau"]\n\n[urdf]\nfile = "acrobot.urdf"\n\n[actuation]\ntau_elbow = "tau"\n'
    )
    model = sls.load_toml(tmp_path / "acrobot.toml")
    assert [u.name for u in model.inputs] == ["tau"] and not model.actuated
    assert model.forces == (0, symbol("tau"))
    sls.generate(model, tmp_path / "driven")
    sls.generate(sls.load_urdf(tmp_path / "acrobot.urdf"), tmp_path / "full")
    driven, full = import_package(tmp_path / "driven"), import_package(tmp_path / "full")
    assert driven.INPUTS == ("tau",) and not driven.FULLY_ACTUATED and full.INPUTS == ("tau_shoulder", "tau_elbow")
    for x in _states():
        np.testing.assert_allclose(driven.input_matrix_fun(x), [[0.0], [1.0]], atol=0)
        np.testing.assert_allclose(driven.qddot_fun(x, [0.7]), full.qddot_fun(x, [0.0, 0.7]), rtol=1e-13, atol=1e-13)
    A, B = driven.linearized_model(np.zeros(4), [0.0])
    np.testing.assert_allclose(B, full.linearized_model(np.zeros(4), [0.0, 0.0])[1][:, 1:], atol=1e-14)


def test_the_python_api_gives_the_same_model_as_the_toml_file(tmp_path):
    (tmp_path / "acrobot.urdf").write_text(ACROBOT)
    (tmp_path / "acrobot.toml").write_text(
        'inputs = ["tau"]\n\n[urdf]\nfile = "acrobot.urdf"\n\n[actuation]\ntau_elbow = "tau"\n'
    )
    from_file = sls.load_toml(tmp_path / "acrobot.toml")
    tau = sympy.Symbol("tau")
    for actuation in ({"tau_elbow": "tau"}, {"tau_elbow": tau}, {sympy.Symbol("tau_elbow"): tau}):
        from_api = sls.load_urdf(tmp_path / "acrobot.urdf", inputs=["tau"], actuation=actuation)
        assert from_api.inputs == from_file.inputs and from_api.forces == from_file.forces
        assert from_api.T == from_file.T and from_api.params == from_file.params
    assert sls.load_urdf(tmp_path / "acrobot.urdf", inputs=[tau], actuation={"tau_elbow": tau}).inputs == (
        symbol("tau"),
    )


def test_a_python_model_file_hands_over_an_actuated_robot(tmp_path):
    """The way docs/robots.md shows: the model file loads the robot with the keywords and exports its parts."""
    (tmp_path / "acrobot.urdf").write_text(ACROBOT)
    (tmp_path / "model.py").write_text(
        "from pathlib import Path\nimport sls\n\n"
        'robot = sls.load_urdf(Path(__file__).parent / "acrobot.urdf", inputs=["tau"], '
        'actuation={"tau_elbow": "tau"})\n'
        "T, V, fric, x = robot.T, robot.V, robot.fric, robot.state\n"
        "params, inputs, forces = robot.params, robot.inputs, robot.forces\n"
    )
    model = sls.load_python(tmp_path / "model.py")
    direct = sls.load_urdf(tmp_path / "acrobot.urdf", inputs=["tau"], actuation={"tau_elbow": "tau"})
    assert model.inputs == direct.inputs and model.forces == direct.forces and model.state == direct.state
    assert model.T == direct.T and model.V == direct.V and model.params == direct.params


def test_a_gearbox_ratio_scales_the_motor_torque(tmp_path):
    (tmp_path / "arm.urdf").write_text(ACROBOT)
    (tmp_path / "geared.toml").write_text(
        'inputs = ["u_motor", "u_elbow"]\n\n[urdf]\nfile = "arm.urdf"\n\n'
        '[actuation]\ntau_shoulder = "ratio*u_motor"\ntau_elbow = "u_elbow"\n\n[params]\nratio = 50\n'
    )
    model = sls.load_toml(tmp_path / "geared.toml")
    assert model.params["ratio"] == 50.0
    sls.generate(model, tmp_path / "geared")
    sls.generate(sls.load_urdf(tmp_path / "arm.urdf"), tmp_path / "direct")
    geared, direct = import_package(tmp_path / "geared"), import_package(tmp_path / "direct")
    for x in _states():
        np.testing.assert_allclose(geared.input_matrix_fun(x), [[50.0, 0.0], [0.0, 1.0]], atol=0)
        np.testing.assert_allclose(geared.input_matrix_fun(x, ratio=9.0), [[9.0, 0.0], [0.0, 1.0]], atol=0)
        np.testing.assert_allclose(
            geared.qddot_fun(x, [0.02, -0.3]), direct.qddot_fun(x, [50 * 0.02, -0.3]), rtol=1e-13, atol=1e-13
        )
    api = sls.load_urdf(
        tmp_path / "arm.urdf", inputs=["u_motor"], actuation={"tau_shoulder": "ratio*u_motor"}, params={"ratio": 3}
    )
    assert api.forces == (symbol("ratio") * symbol("u_motor"), 0) and api.params["ratio"] == 3.0


def test_parameters_of_the_actuation_without_a_value_must_be_given_at_call_time(tmp_path):
    (tmp_path / "arm.urdf").write_text(ACROBOT)
    model = sls.load_urdf(tmp_path / "arm.urdf", inputs=["u"], actuation={"tau_shoulder": "ratio*u"})
    assert model.params == {"g": 9.81, "ratio": None}
    with pytest.raises(sls.ModelFileError, match=r"params ratoi: the robot has no parameter of that name; did you"):
        sls.load_urdf(tmp_path / "arm.urdf", inputs=["u"], actuation={"tau_shoulder": "ratio*u"}, params={"ratoi": 1})


HEADER = '[urdf]\nfile = "acrobot.urdf"\n'
DRIVEN = 'inputs = ["tau"]\n' + HEADER


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            DRIVEN + '[actuation]\ntau_elbw = "tau"\n',
            "[actuation] tau_elbw: the robot has no input of that name; did you mean 'tau_elbow'? "
            "(its inputs: tau_shoulder, tau_elbow)",
        ),
        (
            DRIVEN + '[actuation]\nbase_fz = "tau"\n',
            "[actuation] base_fz: the robot has no input of that name (its inputs: tau_shoulder, tau_elbow)",
        ),
        (DRIVEN + '[actuation]\ntau_elbow = "tau^2"\n', "tau_elbow: 'tau**2' is not linear in the input tau"),
        (DRIVEN + '[actuation]\ntau_elbow = "sin(tau)"\n', "'sin(tau)' is not linear in the input tau"),
        (DRIVEN + '[actuation]\ntau_elbow = "tau + 1"\n', "'tau + 1' is not linear in the inputs (tau): it has a part"),
        (DRIVEN + '[actuation]\ntau_elbow = "tau*elbow"\n', "tau_elbow: 'elbow*tau' uses the state 'elbow'"),
        (DRIVEN + '[actuation]\ntau_elbow = "tau*d_shoulder"\n', "uses the state 'd_shoulder'"),
        (DRIVEN + '[actuation]\ntau_elbow = "tau*tau_shoulder"\n', "uses the robot's input 'tau_shoulder'"),
        (DRIVEN, "inputs needs [actuation]: the robot's inputs (tau_shoulder, tau_elbow) it drives"),
        (HEADER + '[actuation]\ntau_elbow = "tau"\n', "[actuation] needs inputs: the list of the new inputs"),
        (
            'inputs = ["elbow"]\n' + HEADER + '[actuation]\ntau_elbow = "elbow"\n',
            "inputs: 'elbow' is the name of a state",
        ),
        ('inputs = ["g"]\n' + HEADER + '[actuation]\ntau_elbow = "g"\n', "inputs: 'g' is the name of a parameter"),
        (
            'inputs = ["tau_elbow"]\n' + HEADER + '[actuation]\ntau_elbow = "tau_elbow"\n',
            "inputs: 'tau_elbow' is one of the robot's own inputs (tau_shoulder, tau_elbow)",
        ),
        ('inputs = ["tau", "tau"]\n' + HEADER + '[actuation]\ntau_elbow = "tau"\n', "inputs: 'tau' is listed twice"),
        ('inputs = ["a", "b"]\n' + HEADER + '[actuation]\ntau_elbow = "a"\n', "inputs: 'b' appears in no [actuation]"),
        ("inputs = []\n" + HEADER + '[actuation]\ntau_elbow = "0"\n', "inputs: at least one input is needed"),
        ('inputs = "tau"\n' + HEADER + '[actuation]\ntau_elbow = "tau"\n', "inputs must be a list of input names"),
        ('inputs = ["a-b"]\n' + HEADER + '[actuation]\ntau_elbow = "tau"\n', "'a-b' is not a plain identifier"),
        (DRIVEN.replace("[urdf]", 'actuation = "tau"\n[urdf]'), "[actuation] must be a table of ROBOT_INPUT ="),
        (DRIVEN + '[actuation]\ntau_elbow = "x*tau"\n', "[actuation] tau_elbow: 'x' cannot be a parameter"),
        (
            DRIVEN + "[actuation]\ntau_elbow = \"__import__('os').system('touch pwned')\"\n",
            "[actuation] tau_elbow: attribute access is not allowed in an expression",
        ),
        (DRIVEN + '[actuation]\ntau_elbow = "tau +"\n', "[actuation] tau_elbow:"),
        ('forces = ["0", "tau"]\n' + DRIVEN, "key 'forces' cannot go with a [urdf] table: the robot's generalized"),
    ],
)
def test_actuation_mistakes_are_one_line_from_the_cli_and_write_nothing(text, message, tmp_path, monkeypatch):
    from click.testing import CliRunner

    from sls.cli.app import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "acrobot.urdf").write_text(ACROBOT)
    (tmp_path / "model.toml").write_text(text)
    result = CliRunner().invoke(main, ["generate", "model.toml", "--out", "out"])
    assert result.exit_code == 1, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: model.toml: "), result.stderr
    assert message in lines[0], lines[0]
    assert "Traceback" not in result.output and isinstance(result.exception, SystemExit)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acrobot.urdf", "model.toml"]


@needs_robots
def test_quadrotor_from_the_command_line_sls_lqr_at_hover_recovers_from_a_30_degree_tilt(tmp_path):
    """The issue's workflow on the default quaternion base: ``sls generate`` of the TOML file, ``sls lqr`` at hover
    with the thrusts computed (each m g / 4), ``sls simulate --lqr-from`` from a 30° tilt: level and at height after
    6 s, the quaternion kept unit."""
    from click.testing import CliRunner

    from sls.cli import main

    def run(*args: object) -> str:
        result = CliRunner().invoke(main, [str(a) for a in args])
        assert result.exit_code == 0, result.output
        return result.output

    quadrotor(tmp_path, "quaternion")  # writes quadrotor.toml (and a package the CLI does not use)
    run("generate", tmp_path / "quadrotor.toml", "--out", tmp_path / "cli")
    hover = "0 0 1 0 0 0 1 " + " ".join(["0"] * 6)  # x y z qx qy qz qw, body twist
    design = tmp_path / "hover.json"
    run("lqr", tmp_path / "cli", "--x-eq", hover, "--Q", "10", "--R", "1", "--save", design)
    import json

    saved = json.loads(design.read_text())
    u_eq = np.asarray(saved["u_eq"], dtype=float)
    np.testing.assert_allclose(u_eq, [quadrotor_mass() * 9.81 / 4] * 4, rtol=1e-10)
    axis = np.array([1.0, 2.0, 0.0]) / math.sqrt(5.0)
    qx, qy, qz, qw = Rotation.from_rotvec(math.radians(30) * axis).as_quat()  # scipy: scalar last, as sls
    tilted = "0 0 1 " + " ".join(repr(float(c)) for c in (qx, qy, qz, qw)) + " 0" * 6
    csv = tmp_path / "run.csv"
    run("simulate", tmp_path / "cli", "--x0", tilted, "--t-end", "6", "--lqr-from", design, "--csv", csv)
    table = np.loadtxt(csv, delimiter=",", skiprows=1)
    x_end = table[-1, 1:14]
    quaternion = x_end[3:7]
    assert abs(np.linalg.norm(quaternion) - 1.0) < 1e-9
    z_axis = Rotation.from_quat(quaternion).apply([0.0, 0.0, 1.0])
    assert math.degrees(math.acos(min(1.0, z_axis[2]))) < 1.0
    assert abs(x_end[2] - 1.0) < 0.05 and np.abs(x_end[7:]).max() < 0.05
