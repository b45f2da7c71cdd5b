"""The installed `sls` command: one `error:` line, the right exit code, never a traceback."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def _sls() -> list[str]:
    found = Path(sys.executable).with_name("sls")
    if found.exists():
        return [str(found)]
    which = shutil.which("sls")
    return [which] if which else [sys.executable, "-m", "sls"]


GOOD_TOML = 'state = ["q", "dq"]\nT = "1/2*m*dq^2"\nV = "m*9.81*(1 - cos(q))"\nfric = ["b*dq"]\n[params]\nm = 1.0\nb = 0.1\n'
INLINE = ["--T", "1/2*m*dq^2", "--V", "0", "--fric", "0", "--x", "q dq"]

CASES = {
    "T not quadratic": (["--T", "1/2*dq^2 + dq", "--V", "0", "--fric", "0", "--x", "q dq"], 1, ["kinetic energy T must be quadratic", "dq"]),
    "V with velocity": (["--T", "dq^2", "--V", "dq", "--fric", "0", "--x", "q dq"], 1, ["V must not depend on the velocities"]),
    "fric count": (["--T", "dq^2", "--V", "0", "--fric", "a", "--fric", "b", "--x", "q dq"], 1, ["expected 1 entry", "got 2"]),
    "odd state": (["--T", "dq^2", "--V", "0", "--fric", "0", "--x", "q dq r"], 1, ["even number"]),
    "bad state name": (["--T", "dq^2", "--V", "0", "--fric", "0", "--x", "a;b dq"], 1, ["'a;b' is not a plain identifier"]),
    "parse error": (["--T", "1/2*dq^2 +", "--V", "0", "--fric", "0", "--x", "q dq"], 1, ["T: cannot parse '1/2*dq^2 +'"]),
    "unknown function": (["--T", "foo(dq)", "--V", "0", "--fric", "0", "--x", "q dq"], 1, ["unknown function 'foo'"]),
    "hostile": (["--T", "__import__('os').system('touch MARK')", "--V", "0", "--fric", "0", "--x", "q dq"], 1, ["not allowed"]),
    "singular": (["--T", "1/2*(dq1 + dq2)^2", "--V", "0", "--fric", "0", "--fric", "0", "--x", "q1 q2 dq1 dq2"], 1, ["singular"]),
    "sign friction": (["--T", "dq^2", "--V", "0", "--fric", "sign(dq)", "--x", "q dq"], 1, ["DiracDelta", "tanh(k*dq)"]),
    "param text": (INLINE + ["--param", "m"], 2, ["--param 'm': expected NAME=NUMBER"]),
    "param value": (INLINE + ["--param", "m=abc"], 2, ["is not a number"]),
    "param inf": (INLINE + ["--param", "m=inf"], 2, ["finite number"]),
    "param name": (INLINE + ["--param", "a;b=1"], 2, ["not a parameter name"]),
    "missing flag": (["--T", "dq^2", "--x", "q dq"], 2, ["missing --V, --fric"]),
    "both inputs": (["model.toml"] + INLINE, 2, ["not both"]),
    "unknown option": (["--bogus"], 2, ["No such option"]),
    "missing file": (["missing.toml"], 1, ["missing.toml: no such model file"]),
    "unknown example": (["nope"], 1, ["unknown example 'nope'"]),
    "bad toml": (["bad.toml"], 1, ["bad.toml: not valid TOML"]),
    "toml wrong type": (["types.toml"], 1, ["types.toml: key 'T' must be an expression string"]),
    "toml param override unknown": (["model.toml", "--param", "zz=1"], 2, ["--param zz: the model has no parameter"]),
    "python model raises": (["raises.py"], 1, ["raises.py: running the model file failed: RuntimeError: boom"]),
    "out is a file": (["model.toml", "--out", "afile"], 1, ["afile: exists and is not a directory"]),
    "foreign file in out": (["model.toml", "--out", "foreign"], 1, ["M_fun.py: exists and was not written by sls"]),
}


SUBPROCESS_CASES = ["T not quadratic", "param text", "bad toml", "python model raises"]


def _prepare(folder: Path) -> None:
    (folder / "model.toml").write_text(GOOD_TOML)
    (folder / "bad.toml").write_text('state = ["q",\n')
    (folder / "types.toml").write_text('state = ["q", "dq"]\nT = 5\nV = "0"\nfric = "0"\n')
    (folder / "raises.py").write_text("raise RuntimeError('boom\\nline two')\n")
    (folder / "afile").write_text("x")
    (folder / "foreign").mkdir()
    (folder / "foreign" / "M_fun.py").write_text("print('mine')\n")


def _arguments(label: str) -> list[str]:
    args = CASES[label][0]
    return ["generate", *args] + ([] if "--out" in args else ["--out", "out_" + label.replace(" ", "_")])


@pytest.fixture(scope="module")
def subprocess_results(tmp_path_factory):
    """The real installed command for a few cases, run concurrently (startup dominates)."""
    folder = tmp_path_factory.mktemp("cli")
    _prepare(folder)
    processes = {
        label: subprocess.Popen(_sls() + _arguments(label), cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for label in SUBPROCESS_CASES
    }
    return folder, {label: (p.wait(timeout=120), p.stdout.read(), p.stderr.read()) for label, p in processes.items()}


def _check(folder: Path, label: str, code: int, stderr: str) -> None:
    _, expected_code, pieces = CASES[label]
    assert code == expected_code, stderr
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    for piece in pieces:
        assert piece in lines[0]
    assert not (folder / "MARK").exists()
    assert not list(folder.glob("out_*"))  # nothing written for a refused model
    assert not list(folder.glob(".sls-staging-*"))
    assert (folder / "afile").read_text() == "x"
    assert (folder / "foreign" / "M_fun.py").read_text() == "print('mine')\n"


@pytest.mark.parametrize("label", SUBPROCESS_CASES)
def test_installed_command(subprocess_results, label):
    folder, done = subprocess_results
    code, _, stderr = done[label]
    _check(folder, label, code, stderr)


@pytest.mark.parametrize("label", CASES)
def test_cli_error_is_one_line_with_exit_code(tmp_path, monkeypatch, label):
    from click.testing import CliRunner

    from sls.cli import main

    _prepare(tmp_path)
    monkeypatch.chdir(tmp_path)
    try:
        runner = CliRunner(mix_stderr=False)  # click < 8.2
    except TypeError:
        runner = CliRunner()
    result = runner.invoke(main, _arguments(label))
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exc_info
    _check(tmp_path, label, result.exit_code, result.stderr)


def test_cli_success_and_regenerate(tmp_path, monkeypatch):
    (tmp_path / "model.toml").write_text(GOOD_TOML)
    done = subprocess.run(_sls() + ["generate", "model.toml", "--out", "pkg"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    from click.testing import CliRunner

    from sls.cli import main

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["generate", "model.toml", "--out", "pkg", "--param", "m=2"])  # regenerate in place
    assert result.exit_code == 0, result.output
    assert "m=2.0" in (tmp_path / "pkg" / "M_fun.py").read_text()


def test_internal_error_is_one_line_naming_the_input_and_version(tmp_path, monkeypatch):
    """A bug in sls is reported as such: one line with the model file, the version and where to report, exit 70."""
    from click.testing import CliRunner

    import sls.cli
    from sls import __version__

    def broken(*args, **kwargs):
        raise KeyError("pieces\nof a bug")

    (tmp_path / "model.toml").write_text(GOOD_TOML)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SLS_TRACEBACK", raising=False)
    monkeypatch.setattr(sls.cli, "generate", broken)
    result = CliRunner().invoke(sls.cli.main, ["generate", "model.toml", "--out", "pkg", "-q"])
    assert result.exit_code == sls.cli.INTERNAL_ERROR == 70
    assert result.stderr == (
        f"error: internal error in sls {__version__} running sls generate on model.toml (a bug in sls, not a mistake in "
        "your input): KeyError: 'pieces\\nof a bug'; please report it to the sls issue tracker with model.toml and this "
        "line (--verbose or SLS_TRACEBACK=1 shows the traceback)\n"
    )
    assert not (tmp_path / "pkg").exists()
    verbose = CliRunner().invoke(sls.cli.main, ["generate", "model.toml", "--out", "pkg", "-q", "--verbose"])
    assert verbose.exit_code == 70
    assert verbose.stderr.startswith("Traceback (most recent call last):")
    assert verbose.stderr.splitlines()[-1].startswith(f"error: internal error in sls {__version__} running sls generate on model.toml")
    inline = CliRunner().invoke(sls.cli.main, ["generate", "--T", "1/2*dq^2", "--V", "0", "--fric", "0", "--x", "q dq", "-q"])
    assert "running sls generate on the inline model" in inline.stderr
    # a user's mistake stays an ordinary error line
    (tmp_path / "bad.toml").write_text(GOOD_TOML.replace("state", "stat"))
    user = CliRunner().invoke(sls.cli.main, ["generate", "bad.toml", "--out", "pkg", "-q"])
    assert user.exit_code == 1 and user.stderr.startswith("error: bad.toml: ") and "internal" not in user.stderr
