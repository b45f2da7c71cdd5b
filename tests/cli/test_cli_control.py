"""The control commands of the command line (sls/cli/control.py): ``sls lqr`` and ``sls simulate``.

Gains, poles and designs saved as JSON; closed- and open-loop simulations with plot and CSV; every mistake and
every failure of the generated code one ``error:`` line (no traceback), output paths checked before any work,
written files following the umask, Ctrl-C saying ``interrupted``. The API underneath: test_control.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import SPHERICAL

import sls
import sls.control as control
from sls.cli.app import main
from sls.errors import MissingDependencyError

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli_control")
    out = {}
    for name in ("cart_pole", "acrobot"):
        sls.generate(sls.load_example(name), root / name)
        out[name] = root / name
    # A spherical pendulum: M is singular at th = 0.
    sls.generate(sls.model_from_strings(**SPHERICAL), root / "spherical")
    out["spherical"] = root / "spherical"
    # phi = 1 - 1/sqrt(q): not defined for q <= 0
    root_well = sls.model_from_strings(
        state=["q", "dq"], T="1/2*dq^2", V="q - 2*sqrt(q)", fric="0", inputs=["F"], forces=["F"], name="rootwell"
    )
    sls.generate(root_well, root / "root_well")
    out["root_well"] = root / "root_well"
    return out


def run_cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# --------------------------------------------------------------------------
# sls lqr, sls simulate


def test_cli_lqr_prints_gain_and_poles(folders, tmp_path):
    result = run_cli(
        "lqr",
        folders["cart_pole"],
        "--x-eq",
        "0 0 0 0",
        "--Q",
        "10 10 1 1",
        "--R",
        "1",
        "--save",
        tmp_path / "gain.json",
    )
    assert result.exit_code == 0, result.output
    assert "-37.1142" in result.output and "-3.16228" in result.output
    assert "-1.25768 ± 1.08157j" in result.output and "u_eq = [F=0]" in result.output
    design = json.loads((tmp_path / "gain.json").read_text())
    assert design["state"] == ["s", "th", "ds", "dth"] and np.shape(design["K"]) == (1, 4)
    # Scalar and matrix weights, expressions in vectors, parameters.
    result = run_cli("lqr", folders["cart_pole"], "--x-eq", "0, 0, 0, 0", "--Q", "1", "--R", "2", "--param", "mp=0.5")
    expected = control.lqr(folders["cart_pole"], np.zeros(4), None, 1, 2, params={"mp": 0.5})
    assert f"{expected.K[0, 1]:12.6g}".strip() in result.output
    result = run_cli("lqr", folders["acrobot"], "--x-eq", "0 0 0 0", "--Q", "1 0 0 0; 0 1 0 0; 0 0 1 0; 0 0 0 1")
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["--x-eq", "0 0 0"], 2, "error: --x-eq '0 0 0': expected 4 numbers [s, th, ds, dth], got 3"),
        (
            ["--x-eq", "0 0 0 0", "--Q", "1 2"],
            2,
            "error: --Q '1 2': expected one number (times the identity), 4 diagonal entries",
        ),
        (["--x-eq", "0 0 0 0", "--Q", "1 0; 0 1"], 2, "error: --Q: a matrix must have 4 rows of 4 entries"),
        (["--x-eq", "0 0 0 0", "--R", "0"], 1, "error: R must be positive definite"),
        (
            ["--x-eq", "0 q 0 0"],
            2,
            "error: --x-eq: entry 'q' is not a number or a constant expression like pi/18 (it uses q)",
        ),
        (["--x-eq", "0 np.pi 0 0"], 2, "error: --x-eq: attribute access is not allowed in an expression: 'np.pi'"),
        (["--x-eq", "0 pi/4 0 0"], 1, "error: no input holds x = [0, 0.7854, 0, 0] at rest"),
        (["--x-eq", "0 0 0 0", "--u-eq", "1"], 1, "error: (x_eq, u_eq) is not an equilibrium"),
        (["--x-eq", "0 0 0 0", "--param", "M=1"], 1, "error: unknown parameter 'M'"),
    ],
)
def test_cli_lqr_errors(folders, args, code, message):
    result = run_cli("lqr", folders["cart_pole"], *args)
    assert result.exit_code == code
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1, result.stderr


def test_cli_lqr_not_a_package(tmp_path):
    result = run_cli("lqr", tmp_path, "--x-eq", "0")
    assert result.exit_code == 1 and "not a generated package" in result.stderr


def test_cli_simulate_closed_loop_with_plot(folders, tmp_path):
    pytest.importorskip("matplotlib")
    gain, png, csv = tmp_path / "gain.json", tmp_path / "run.png", tmp_path / "run.csv"
    assert run_cli("lqr", folders["cart_pole"], "--x-eq", "0 0 0 0", "--Q", "10 10 1 1", "--save", gain).exit_code == 0
    result = run_cli(
        "simulate",
        folders["cart_pole"],
        "--x0",
        "0 10*pi/180 0 0",
        "--t-end",
        "6",
        "--lqr-from",
        gain,
        "--plot",
        png,
        "--csv",
        csv,
        "--points",
        "121",
    )
    assert result.exit_code == 0, result.output + result.stderr
    assert png.read_bytes()[:8] == PNG_MAGIC
    table = np.loadtxt(csv, delimiter=",", skiprows=1)
    assert table.shape == (121, 1 + 4 + 1 + 3)
    assert np.abs(table[-1, 1:5]).max() < 1e-2
    assert "settling time" in result.output and "wrote the plot" in result.output


def test_cli_simulate_open_loop_and_errors(folders, tmp_path):
    result = run_cli(
        "simulate", folders["acrobot"], "--x0", "1 0 0 0", "--t-end", "2", "--rtol", "1e-10", "--atol", "1e-12"
    )
    assert result.exit_code == 0
    assert "energy T + V" in result.output and "largest change" in result.output
    result = run_cli(
        "simulate", folders["acrobot"], "--x0", "0 0 0 0", "--t-end", "1", "--lqr-from", tmp_path / "none.json"
    )
    assert result.exit_code == 2 and result.stderr.startswith("error: --lqr-from") and "no such file" in result.stderr
    gain = tmp_path / "gain.json"
    run_cli("lqr", folders["cart_pole"], "--x-eq", "0 0 0 0", "--save", gain)
    result = run_cli("simulate", folders["acrobot"], "--x0", "0 0 0 0", "--t-end", "1", "--lqr-from", gain)
    assert result.exit_code == 1 and "the design is for state [s, th, ds, dth]" in result.stderr
    result = run_cli("simulate", folders["acrobot"], "--x0", "0 0 0 0", "--t-end", "-1")
    assert result.exit_code == 2 and result.stderr.startswith("error: --t-end")


def test_plot_without_matplotlib(folders, tmp_path):
    """With matplotlib missing, --plot fails at once with one line naming the extra; nothing is simulated."""
    code = "import sys; sys.modules['matplotlib'] = None; from sls.cli.app import main; sys.argv[0] = 'sls'; main()"
    png = tmp_path / "run.png"
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            code,
            "simulate",
            str(folders["cart_pole"]),
            "--x0",
            "0 0.1 0 0",
            "--t-end",
            "1",
            "--plot",
            str(png),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1
    assert (
        proc.stderr
        == 'error: writing a plot needs matplotlib, which is not installed; install it with: pip install "sls[plot]"\n'
    )
    assert not png.exists()
    # The API raises the same error, an SlsError.
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.modules['matplotlib'] = None\nfrom sls.control.plot import require_matplotlib\n"
            "try:\n    require_matplotlib()\nexcept Exception as e:\n    print(type(e).__name__)",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.stdout.strip() == MissingDependencyError.__name__


# --------------------------------------------------------------------------
# the command line: one error line, no traceback, outputs checked first


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["lqr", "{cart_pole}", "--x-eq", "0 0 0 0", "--param", "mp=0"],
            "error: qddot_fun with mp=0: the mass matrix M is singular",
        ),
        (
            ["lqr", "{cart_pole}", "--x-eq", "0 0 0 0", "--u-eq", "0", "--param", "mc=-1"],
            "error: qddot_fun with mc=-1: the mass matrix",
        ),
        (["lqr", "{cart_pole}", "--x-eq", "0 0 0 0", "--param", "l=0"], "error: qddot_fun with l=0: the mass matrix"),
        (
            ["lqr", "{spherical}", "--x-eq", "0 0 0 0", "--u-eq", "0 0"],
            "error: qddot_fun: the mass matrix M is singular or not positive definite at x = [th=0",
        ),
        (
            ["lqr", "{root_well}", "--x-eq", "-1 0"],
            "error: tau_fun is not defined at x = [q=-1, dq=0]: math domain error",
        ),
        (
            ["simulate", "{cart_pole}", "--x0", "0 0.1 0 0", "--t-end", "1", "--param", "mp=0"],
            "error: the simulation stopped at t = 0: qddot_fun with mp=0",
        ),
        (
            ["simulate", "{spherical}", "--x0", "0 0 0 0", "--t-end", "1"],
            "error: the simulation stopped at t = 0: qddot_fun: the mass matrix",
        ),
        (["simulate", "{root_well}", "--x0", "0.5 -5", "--t-end", "5"], "error: the simulation stopped at t = "),
    ],
)
def test_cli_generated_code_failures_are_one_line(folders, args, message):
    result = run_cli(*[a.format(**folders) for a in args])
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exc_info
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1, result.stderr


@pytest.mark.parametrize("option", ["--save", "--plot", "--csv"])
def test_cli_output_paths_are_checked_before_any_work(folders, tmp_path, option, monkeypatch):
    if option == "--plot":
        pytest.importorskip("matplotlib")
    calls = []
    monkeypatch.setattr(
        control, "load_package", lambda *a, **k: calls.append(a) or pytest.fail("worked before checking")
    )
    command = (
        ["lqr", folders["cart_pole"], "--x-eq", "0 0 0 0"]
        if option == "--save"
        else ["simulate", folders["cart_pole"], "--x0", "0 0 0 0", "--t-end", "1"]
    )
    missing = tmp_path / "missing" / "out.file"
    result = run_cli(*command, option, missing)
    assert result.exit_code == 1, result.stderr
    assert result.stderr == f"error: {option} {missing}: the folder {missing.parent} does not exist; create it first\n"
    result = run_cli(*command, option, tmp_path)
    assert result.exit_code in (1, 2) and result.stderr.count("\n") == 1 and "is a directory" in result.stderr
    assert not calls
    assert not list(tmp_path.iterdir())


def test_cli_written_files_follow_the_umask(folders, tmp_path):
    old = os.umask(0o022)
    try:
        assert (
            run_cli("lqr", folders["cart_pole"], "--x-eq", "0 0 0 0", "--save", tmp_path / "gain.json").exit_code == 0
        )
        result = run_cli(
            "simulate",
            folders["cart_pole"],
            "--x0",
            "0 0.1 0 0",
            "--t-end",
            "1",
            "--lqr-from",
            tmp_path / "gain.json",
            "--csv",
            tmp_path / "run.csv",
        )
        assert result.exit_code == 0, result.stderr
    finally:
        os.umask(old)
    for name in ("gain.json", "run.csv"):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o644, name
    assert json.loads((tmp_path / "gain.json").read_text())["kind"] == "lqr"


def test_cli_unexpected_error_is_one_line(folders, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("something\nunforeseen")

    monkeypatch.setattr(control, "lqr", broken)
    result = run_cli("lqr", folders["cart_pole"], "--x-eq", "0 0 0 0")
    assert result.exit_code == 70
    assert result.stderr == (
        f"error: internal error in sls {sls.__version__} running sls lqr on {folders['cart_pole']} "
        "(a bug in sls, not a mistake "
        f"in your input): RuntimeError: something unforeseen; please report it to the sls issue tracker with "
        f"{folders['cart_pole']} and this line (--verbose or SLS_TRACEBACK=1 shows the traceback)\n"
    )
    monkeypatch.setenv("SLS_TRACEBACK", "1")
    assert isinstance(run_cli("lqr", folders["cart_pole"], "--x-eq", "0 0 0 0").exception, RuntimeError)


def test_ctrl_c_during_simulate_says_interrupted(folders):
    code = (
        "import sys, time, sls.control as c\n"
        "real = c.simulate\n"
        "def slow(*a, **k):\n    print('started', flush=True); time.sleep(30)\n"
        "c.simulate = slow\n"
        "from sls.cli.app import main\nsys.argv[0] = 'sls'\nmain()\n"
    )
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            code,
            "simulate",
            str(folders["cart_pole"]),
            "--x0",
            "0 0.1 0 0",
            "--t-end",
            "1",
            "--quiet",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # Ctrl-C as from a terminal: a run started in the background (cmd &) inherits SIGINT ignored
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert process.stdout.readline().strip() == "started"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr == "error: interrupted\n"


# --------------------------------------------------------------------------
# sls lqr on a large model: a summary instead of the table


def test_cli_lqr_summarizes_a_gain_too_wide_to_print(tmp_path):
    from sls.readers.nlink import nlink_pendulum

    sls.generate(nlink_pendulum(6), tmp_path / "chain")  # 12 states, 6 inputs: a K table 170 characters wide
    gain = tmp_path / "gain.json"
    result = run_cli("lqr", tmp_path / "chain", "--x-eq", " ".join(["0"] * 12), "--Q", "1", "--R", "1", "--save", gain)
    assert result.exit_code == 0, result.stderr
    printed_lines = result.output.splitlines()
    assert printed_lines[0] == "equilibrium:"  # 150 columns on one line: wrapped, every line within 120
    k = printed_lines.index(f"K (u = u_eq - K (x - x_eq)): 6 x 12, too wide to print; the full K is saved in {gain}")
    assert max(len(line) for line in printed_lines[:k]) <= 120
    lines = printed_lines[k - 1 :]  # from the equilibrium's last line: the layout below as before
    assert max(len(line) for line in lines[2:-1]) <= 120, "the lines naming files aside"
    K = np.array(json.loads(gain.read_text())["K"])
    expected = control.lqr(tmp_path / "chain", np.zeros(12), Q=1, R=1)
    np.testing.assert_allclose(K, expected.K, rtol=1e-12)
    state = expected.K.shape[1]
    for i, row in enumerate(expected.K):  # the norm of each input's row, against numpy's
        printed = lines[3 + i].split()
        assert printed[0] == f"u{i + 1}" and printed[1:3] == ["|K|", "="]
        assert float(printed[3]) == pytest.approx(np.linalg.norm(row), rel=1e-5)
    assert lines[9] == f"closed-loop poles ({state}):"
    assert " ± " in result.output and "wrote the design to" in lines[-1]
    unsaved = run_cli("lqr", tmp_path / "chain", "--x-eq", " ".join(["0"] * 12))
    assert "--save FILE writes the full K (JSON)" in unsaved.output


def test_cli_lqr_prints_a_small_gain_as_a_table(folders):
    """The cart-pole output the README and docs/control.md show, line for line (numbers from the API)."""
    design = control.lqr(folders["cart_pole"], np.zeros(4), Q=[10, 10, 1, 1], R=1)
    result = run_cli("lqr", folders["cart_pole"], "--x-eq", "0 0 0 0", "--Q", "10 10 1 1", "--R", "1")
    K = design.K[0]
    real = sorted(design.poles[np.abs(design.poles.imag) < 1e-12].real)
    pair = design.poles[design.poles.imag > 1e-12][0]
    assert result.output.splitlines() == [
        "equilibrium: x_eq = [s=0, th=0, ds=0, dth=0], u_eq = [F=0]",
        "K (u = u_eq - K (x - x_eq)):",
        "                s           th           ds          dth",
        "  F  " + " ".join(f"{value:12.6g}" for value in K),
        "closed-loop poles:",
        f"  {real[0]:.6g}",
        f"  {real[1]:.6g}",
        f"  {pair.real:.6g} ± {pair.imag:.6g}j",
    ]


def test_a_long_equilibrium_is_wrapped_at_120_columns():
    """A 12-link chain's x_eq (24 entries) and u_eq: each on lines of their own, none wider than 120 columns, every
    entry whole; a short one stays one line."""
    from sls.cli.control import WIDE, equilibrium_lines

    state = [f"q{k}" for k in range(1, 13)] + [f"dq{k}" for k in range(1, 13)]
    inputs = [f"u{k}" for k in range(1, 13)]
    x_eq, u_eq = np.linspace(-1.23456, 1.23456, 24), np.linspace(0.5, 9.5, 12)
    lines = equilibrium_lines(state, x_eq, inputs, u_eq)
    assert len(lines) > 3 and max(map(len, lines)) <= WIDE and lines[0] == "equilibrium:"
    text = " ".join(lines)
    x_part = text[text.index("x_eq = [") + 8 : text.index("]")]
    entries = [entry.strip() for entry in x_part.split(",")]
    assert [entry.split("=")[0] for entry in entries] == state
    np.testing.assert_allclose([float(entry.split("=")[1]) for entry in entries], x_eq, rtol=1e-5)
    assert text.count("u_eq = [") == 1 and text.endswith(f"u12={u_eq[-1]:.6g}]")
    short = equilibrium_lines(["s", "th", "ds", "dth"], np.zeros(4), ["F"], [0.0])
    assert short == ["equilibrium: x_eq = [s=0, th=0, ds=0, dth=0], u_eq = [F=0]"]
