"""The ``sls`` command line (sls/cli.py): ``sls generate`` and ``sls examples`` through the installed console script,
every mistake one ``error:`` line with the right exit code and never a traceback, and the new-user walk (the
mistakes a new user made, run concurrently through the real command). ``sls lqr``/``sls simulate``: test_cli_control.py.
"""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import numpy as np
import pytest
from conftest import import_package, run, sls_command, sls_env

import sls

#: Every file of a generated package.
PACKAGE_FILES = {
    "__init__.py",
    "_runtime.py",
    "M_fun.py",
    "M_jac_fun.py",
    "C_fun.py",
    "C_jac_fun.py",
    "phi_fun.py",
    "phi_jac_fun.py",
    "fric_fun.py",
    "fric_jac_fun.py",
    "qddot_fun.py",
    "linearized_model.py",
    "input_matrix_fun.py",
    "input_matrix_jac_fun.py",
    "tau_fun.py",
    "T_fun.py",
    "V_fun.py",
    "xdot_fun.py",
}


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
    for option in ("--T", "--V", "--fric", "--state", "--param", "--out", "--input", "--force", "--verbose", "--quiet"):
        assert option in result.stdout, option


def test_examples(tmp_path):
    lines = run("examples", cwd=tmp_path).stdout.splitlines()
    names = [line.split()[0] for line in lines]
    assert set(names) == set(sls.readers.example_names()) | {"nlink"}
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
        "generate",
        "--T",
        "1/2*m*l^2*dq^2",
        "--V",
        "m*g*l*(1 - cos(q))",
        "--fric",
        "b*dq",
        "--state",
        "q dq",
        "--param",
        "m=2",
        "--param",
        "l=0.5",
        "--param",
        "g=9.81",
        "--param",
        "b=0.1",
        "--out",
        "inline",
        "--quiet",
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


# ====================================================================================================
# one `error:` line, the right exit code, never a traceback (was test_cli_errors.py)


GOOD_TOML = (
    'state = ["q", "dq"]\nT = "1/2*m*dq^2"\nV = "m*9.81*(1 - cos(q))"\nfric = ["b*dq"]\n[params]\nm = 1.0\nb = 0.1\n'
)
INLINE = ["--T", "1/2*m*dq^2", "--V", "0", "--fric", "0", "--state", "q dq"]

CASES = {
    "T not quadratic": (
        ["--T", "1/2*dq^2 + dq", "--V", "0", "--fric", "0", "--state", "q dq"],
        1,
        ["kinetic energy T must be quadratic", "dq"],
    ),
    "V with velocity": (
        ["--T", "dq^2", "--V", "dq", "--fric", "0", "--state", "q dq"],
        1,
        ["V must not depend on the velocities"],
    ),
    "fric count": (
        ["--T", "dq^2", "--V", "0", "--fric", "a", "--fric", "b", "--state", "q dq"],
        1,
        ["expected 1 entry", "got 2"],
    ),
    "odd state": (["--T", "dq^2", "--V", "0", "--fric", "0", "--state", "q dq r"], 1, ["even number"]),
    "bad state name": (
        ["--T", "dq^2", "--V", "0", "--fric", "0", "--state", "a;b dq"],
        1,
        ["'a;b' is not a plain identifier"],
    ),
    "parse error": (
        ["--T", "1/2*dq^2 +", "--V", "0", "--fric", "0", "--state", "q dq"],
        1,
        ["T: cannot parse '1/2*dq^2 +'"],
    ),
    "unknown function": (
        ["--T", "foo(dq)", "--V", "0", "--fric", "0", "--state", "q dq"],
        1,
        ["unknown function 'foo'"],
    ),
    "hostile": (
        ["--T", "__import__('os').system('touch MARK')", "--V", "0", "--fric", "0", "--state", "q dq"],
        1,
        ["not allowed"],
    ),
    "singular": (
        ["--T", "1/2*(dq1 + dq2)^2", "--V", "0", "--fric", "0", "--fric", "0", "--state", "q1 q2 dq1 dq2"],
        1,
        ["singular"],
    ),
    "sign friction": (
        ["--T", "dq^2", "--V", "0", "--fric", "sign(dq)", "--state", "q dq"],
        1,
        ["DiracDelta", "tanh(k*dq)"],
    ),
    "param text": (INLINE + ["--param", "m"], 2, ["--param 'm': expected NAME=NUMBER"]),
    "param value": (INLINE + ["--param", "m=abc"], 2, ["is not a number"]),
    "param inf": (INLINE + ["--param", "m=inf"], 2, ["finite number"]),
    "param name": (INLINE + ["--param", "a;b=1"], 2, ["not a parameter name"]),
    "missing flag": (["--T", "dq^2", "--state", "q dq"], 2, ["missing --V, --fric"]),
    "both inputs": (["model.toml"] + INLINE, 2, ["not both"]),
    "unknown option": (["--bogus"], 2, ["No such option"]),
    "missing file": (["missing.toml"], 1, ["missing.toml: no such model file"]),
    "unknown example": (["nope"], 1, ["unknown example 'nope' (bundled examples: acrobot, ", "ur5, nlink;"]),
    "misspelt example": (["cart_pol"], 1, ["unknown example 'cart_pol'; did you mean 'cart_pole'? (bundled"]),
    "bad toml": (["bad.toml"], 1, ["bad.toml: not valid TOML"]),
    "toml wrong type": (["types.toml"], 1, ["types.toml: key 'T' must be an expression string"]),
    "toml param override unknown": (["model.toml", "--param", "zz=1"], 2, ["--param zz: the model has no parameter"]),
    "python model raises": (["raises.py"], 1, ["raises.py: running the model file failed: RuntimeError: boom"]),
    "out is a file": (["model.toml", "--out", "afile"], 1, ["afile: exists and is not a directory"]),
    "foreign file in out": (["model.toml", "--out", "foreign"], 1, ["M_fun.py: exists and was not written by sls"]),
    "name not an identifier": (["model.toml", "--name", "my robot"], 2, ["--name 'my robot': a model name is a"]),
    "name with underscore": (INLINE + ["--name", "_x"], 2, ["--name '_x': a model name is a plain identifier"]),
    "name empty": (["pendulum", "--name", ""], 2, ["--name: give the model a name"]),
    "floating base on a toml example": (["pendulum", "--floating-base"], 2, ["--floating-base goes with a URDF robot"]),
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
        label: subprocess.Popen(
            sls_command() + _arguments(label), cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
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

    from sls.cli.app import main

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
    done = subprocess.run(
        sls_command() + ["generate", "model.toml", "--out", "pkg"], cwd=tmp_path, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    from click.testing import CliRunner

    from sls.cli.app import main

    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        main, ["generate", "model.toml", "--out", "pkg", "--param", "m=2"]
    )  # regenerate in place
    assert result.exit_code == 0, result.output
    assert "m=2.0" in (tmp_path / "pkg" / "M_fun.py").read_text()


def test_internal_error_is_one_line_naming_the_input_and_version(tmp_path, monkeypatch):
    """A bug in sls is reported as such: one line with the model file, the version and where to report, exit 70."""
    from click.testing import CliRunner

    import sls.cli.app
    from sls import __version__

    def broken(*args, **kwargs):
        raise KeyError("pieces\nof a bug")

    (tmp_path / "model.toml").write_text(GOOD_TOML)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SLS_TRACEBACK", raising=False)
    monkeypatch.setattr(sls.cli.app, "generate", broken)
    result = CliRunner().invoke(sls.cli.app.main, ["generate", "model.toml", "--out", "pkg", "-q"])
    assert result.exit_code == sls.cli.app.INTERNAL_ERROR == 70
    assert result.stderr == (
        f"error: internal error in sls {__version__} running sls generate on model.toml (a bug in sls, not a mistake "
        "in your input): KeyError: 'pieces\\nof a bug'; please report it to the sls issue tracker with model.toml and "
        "this line (--verbose or SLS_TRACEBACK=1 shows the traceback)\n"
    )
    assert not (tmp_path / "pkg").exists()
    verbose = CliRunner().invoke(sls.cli.app.main, ["generate", "model.toml", "--out", "pkg", "-q", "--verbose"])
    assert verbose.exit_code == 70
    assert verbose.stderr.startswith("Traceback (most recent call last):")
    assert verbose.stderr.splitlines()[-1].startswith(
        f"error: internal error in sls {__version__} running sls generate on model.toml"
    )
    inline = CliRunner().invoke(
        sls.cli.app.main, ["generate", "--T", "1/2*dq^2", "--V", "0", "--fric", "0", "--state", "q dq", "-q"]
    )
    assert "running sls generate on the inline model" in inline.stderr
    # a user's mistake stays an ordinary error line
    (tmp_path / "bad.toml").write_text(GOOD_TOML.replace("state", "stat"))
    user = CliRunner().invoke(sls.cli.app.main, ["generate", "bad.toml", "--out", "pkg", "-q"])
    assert user.exit_code == 1 and user.stderr.startswith("error: bad.toml: ") and "internal" not in user.stderr


# ====================================================================================================
# the new-user walk: every mistake one line through the real command, never a traceback (was test_new_user.py)


SPHERICAL = (
    'state = ["th", "ph", "dth", "dph"]\nT = "1/2*m*l^2*(dth^2 + sin(th)^2*dph^2)"\nV = "m*g*l*cos(th)"\nfric = 0\n'
    "[params]\nm = 1.0\nl = 1.0\ng = 9.81\n"
)
ROOT_WELL = 'state = ["q", "dq"]\nT = "1/2*dq^2"\nV = "q - 2*sqrt(q)"\nfric = 0\ninputs = ["F"]\nforces = ["F"]\n'
INTERLEAVED = (
    'state = ["x", "v", "th", "w"]\nT = "1/2*(mc + mp)*v^2 + mp*l*v*w*cos(th) + 1/2*mp*l^2*w^2"\n'
    'V = "mp*g*l*cos(th)"\nfric = 0\n[params]\nmc = 1.0\nmp = 0.1\nl = 0.5\ng = 9.81\n'
)
MISSPELT = INTERLEAVED.replace('"x", "v", "th", "w"', '"x", "th", "v", "w"').replace("mp*g*l", "mpp*g*l")
SINGULAR = 'state = ["a", "b", "da", "db"]\nT = "1/2*(da + db)^2"\nV = "0"\nfric = [0, 0]\n'

PROGRESS = re.compile(r"^(generating \S+|simulating): \d+%")
#: label → (arguments, expected exit code, a piece of the single stderr line or None for a clean run)
MISTAKES = {
    "mass negative": (
        ["lqr", "cp", "--x-eq", "0 0 0 0", "--u-eq", "0", "--param", "mc=-1"],
        1,
        "error: qddot_fun with mc=-1",
    ),
    "singular x_eq": (["lqr", "sph", "--x-eq", "0 0 0 0", "--u-eq", "0 0"], 1, "at x = [th=0, ph=0, dth=0, dph=0]"),
    "singular x0": (
        ["simulate", "sph", "--x0", "0 0 0 0", "--t-end", "1"],
        1,
        "error: the simulation stopped at t = 0: qddot_fun: the mass matrix",
    ),
    "domain error lqr": (
        ["lqr", "root", "--x-eq", "-1 0"],
        1,
        "error: tau_fun is not defined at x = [q=-1, dq=0]: math domain error",
    ),
    "domain error simulate": (["simulate", "root", "--x0", "0.5 -5", "--t-end", "5"], 1, "is not defined at x = [q="),
    "csv into a missing folder": (
        ["simulate", "cp", "--x0", "0 0.1 0 0", "--t-end", "1", "--csv", "designs/run.csv"],
        1,
        "error: --csv designs/run.csv: the folder designs does not exist",
    ),
    "plot into a missing folder": (
        ["simulate", "cp", "--x0", "0 0.1 0 0", "--t-end", "1", "--plot", "figs/run.png"],
        1,
        "error: --plot figs/run.png: the folder figs does not exist",
    ),
    "nan parameter": (["lqr", "cp", "--x-eq", "0 0 0 0", "--param", "mp=nan"], 2, "must be a finite number"),
    "interleaved state": (
        ["generate", "interleaved.toml", "--out", "il"],
        1,
        "error: interleaved.toml: kinetic energy T must be quadratic",
    ),
    "singular model file": (
        ["generate", "singular.toml", "--out", "sg"],
        1,
        "error: singular.toml: the mass matrix M = d2T/ddq2 is singular",
    ),
    "out is the current folder": (["generate", "pendulum", "--out", "."], 0, None),
    "misspelt parameter": (
        ["generate", "misspelt.toml", "--out", "ms"],
        0,
        "warning: 'mpp' has no value among the model's parameters",
    ),
}


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    folder = tmp_path_factory.mktemp("newuser")
    for name, text in (
        ("sph.toml", SPHERICAL),
        ("root.toml", ROOT_WELL),
        ("interleaved.toml", INTERLEAVED),
        ("misspelt.toml", MISSPELT),
        ("singular.toml", SINGULAR),
    ):
        (folder / name).write_text(text)
    setup = [
        ["generate", "cart_pole", "--out", "cp"],
        ["generate", "sph.toml", "--out", "sph"],
        ["generate", "root.toml", "--out", "root"],
    ]
    env = sls_env()
    starting = [
        subprocess.Popen(
            sls_command() + args, cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        for args in setup
    ]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in starting]
    processes = {
        label: subprocess.Popen(
            sls_command() + args,
            cwd=folder / "here" if label == "out is the current folder" else folder,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for label, (args, _, _) in MISTAKES.items()
        if label != "out is the current folder" or (folder / "here").mkdir() is None
    }
    done = {label: (p.wait(timeout=300), p.stdout.read(), p.stderr.read()) for label, p in processes.items()}
    return folder, results, done


def test_the_packages_generate(walk):
    _, results, _ = walk
    assert all(code == 0 and "Traceback" not in stderr for code, stderr in results), results


@pytest.mark.parametrize("label", MISTAKES)
def test_every_mistake_is_one_line_never_a_traceback(walk, label):
    folder, _, done = walk
    if label == "plot into a missing folder":
        pytest.importorskip("matplotlib")  # without it the one line says so first
    code, stdout, stderr = done[label]
    stderr = "".join(
        line for line in stderr.splitlines(True) if not PROGRESS.match(line)
    )  # a slow machine: plain progress
    _, expected_code, piece = MISTAKES[label]
    assert "Traceback" not in stderr + stdout
    assert code == expected_code, stderr
    if piece is None:
        assert stderr == ""
    else:
        lines = stderr.strip().splitlines()
        assert len(lines) == 1 and piece in lines[0], stderr
    assert not list(Path(folder).glob("designs")) and not list(Path(folder).glob("figs"))
    if label == "out is the current folder":
        assert (folder / "here" / "qddot_fun.py").is_file()


NAME_KINDS = {
    "toml file": ["model.toml"],
    "python file": ["model.py"],
    "inline flags": ["--T", "1/2*dq^2", "--V", "0", "--fric", "0", "--state", "q dq"],
    "urdf file": ["arm.urdf"],
    "toml urdf table": ["robot.toml"],
    "bundled example": ["pendulum"],
    "bundled robot": ["ur5"],
    "bundled robot, floating base": ["ur5", "--floating-base"],
    "nlink": ["nlink", "--n", "2"],
}


@pytest.mark.parametrize("kind", NAME_KINDS)
def test_name_option_names_every_kind_of_model(tmp_path, monkeypatch, kind):
    """Finding 2 of issue 23: ``--name`` names the model whatever it was read from."""
    from click.testing import CliRunner

    from sls.cli.app import main

    data = Path(__file__).resolve().parents[1] / "data"
    (tmp_path / "model.toml").write_text(GOOD_TOML)
    (tmp_path / "model.py").write_text(
        "import sympy as sp\nq, dq = sp.symbols('q dq')\nT = dq**2 / 2\nV = 0\nfric = 0\nx = [q, dq]\n"
    )
    (tmp_path / "arm.urdf").write_text((data / "arm.urdf").read_text())
    (tmp_path / "robot.toml").write_text('[urdf]\nfile = "arm.urdf"\n')
    monkeypatch.chdir(tmp_path)
    args = ["generate", *NAME_KINDS[kind], "--functions", "M_fun", "--out", "out", "--quiet"]
    result = CliRunner().invoke(main, [*args, "--name", "my_model"])
    assert result.exit_code == 0, result.output
    text = (tmp_path / "out" / "M_fun.py").read_text()
    assert "Model ``my_model``" in text
    assert CliRunner().invoke(main, [*args, "--out", "default"]).exit_code == 0
    assert "Model ``my_model``" not in (tmp_path / "default" / "M_fun.py").read_text()


def test_bundled_robot_takes_floating_base_like_its_file(tmp_path, monkeypatch):
    """Finding 8 of issue 23: ``sls generate ur5 --floating-base`` is the bundled file's ``--floating-base``."""
    from click.testing import CliRunner

    from sls.cli.app import main

    (tmp_path / "ur5.urdf").write_text((Path(sls.__file__).parent / "examples" / "ur5.urdf").read_text())
    monkeypatch.chdir(tmp_path)
    for model, out in (("ur5", "bundled"), ("ur5.urdf", "file")):
        result = CliRunner().invoke(main, ["generate", model, "--floating-base", "--out", out, "--quiet"])
        assert result.exit_code == 0, result.output
    bundled, file = import_package(tmp_path / "bundled"), import_package(tmp_path / "file")
    assert bundled.STATE == file.STATE and len(bundled.STATE) == 25 and bundled.STATE[0] == "base_x"
    for path in sorted((tmp_path / "file").glob("*.py")):
        ours = (tmp_path / "bundled" / path.name).read_text().splitlines()
        assert ours[1:] == path.read_text().splitlines()[1:], path.name  # the first line names the source
