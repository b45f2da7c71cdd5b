"""Model files (sls/readers/files.py and the URDF reader's [urdf] table): a misspelt key is answered with the
closest valid one, in one line that names the file (finding 4 of issue 23)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import sls
from sls.readers import load_python, load_toml, load_urdf

DATA = Path(__file__).resolve().parents[1] / "data"
PENDULUM = 'state = ["q", "dq"]\nT = "m*dq^2"\nV = "0"\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (PENDULUM + 'fricc = "0"\n', "unknown key 'fricc'; did you mean 'fric'?"),
        (PENDULUM + 'fric = "0"\nParams = 1\n', "unknown key 'Params'; did you mean 'params'?"),
        (PENDULUM + 'fric = "0"\n[range]\nq = [0, 1]\n', "unknown key 'range'; did you mean 'ranges'?"),
        (PENDULUM + 'fric = "0"\n[urdff]\nfile = "arm.urdf"\n', "unknown key 'urdff'; did you mean 'urdf'?"),
        (PENDULUM + 'fric = "0"\n[ranges]\nqq = [0, 1]\n', "ranges: 'qq' is not a state variable; did you mean 'q'?"),
        (
            'state = ["x", "dx"]\nT = "dx^2"\nV = "0"\nfric = "0"\ninputs = ["F"]\n'
            '[[loads]]\npoint = ["x", "0"]\nforse = ["F", "0"]\n',
            "loads[0]: unknown key 'forse'; did you mean 'force'?",
        ),
        ('[urdf]\nfile = "arm.urdf"\nfloating-base = true\n', "[urdf]: unknown key 'floating-base'; did you mean"),
        ('[urdf]\nfile = "arm.urdf"\n[parms]\ng = 9.8\n', "unknown key 'parms'; did you mean 'params'?"),
        (
            '[urdf]\nfile = "arm.urdf"\n[params]\ndamping_shouldr = 1\n',
            "[params] damping_shouldr: the robot has no parameter of that name; did you mean 'damping_shoulder'?",
        ),
    ],
)
def test_a_misspelt_key_is_answered_with_the_closest_valid_one(tmp_path, text, expected):
    shutil.copy(DATA / "arm.urdf", tmp_path / "arm.urdf")
    path = tmp_path / "model.toml"
    path.write_text(text)
    with pytest.raises(sls.ModelError) as info:
        load_toml(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert expected in message


def test_a_key_close_to_none_still_lists_the_allowed_keys(tmp_path):
    path = tmp_path / "model.toml"
    path.write_text(PENDULUM + 'fric = "0"\nzzz = 1\n')
    with pytest.raises(sls.ModelFileError, match=r"unknown key 'zzz' \(allowed: state, T, V, fric, params"):
        load_toml(path)
    path.write_text('T = "0"\n[urdf]\nfile = "arm.urdf"\n')
    allowed = (
        r"\(allowed: urdf, params, inputs, actuation, frames, contacts, contact_at, constraint_stabilization, "
        r"srdf, stance, base_wrench, inertial_params\)"
    )
    with pytest.raises(sls.ModelFileError, match=r"key 'T' cannot go with a \[urdf\] table " + allowed):
        load_toml(path)


def test_a_python_model_file_missing_a_name_points_at_the_misspelt_one(tmp_path):
    path = tmp_path / "model.py"
    path.write_text("import sympy as sp\nq, dq = sp.symbols('q dq')\nT = dq**2\nV = 0\nfricc = 0\nx = [q, dq]\n")
    with pytest.raises(sls.ModelFileError, match="does not define 'fric' .*; it defines 'fricc': rename it 'fric'$"):
        load_python(path)


def test_a_misspelt_joint_type_is_answered_with_the_closest_type(tmp_path):
    path = tmp_path / "robot.urdf"
    path.write_text((DATA / "arm.urdf").read_text().replace('type="revolute"', 'type="revolut"', 1))
    with pytest.raises(sls.ModelFileError, match="unknown type 'revolut'; did you mean 'revolute'\\? \\(sls models"):
        load_urdf(path)
