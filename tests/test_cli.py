"""The installed ``sls`` console script, run as a subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import sls
from conftest import import_package

#: Every file of a generated package.
PACKAGE_FILES = {
    "__init__.py", "_runtime.py", "M_fun.py", "M_jac_fun.py", "C_fun.py", "C_jac_fun.py", "phi_fun.py", "phi_jac_fun.py",
    "fric_fun.py", "fric_jac_fun.py", "qddot_fun.py", "linearized_model.py", "input_matrix_fun.py",
    "input_matrix_jac_fun.py", "tau_fun.py", "T_fun.py", "V_fun.py", "xdot_fun.py",
}


def sls_script() -> str:
    """The console script of the sls installed into this interpreter's environment."""
    name = "sls.exe" if os.name == "nt" else "sls"
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    found = shutil.which("sls")
    if found is None:
        pytest.fail("the sls console script is not installed (pip install . puts it next to python)")
    return found


def run(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run([sls_script(), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120)
    if check:
        assert result.returncode == 0, f"sls {' '.join(args)} failed ({result.returncode}):\n{result.stderr}"
    return result


def generated_files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir() if p.is_file()}


def test_version(tmp_path):
    result = run("--version", cwd=tmp_path)
    assert sls.__version__ in result.stdout
    assert result.stdout.startswith("sls")


def test_help(tmp_path):
    result = run("--help", cwd=tmp_path)
    assert "Usage:" in result.stdout
    for command in ("generate", "examples"):
        assert command in result.stdout
    result = run("generate", "--help", cwd=tmp_path)
    for option in ("--T", "--V", "--fric", "--x", "--param", "--out", "--input", "--force", "--verbose", "--quiet"):
        assert option in result.stdout, option


def test_examples(tmp_path):
    lines = run("examples", cwd=tmp_path).stdout.splitlines()
    names = [line.split()[0] for line in lines]
    assert set(names) == set(sls.model.example_names()) | {"nlink"}
    assert any("(default)" in line and line.startswith("two_link_arm") for line in lines)


def test_bare_generate_writes_default_example_into_generated(tmp_path):
    result = run("generate", cwd=tmp_path)
    folder = tmp_path / "generated"
    assert generated_files(folder) == PACKAGE_FILES
    assert "two_link_arm" in result.stdout and "18 files" in result.stdout
    pkg = import_package(folder)
    assert pkg.N_DOF == 2 and pkg.qddot_fun([0.1, 0.2, 0.0, 0.0], [0.0, 0.0]).shape == (2,)
    assert "bundled example two_link_arm" in (folder / "M_fun.py").read_text().splitlines()[0]


def test_generate_example_with_out(tmp_path):
    run("generate", "pendulum", "--out", "pend", "--quiet", cwd=tmp_path)
    folder = tmp_path / "pend"
    assert generated_files(folder) == PACKAGE_FILES
    assert not (tmp_path / "generated").exists()
    pkg = import_package(folder)
    x = [0.4, -0.3]
    assert pkg.M_fun(x)[0, 0] == pytest.approx(1.0)  # m l² with m = l = 1
    assert pkg.qddot_fun(x, [0.0])[0] == pytest.approx(-9.81 * np.sin(0.4) - 0.1 * -0.3)


def test_generate_toml_file_with_param_override(tmp_path):
    (tmp_path / "spring.toml").write_text(
        textwrap.dedent(
            """\
            state = ["q", "dq"]
            T = "1/2*m*dq^2"
            V = "1/2*k*q^2"
            fric = ["c*dq"]
            [params]
            m = 2.0
            k = 8.0
            c = 0.5
            """
        )
    )
    run("generate", "spring.toml", "-o", "spring", "--param", "k=18", "--quiet", cwd=tmp_path)
    pkg = import_package(tmp_path / "spring")
    assert pkg.PARAMS == {"m": 2.0, "k": 18.0, "c": 0.5}
    assert pkg.qddot_fun([1.0, 2.0], [0.0])[0] == pytest.approx((-18.0 - 1.0) / 2.0)
    A, _ = pkg.linearized_model([0.0, 0.0], [0.0])
    assert np.linalg.eigvals(A).real.max() < 0


def test_generate_python_model_file(tmp_path):
    (tmp_path / "oscillator.py").write_text(
        textwrap.dedent(
            """\
            import sympy as sp

            q, dq, m, k = sp.symbols("q dq m k")
            T = m * dq**2 / 2
            V = k * q**2 / 2 + k * q**4 / 4
            fric = 0
            x = [q, dq]
            params = {m: 0.5, k: 3.0}
            """
        )
    )
    result = run("generate", "oscillator.py", "--out", "osc", cwd=tmp_path)
    assert "oscillator" in result.stdout
    pkg = import_package(tmp_path / "osc")
    assert pkg.qddot_fun([2.0, 0.0], [1.0])[0] == pytest.approx((1.0 - 3.0 * 2.0 - 3.0 * 8.0) / 0.5)
    assert "model file oscillator.py" in (tmp_path / "osc" / "V_fun.py").read_text().splitlines()[0]


def test_generate_inline_flags(tmp_path):
    run(
        "generate", "--T", "1/2*m*l^2*dq^2", "--V", "m*g*l*(1 - cos(q))", "--fric", "b*dq", "--x", "q dq",
        "--param", "m=2", "--param", "l=0.5", "--param", "g=9.81", "--param", "b=0.1", "--out", "inline", "--quiet",
        cwd=tmp_path,
    )
    pkg = import_package(tmp_path / "inline")
    assert pkg.PARAMS == {"m": 2.0, "l": 0.5, "g": 9.81, "b": 0.1}
    assert pkg.M_fun([0.0, 0.0])[0, 0] == pytest.approx(0.5)
    assert pkg.M_fun([0.0, 0.0], m=4.0)[0, 0] == pytest.approx(1.0)
    assert "inline flags" in (tmp_path / "inline" / "M_fun.py").read_text().splitlines()[0]


def test_unknown_example_is_a_one_line_error(tmp_path):
    result = run("generate", "no_such_model", cwd=tmp_path, check=False)
    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error:") and "no_such_model" in lines[0]
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "generated").exists()


def test_generate_nlink_with_n(tmp_path):
    result = run("generate", "nlink", "--n", "4", "--out", "chain", cwd=tmp_path)
    assert "n = 4" in result.stdout
    chain = import_package(tmp_path / "chain")
    x = np.linspace(-0.4, 0.4, 8)
    assert chain.M_fun(x).shape == (4, 4)
    assert chain.qddot_fun(x, np.zeros(4)).shape == (4,)
    assert "nlink" in run("examples", cwd=tmp_path).stdout


@pytest.mark.parametrize(
    "args, code, message",
    [
        (["generate", "pendulum", "--n", "3"], 2, "--n goes with the nlink example"),
        (["generate", "nlink", "--n", "0"], 1, "n must be an integer from 1 to"),
    ],
)
def test_generate_nlink_errors(tmp_path, args, code, message):
    result = run(*args, cwd=tmp_path, check=False)
    assert result.returncode == code
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "generated").exists()


def test_generate_simplify_flag(tmp_path):
    run("generate", "two_link_arm", "--simplify", "--out", "arm", cwd=tmp_path)
    assert "simplified" in (tmp_path / "arm" / "M_fun.py").read_text().splitlines()[0]
    arm = import_package(tmp_path / "arm")
    assert arm.M_fun([0.1, 0.2, 0.0, 0.0]).shape == (2, 2)
