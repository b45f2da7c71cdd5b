"""sls.control and `sls lqr`/`sls simulate` when the generated code fails, and the python-control conveniences.

A mass of zero, a negative mass, a zero length (parameters) or a singular state
end in one ControlError naming the function, the state and the cause (never a
LinAlgError or a traceback); dlqr, ctrb, controllability_rank and state_space
agree with python-control; column vectors are accepted where unambiguous.
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

import sls
import sls.control as control
from sls.cli import main
from sls.errors import ControlError, MissingDependencyError
from test_runtime_errors import SPHERICAL


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("control_more")
    out = {}
    for name in ("cart_pole", "acrobot"):
        sls.generate(sls.load_example(name), root / name)
        out[name] = root / name
    sls.generate(sls.model_from_strings(**SPHERICAL), root / "spherical")
    out["spherical"] = root / "spherical"
    # phi = 1 - 1/sqrt(q): not defined for q <= 0
    root_well = sls.model_from_strings(
        state=["q", "dq"], T="1/2*dq^2", V="q - 2*sqrt(q)", fric="0", inputs=["F"], forces=["F"], name="rootwell"
    )
    sls.generate(root_well, root / "root_well")
    out["root_well"] = root / "root_well"
    return out


@pytest.fixture(scope="module")
def pkgs(folders):
    return {name: control.load_package(path) for name, path in folders.items()}


def run_cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# --------------------------------------------------------------------------
# generated-code failures become one ControlError


@pytest.mark.parametrize(
    "params, pattern",
    [
        ({"mp": 0.0}, r"with mp=0: the mass matrix M is singular or not positive definite at x = \[s=0, th=0, ds=0, dth=0\]"),
        ({"mc": -1.0}, r"with mc=-1: the mass matrix M is singular or not positive definite at x = \[s=0"),
        ({"l": 0.0}, r"with l=0: the mass matrix M is singular or not positive definite"),
    ],
)
def test_lqr_with_a_singular_mass_matrix_raises_control_error(pkgs, params, pattern):
    for call in (
        lambda: control.lqr(pkgs["cart_pole"], np.zeros(4), params=params),
        lambda: control.lqr(pkgs["cart_pole"], np.zeros(4), [0.0], params=params),
        lambda: control.equilibrium_input(pkgs["cart_pole"], np.zeros(4), params=params),
        lambda: control.dlqr(pkgs["cart_pole"], np.zeros(4), [0.0], dt=0.01, params=params),
    ):
        with pytest.raises(ControlError, match=pattern) as info:
            call()
        assert "check the parameters" in str(info.value)
        assert not isinstance(info.value, np.linalg.LinAlgError)


def test_lqr_at_a_singular_state_names_it(pkgs):
    with pytest.raises(ControlError, match=r"qddot_fun: the mass matrix M is singular .* at x = \[th=0, ph=0, dth=0, dph=0\]"):
        control.lqr(pkgs["spherical"], np.zeros(4), [0.0, 0.0])


def test_domain_error_becomes_control_error(pkgs):
    with pytest.raises(ControlError, match=r"tau_fun is not defined at x = \[q=-1, dq=0\]: math domain error"):
        control.equilibrium_input(pkgs["root_well"], [-1.0, 0.0])
    with pytest.raises(ControlError, match=r"qddot_fun is not defined at x = \[q=0, dq=0\]: float division by zero"):
        control.lqr(pkgs["root_well"], [0.0, 0.0], [0.0])


def test_simulate_names_the_time_the_state_and_the_cause(pkgs):
    with pytest.raises(ControlError, match=r"the simulation stopped at t = 0: qddot_fun with mp=0: the mass matrix M is singular"):
        control.simulate(pkgs["cart_pole"], [0, 0.1, 0, 0], (0, 1), params={"mp": 0.0})
    # rolls over q = 0, where the model ends
    with pytest.raises(ControlError, match=r"the simulation stopped at t = [\d.]+: qddot_fun is not defined at x = \[q=-?[\d.e-]+, dq="):
        control.simulate(pkgs["root_well"], [0.5, -5.0], (0, 5))


def test_column_and_row_vectors_are_accepted(pkgs):
    flat = control.lqr(pkgs["cart_pole"], np.zeros(4), [0.0], Q=[10, 10, 1, 1])
    column = control.lqr(pkgs["cart_pole"], np.zeros((4, 1)), np.zeros((1, 1)), Q=[10, 10, 1, 1])
    np.testing.assert_array_equal(flat.K, column.K)
    assert control.equilibrium_input(pkgs["cart_pole"], np.zeros((1, 4)))[0].shape == (1,)
    run = control.simulate(pkgs["cart_pole"], np.array([[0.0], [0.1], [0.0], [0.0]]), (0, 0.1))
    assert run.y.shape[0] == 4
    with pytest.raises(ControlError, match=r"x_eq must have length 4 \[s, th, ds, dth\], got shape \(2, 2\)"):
        control.lqr(pkgs["cart_pole"], np.zeros((2, 2)))
    with pytest.raises(ControlError, match="must be a vector of 4 real numbers"):
        control.lqr(pkgs["cart_pole"], np.zeros(4) + 1j)


# --------------------------------------------------------------------------
# dlqr, ctrb, controllability_rank, state_space


def test_dlqr_matches_python_control_on_the_discretized_model(pkgs):
    ct = pytest.importorskip("control")
    design = control.dlqr(pkgs["cart_pole"], np.zeros(4), None, [10, 10, 1, 1], 1, dt=0.02)
    continuous = control.lqr(pkgs["cart_pole"], np.zeros(4), None, [10, 10, 1, 1], 1)
    Ad, Bd = control.discretize(continuous.A, continuous.B, 0.02)
    np.testing.assert_allclose(design.A, Ad) and np.testing.assert_allclose(design.B, Bd)
    K, S, E = ct.dlqr(Ad, Bd, np.diag([10.0, 10, 1, 1]), np.eye(1))
    np.testing.assert_allclose(design.K, K, rtol=1e-8)
    np.testing.assert_allclose(design.S, S, rtol=1e-8)
    assert design.dt == 0.02 and continuous.dt is None
    assert np.all(np.abs(design.poles) < 1)
    # a fast sampler approaches the continuous design
    fine = control.dlqr(pkgs["cart_pole"], np.zeros(4), None, [10, 10, 1, 1], 1, dt=1e-4)
    np.testing.assert_allclose(fine.K, continuous.K, rtol=1e-2)


def test_dlqr_errors(pkgs):
    with pytest.raises(ControlError, match="dt must be a positive finite number"):
        control.dlqr(pkgs["cart_pole"], np.zeros(4), dt=0)
    with pytest.raises(ControlError, match="dt must be a positive number"):
        control.dlqr(pkgs["cart_pole"], np.zeros(4), dt="fast")


def test_ctrb_and_rank(pkgs):
    ct = pytest.importorskip("control")
    design = control.lqr(pkgs["cart_pole"], np.zeros(4))
    C = control.ctrb(design.A, design.B)
    assert C.shape == (4, 4)
    np.testing.assert_allclose(C, ct.ctrb(design.A, design.B))
    assert control.controllability_rank(design.A, design.B) == 4
    # two uncoupled identical pendulums pushed by one common input: rank 2 of 4
    A = np.block([[np.zeros((2, 2)), np.eye(2)], [np.eye(2), np.zeros((2, 2))]])
    assert control.controllability_rank(A, [0, 0, 1, 1]) == 2
    # a chain pushed at one end is controllable, also when stiff and fast
    chain = np.block([[np.zeros((2, 2)), np.eye(2)], [np.array([[-2.0, 1.0], [1.0, -1.0]]), np.zeros((2, 2))]])
    assert control.controllability_rank(chain, [0, 0, 1, 0]) == 4
    assert control.controllability_rank(chain * 1e4, [0, 0, 1, 0]) == 4
    with pytest.raises(ControlError, match="A must be a square matrix"):
        control.ctrb(np.zeros((2, 3)), np.zeros(2))


def test_state_space(pkgs):
    ct = pytest.importorskip("control")
    sys_ = control.state_space(pkgs["cart_pole"], np.zeros(4))
    assert isinstance(sys_, ct.StateSpace)
    A, B = pkgs["cart_pole"].linearized_model(np.zeros(4), [0.0])
    np.testing.assert_array_equal(sys_.A, A) and np.testing.assert_array_equal(sys_.B, B)
    assert list(sys_.state_labels) == ["s", "th", "ds", "dth"] and list(sys_.input_labels) == ["F"]
    assert list(sys_.output_labels) == ["s", "th", "ds", "dth"]
    np.testing.assert_allclose(np.sort_complex(ct.poles(sys_)), np.sort_complex(np.linalg.eigvals(A)))
    assert control.state_space(pkgs["cart_pole"], np.zeros(4), [1.0], params={"mp": 0.5}).B[2, 0] == pytest.approx(1.0)


def test_state_space_without_python_control(pkgs, monkeypatch):
    monkeypatch.setitem(sys.modules, "control", None)
    with pytest.raises(MissingDependencyError, match=r'state_space: this needs python-control.*pip install "sls\[control\]"'):
        control.state_space(pkgs["cart_pole"], np.zeros(4))


# --------------------------------------------------------------------------
# the command line: one error line, no traceback, outputs checked first


@pytest.mark.parametrize(
    "args, message",
    [
        (["lqr", "{cart_pole}", "--x-eq", "0 0 0 0", "--param", "mp=0"], "error: qddot_fun with mp=0: the mass matrix M is singular"),
        (["lqr", "{cart_pole}", "--x-eq", "0 0 0 0", "--u-eq", "0", "--param", "mc=-1"], "error: qddot_fun with mc=-1: the mass matrix"),
        (["lqr", "{cart_pole}", "--x-eq", "0 0 0 0", "--param", "l=0"], "error: qddot_fun with l=0: the mass matrix"),
        (["lqr", "{spherical}", "--x-eq", "0 0 0 0", "--u-eq", "0 0"], "error: qddot_fun: the mass matrix M is singular or not positive definite at x = [th=0"),
        (["lqr", "{root_well}", "--x-eq", "-1 0"], "error: tau_fun is not defined at x = [q=-1, dq=0]: math domain error"),
        (["simulate", "{cart_pole}", "--x0", "0 0.1 0 0", "--t-end", "1", "--param", "mp=0"], "error: the simulation stopped at t = 0: qddot_fun with mp=0"),
        (["simulate", "{spherical}", "--x0", "0 0 0 0", "--t-end", "1"], "error: the simulation stopped at t = 0: qddot_fun: the mass matrix"),
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
    monkeypatch.setattr(control, "load_package", lambda *a, **k: calls.append(a) or pytest.fail("worked before checking"))
    command = ["lqr", folders["cart_pole"], "--x-eq", "0 0 0 0"] if option == "--save" else ["simulate", folders["cart_pole"], "--x0", "0 0 0 0", "--t-end", "1"]
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
        assert run_cli("lqr", folders["cart_pole"], "--x-eq", "0 0 0 0", "--save", tmp_path / "gain.json").exit_code == 0
        result = run_cli("simulate", folders["cart_pole"], "--x0", "0 0.1 0 0", "--t-end", "1", "--lqr-from", tmp_path / "gain.json", "--csv", tmp_path / "run.csv")
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
        f"error: internal error in sls {sls.__version__} running sls lqr on {folders['cart_pole']} (a bug in sls, not a mistake "
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
        "from sls.cli import main\nsys.argv[0] = 'sls'\nmain()\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code, "simulate", str(folders["cart_pole"]), "--x0", "0 0.1 0 0", "--t-end", "1", "--quiet"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert process.stdout.readline().strip() == "started"
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130
    assert stderr == "error: interrupted\n"
