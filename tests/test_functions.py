"""The registry of generated functions (sls/functions.py) and choosing what to generate:
``sls generate --functions``, a model file's ``functions = [...]`` and ``generate(..., functions=...)``."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import import_package

import sls
import sls.backends.render
from sls import functions
from sls.cli.app import main
from sls.errors import ModelError, ModelFileError
from sls.generate import choose, progress_steps
from sls.readers import load_example, load_toml

#: A subset with a dependency (xdot_fun -> qddot_fun) and functions of three kinds.
CHOSEN = ["xdot_fun", "tau_fun", "linearized_model", "M_jac_fun"]
PULLED = {"xdot_fun", "tau_fun", "linearized_model", "M_jac_fun", "qddot_fun"}
_FINGERPRINT = re.compile(r"(fingerprint |FINGERPRINT = \")[0-9a-f]{16}")


def _equal(a: object, b: object) -> None:
    """Equal results (arrays, or tuples of arrays as linearized_model's (A, B)), bit for bit."""
    for left, right in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,), strict=True):
        np.testing.assert_array_equal(left, right)


def _same_but_fingerprint(a: str, b: str) -> bool:
    return _FINGERPRINT.sub(r"\1#", a) == _FINGERPRINT.sub(r"\1#", b)


# -- the registry -------------------------------------------------------------


def test_dependencies_are_pulled_in():
    model = load_example("double_pendulum")
    assert set(functions.names(choose(model, CHOSEN))) == PULLED
    assert functions.names(choose(model, ["xdot_fun"])) == ("qddot_fun", "xdot_fun")  # registry order
    constrained = load_example("four_bar")
    chosen = set(functions.names(choose(constrained, ["multipliers_fun"])))
    assert chosen == {"multipliers_fun", *functions.CONSTRAINED_NEEDS}


def test_the_arrays_derived_are_those_the_chosen_functions_evaluate():
    model = load_example("double_pendulum")
    assert functions.arrays(choose(model, ["qddot_fun"])) == ("M", "rhs")
    assert functions.arrays(choose(model, ["xdot_fun", "T_fun"])) == ("M", "T", "rhs")
    assert set(functions.arrays(choose(model, ["linearized_model"]))) == {
        "M",
        "rhs",
        "dM",
        "drhs",
        "B_u",
        "residual_jac",
    }


def test_the_full_set_is_no_choice():
    model = load_example("double_pendulum")
    assert choose(model, list(functions.NAMES)).functions is None
    assert choose(model, ",".join(reversed(functions.NAMES))).functions is None
    assert not functions.is_subset(model)
    assert functions.is_subset(choose(model, ["M_fun"]))


def test_unknown_names_are_refused_with_the_valid_ones():
    model = load_example("double_pendulum")
    with pytest.raises(
        ModelError,
        match=r"functions: unknown function 'M_func'; the generated functions are: M_fun, M_jac_fun, .*xdot_fun$",
    ):
        choose(model, ["qddot_fun", "M_func"])
    with pytest.raises(ModelError, match="unknown function 'multipliers_fun'"):  # only constrained models have it
        choose(model, ["multipliers_fun"])
    with pytest.raises(ModelError, match="name at least one function"):
        choose(model, [])


def test_the_fingerprint_includes_a_choice_and_progress_counts_it():
    model = load_example("double_pendulum")
    full = sls.backends.render.fingerprint(model)
    assert sls.backends.render.fingerprint(choose(model, list(functions.NAMES))) == full
    assert sls.backends.render.fingerprint(choose(model, ["M_fun"])) != full
    assert sls.backends.render.fingerprint(choose(model, ["M_fun"])) != sls.backends.render.fingerprint(
        choose(model, ["C_fun"])
    )
    assert progress_steps(choose(model, ["xdot_fun"])) == progress_steps(model) - (len(functions.NAMES) - 2)


def test_derive_is_asked_for_the_arrays_only(monkeypatch, tmp_path):
    asked = []
    original = sls.derive.derive

    def spy(model, simplify=False, method="auto", wanted=None):
        asked.append(wanted)
        return original(model, simplify, method)

    monkeypatch.setattr(sls.derive, "derive", spy)
    model = load_example("pendulum")
    sls.generate(model, tmp_path / "a", functions=["qddot_fun"])
    sls.generate(model, tmp_path / "b")
    assert asked == [("M", "rhs"), None]


# -- each target: a subset agrees with the full generation -------------------------------------------


@pytest.mark.parametrize("method", ["expanded", "graph"])
def test_python_subset_agrees_with_the_full_package(tmp_path, method):
    model = load_example("double_pendulum")
    sls.generate(model, tmp_path / "full", method=method)
    report = sls.generate(model, tmp_path / "part", method=method, functions=CHOSEN)
    assert sorted(report.files) == sorted([f"{n}.py" for n in PULLED] + ["__init__.py", "_runtime.py"])
    for name in PULLED:
        assert _same_but_fingerprint(
            (tmp_path / "part" / f"{name}.py").read_text(), (tmp_path / "full" / f"{name}.py").read_text()
        )
    full, part = import_package(tmp_path / "full"), import_package(tmp_path / "part")
    assert sorted(part.__all__) == sorted(PULLED)
    assert not hasattr(part, "M_fun")
    rng = np.random.default_rng(1)
    x, u = rng.normal(size=(5, 4)), rng.normal(size=(5, 2))
    for name in ("xdot_fun", "linearized_model", "qddot_fun"):
        _equal(getattr(part, name)(x, u), getattr(full, name)(x, u))
    np.testing.assert_array_equal(part.tau_fun(x, u), full.tau_fun(x, u))
    np.testing.assert_array_equal(part.M_jac_fun(x), full.M_jac_fun(x))


def test_constrained_subset_agrees_with_the_full_package(tmp_path):
    model = load_example("four_bar")
    sls.generate(model, tmp_path / "full")
    sls.generate(model, tmp_path / "part", functions=["multipliers_fun"])
    full, part = import_package(tmp_path / "full"), import_package(tmp_path / "part")
    assert "qddot_fun" not in part.__all__ and "multipliers_fun" in part.__all__
    x = np.array([0.3, 0.0, 0.0, 0.0, 0.0, 0.0])[: 2 * model.n]
    u = np.zeros(model.m)
    np.testing.assert_array_equal(part.multipliers_fun(x, u), full.multipliers_fun(x, u))


@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None, reason="no C compiler")
def test_c_subset_agrees_with_the_full_package(tmp_path):
    model = load_example("double_pendulum")
    sls.generate(model, tmp_path / "full", target="c")
    sls.generate(model, tmp_path / "part", target="c", functions=CHOSEN)
    header = (tmp_path / "part" / "c" / "double_pendulum.h").read_text()
    declared = set(re.findall(r"^int double_pendulum_(\w+?)(?:_batch)?\(", header, re.MULTILINE))
    assert declared == PULLED
    assert "double_pendulum_qddot_fun_batch" in header  # the batch path of a pulled-in solve
    full, part = import_package(tmp_path / "full"), import_package(tmp_path / "part")
    assert sorted(part.__all__) == sorted(PULLED)
    rng = np.random.default_rng(2)
    x, u = rng.normal(size=(40, 4)), rng.normal(size=(40, 2))  # a batch: the compiled batch loop
    for name in ("xdot_fun", "linearized_model", "qddot_fun", "tau_fun"):
        _equal(getattr(part, name)(x, u), getattr(full, name)(x, u))
        _equal(getattr(part, name)(x[0], u[0]), getattr(full, name)(x[0], u[0]))
    np.testing.assert_array_equal(part.M_jac_fun(x), full.M_jac_fun(x))


def test_matlab_subset_is_the_full_generation_s_files(tmp_path):
    model = load_example("double_pendulum")
    sls.generate(model, tmp_path / "full", target="matlab")
    report = sls.generate(model, tmp_path / "part", target="matlab", functions=CHOSEN)
    assert sorted(report.files) == sorted([*(f"{n}.m" for n in PULLED), "model_info.m"])
    for name in PULLED:
        assert _same_but_fingerprint(
            (tmp_path / "part" / f"{name}.m").read_text(), (tmp_path / "full" / f"{name}.m").read_text()
        )


def test_a_smaller_choice_removes_the_functions_left_out(tmp_path):
    model = load_example("pendulum")
    sls.generate(model, tmp_path)
    sls.generate(model, tmp_path, functions=["M_fun"])
    assert sorted(p.name for p in tmp_path.glob("*.py")) == ["M_fun.py", "__init__.py", "_runtime.py"]


# -- the three ways to choose -------------------------------------------------------------------------


def test_cli_functions_option(tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["generate", "pendulum", "--functions", "xdot_fun, M_fun", "--out", str(out), "-q"]
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.glob("*.py")) == [
        "M_fun.py",
        "__init__.py",
        "_runtime.py",
        "qddot_fun.py",
        "xdot_fun.py",
    ]


def test_cli_refuses_unknown_functions_in_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    result = subprocess.run(
        [sys.executable, "-m", "sls", "generate", "pendulum", "--functions", "qddot_fun,jacobian", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(
        "error: --functions: unknown function 'jacobian'; "
    )
    assert "M_fun, M_jac_fun" in result.stderr and "Traceback" not in result.stderr
    assert not out.exists()


def test_model_file_functions_key(tmp_path):
    text = (Path(sls.__file__).parent / "examples" / "pendulum.toml").read_text()
    path = tmp_path / "pendulum.toml"
    path.write_text('functions = ["linearized_model"]\n' + text)
    model = load_toml(path)
    assert model.functions == ("linearized_model",)
    report = sls.generate(model, tmp_path / "out")
    assert sorted(report.files) == ["__init__.py", "_runtime.py", "linearized_model.py"]
    # the command line's choice wins over the file's
    result = CliRunner().invoke(
        main, ["generate", str(path), "--functions", "M_fun", "--out", str(tmp_path / "cli"), "-q"]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "cli" / "M_fun.py").exists() and not (tmp_path / "cli" / "linearized_model.py").exists()


@pytest.mark.parametrize(
    "value, message",
    [
        ('["qddot_fun", "Mfun"]', "key 'functions': unknown function 'Mfun'; the generated functions are: M_fun"),
        ('"qddot_fun"', "key 'functions' must be a list of generated function names"),
        ("[1]", "key 'functions' must be a list of generated function names"),
    ],
)
def test_model_file_functions_errors_name_the_file(tmp_path, value, message):
    text = (Path(sls.__file__).parent / "examples" / "pendulum.toml").read_text()
    path = tmp_path / "pendulum.toml"
    path.write_text(f"functions = {value}\n" + text)
    with pytest.raises(ModelFileError, match=re.escape(f"{path}: {message}")):
        load_toml(path)


def test_api_functions_argument(tmp_path):
    import sympy

    q, dq = sympy.symbols("q dq")
    out = sls.sym_lagrangian_solver(dq**2 / 2, -sympy.cos(q), 0, [q, dq], tmp_path / "p", functions=["qddot_fun"])
    package = import_package(out)
    assert package.__all__ == ["qddot_fun"]
    assert package.qddot_fun([0.5, 0.0], [0.0])[0] == pytest.approx(-np.sin(0.5))
    with pytest.raises(ModelError, match="unknown function 'qdd'"):
        sls.generate(load_example("pendulum"), tmp_path / "q", functions=["qdd"])
    assert not (tmp_path / "q").exists()
