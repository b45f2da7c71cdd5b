"""The MATLAB/Octave target (``--target matlab``): ``.m`` files that GNU Octave runs and that agree with the
Python target.

Every function of every reference system (both derivation routes) and of the bundled examples is run in
Octave at random states (rows and columns), with default and overridden parameters, and compared with the
Python target to 1e-10. Octave starts once for all of them (a driver script per folder, ``cd`` and
``clear functions`` between folders); the errors (missing and unknown parameters, bad arguments, a mass
matrix that is not positive definite) run in a second launch. A static test pins the MATLAB-compatibility
rules (no Octave-only syntax, the sls header as ``%`` comments).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from conftest import METHODS, import_package
from octave import OCTAVE, run_octave
from systems import SYSTEM_NAMES, systems

import sls
from sls.backends import matlab

TOL = 1e-10
STATES = 4  # random states per system; even ones are passed as rows, odd ones as columns

octave = pytest.mark.skipif(
    OCTAVE is None,
    reason="GNU Octave is not installed (Debian package 'octave'; .ci/run installs it): the .m files are not run",
)

EXAMPLES = Path(sls.__file__).resolve().parent / "examples"
#: Bundled examples (four_bar is constrained: refused, see the last test).
EXAMPLE_FILES = [name for name in sls.readers.example_names() if name != "four_bar"]


def _struct(params: dict) -> str:
    if not params:
        return "struct()"
    return "struct(" + ", ".join(f"'{name}', {value!r}" for name, value in params.items()) + ")"


def calls(n: int, m: int) -> list:
    """``(function, MATLAB arguments, number of outputs)`` of every generated function."""
    result = [
        (name, "x", 1)
        for name in (
            "M_fun",
            "M_jac_fun",
            "C_fun",
            "C_jac_fun",
            "phi_fun",
            "phi_jac_fun",
            "fric_fun",
            "fric_jac_fun",
            "input_matrix_fun",
            "input_matrix_jac_fun",
            "T_fun",
            "V_fun",
        )
    ]
    return result + [
        ("tau_fun", "x, qdd", 1),
        ("qddot_fun", "x, u", 1),
        ("xdot_fun", "x, u", 1),
        ("linearized_model", "x, u", 2),
    ]


def write_driver(folder: Path, n: int, m: int, rows: np.ndarray, params: dict) -> None:
    """``inputs.txt`` (one row per case: x, u, qddot) and ``run_cases.m``, which writes every result to ``outputs.txt``
    (one line per output, column-major, ``%.17g``): per case, first with the defaults, then with ``params``."""
    np.savetxt(folder / "inputs.txt", rows, fmt="%.17g")
    lines = [
        "data = dlmread('inputs.txt');",
        f"data = reshape(data, [], {rows.shape[1]});",
        "f = fopen('outputs.txt', 'w');",
        f"P = {_struct(params)};",
        "for k = 1:size(data, 1)",
        f"    x = data(k, 1:{2 * n}); u = data(k, {2 * n + 1}:{2 * n + m}); qdd = data(k, {2 * n + m + 1}:end);",
        "    if mod(k, 2) == 0",
        "        x = x'; u = u'; qdd = qdd';",
        "    end",
        "    for override = 0:1",
    ]
    for name, arguments, outputs in calls(n, m):
        targets = ", ".join(f"o{j}" for j in range(outputs))
        lines.append("        if override")
        lines.append(f"            [{targets}] = {name}({arguments}, P);")
        lines.append("        else")
        lines.append(f"            [{targets}] = {name}({arguments});")
        lines.append("        end")
        for j in range(outputs):
            lines.append(f"        fprintf(f, '%.17g ', o{j}); fprintf(f, '\\n');")
    lines += ["    end", "end", "fclose(f);"]
    (folder / "run_cases.m").write_text("\n".join(lines) + "\n")


def read_outputs(folder: Path) -> list:
    return [np.array([float(v) for v in line.split()]) for line in (folder / "outputs.txt").read_text().splitlines()]


class Case:
    """One model generated for both targets, its driver, and (after the Octave run) its results."""

    def __init__(self, model, folder: Path, method: str, params: dict, rng: np.random.Generator, sample=None) -> None:
        self.folder, self.params = folder, params
        sls.generate(model, folder / "py", method=method)
        sls.generate(model, folder / "m", method=method, target="matlab")
        self.n, self.m = model.n, model.m
        states = [sample(rng) if sample else rng.uniform(-1.5, 1.5, 2 * model.n) for _ in range(STATES)]
        self.rows = np.array([np.concatenate([x, rng.normal(size=model.m), rng.normal(size=model.n)]) for x in states])
        write_driver(folder / "m", self.n, self.m, self.rows, params)

    def check(self) -> None:
        py = import_package(self.folder / "py")
        got = iter(read_outputs(self.folder / "m"))
        n, m = self.n, self.m
        for k, row in enumerate(self.rows):
            x, u, qdd = row[: 2 * n], row[2 * n : 2 * n + m], row[2 * n + m :]
            for params in ({}, self.params):
                for name, arguments, outputs in calls(n, m):
                    args = {"x": (x,), "x, u": (x, u), "x, qdd": (x, qdd)}[arguments]
                    want = getattr(py, name)(*args, **params)
                    for w in want if outputs > 1 else (want,):
                        w = np.asarray(w, dtype=float)
                        g = next(got)
                        assert g.size == w.size, f"{name}: {g.size} values, want shape {w.shape}"
                        scale = max(1.0, float(np.max(np.abs(w), initial=0.0)))
                        np.testing.assert_allclose(
                            g.reshape(w.shape, order="F"),
                            w,
                            rtol=TOL,
                            atol=TOL * scale,
                            err_msg=f"{name} at state {k}, params {params}",
                        )
        assert next(got, None) is None


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """Every reference system (both routes) and bundled example, generated and run in one Octave launch."""
    rng = np.random.default_rng(10)
    cases = {}
    for name in SYSTEM_NAMES:
        system = systems()[name]
        for method in METHODS:
            folder = tmp_path_factory.mktemp(f"m-{name}-{method}")
            cases[name, method] = Case(
                system.make_model(), folder, method, system.sample_params(rng), rng, system.sample_state
            )
    for file in EXAMPLE_FILES:
        model = sls.load_example(file)
        params = {p: float(v) * 1.25 for p, v in model.params.items() if v is not None}
        cases[file, "auto"] = Case(model, tmp_path_factory.mktemp(f"m-{file}"), "auto", params, rng)
    script = " ".join(f"cd('{case.folder / 'm'}'); clear functions; run_cases;" for case in cases.values())
    run_octave(script, tmp_path_factory.getbasetemp())
    return cases


@octave
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", SYSTEM_NAMES)
def test_every_function_agrees_with_the_python_target(name, method, results):
    results[name, method].check()


@octave
@pytest.mark.parametrize("file", EXAMPLE_FILES)
def test_bundled_examples_agree_with_the_python_target(file, results):
    results[file, "auto"].check()


def test_input_maps_are_among_the_systems():
    assert any(systems()[name].inputs for name in SYSTEM_NAMES)


@octave
def test_errors(tmp_path):
    """Missing and unknown parameters, bad arguments and a mass matrix that is not positive definite: MATLAB errors
    with an identifier and a message naming the parameter or the state."""
    model = sls.model_from_strings(
        state=["q1", "q2", "dq1", "dq2"],
        T="dq1**2/2 + k*cos(q1)*dq1*dq2 + dq2**2/2 + ell*dq1**2",
        V="g*ell*cos(q1)",
        fric="0",
        params={"k": 0.5, "g": 9.81},
        name="indefinite",
    )
    sls.generate(model, tmp_path, target="matlab")
    attempts = {
        "missing": "qddot_fun([0 0 0 0], [0 0])",
        "unknown": "M_fun([0 0 0 0], struct('ell', 1, 'zz', 2))",
        "length": "M_fun([0 0 0], struct('ell', 1))",
        "finite": "qddot_fun([0 NaN 0 0], [0; 0], struct('ell', 1))",
        "u": "linearized_model([0 0 0 0], [0 0 0], struct('ell', 1))",
        "struct": "V_fun([0 0 0 0], 3)",
        "indefinite": "qddot_fun([0 0.3 0.1 0.2], [0 0], struct('ell', 0, 'k', 2))",
        "indefinite A": "linearized_model([0; 0.3; 0.1; 0.2], [0; 0], struct('ell', 0, 'k', 2))",
    }
    script = "".join(
        f"try, {call}; disp('no error'); catch err, disp(['{key}|' err.identifier '|' err.message]); end; "
        for key, call in attempts.items()
    )
    script += "disp(qddot_fun([1.2 0.3 0.1 0.2], [0 0], struct('ell', 0.5))');"
    lines = run_octave(script, tmp_path).splitlines()
    got = dict(line.split("|", 1) for line in lines if "|" in line)
    assert (
        got["missing"]
        == "sls:missingParameter|qddot_fun: parameter ell has no default: pass it in p, e.g. struct('ell', value)"
    )
    assert got["unknown"] == "sls:unknownParameter|M_fun: unknown parameter zz (parameters: k, g, ell)"
    assert got["length"].startswith("sls:badArgument|M_fun: x must be 4 finite numbers, the state [q1, q2, dq1, dq2]")
    assert got["finite"].startswith("sls:badArgument|qddot_fun: x must be 4 finite numbers")
    assert got["u"].startswith("sls:badArgument|linearized_model: u must be 2 finite numbers")
    assert got["struct"].startswith("sls:badArgument|V_fun: p must be a struct")
    assert got["indefinite"] == (
        "sls:notPositiveDefinite|qddot_fun: the mass matrix M is singular or not positive definite at "
        "x = [q1=0, q2=0.3, dq1=0.1, dq2=0.2]"
    )
    assert got["indefinite A"].startswith("sls:notPositiveDefinite|linearized_model: the mass matrix M is singular")
    py_dir = tmp_path / "py"
    sls.generate(model, py_dir)
    want = import_package(py_dir).qddot_fun([1.2, 0.3, 0.1, 0.2], [0.0, 0.0], ell=0.5)
    np.testing.assert_allclose([float(v) for v in lines[-1].split()], want, rtol=1e-4)


#: What MATLAB does not read: Octave-only comments, operators, block ends, strings and functions.
OCTAVE_ONLY = re.compile(
    r"#|!=|\+\+|--|\+=|-=|\*=|/=|\bend(function|if|for|while|switch)\b|\"|\bprintf\(|!|\bheaviside\(|\.\^|\.\*|\./"
)


def reserved_model():
    """A model named with MATLAB keywords and builtins, the generated code's locals and a generated local's form."""
    return sls.model_from_strings(
        state=["end", "eps", "x", "M"],
        T="1/2*i*M^2 + 1/2*j*x^2 + i*j*M*x*cos(end - eps)/10 + t0_*M^2*Heaviside(end)",
        V="i*error*(1 - cos(end)) + j*error*(1 - cos(eps)) + Max(end, 0)^2",
        fric=["chol*M", "chol*x"],
        params={"i": 1.5, "j": 0.7, "error": 9.81, "chol": 0.1, "t0_": 0.05},
        name="reserved",
    )


def test_files_follow_the_matlab_compatibility_rules(tmp_path):
    """Every file: the sls header as % comments first, one function with the file's name closed by ``end``,
    no Octave-only syntax, generated locals that MATLAB accepts (start with a letter), no ``inv``."""
    model = reserved_model()
    for method in METHODS:
        folder = tmp_path / method
        sls.generate(model, folder, target="matlab", method=method)
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            [*(f"{name}.m" for name in sls.functions.NAMES), "model_info.m"]
        )
        for path in folder.iterdir():
            text = path.read_text()
            lines = text.splitlines()
            assert lines[0].startswith(matlab.MATLAB_HEADER_MARK), path.name
            code = [line for line in lines if not line.lstrip().startswith("%")]
            assert code[0] == "" or code[0].startswith("function"), path.name
            functions_ = [line for line in code if line.startswith("function")]
            assert len(functions_) == 1 and re.search(rf"= {path.stem}\(", functions_[0]), path.name
            assert code[-1] == "end", path.name
            for line in code:
                stripped = (
                    re.sub(r"'[^']*'", "''", line)
                    if "error(" in line or "struct(" in line or "fieldnames" in line
                    else line
                )
                assert not OCTAVE_ONLY.search(stripped), f"{path.name}: {line}"
                assert not re.search(r"\binv\(", line), f"{path.name}: {line}"
                assert not re.search(r"(?<![\w.])_\w", stripped), f"{path.name}: a name starting with _: {line}"
            if path.stem == "model_info":  # the names as strings, never renamed (tests/backends/test_package_shape.py)
                continue
            assert (
                "% Names MATLAB or this code already use, renamed here: M -> v_M, chol -> v_chol, end -> v_end, "
                "eps -> v_eps, "
                "error -> v_error, i -> v_i, j -> v_j, t0_ -> v_t0, x -> v_x.\n"
            ) in text


@octave
def test_reserved_names_run(tmp_path):
    """A model whose names are MATLAB keywords, builtins and the generated code's locals runs and agrees."""
    model = reserved_model()
    case = Case(model, tmp_path, "auto", {"i": 2.0, "error": 1.0, "t0_": 0.3}, np.random.default_rng(3))
    run_octave("run_cases;", tmp_path / "m")
    case.check()


def test_regeneration_keeps_user_files_and_switches_targets(tmp_path):
    model = systems()["pendulum"].make_model()
    sls.generate(model, tmp_path, target="matlab")
    (tmp_path / "my_script.m").write_text("% my own script\nqddot_fun([0 0], 0)\n")
    sls.generate(model, tmp_path)  # to the Python target: the .m files go, the user's stays
    assert sorted(p.name for p in tmp_path.glob("*.m")) == ["my_script.m"]
    sls.generate(model, tmp_path, target="matlab")
    assert not (tmp_path / "__init__.py").exists() and (tmp_path / "M_fun.m").exists()
    (tmp_path / "M_fun.m").write_text("function M = M_fun(x)\nM = 1;\nend\n")
    with pytest.raises(sls.SlsError, match="not written by sls"):
        sls.generate(model, tmp_path, target="matlab")


def test_output_is_deterministic(tmp_path):
    model = systems()["double_pendulum"].make_model()
    for k in (1, 2):
        sls.generate(model, tmp_path / str(k), target="matlab")
    for path in (tmp_path / "1").iterdir():
        assert path.read_text() == (tmp_path / "2" / path.name).read_text()


def test_constrained_models_get_the_structured_solve(tmp_path):
    """Constrained models are generated (test_matlab_constrained.py runs them in Octave against Python)."""
    sls.generate(sls.load_example("four_bar"), tmp_path, target="matlab")
    assert (tmp_path / "multipliers_fun.m").is_file() and "solve_constrained" in (tmp_path / "qddot_fun.m").read_text()


def test_cli(tmp_path):
    from click.testing import CliRunner

    from sls.cli.app import main

    result = CliRunner().invoke(
        main, ["generate", str(EXAMPLES / "pendulum.toml"), "--target", "matlab", "--out", str(tmp_path / "m")]
    )
    assert result.exit_code == 0, result.output
    assert (tmp_path / "m" / "qddot_fun.m").read_text().startswith(matlab.MATLAB_HEADER_MARK)
