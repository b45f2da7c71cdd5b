"""Messages a new user meets: the state order, misspelt parameters, fric = 0, file names, imports, dynamicsymbols."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import sympy as sp
from click.testing import CliRunner

import sls
from conftest import import_package
from sls.cli import main
from sls.model import load_python, load_toml, model_from_strings, model_from_sympy

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
    with pytest.raises(sls.ModelError, match=r"^.*cart\.toml: kinetic energy T must be quadratic.*did you mean the state \[x, th, v, w\]\?$"):
        load_toml(tmp_path / "cart.toml")


# --------------------------------------------------------------------------
# misspelt names become required parameters: a warning


def test_warning_lists_names_that_became_required_parameters(tmp_path):
    (tmp_path / "cart.toml").write_text('state = ["x", "th", "v", "w"]\n' + CART.replace("mp*g*l", "mpp*g*ll") + PARAMS)
    result = _invoke("generate", "cart.toml", "--out", "pkg", cwd=tmp_path)
    assert result.exit_code == 0, result.stderr
    assert "warning: 'll', 'mpp' have no value among the model's parameters and become required keyword arguments " \
           "of every generated function; did you mean 'l' for 'll', 'mp' for 'mpp'?" in result.stderr
    model = load_toml(tmp_path / "cart.toml")
    assert model.params["mpp"] is None and len(model.warnings()) == 1
    # one name, and no [params] at all: nothing to warn about
    one = model_from_strings(state=["q", "dq"], T="1/2*m*dq^2", V="k*q^2", fric="0", params={"m": 1.0})
    assert one.warnings() == ["'k' has no value among the model's parameters and becomes a required keyword argument of every generated function"]
    assert model_from_strings(state=["q", "dq"], T="1/2*m*dq^2", V="k*q^2", fric="0").warnings() == []


# --------------------------------------------------------------------------
# fric = 0 in TOML


@pytest.mark.parametrize("fric", ["0", "0.0", '"0"', '["0", "0"]', "[0, 0]"])
def test_toml_fric_zero_in_every_spelling(tmp_path, fric):
    (tmp_path / "cart.toml").write_text('state = ["x", "th", "v", "w"]\n' + CART.replace("fric = 0", f"fric = {fric}") + PARAMS)
    model = load_toml(tmp_path / "cart.toml")
    assert model.fric == (0, 0)


@pytest.mark.parametrize("fric", ["1", "true"])
def test_toml_fric_other_numbers_are_refused(tmp_path, fric):
    (tmp_path / "cart.toml").write_text('state = ["x", "th", "v", "w"]\n' + CART.replace("fric = 0", f"fric = {fric}") + PARAMS)
    with pytest.raises(sls.ModelFileError, match=r"cart\.toml: key 'fric' must be a list of n strings \(or 0 for none\)"):
        load_toml(tmp_path / "cart.toml")


# --------------------------------------------------------------------------
# every model-file error starts with the file name, also those found while generating

LATE_ERRORS = {
    "singular M": ('state = ["a", "b", "da", "db"]\nT = "1/2*(da + db)^2"\nV = "0"\nfric = 0\n', "the mass matrix M = d2T/ddq2 is singular"),
    "sign friction": ('state = ["q", "dq"]\nT = "1/2*dq^2"\nV = "0"\nfric = ["sign(dq)"]\n', "DiracDelta"),
    "name clash": ('state = ["q", "dq"]\nT = "1/2*qddot_fun*dq^2"\nV = "0"\nfric = 0\n', "also a variable of the generated code"),
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
    (tmp_path / "bad.py").write_text("import sympy as sp\na, b, da, db = sp.symbols('a b da db')\nT = (da + db)**2/2\nV = 0\nfric = 0\nx = [a, b, da, db]\n")
    with pytest.raises(sls.ModelError, match="^" + re.escape(f"{tmp_path / 'bad.py'}: the mass matrix")):
        sls.generate(load_python(tmp_path / "bad.py"), tmp_path / "pkg")


# --------------------------------------------------------------------------
# a Python model file imports modules next to it


def test_python_model_file_imports_a_module_next_to_it(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "pendulum_parts.py").write_text("import sympy as sp\nq, dq, m = sp.symbols('q dq m')\nENERGY = m*dq**2/2\n")
    (folder / "pendulum.py").write_text("from pendulum_parts import q, dq, m, ENERGY\nimport sympy as sp\nT = ENERGY\nV = m*9.81*(1 - sp.cos(q))\nfric = 0\nx = [q, dq]\nparams = {m: 2.0}\n")
    from test_readme_blocks import _env

    result = subprocess.run(
        [sys.executable, "-m", "sls", "generate", "models/pendulum.py", "--out", "pkg", "--quiet"],
        cwd=tmp_path, capture_output=True, text=True, env=_env(), timeout=120,
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
    m, l, g, b = sp.symbols("m l g b")
    T = m * l**2 / 2 * (q1.diff() ** 2 + (q1.diff() + q2.diff()) ** 2)
    V = -m * g * l * (sp.cos(q1) + sp.cos(q1 + q2))
    x = [q1, q2, q1.diff(), q2.diff()]
    model = model_from_sympy(T, V, [b * q1.diff(), 0], x, params={m: 1, l: 0.5, g: 9.81, b: 0.1}, inputs=[F], forces=[0, F])
    assert [s.name for s in model.state] == ["q1", "q2", "dq1", "dq2"] and [s.name for s in model.inputs] == ["F"]
    Q1, Q2, DQ1, DQ2, FF = sp.symbols("q1 q2 dq1 dq2 F")
    plain = model_from_sympy(
        T.xreplace({q1.diff(): DQ1, q2.diff(): DQ2}).xreplace({q1: Q1, q2: Q2}), V.xreplace({q1: Q1, q2: Q2}),
        [b * DQ1, 0], [Q1, Q2, DQ1, DQ2], params={m: 1, l: 0.5, g: 9.81, b: 0.1}, inputs=[FF], forces=[0, FF],
    )
    assert model == plain
    out = sls.sym_lagrangian_solver(T, V, [b * q1.diff(), 0], x, out_dir=tmp_path / "pkg", params={m: 1, l: 0.5, g: 9.81, b: 0.1})
    assert import_package(out).qddot_fun([0.1, 0.2, 0.0, 0.0], [0.0, 0.0]).shape == (2,)


def test_dynamicsymbols_errors():
    from sympy.physics.mechanics import dynamicsymbols

    q = dynamicsymbols("q")
    t = dynamicsymbols._t
    with pytest.raises(sls.ModelError, match=r"T: depends on the time t other than through the state \[q, dq\]"):
        model_from_sympy(q.diff() ** 2 / 2 + t * q, 0, 0, [q, q.diff()])
    with pytest.raises(sls.ModelTypeError, match="higher derivative"):
        model_from_sympy(q.diff() ** 2 / 2, 0, 0, [q, q.diff(t, 2)])
