"""Design files (sls/control/design.py): what ``sls lqr --save`` writes and ``sls simulate --lqr-from`` reads.

A design is for the model it was made on: a package regenerated from another model into the same folder (same
state and inputs, other fingerprint) refuses it, in Python and on the command line, unless asked explicitly.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

import sls
import sls.control as control
from sls.cli.app import main
from sls.errors import ControlError, DesignFileError

CART_POLE = """state = ["s", "th", "ds", "dth"]
T = "1/2*(mc + mp)*ds^2 + mp*l*ds*dth*cos(th) + 1/2*mp*l^2*dth^2"
V = "mp*g*l*cos(th)"
fric = ["0", "0"]
inputs = ["F"]
forces = ["F", "0"]
[params]
mc = 1.0
mp = {mp}
l = 0.5
g = 9.81
"""


def _generate(folder, mp):
    path = folder.parent / f"cart_pole_{mp}.toml"
    path.write_text(CART_POLE.format(mp=mp), encoding="utf-8")
    sls.generate(sls.load_toml(path), folder)
    return control.load_package(folder)


def test_a_design_round_trips_through_its_file(tmp_path):
    pkg = _generate(tmp_path / "cart_pole", 0.1)
    design = control.lqr(pkg, np.zeros(4), Q=[10, 10, 1, 1], R=1)
    path = control.save_design(pkg, design, tmp_path / "gain.json", params={"mp": 0.1})
    saved = json.loads(path.read_text())
    assert saved["fingerprint"] == pkg.FINGERPRINT and saved["params"] == {"mp": 0.1}
    loaded = control.load_design(pkg, path)
    np.testing.assert_array_equal(loaded.K, design.K)
    x = np.array([0.1, 0.2, -0.3, 0.4])
    np.testing.assert_array_equal(loaded(0.0, x), design(0.0, x))
    with pytest.raises(DesignFileError, match="no such file"):
        control.load_design(pkg, tmp_path / "none.json")


def test_a_design_for_another_model_is_refused_unless_allowed(tmp_path):
    folder = tmp_path / "cart_pole"
    old = _generate(folder, 0.1)
    control.save_design(old, control.lqr(old, np.zeros(4)), tmp_path / "gain.json")
    new = _generate(folder, 0.3)  # another pole mass, regenerated into the same folder: same names
    assert new.STATE == old.STATE and new.FINGERPRINT != old.FINGERPRINT
    with pytest.raises(ControlError) as caught:
        control.load_design(new, tmp_path / "gain.json")
    message = str(caught.value)
    assert old.FINGERPRINT in message and new.FINGERPRINT in message and "allow_other_model=True" in message
    assert "\n" not in message
    allowed = control.load_design(new, tmp_path / "gain.json", allow_other_model=True)
    assert allowed.fingerprint == old.FINGERPRINT

    args = [
        "simulate",
        str(folder),
        "--x0",
        "0 0.1 0 0",
        "--t-end",
        "1",
        "-q",
        "--lqr-from",
        str(tmp_path / "gain.json"),
    ]
    refused = CliRunner().invoke(main, args)
    assert refused.exit_code == 1 and refused.stderr.count("\n") == 1, refused.stderr
    assert refused.stderr.startswith("error: --lqr-from ") and "--allow-other-model" in refused.stderr
    assert old.FINGERPRINT in refused.stderr and new.FINGERPRINT in refused.stderr
    used = CliRunner().invoke(main, [*args, "--allow-other-model"])
    assert used.exit_code == 0, used.stderr
    assert used.stderr.startswith("warning: --lqr-from ") and used.stderr.count("\n") == 1
    assert old.FINGERPRINT in used.stderr and new.FINGERPRINT in used.stderr


def test_a_design_for_this_model_is_used_without_a_word(tmp_path):
    folder = tmp_path / "cart_pole"
    pkg = _generate(folder, 0.1)
    save = CliRunner().invoke(main, ["lqr", str(folder), "--x-eq", "0 0 0 0", "--save", str(tmp_path / "gain.json")])
    assert save.exit_code == 0, save.stderr
    _generate(folder, 0.1)  # the same model again: the same fingerprint
    args = [
        "simulate",
        str(folder),
        "--x0",
        "0 0.1 0 0",
        "--t-end",
        "1",
        "-q",
        "--lqr-from",
        str(tmp_path / "gain.json"),
    ]
    used = CliRunner().invoke(main, args)
    assert used.exit_code == 0 and used.stderr == "", used.stderr
    assert control.load_design(pkg, tmp_path / "gain.json").fingerprint == pkg.FINGERPRINT
