"""Where contacts are held (sls.readers.urdf.contacts): --contact-at LINK=X,Y,Z[,ROLL,PITCH,YAW] on the command
line, contact_at = {...} beside [urdf] in a model file and load_urdf(contact_at=...) set the defaults of the
contact parameters; the neutral pose otherwise; one-line refusals of an unknown contact or a malformed place."""

from pathlib import Path

import pytest
from click.testing import CliRunner

import sls
from sls.cli.app import main
from sls.readers.urdf import load_urdf

pin = pytest.importorskip("pinocchio")
SOLO = Path(pin.__file__).resolve().parents[4] / "share/example-robot-data/robots/solo_description/robots/solo12.urdf"


def place(model: sls.Model, link: str, axes: str = "xyz") -> list:
    names = {"x": "x", "y": "y", "z": "z", "r": "roll", "p": "pitch", "w": "yaw"}
    return [model.params[f"contact_{link}_{names[a]}"] for a in axes]


def test_the_api_places_point_and_6d_contacts():
    model = load_urdf(
        SOLO,
        floating_base=True,
        contacts=["FL_FOOT", "HR_FOOT:6d", "FR_FOOT:6d"],
        contact_at={"FL_FOOT": [0.2, 0.1, 0.0], "HR_FOOT": (-0.2, -0.1, 0.0, 0.1, -0.2, 0.3), "FR_FOOT": [1, 2, 3]},
    )
    assert place(model, "FL_FOOT") == [0.2, 0.1, 0.0]
    assert place(model, "HR_FOOT", "xyzrpw") == [-0.2, -0.1, 0.0, 0.1, -0.2, 0.3]
    assert place(model, "FR_FOOT", "xyzrpw") == [1.0, 2.0, 3.0, 0.0, 0.0, 0.0]  # 3 numbers: the neutral orientation
    neutral = load_urdf(SOLO, floating_base=True, contacts=["HL_FOOT"])  # where the neutral q puts it
    peer = pin.buildModelFromUrdf(str(SOLO), pin.JointModelFreeFlyer())
    data = peer.createData()
    pin.framesForwardKinematics(peer, data, pin.neutral(peer))
    assert place(neutral, "HL_FOOT") == pytest.approx(data.oMf[peer.getFrameId("HL_FOOT")].translation, abs=1e-12)


def test_a_model_file_places_contacts(tmp_path):
    (tmp_path / "solo.toml").write_text(
        f'contacts = ["FL_FOOT:6d", "HR_FOOT"]\n\n[contact_at]\nFL_FOOT = [0.19, 0.15, 0, 0, 0, 1.5]\n'
        f'HR_FOOT = [-0.19, -0.15, 0.01]\n\n[urdf]\nfile = "{SOLO}"\nfloating_base = true\n'
    )
    model = sls.load_toml(tmp_path / "solo.toml")
    assert place(model, "FL_FOOT", "xyzrpw") == [0.19, 0.15, 0.0, 0.0, 0.0, 1.5]
    assert place(model, "HR_FOOT") == [-0.19, -0.15, 0.01]


def test_the_command_line_places_contacts(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    arguments = ["generate", str(SOLO), "--floating-base", "--contacts", "FL_FOOT:6d,HR_FOOT", "-o", "p"]
    placed = ["--contact-at", "FL_FOOT=0.2,0.1,0,0,0,0.5", "--contact-at", "HR_FOOT=-0.2,-0.1,0.02"]
    result = CliRunner().invoke(main, arguments + placed + ["--functions", "constraint_fun"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "p" / "constraint_fun.py").read_text()
    for expected in ("contact_FL_FOOT_yaw=0.5", "contact_FL_FOOT_x=0.2", "contact_HR_FOOT_z=0.02"):
        assert expected in text.replace(" ", "")


@pytest.mark.parametrize(
    ("places", "message"),
    [
        (["FL_FOT=0,0,0"], "--contact-at: 'FL_FOT' is not a contact; did you mean 'FL_FOOT'?"),
        (["trunk=0,0,0"], "--contact-at: 'trunk' is not a contact (the contacts are FL_FOOT, HR_FOOT)"),
        (["FL_FOOT=0,0"], "--contact-at: 'FL_FOOT' must be X, Y, Z or X, Y, Z, ROLL, PITCH, YAW"),
        (["HR_FOOT=0,0,0,0,0,0"], "--contact-at: 'HR_FOOT' must be X, Y, Z (finite numbers"),
        (["FL_FOOT:0,0,0"], "--contact-at: expected LINK=X,Y,Z"),
        (["FL_FOOT=a,0,0"], "--contact-at: expected LINK=X,Y,Z"),
        (["FL_FOOT=nan,0,0"], "--contact-at: 'FL_FOOT': 'nan' is not a finite number"),
        (["FL_FOOT=0,1e20,0"], "--contact-at: 'FL_FOOT': '1e20' is too large"),
        (["FL_FOOT=0,0,0", "FL_FOOT=1,0,0"], "--contact-at: 'FL_FOOT' is placed twice"),
    ],
)
def test_bad_places_on_the_command_line_are_one_line(tmp_path, monkeypatch, places, message):
    monkeypatch.chdir(tmp_path)
    arguments = ["generate", str(SOLO), "--floating-base", "--contacts", "FL_FOOT:6d,HR_FOOT", "-o", "p"]
    for item in places:
        arguments += ["--contact-at", item]
    result = CliRunner().invoke(main, arguments)
    assert result.exit_code != 0 and message in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "p").exists()


def test_bad_places_in_the_api_and_model_files_are_one_line(tmp_path):
    with pytest.raises(sls.SlsError, match=r"contact_at: 'HR_FOOT' must be X, Y, Z \(finite") as error:
        load_urdf(SOLO, floating_base=True, contacts=["HR_FOOT"], contact_at={"HR_FOOT": [0, 0, "1"]})
    assert "\n" not in str(error.value)
    with pytest.raises(sls.SlsError, match="contact_at: places contacts; name them with contacts too"):
        load_urdf(SOLO, floating_base=True, contact_at={"HR_FOOT": [0, 0, 0]})
    (tmp_path / "solo.toml").write_text(
        f'contacts = ["HR_FOOT"]\ncontact_at = [1, 2, 3]\n\n[urdf]\nfile = "{SOLO}"\nfloating_base = true\n'
    )
    with pytest.raises(sls.SlsError, match=r"solo.toml: contact_at: expected a table of CONTACT = \[X, Y, Z\]"):
        sls.load_toml(tmp_path / "solo.toml")
    result = CliRunner().invoke(main, ["generate", str(SOLO), "--contact-at", "FL_FOOT=0,0,0", "-o", "p"])
    assert result.exit_code != 0 and "--contact-at places contacts: name them with --contacts" in result.output
