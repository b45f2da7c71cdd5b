"""Model validation: every bad model is refused with one clear line, from every input, before output."""

from __future__ import annotations

import pytest
import sympy as sp

import sls
from sls.model import load_python, load_toml, model_from_strings, model_from_sympy

# (T, V, fric, state, params, expected error class, message pieces)
BAD_MODELS = {
    "T constant term": ("1/2*dq^2 + 1", "0", "0", "q dq", {}, sls.ModelError, ["kinetic energy T must be quadratic in the velocities", "offending term: 1"]),
    "T linear term": ("1/2*dq^2 + q*dq", "0", "0", "q dq", {}, sls.ModelError, ["must be quadratic", "offending term: dq*q"]),
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
    "state injection": ("1/2*dq^2", "0", "0", ["a; import os", "dq"], {}, sls.ModelError, ["'a; import os' is not a plain identifier"]),
    "state dunder": ("1/2*dq^2", "0", "0", ["__class__", "dq"], {}, sls.ModelError, ["'__class__'"]),
    "state dotted": ("1/2*dq^2", "0", "0", ["x.y", "dq"], {}, sls.ModelError, ["'x.y' is not a plain identifier"]),
    "state keyword": ("1/2*dq^2", "0", "0", ["lambda", "dq"], {}, sls.ModelError, ["'lambda' is not a plain identifier"]),
    "param is state": ("1/2*m*dq^2", "0", "0", "q dq", {"q": 1.0}, sls.ModelError, ["parameter 'q' has the same name as a state"]),
    "param nan": ("1/2*m*dq^2", "0", "0", "q dq", {"m": float("nan")}, sls.ModelError, ["parameter 'm': value must be a finite number"]),
    "param inf": ("1/2*m*dq^2", "0", "0", "q dq", {"m": float("inf")}, sls.ModelError, ["parameter 'm': value must be a finite number"]),
    "param string": ("1/2*m*dq^2", "0", "0", "q dq", {"m": "1"}, sls.ModelError, ["parameter 'm': value must be a finite number"]),
    "param bad name": ("1/2*m*dq^2", "0", "0", "q dq", {"a;b": 1.0}, sls.ModelError, ["'a;b' is not a plain identifier"]),
    "parse error": ("1/2*dq^2 +", "0", "0", "q dq", {}, sls.ExpressionError, ["T: cannot parse", "'1/2*dq^2 +'"]),
    "unknown function": ("1/2*dq^2*foo(q)", "0", "0", "q dq", {}, sls.ExpressionError, ["T: unknown function 'foo'"]),
    "empty V": ("1/2*dq^2", "", "0", "q dq", {}, sls.ExpressionError, ["V: expression is empty"]),
    "builtin as param": ("1/2*open*dq^2", "0", "0", "q dq", {}, sls.ModelError, ["'open' is a reserved name"]),
}


def _strings(case):
    T, V, fric, state, params, *_ = case
    return model_from_strings(state=state.split() if isinstance(state, str) else state, T=T, V=V, fric=fric, params=params)


def _toml_text(case) -> str:
    T, V, fric, state, params, *_ = case
    state = state.split() if isinstance(state, str) else state
    lines = [f"state = {list(state)!r}".replace("'", '"'), f"T = {T!r}".replace("'", '"'), f"V = {V!r}".replace("'", '"')]
    lines.append(f"fric = {fric!r}".replace("'", '"'))
    lines.append("[params]")
    for name, value in params.items():
        text = repr(value) if isinstance(value, str) else {float("inf"): "inf"}.get(value, "nan" if value != value else repr(value))
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


q, dq, m, l = sp.symbols("q dq m l")


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
        ((dq**2, 0, 0, [sp.Symbol("lambda"), dq]), {}, sls.ModelError, "'lambda' is not a plain identifier"),
        ((sp.Symbol("a; import os") * dq**2, 0, 0, [q, dq]), {}, sls.ModelError, "T: symbol: 'a; import os'"),
        ((m * dq**2, 0, 0, [q, dq]), {"params": {sp.Symbol("x.y"): 1}}, sls.ModelError, "'x.y' is not a plain identifier"),
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


def test_error_hierarchy():
    assert issubclass(sls.ModelError, ValueError)
    assert issubclass(sls.ModelFileError, sls.ModelError)
    assert issubclass(sls.ModelTypeError, TypeError)
    assert issubclass(sls.UsageError, ValueError)
    assert issubclass(sls.OutputError, ValueError)
    for cls in (sls.ModelError, sls.ModelTypeError, sls.UsageError, sls.OutputError, sls.ExpressionError):
        assert issubclass(cls, sls.SlsError)


def test_messages_are_one_line():
    assert str(sls.ModelError("a\nb\r\n  c")) == "a b c"


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
        ('state = ["q", "dq"]\nT = "m*dq^2"\nV = "0"\nfric = "0"\n[params]\nm = "x"\n', ["parameter 'm'", "finite number"]),
        ('state = ["q", "dq"]\nT = "m*dq^2"\nV = "0"\nfric = "0"\n[params]\nm = "1.0"\n', ["parameter 'm'", "finite number"]),
        ('state = ["q", "dq"]\nT = "m*dq^2"\nV = "0"\nfric = "0"\n[params]\nm = true\n', ["parameter 'm'", "finite number"]),
        ('state = ["q", "dq"]\nT = "m*dq^2"\nV = "0"\nfric = "0"\n[params]\nm = nan\n', ["parameter 'm'", "finite number"]),
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
        ("import sympy as sp\nq, dq = sp.symbols('q dq')\nT = dq**2\nV = 0\nfric = 0\nx = [q, dq]\nparams = 3\n", "params: expected a dict"),
        ("import sympy as sp\nq, dq = sp.symbols('q dq')\nT = dq**3\nV = 0\nfric = 0\nx = [q, dq]\n", "must be quadratic"),
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
        ({"T": "1/2*(dq1 + dq2)^2", "V": "0", "fric": "0", "state": ["q1", "q2", "dq1", "dq2"]}, ["singular", "positive definite"]),
        ({"T": "-1/2*dq^2", "V": "0", "fric": "0", "state": ["q", "dq"]}, ["not positive definite"]),
        ({"T": "1/2*m*dq^2", "V": "0", "fric": "0", "state": ["q", "dq"], "params": {"m": 0.0}}, ["singular"]),
        ({"T": "1/2*dq^2", "V": "0", "fric": ["sign(dq)"], "state": ["q", "dq"]}, ["fric_jac", "DiracDelta", "tanh(k*dq)"]),
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
        state=["q", "dq"], T=f"1/2*{name}*dq^2", V=f"{name}*9.81*(1 - cos(q))", fric=[f"0.1*{name}*dq"], params={name: 2.0}
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
    from sls.model import model_from_strings

    with pytest.raises(sls.ModelError, match="input 'F' appears in no generalized force"):
        model_from_strings(
            state=["p", "th", "dp", "dth"],
            T="1/2*(mc+mp)*dp^2 + mp*l*cos(th)*dp*dth + 1/2*mp*l^2*dth^2",
            V="mp*g*l*cos(th)",
            fric="0",
            inputs=["F", "G"],
            forces=["G", "0"],
        )
