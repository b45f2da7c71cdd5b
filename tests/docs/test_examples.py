"""The scripts in examples/ run (shortened, headless) and print what they promise; the bundled example models."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import sls
from sls.cli.app import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run_example(name, *args, cwd):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_cart_pole_lqr_example(tmp_path):
    has_mpl = _has_matplotlib()
    args = ["--t-end", "6"] + (["--plot", tmp_path / "cp.png"] if has_mpl else [])
    out = run_example("cart_pole_lqr.py", *args, cwd=tmp_path)
    assert "K = [ -3.1623 -37.1142  -4.2392  -8.1845]" in out
    assert "-1.2577-1.0816j" in out
    angle, whole = map(
        float, re.search(r"pole angle within 2% after ([\d.]+) s, whole state after ([\d.]+) s", out).groups()
    )
    assert angle < 4.5 and whole < 6
    if has_mpl:
        assert (tmp_path / "cp.png").read_bytes()[:8] == PNG_MAGIC


def test_acrobot_lqr_example(tmp_path):
    out = run_example("acrobot_lqr.py", "--t-end", "5", cwd=tmp_path)
    final = re.search(r"final state: \[(.*)\]", out).group(1).split()
    assert max(abs(float(v)) for v in final) < 1e-3


def test_pole_mass_sweep_example(tmp_path):
    has_mpl = _has_matplotlib()
    out = run_example(
        "pole_mass_sweep.py", "--masses", "0.1", "1", *(["--plot", tmp_path / "s.png"] if has_mpl else []), cwd=tmp_path
    )
    rows = [line.split() for line in out.splitlines() if re.match(r"\s*(0\.1|1)\s", line)]
    assert len(rows) == 2
    # A heavier pole needs faster fast poles: the first (fastest) pole moves left.
    assert float(rows[1][1]) < float(rows[0][1]) < 0
    if has_mpl:
        assert (tmp_path / "s.png").read_bytes()[:8] == PNG_MAGIC


def test_four_bar_drift_example(tmp_path):
    has_mpl = _has_matplotlib()
    out = run_example(
        "four_bar_drift.py", "--t-end", "2", *(["--plot", tmp_path / "d.png"] if has_mpl else []), cwd=tmp_path
    )
    drifts = [float(v) for v in re.findall(r"constraint drift ([\d.e+-]+)", out)]
    assert len(drifts) == 4 and max(drifts) < 1e-2
    assert drifts[2] < drifts[0] and drifts[3] < drifts[1]  # Baumgarte keeps the loop closed better
    if has_mpl:
        assert (tmp_path / "d.png").read_bytes()[:8] == PNG_MAGIC


def _has_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("name, m", [("cart_pole", 1), ("acrobot", 1)])
def test_bundled_control_examples(tmp_path, name, m):
    listing = CliRunner().invoke(main, ["examples"]).output
    line = next(line for line in listing.splitlines() if line.startswith(name + " "))
    assert "n = 2, m = 1" in line
    model = sls.load_example(name)
    assert model.m == m and not model.actuated
    result = CliRunner().invoke(main, ["generate", name, "--out", str(tmp_path / name), "-q"])
    assert result.exit_code == 0 and result.output == ""
    assert (tmp_path / name / "input_matrix_fun.py").exists()


def test_folder_named_like_an_example_does_not_shadow_it(tmp_path, monkeypatch):
    """`sls generate cart_pole --out cart_pole` works again once the folder exists."""
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        result = CliRunner().invoke(main, ["generate", "cart_pole", "--out", "cart_pole", "-q"])
        assert result.exit_code == 0, result.stderr
    (tmp_path / "notes").mkdir()
    result = CliRunner().invoke(main, ["generate", "notes"])
    assert result.exit_code == 2 and "model files must end in .toml, .py, .urdf, .xacro or .xml" in result.stderr
