"""Models (sls/model.py): the readers agree, every bad model is refused in one line, the messages a new user meets.

The three ways to give a model produce the same generated package: TOML file, inline strings
(``sls.model_from_strings`` and the CLI flags) and a Python model file (``sls.load_python``) / the API
(``sls.sym_lagrangian_solver``) must give byte-identical modules, except the first header line, which names
the source.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sympy as sp
from click.testing import CliRunner
from conftest import import_package, sls_env

import sls
from sls.cli.app import main
from sls.readers import load_python, load_toml, model_from_strings, model_from_sympy

MODELS = {
    "pendulum": {
        "toml": """\
            state = ["q", "dq"]
            T = "1/2*m*l^2*dq^2"
            V = "m*g*l*(1 - cos(q))"
            fric = ["b*dq"]
            [params]
            m = 1.0
            l = 0.5
            g = 9.81
            b = 0.1
            """,
        "strings": dict(
            state=["q", "dq"],
            T="1/2*m*l^2*dq^2",
            V="m*g*l*(1 - cos(q))",
            fric=["b*dq"],
            params={"m": 1.0, "l": 0.5, "g": 9.81, "b": 0.1},
        ),
        "python": """\
            import sympy as sp

            q, dq, m, l, g, b = sp.symbols("q dq m l g b")
            T = sp.Rational(1, 2) * m * l**2 * dq**2
            V = m * g * l * (1 - sp.cos(q))
            fric = [b * dq]
            x = [q, dq]
            params = {m: 1.0, l: 0.5, g: 9.81, b: 0.1}
            """,
        "flags": [
            "--T",
            "1/2*m*l^2*dq^2",
            "--V",
            "m*g*l*(1 - cos(q))",
            "--fric",
            "b*dq",
            "--state",
            "q dq",
            "--param",
            "m=1.0",
            "--param",
            "l=0.5",
            "--param",
            "g=9.81",
            "--param",
            "b=0.1",
        ],
    },
    "cart_pole": {
        "toml": """\
            state = ["s", "th", "ds", "dth"]
            T = "1/2*(mc + mp)*ds^2 + mp*l*ds*dth*cos(th) + 1/2*mp*l^2*dth^2"
            V = "mp*g*l*cos(th)"
            fric = ["c*tanh(k*ds)", "b*dth"]
            inputs = ["F"]
            forces = ["F", "0"]
            [params]
            mc = 1.0
            mp = 0.3
            l = 0.6
            g = 9.81
            c = 0.4
            k = 20.0
            b = 0.05
            """,
        "strings": dict(
            state=["s", "th", "ds", "dth"],
            T="1/2*(mc + mp)*ds^2 + mp*l*ds*dth*cos(th) + 1/2*mp*l^2*dth^2",
            V="mp*g*l*cos(th)",
            fric=["c*tanh(k*ds)", "b*dth"],
            inputs=["F"],
            forces=["F", "0"],
            params={"mc": 1.0, "mp": 0.3, "l": 0.6, "g": 9.81, "c": 0.4, "k": 20.0, "b": 0.05},
        ),
        "python": """\
            import sympy as sp

            s, th, ds, dth = sp.symbols("s th ds dth")
            mc, mp, l, g, c, k, b, F = sp.symbols("mc mp l g c k b F")
            T = (
                sp.Rational(1, 2) * (mc + mp) * ds**2
                + mp * l * ds * dth * sp.cos(th)
                + sp.Rational(1, 2) * mp * l**2 * dth**2
            )
            V = mp * g * l * sp.cos(th)
            fric = sp.Matrix([c * sp.tanh(k * ds), b * dth])
            x = sp.Matrix([s, th, ds, dth])
            inputs = [F]
            forces = [F, 0]
            params = {"mc": 1.0, "mp": 0.3, "l": 0.6, "g": 9.81, "c": 0.4, "k": 20.0, "b": 0.05}
            """,
        "flags": [
            "--T",
            "1/2*(mc + mp)*ds^2 + mp*l*ds*dth*cos(th) + 1/2*mp*l^2*dth^2",
            "--V",
            "mp*g*l*cos(th)",
            "--fric",
            "c*tanh(k*ds)",
            "--fric",
            "b*dth",
            "--state",
            "s th ds dth",
            "--input",
            "F",
            "--force",
            "F",
            "--force",
            "0",
            "--param",
            "mc=1.0",
            "--param",
            "mp=0.3",
            "--param",
            "l=0.6",
            "--param",
            "g=9.81",
            "--param",
            "c=0.4",
            "--param",
            "k=20.0",
            "--param",
            "b=0.05",
        ],
    },
}


def read_package(folder: Path) -> dict[str, str]:
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.py"))}
    assert files, f"nothing generated in {folder}"
    return files


def without_source_line(files: dict[str, str]) -> dict[str, str]:
    return {name: text.split("\n", 1)[1] for name, text in files.items()}


@pytest.mark.parametrize("name", list(MODELS))
def test_three_inputs_give_identical_modules(name, tmp_path, monkeypatch):
    spec = MODELS[name]
    # every way names the model "model" (the inline flags always do), so only the source line may differ
    (tmp_path / "toml").mkdir()
    toml_file = tmp_path / "toml" / "model.toml"
    toml_file.write_text(textwrap.dedent(spec["toml"]))
    (tmp_path / "py").mkdir()
    py_file = tmp_path / "py" / "model.py"
    py_file.write_text(textwrap.dedent(spec["python"]))

    sls.generate(sls.load_toml(toml_file), tmp_path / "out_toml")
    sls.generate(sls.model_from_strings(**spec["strings"]), tmp_path / "out_strings")
    sls.generate(sls.load_python(py_file), tmp_path / "out_python")
    namespace: dict = {}
    exec(textwrap.dedent(spec["python"]), namespace)
    sls.sym_lagrangian_solver(
        namespace["T"],
        namespace["V"],
        namespace["fric"],
        namespace["x"],
        tmp_path / "out_api",
        namespace["params"],
        inputs=namespace.get("inputs"),
        forces=namespace.get("forces"),
        name="model",
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["generate", *spec["flags"], "--out", "out_cli", "--quiet"])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, ["generate", str(toml_file), "--out", "out_cli_toml", "--quiet"])
    assert result.exit_code == 0, result.output

    outputs = {
        way: read_package(tmp_path / f"out_{way}") for way in ("toml", "strings", "python", "api", "cli", "cli_toml")
    }
    reference = outputs["toml"]
    assert reference["M_fun.py"].startswith("# Generated by sls ")
    assert "model file model.toml" in reference["M_fun.py"].splitlines()[0]
    assert "inline flags" in outputs["cli"]["M_fun.py"].splitlines()[0]
    for way, files in outputs.items():
        assert sorted(files) == sorted(reference), way
        different = [f for f in files if without_source_line(files)[f] != without_source_line(reference)[f]]
        assert not different, f"{name}: {way} differs from the TOML file in {different}"


def test_sources_differ_only_in_first_line(tmp_path):
    """The comparison above is not vacuous: the first lines do name different sources."""
    spec = MODELS["pendulum"]
    toml_file = tmp_path / "model.toml"
    toml_file.write_text(textwrap.dedent(spec["toml"]))
    sls.generate(sls.load_toml(toml_file), tmp_path / "a")
    sls.generate(sls.model_from_strings(**spec["strings"]), tmp_path / "b")
    a, b = read_package(tmp_path / "a"), read_package(tmp_path / "b")
    assert all(a[f].splitlines()[0] != b[f].splitlines()[0] for f in a)
    assert all(a[f].splitlines()[1:] == b[f].splitlines()[1:] for f in a)


def test_model_structure_from_toml():
    model = sls.load_toml("cart_pole.toml", text=textwrap.dedent(MODELS["cart_pole"]["toml"]))
    assert model.n == 2 and model.m == 1
    assert [s.name for s in model.state] == ["s", "th", "ds", "dth"]
    assert [s.name for s in model.inputs] == ["F"]
    assert not model.actuated
    assert list(model.params) == ["mc", "mp", "l", "g", "c", "k", "b"]
    assert model.unused_params == ()


def test_fully_actuated_model_gets_inputs_u1_to_un():
    model = sls.model_from_strings(**MODELS["pendulum"]["strings"])
    assert model.actuated and [u.name for u in model.inputs] == ["u1"]
    assert model.forces == model.inputs


def test_parameter_without_default_is_required_and_unused_ones_reported():
    model = sls.model_from_strings(
        state=["q", "dq"], T="1/2*m*dq^2", V="k*q^2/2", fric="0", params={"m": 2, "unused": 1.0}
    )
    assert model.params == {"m": 2.0, "unused": 1.0, "k": None}
    assert model.unused_params == ("unused",)


def test_bundled_examples_load():
    names = sls.readers.example_names()
    assert {"pendulum", "double_pendulum", "two_link_arm"} <= set(names)
    for name in names:
        model = sls.load_example(name)
        assert model.name == name and model.n >= 1


# ====================================================================================================
# validation: every bad model is refused with one clear line, from every input, before output (was test_model_errors.py)


# (T, V, fric, state, params, expected error class, message pieces)
BAD_MODELS = {
    "T constant term": (
        "1/2*dq^2 + 1",
        "0",
        "0",
        "q dq",
        {},
        sls.ModelError,
        ["kinetic energy T must be quadratic in the velocities", "offending term: 1"],
    ),
    "T linear term": (
        "1/2*dq^2 + q*dq",
        "0",
        "0",
        "q dq",
        {},
        sls.ModelError,
        ["must be quadratic", "offending term: dq*q"],
    ),
    "T cubic term": ("1/2*dq^2 + dq^3", "0", "0", "q dq", {}, sls.ModelError, ["must be quadratic", "dq**3"]),
    "T dq in sin": ("1/2*dq^2 + sin(dq)", "0", "0", "q dq", {}, sls.ModelError, ["must be quadratic", "sin(dq)"]),
    "T huge power": ("(q + dq + 1)^100", "0", "0", "q dq", {}, sls.ModelError, ["must be quadratic", "**100"]),
    "T zero": ("0", "0", "0", "q dq", {}, sls.ModelError, ["T is zero"]),
    "V with dq": ("1/2*dq^2", "q*dq", "0", "q dq", {}, sls.ModelError, ["V must not depend on the velocities", "dq"]),
    "fric length": ("1/2*dq^2", "0", ["dq", "dq"], "q dq", {}, sls.ModelError, ["fric: expected 1 entry", "got 2"]),
    "state odd": ("1/2*dq^2", "0", "0", "q dq r", {}, sls.ModelError, ["even number of names", "got 3"]),
    "state duplicate": ("1/2*dq^2", "0", "0", "q q", {}, sls.ModelError, ["duplicate names q"]),
    "state sin": ("1/2*dq^2", "0", "0", "sin dq", {}, sls.ModelError, ["'sin' is a reserved name"]),
    "state pi": ("1/2*dq^2", "0", "0", "pi dq", {}, sls.ModelError, ["'pi' is a reserved name"]),
    "state injection": (
        "1/2*dq^2",
        "0",
        "0",
        ["a; import os", "dq"],
        {},
        sls.ModelError,
        ["'a; import os' is not a plain identifier"],
    ),
    "state dunder": ("1/2*dq^2", "0", "0", ["__class__", "dq"], {}, sls.ModelError, ["'__class__'"]),
    "state dotted": ("1/2*dq^2", "0", "0", ["x.y", "dq"], {}, sls.ModelError, ["'x.y' is not a plain identifier"]),
    "state keyword": (
        "1/2*dq^2",
        "0",
        "0",
        ["lambda", "dq"],
        {},
        sls.ModelError,
        ["'lambda' is a reserved name (a Python keyword)"],
    ),
    "param is state": (
        "1/2*m*dq^2",
        "0",
        "0",
        "q dq",
        {"q": 1.0},
        sls.ModelError,
        ["parameter 'q' has the same name as a state"],
    ),
    "param nan": (
        "1/2*m*dq^2",
        "0",
        "0",
        "q dq",
        {"m": float("nan")},
        sls.ModelError,
        ["parameter 'm': value must be a finite number"],
    ),
    "param inf": (
        "1/2*m*dq^2",
        "0",
        "0",
        "q dq",
        {"m": float("inf")},
        sls.ModelError,
        ["parameter 'm': value must be a finite number"],
    ),
    "param string": (
        "1/2*m*dq^2",
        "0",
        "0",
        "q dq",
        {"m": "1"},
        sls.ModelError,
        ["parameter 'm': value must be a finite number"],
    ),
    "param bad name": (
        "1/2*m*dq^2",
        "0",
        "0",
        "q dq",
        {"a;b": 1.0},
        sls.ModelError,
        ["'a;b' is not a plain identifier"],
    ),
    "parse error": ("1/2*dq^2 +", "0", "0", "q dq", {}, sls.ExpressionError, ["T: cannot parse", "'1/2*dq^2 +'"]),
    "unknown function": ("1/2*dq^2*foo(q)", "0", "0", "q dq", {}, sls.ExpressionError, ["T: unknown function 'foo'"]),
    "empty V": ("1/2*dq^2", "", "0", "q dq", {}, sls.ExpressionError, ["V: expression is empty"]),
    "builtin as param": ("1/2*open*dq^2", "0", "0", "q dq", {}, sls.ModelError, ["'open' is a reserved name"]),
}


def _strings(case):
    T, V, fric, state, params, *_ = case
    return model_from_strings(
        state=state.split() if isinstance(state, str) else state, T=T, V=V, fric=fric, params=params
    )


def _toml_text(case) -> str:
    T, V, fric, state, params, *_ = case
    state = state.split() if isinstance(state, str) else state
    lines = [
        f"state = {list(state)!r}".replace("'", '"'),
        f"T = {T!r}".replace("'", '"'),
        f"V = {V!r}".replace("'", '"'),
    ]
    lines.append(f"fric = {fric!r}".replace("'", '"'))
    lines.append("[params]")
    for name, value in params.items():
        text = (
            repr(value)
            if isinstance(value, str)
            else {float("inf"): "inf"}.get(value, "nan" if value != value else repr(value))
        )
        lines.append(f'"{name}" = {text}'.replace("'", '"'))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("label", BAD_MODELS)
def test_bad_model_from_strings(label):
    case = BAD_MODELS[label]
    with pytest.raises(case[5]) as info:
        _strings(case)
    _check_message(info.value, case[6])


@pytest.mark.parametrize("label", BAD_MODELS)
def test_bad_model_from_toml_names_the_file(label, tmp_path):
    case = BAD_MODELS[label]
    path = tmp_path / "model.toml"
    path.write_text(_toml_text(case))
    with pytest.raises(case[5]) as info:
        load_toml(path)
    assert str(info.value).startswith(f"{path}: ")
    _check_message(info.value, case[6])


def _check_message(error, pieces):
    message = str(error)
    assert "\n" not in message
    for piece in pieces:
        assert piece in message, message
    assert isinstance(error, sls.SlsError) and isinstance(error, (ValueError, TypeError))


q, dq, m = sp.symbols("q dq m")


@pytest.mark.parametrize(
    ("args", "kwargs", "error", "piece"),
    [
        ((sp.Rational(1, 2) * dq**2 + dq, 0, 0, [q, dq]), {}, sls.ModelError, "offending term: dq"),
        ((dq**2, dq, 0, [q, dq]), {}, sls.ModelError, "V must not depend on the velocities"),
        ((dq**2, 0, [dq, dq], [q, dq]), {}, sls.ModelError, "expected 1 entry"),
        ((dq**2, 0, 0, [q, dq, m]), {}, sls.ModelError, "even number of names"),
        ((dq**2, 0, 0, [sp.Symbol("a; import os"), dq]), {}, sls.ModelError, "not a plain identifier"),
        ((dq**2, 0, 0, [sp.Symbol("__class__"), dq]), {}, sls.ModelError, "'__class__'"),
        ((dq**2, 0, 0, [sp.Symbol("x.y"), dq]), {}, sls.ModelError, "'x.y' is not a plain identifier"),
        ((dq**2, 0, 0, [sp.Symbol("sin"), dq]), {}, sls.ModelError, "'sin' is a reserved name"),
        ((dq**2, 0, 0, [sp.Symbol("lambda"), dq]), {}, sls.ModelError, "'lambda' is a reserved name (a Python"),
        ((sp.Symbol("a; import os") * dq**2, 0, 0, [q, dq]), {}, sls.ModelError, "T: symbol: 'a; import os'"),
        (
            (m * dq**2, 0, 0, [q, dq]),
            {"params": {sp.Symbol("x.y"): 1}},
            sls.ModelError,
            "'x.y' is not a plain identifier",
        ),
        ((m * dq**2, 0, 0, [q, dq]), {"params": {q: 1}}, sls.ModelError, "same name as a state"),
        ((m * dq**2, 0, 0, [q, dq]), {"params": {m: float("nan")}}, sls.ModelError, "finite number"),
        ((m * dq**2, 0, 0, [q, dq]), {"params": [1.0]}, sls.ModelTypeError, "params: expected a dict"),
        (("dq**2", 0, 0, [q, dq]), {}, sls.ModelTypeError, "got a string"),
        ((None, 0, 0, [q, dq]), {}, sls.ModelTypeError, "T: expected a sympy expression"),
        ((dq**2, 0, 0, "q dq"), {}, sls.ModelTypeError, "x: expected a list"),
        ((dq**2, 0, 0, [q + 1, dq]), {}, sls.ModelTypeError, "x: entries must be sympy symbols"),
        ((sp.I * dq**2, 0, 0, [q, dq]), {}, sls.ModelError, "not a finite real number"),
        ((sp.Function("f")(q) * dq**2, 0, 0, [q, dq]), {}, sls.ModelError, "undefined function f"),
        ((sp.MatrixSymbol("A", 1, 1)[0, 0] * dq**2, 0, 0, [q, dq]), {}, sls.ModelError, "matrix and indexed objects"),
        ((sp.IndexedBase("a")[0] * dq**2, 0, 0, [q, dq]), {}, sls.ModelError, "matrix and indexed objects"),
    ],
)
def test_python_api_errors(args, kwargs, error, piece):
    with pytest.raises(error) as info:
        model_from_sympy(*args, **kwargs)
    assert piece in str(info.value)
    assert "\n" not in str(info.value)


def test_long_offending_terms_are_shortened():
    big = sum(sp.Symbol(f"a{i}") * sp.cos(q) ** i for i in range(300)) * dq**3
    with pytest.raises(sls.ModelError) as info:
        model_from_sympy(dq**2 + big, 0, 0, [q, dq])
    assert len(str(info.value)) < 300


# --- files -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        ('state = ["q", "dq"\nT = "1"\n', ["not valid TOML", "line"]),
        ('state = ["q", "dq"]\nT = 5\nV = "0"\nfric = "0"\n', ["key 'T' must be an expression string"]),
        ('state = "q dq"\nT = "dq^2"\nV = "0"\nfric = "0"\n', ["key 'state' must be a list of strings"]),
        (
            'state = ["q", "dq"]\nT = "m*dq^2"\nV = "0"\nfric = "0"\n[params]\nm = "x"\n',
            ["parameter 'm'", "finite number"],
        ),
        (
            'state = ["q", "dq"]\nT = "m*dq^2"\nV = "0"\nfric = "0"\n[params]\nm = "1.0"\n',
            ["parameter 'm'", "finite number"],
        ),
        (
            'state = ["q", "dq"]\nT = "m*dq^2"\nV = "0"\nfric = "0"\n[params]\nm = true\n',
            ["parameter 'm'", "finite number"],
        ),
        (
            'state = ["q", "dq"]\nT = "m*dq^2"\nV = "0"\nfric = "0"\n[params]\nm = nan\n',
            ["parameter 'm'", "finite number"],
        ),
        ('state = ["q", "dq"]\nT = "m*dq^2"\nV = "0"\nfric = "0"\nparams = [1]\n', ["key 'params' must be a table"]),
        ('state = ["q", "dq"]\nT = "m*dq^2"\nV = "0"\n', ["missing key 'fric'"]),
        ('state = ["q", "dq"]\nT = "m*dq^2"\nV = "0"\nfric = "0"\nfoo = 1\n', ["unknown key 'foo'"]),
        ('state = ["q", "dq"]\nT = "m*dq^2"\nV = "0"\nfric = [["0"]]\n', ["fric[0]: expected a string"]),
        ('state = ["q", "dq"]\nT = "m*dq^2"\nV = "0"\nfric = 7\n', ["key 'fric' must be a list"]),
    ],
)
def test_toml_file_errors_name_file_and_key(tmp_path, text, pieces):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(sls.ModelError) as info:
        load_toml(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    for piece in pieces:
        assert piece in message


def test_missing_unreadable_and_directory_files(tmp_path):
    with pytest.raises(sls.ModelFileError, match="no such model file"):
        load_toml(tmp_path / "missing.toml")
    (tmp_path / "dir.toml").mkdir()
    with pytest.raises(sls.ModelFileError, match="is a directory"):
        load_toml(tmp_path / "dir.toml")
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(sls.ModelFileError, match="cannot read the model file"):
        load_toml(binary)


def test_unknown_example():
    with pytest.raises(sls.ModelFileError, match="unknown example 'nope'.*pendulum"):
        sls.load_example("nope")


@pytest.mark.parametrize(
    ("source", "piece"),
    [
        ("raise RuntimeError('boom\\nsecond line')", "running the model file failed: RuntimeError: boom second line"),
        ("import sys\nsys.exit(3)", "called exit(3)"),
        ("import sympy as sp\nq, dq = sp.symbols('q dq')\nT = dq**2\nV = 0\nfric = 0\n", "does not define 'x'"),
        (
            "import sympy as sp\nq, dq = sp.symbols('q dq')\nT = dq**2\nV = 0\nfric = 0\nx = [q, dq]\nparams = 3\n",
            "params: expected a dict",
        ),
        (
            "import sympy as sp\nq, dq = sp.symbols('q dq')\nT = dq**3\nV = 0\nfric = 0\nx = [q, dq]\n",
            "must be quadratic",
        ),
        ("def broken(:\n", "SyntaxError"),
    ],
)
def test_python_model_file_errors(tmp_path, source, piece):
    path = tmp_path / "model.py"
    path.write_text(source)
    with pytest.raises(sls.SlsError) as info:
        load_python(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and "\n" not in message
    assert piece in message


# --- checks on derived terms (before anything is written) -------------------


@pytest.mark.parametrize(
    ("kwargs", "pieces"),
    [
        (
            {"T": "1/2*(dq1 + dq2)^2", "V": "0", "fric": "0", "state": ["q1", "q2", "dq1", "dq2"]},
            ["singular", "positive definite"],
        ),
        ({"T": "-1/2*dq^2", "V": "0", "fric": "0", "state": ["q", "dq"]}, ["not positive definite"]),
        ({"T": "1/2*m*dq^2", "V": "0", "fric": "0", "state": ["q", "dq"], "params": {"m": 0.0}}, ["singular"]),
        (
            {"T": "1/2*dq^2", "V": "0", "fric": ["sign(dq)"], "state": ["q", "dq"]},
            ["fric_jac", "DiracDelta", "tanh(k*dq)"],
        ),
        ({"T": "1/2*dq^2", "V": "abs(q)", "fric": "0", "state": ["q", "dq"]}, ["phi_jac", "DiracDelta", "smooth form"]),
    ],
)
def test_derived_term_checks_refuse_before_writing(tmp_path, kwargs, pieces):
    out = tmp_path / "out"
    with pytest.raises(sls.ModelError) as info:
        sls.generate(model_from_strings(**kwargs), out)
    for piece in pieces:
        assert piece in str(info.value)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []  # no staging leftovers either


def test_unsupported_function_in_python_model_is_a_model_error(tmp_path):
    with pytest.raises(sls.ModelError, match="cannot write numeric code|derivative sympy cannot evaluate"):
        sls.sym_lagrangian_solver(dq**2, sp.besselj(0, q), 0, [q, dq], out_dir=tmp_path / "out")
    with pytest.raises(sls.ModelError, match="derivative sympy cannot evaluate"):
        sls.sym_lagrangian_solver(dq**2, sp.floor(q), 0, [q, dq], out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()


def _pendulum(name: str):
    return model_from_strings(
        state=["q", "dq"],
        T=f"1/2*{name}*dq^2",
        V=f"{name}*9.81*(1 - cos(q))",
        fric=[f"0.1*{name}*dq"],
        params={name: 2.0},
    )


@pytest.mark.parametrize("name", ["M", "rhs", "out", "values", "as_state", "solve_spd"])
def test_names_used_by_generated_code_never_give_wrong_numbers(name, tmp_path, generate_package):
    # Either the generated code keeps such a name apart from its own variables,
    # or generation refuses the model, naming the name; never silently wrong numbers.
    try:
        package = generate_package(_pendulum(name))
    except sls.ModelError as exc:
        assert f"'{name}'" in str(exc)
        return
    reference = generate_package(_pendulum("mass"))
    x, u = [0.3, 0.2], [0.5]
    assert package.qddot_fun(x, u) == pytest.approx(reference.qddot_fun(x, u))
    for got, want in zip(package.linearized_model(x, u), reference.linearized_model(x, u)):
        assert got == pytest.approx(want)
    assert package.M_fun([x, x]) == pytest.approx(reference.M_fun([x, x]))


def test_model_name_cannot_break_out_of_generated_comments(tmp_path):
    path = tmp_path / 'evil"""\nimport os\n.toml'
    path.write_text('state = ["q", "dq"]\nT = "1/2*dq^2"\nV = "0"\nfric = "0"\n')
    model = load_toml(path)
    assert "\n" not in model.name and '"' not in model.name
    assert "\n" not in model.source and '"' not in model.source


def test_declared_input_that_drives_nothing_is_refused():
    from sls.readers import model_from_strings

    with pytest.raises(sls.ModelError, match="input 'F' appears in no generalized force"):
        model_from_strings(
            state=["p", "th", "dp", "dth"],
            T="1/2*(mc+mp)*dp^2 + mp*l*cos(th)*dp*dth + 1/2*mp*l^2*dth^2",
            V="mp*g*l*cos(th)",
            fric="0",
            inputs=["F", "G"],
            forces=["G", "0"],
        )


# ====================================================================================================
# messages a new user meets: the state order, misspelt parameters, fric = 0, file names, imports, dynamicsymbols
# (was test_model_messages.py)


CART = 'T = "1/2*(mc + mp)*v^2 + mp*l*v*w*cos(th) + 1/2*mp*l^2*w^2"\nV = "mp*g*l*cos(th)"\nfric = 0\n'
PARAMS = "[params]\nmc = 1.0\nmp = 0.1\nl = 0.5\ng = 9.81\n"


def _invoke(*args, cwd: Path):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, [str(a) for a in args])
    finally:
        os.chdir(old)


# --------------------------------------------------------------------------
# the state order


@pytest.mark.parametrize(
    "state, expected",
    [
        (["x", "v", "th", "w"], "did you mean the state [x, th, v, w]?"),  # interleaved: coordinate, rate, ...
        (["v", "w", "x", "th"], "did you mean the state [x, th, v, w]?"),  # rates first
    ],
)
def test_state_order_hint(state, expected):
    with pytest.raises(sls.ModelError) as info:
        model_from_strings(
            state=state, T="1/2*(mc + mp)*v^2 + mp*l*v*w*cos(th) + 1/2*mp*l^2*w^2", V="mp*g*l*cos(th)", fric="0"
        )
    message = str(info.value)
    assert "kinetic energy T must be quadratic" in message or "V must not depend on the velocities" in message
    assert "the n coordinates first, then their n rates in the same order" in message and message.endswith(expected)


def test_no_order_hint_when_no_order_helps():
    with pytest.raises(sls.ModelError) as info:
        model_from_strings(state=["q", "dq"], T="1/2*dq^2 + dq", V="0", fric="0")
    assert "did you mean" not in str(info.value)


def test_state_order_hint_from_a_toml_file(tmp_path):
    (tmp_path / "cart.toml").write_text('state = ["x", "v", "th", "w"]\n' + CART + PARAMS)
    with pytest.raises(
        sls.ModelError,
        match=r"^.*cart\.toml: kinetic energy T must be quadratic.*did you mean the state \[x, th, v, w\]\?$",
    ):
        load_toml(tmp_path / "cart.toml")


# --------------------------------------------------------------------------
# misspelt names become required parameters: a warning


def test_warning_lists_names_that_became_required_parameters(tmp_path):
    (tmp_path / "cart.toml").write_text('state = ["x", "th", "v", "w"]\n' + CART.replace("mp*g*l", "mpp*g*ll") + PARAMS)
    result = _invoke("generate", "cart.toml", "--out", "pkg", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert (
        "warning: 'll', 'mpp' have no value among the model's parameters and become required keyword arguments "
        "of every generated function; did you mean 'l' for 'll', 'mp' for 'mpp'?" in result.stderr
    )
    model = load_toml(tmp_path / "cart.toml")
    assert model.params["mpp"] is None and len(model.warnings()) == 1
    # one name, and no [params] at all: nothing to warn about
    one = model_from_strings(state=["q", "dq"], T="1/2*m*dq^2", V="k*q^2", fric="0", params={"m": 1.0})
    assert one.warnings() == [
        "'k' has no value among the model's parameters and becomes a required keyword argument of every generated "
        "function"
    ]
    assert model_from_strings(state=["q", "dq"], T="1/2*m*dq^2", V="k*q^2", fric="0").warnings() == []


# --------------------------------------------------------------------------
# fric = 0 in TOML


@pytest.mark.parametrize("fric", ["0", "0.0", '"0"', '["0", "0"]', "[0, 0]"])
def test_toml_fric_zero_in_every_spelling(tmp_path, fric):
    (tmp_path / "cart.toml").write_text(
        'state = ["x", "th", "v", "w"]\n' + CART.replace("fric = 0", f"fric = {fric}") + PARAMS
    )
    model = load_toml(tmp_path / "cart.toml")
    assert model.fric == (0, 0)


@pytest.mark.parametrize("fric", ["1", "true"])
def test_toml_fric_other_numbers_are_refused(tmp_path, fric):
    (tmp_path / "cart.toml").write_text(
        'state = ["x", "th", "v", "w"]\n' + CART.replace("fric = 0", f"fric = {fric}") + PARAMS
    )
    with pytest.raises(
        sls.ModelFileError, match=r"cart\.toml: key 'fric' must be a list of n strings \(or 0 for none\)"
    ):
        load_toml(tmp_path / "cart.toml")


# --------------------------------------------------------------------------
# every model-file error starts with the file name, also those found while generating

LATE_ERRORS = {
    "singular M": (
        'state = ["a", "b", "da", "db"]\nT = "1/2*(da + db)^2"\nV = "0"\nfric = 0\n',
        "the mass matrix M = d2T/ddq2 is singular",
    ),
    "sign friction": ('state = ["q", "dq"]\nT = "1/2*dq^2"\nV = "0"\nfric = ["sign(dq)"]\n', "DiracDelta"),
    "name clash": (
        'state = ["q", "dq"]\nT = "1/2*qddot_fun*dq^2"\nV = "0"\nfric = 0\n',
        "also a variable of the generated code",
    ),
}


@pytest.mark.parametrize("label", LATE_ERRORS)
def test_errors_found_while_generating_name_the_model_file(tmp_path, label):
    text, piece = LATE_ERRORS[label]
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "bad.toml").write_text(text)
    result = _invoke("generate", "models/bad.toml", "--out", "pkg", cwd=tmp_path)
    assert result.exit_code == 1
    assert result.stderr.startswith("error: models/bad.toml: ") and piece in result.stderr, result.stderr
    path = tmp_path / "models" / "bad.toml"
    with pytest.raises(sls.ModelError, match="^" + re.escape(f"{path}: ")):
        sls.generate(load_toml(path), tmp_path / "pkg2")


def test_python_model_file_errors_found_while_generating_name_it(tmp_path):
    (tmp_path / "bad.py").write_text(
        "import sympy as sp\na, b, da, db = sp.symbols('a b da db')\nT = (da + db)**2/2\nV = 0\nfric = 0\n"
        "x = [a, b, da, db]\n"
    )
    with pytest.raises(sls.ModelError, match="^" + re.escape(f"{tmp_path / 'bad.py'}: the mass matrix")):
        sls.generate(load_python(tmp_path / "bad.py"), tmp_path / "pkg")


# --------------------------------------------------------------------------
# a Python model file imports modules next to it


def test_python_model_file_imports_a_module_next_to_it(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "pendulum_parts.py").write_text(
        "import sympy as sp\nq, dq, m = sp.symbols('q dq m')\nENERGY = m*dq**2/2\n"
    )
    (folder / "pendulum.py").write_text(
        "from pendulum_parts import q, dq, m, ENERGY\nimport sympy as sp\nT = ENERGY\nV = m*9.81*(1 - sp.cos(q))\n"
        "fric = 0\nx = [q, dq]\nparams = {m: 2.0}\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "sls", "generate", "models/pendulum.py", "--out", "pkg", "--quiet"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=sls_env(),
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert import_package(tmp_path / "pkg").PARAMS == {"m": 2.0}
    assert str(folder) not in sys.path
    load_python(folder / "pendulum.py")  # the API too, and it leaves sys.path as it was
    assert str(folder) not in sys.path


# --------------------------------------------------------------------------
# sympy.physics.mechanics dynamicsymbols


def test_dynamicsymbols_are_mapped_onto_plain_symbols(tmp_path):
    from sympy.physics.mechanics import dynamicsymbols

    q1, q2, F = dynamicsymbols("q1 q2 F")
    m, length, g, b = sp.symbols("m l g b")
    T = m * length**2 / 2 * (q1.diff() ** 2 + (q1.diff() + q2.diff()) ** 2)
    V = -m * g * length * (sp.cos(q1) + sp.cos(q1 + q2))
    x = [q1, q2, q1.diff(), q2.diff()]
    model = model_from_sympy(
        T, V, [b * q1.diff(), 0], x, params={m: 1, length: 0.5, g: 9.81, b: 0.1}, inputs=[F], forces=[0, F]
    )
    assert [s.name for s in model.state] == ["q1", "q2", "dq1", "dq2"] and [s.name for s in model.inputs] == ["F"]
    Q1, Q2, DQ1, DQ2, FF = sp.symbols("q1 q2 dq1 dq2 F")
    plain = model_from_sympy(
        T.xreplace({q1.diff(): DQ1, q2.diff(): DQ2}).xreplace({q1: Q1, q2: Q2}),
        V.xreplace({q1: Q1, q2: Q2}),
        [b * DQ1, 0],
        [Q1, Q2, DQ1, DQ2],
        params={m: 1, length: 0.5, g: 9.81, b: 0.1},
        inputs=[FF],
        forces=[0, FF],
    )
    assert model == plain
    out = sls.sym_lagrangian_solver(
        T, V, [b * q1.diff(), 0], x, out_dir=tmp_path / "pkg", params={m: 1, length: 0.5, g: 9.81, b: 0.1}
    )
    assert import_package(out).qddot_fun([0.1, 0.2, 0.0, 0.0], [0.0, 0.0]).shape == (2,)


def test_dynamicsymbols_errors():
    from sympy.physics.mechanics import dynamicsymbols

    q = dynamicsymbols("q")
    t = dynamicsymbols._t
    with pytest.raises(sls.ModelError, match=r"T: depends on the time t other than through the state \[q, dq\]"):
        model_from_sympy(q.diff() ** 2 / 2 + t * q, 0, 0, [q, q.diff()])
    with pytest.raises(sls.ModelTypeError, match="higher derivative"):
        model_from_sympy(q.diff() ** 2 / 2, 0, 0, [q, q.diff(t, 2)])
