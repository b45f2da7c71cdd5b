"""Frames of models given by their energies as the readers take them (sls.readers.point_frames): [frames.NAME]
tables in TOML model files (strings through the safe parser), frames = {...} in Python model files and
model_from_sympy(frames=...); the same pendulum tip from each; one-line refusals of malformed frames."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import sls

PENDULUM = """
state = ["theta", "dtheta"]
T = "1/2*m*l^2*dtheta^2"
V = "-m*g*l*cos(theta)"
fric = 0

[params]
m = 1.0
l = 0.8
g = 9.81
"""


def tip(theta: float, length: float = 0.8) -> np.ndarray:
    return np.array([length * np.sin(theta), 0.0, -length * np.cos(theta)])


def generated(model: sls.Model, folder: Path):
    sls.generate(model, folder / model.name)
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(model.name)
    finally:
        sys.path.remove(str(folder))


def test_toml_frames(tmp_path):
    (tmp_path / "pendulum_frames.toml").write_text(
        PENDULUM
        + '\n[frames.tip]\nposition = ["l*sin(theta)", "0", "-l*cos(theta)"]\n'
        + '\n[frames.bob]\nposition = ["(l + r)*sin(theta)", 0, "-(l + r)*cos(theta)"]\n'
        + 'rotation = [["cos(theta)", 0, "-sin(theta)"], [0, 1, 0], ["sin(theta)", 0, "cos(theta)"]]\n'
    )
    model = sls.load_toml(tmp_path / "pendulum_frames.toml")
    assert model.frames == ("tip", "bob") and model.params["r"] is None  # a new symbol: a required parameter
    package = generated(model, tmp_path)
    assert package.FRAMES == ("tip", "bob")
    x = np.array([0.4, 1.3])
    poses = package.frame_pose_fun(x, r=0.1)
    assert np.abs(poses[0, :3, 3] - tip(0.4)).max() <= 1e-14
    assert np.abs(poses[1, :3, 3] - tip(0.4, 0.9)).max() <= 1e-14
    J = package.frame_jacobian_fun(x, r=0.1)
    assert np.abs(J[0, :3, 0] - [0.8 * np.cos(0.4), 0, 0.8 * np.sin(0.4)]).max() <= 1e-14
    assert np.abs(J[0, 3:]).max() == 0 and np.abs(J[1, 3:, 0] - [0, -1, 0]).max() <= 1e-14
    drift = package.frame_jdot_v_fun(x, r=0.1)
    assert np.abs(drift[0, :3] - 1.3**2 * np.array([-0.8 * np.sin(0.4), 0, 0.8 * np.cos(0.4)])).max() <= 1e-14


def test_python_model_file_and_api_frames(tmp_path):
    (tmp_path / "pendulum_py.py").write_text(
        "import sympy as sp\n"
        "theta, dtheta, m, l, g = sp.symbols('theta dtheta m l g')\n"
        "T = m*l**2*dtheta**2/2\nV = -m*g*l*sp.cos(theta)\nfric = 0\nx = [theta, dtheta]\n"
        "params = {m: 1.0, l: 0.8, g: 9.81}\n"
        "frames = {'tip': sp.Matrix([l*sp.sin(theta), 0, -l*sp.cos(theta)])}\n"
    )
    package = generated(sls.load_python(tmp_path / "pendulum_py.py"), tmp_path)
    assert np.abs(package.frame_pose_fun([0.3, 0.0])[0, :3, 3] - tip(0.3)).max() <= 1e-14
    theta, dtheta, m, length, g = sp.symbols("theta dtheta m l g")
    model = sls.model_from_sympy(
        m * length**2 * dtheta**2 / 2, 0, 0, [theta, dtheta], params={m: 1, length: 0.8},
        frames={"tip": [length * sp.sin(theta), 0, -length * sp.cos(theta)]},
    )  # fmt: skip
    assert model.frames == ("tip",) and model.frame_points[0][1] is None
    other = sls.model_from_sympy(
        m * length**2 * dtheta**2 / 2, 0, 0, [theta, dtheta], params={m: 1, length: 0.8},
        frames={"tip": [length * sp.sin(theta), 0, length * sp.cos(theta)]},
    )  # fmt: skip
    from sls.backends.render import fingerprint

    assert fingerprint(model) != fingerprint(other)  # the frames' expressions are part of the model


@pytest.mark.parametrize(
    ("frames", "message"),
    [
        ('[frames.tip]\nposition = ["l*sin(theta)", "0"]\n', "frames.tip.position: expected [x, y, z], got 2 entries"),
        ('[frames.tip]\nposition = ["dtheta", "0", "0"]\n', "frames.tip.position: depends on 'dtheta'"),
        ('[frames.tip]\nplace = ["0", "0", "0"]\n', "frames.tip: unknown key 'place'"),
        ('[frames.tip]\nrotation = [["1"]]\n', "frames.tip: give its position = [x, y, z]"),
        ('[frames.tip]\nposition = ["0", "0", "0"]\nrotation = [["1", 0, 0], [0, 1], [0, 0, 1]]\n', "rotation[1]"),
        ('[frames.tip]\nposition = ["import os", "0", "0"]\n', "frames.tip.position[0]"),
        ('frames = ["tip"]\n', "frames: expected a table of NAME = [x, y, z]"),
        ('[frames."2tip"]\nposition = ["0", "0", "0"]\n', "a frame's name must be an identifier"),
    ],
)
def test_bad_toml_frames_are_one_line(tmp_path, frames, message):

    if frames.startswith("frames"):
        text = frames + PENDULUM
    else:
        text = PENDULUM + "\n" + frames
    (tmp_path / "bad.toml").write_text(text)
    with pytest.raises(sls.SlsError) as error:
        sls.load_toml(tmp_path / "bad.toml")
    assert message in str(error.value) and "\n" not in str(error.value) and str(error.value).startswith(str(tmp_path))


def test_bad_api_frames_are_one_line():
    theta, dtheta = sp.symbols("theta dtheta")
    T = dtheta**2 / 2
    with pytest.raises(sls.SlsError, match="expected a sympy expression, got a string"):
        sls.model_from_sympy(T, 0, 0, [theta, dtheta], frames={"tip": ["sin(theta)", 0, 0]})
    with pytest.raises(sls.SlsError, match="frames.tip.rotation: expected 3 rows of 3, got 2 entries"):
        sls.model_from_sympy(T, 0, 0, [theta, dtheta], frames={"tip": {"position": [0, 0, 0], "rotation": [[1], [2]]}})


def test_a_rotation_that_is_not_one_is_refused(tmp_path):
    (tmp_path / "skewed.toml").write_text(
        PENDULUM + '\n[frames.tip]\nposition = ["0", "0", "0"]\n'
        'rotation = [["cos(theta)", "0", "sin(theta)"], ["0", "1", "0"], ["sin(theta)", "0", "cos(theta)"]]\n'
    )
    with pytest.raises(sls.SlsError, match=r"frames.tip.rotation: not a rotation matrix \(R' R = I, det R = 1\) at "):
        sls.load_toml(tmp_path / "skewed.toml")
