"""The three ways to give a model produce the same generated package.

TOML file, inline strings (``sls.model_from_strings`` and the CLI flags) and a
Python model file (``sls.load_python``) / the API (``sls.sym_lagrangian_solver``)
must give byte-identical modules, except the first header line, which names
the source.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

import sls
from sls.cli import main

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
        "strings": dict(state=["q", "dq"], T="1/2*m*l^2*dq^2", V="m*g*l*(1 - cos(q))", fric=["b*dq"], params={"m": 1.0, "l": 0.5, "g": 9.81, "b": 0.1}),
        "python": """\
            import sympy as sp

            q, dq, m, l, g, b = sp.symbols("q dq m l g b")
            T = sp.Rational(1, 2) * m * l**2 * dq**2
            V = m * g * l * (1 - sp.cos(q))
            fric = [b * dq]
            x = [q, dq]
            params = {m: 1.0, l: 0.5, g: 9.81, b: 0.1}
            """,
        "flags": ["--T", "1/2*m*l^2*dq^2", "--V", "m*g*l*(1 - cos(q))", "--fric", "b*dq", "--x", "q dq",
                  "--param", "m=1.0", "--param", "l=0.5", "--param", "g=9.81", "--param", "b=0.1"],
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
            T = sp.Rational(1, 2) * (mc + mp) * ds**2 + mp * l * ds * dth * sp.cos(th) + sp.Rational(1, 2) * mp * l**2 * dth**2
            V = mp * g * l * sp.cos(th)
            fric = sp.Matrix([c * sp.tanh(k * ds), b * dth])
            x = sp.Matrix([s, th, ds, dth])
            inputs = [F]
            forces = [F, 0]
            params = {"mc": 1.0, "mp": 0.3, "l": 0.6, "g": 9.81, "c": 0.4, "k": 20.0, "b": 0.05}
            """,
        "flags": ["--T", "1/2*(mc + mp)*ds^2 + mp*l*ds*dth*cos(th) + 1/2*mp*l^2*dth^2", "--V", "mp*g*l*cos(th)",
                  "--fric", "c*tanh(k*ds)", "--fric", "b*dth", "--x", "s th ds dth", "--input", "F", "--force", "F", "--force", "0",
                  "--param", "mc=1.0", "--param", "mp=0.3", "--param", "l=0.6", "--param", "g=9.81", "--param", "c=0.4",
                  "--param", "k=20.0", "--param", "b=0.05"],
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
        namespace["T"], namespace["V"], namespace["fric"], namespace["x"], tmp_path / "out_api", namespace["params"],
        inputs=namespace.get("inputs"), forces=namespace.get("forces"), name="model",
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["generate", *spec["flags"], "--out", "out_cli", "--quiet"])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, ["generate", str(toml_file), "--out", "out_cli_toml", "--quiet"])
    assert result.exit_code == 0, result.output

    outputs = {way: read_package(tmp_path / f"out_{way}") for way in ("toml", "strings", "python", "api", "cli", "cli_toml")}
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
    model = sls.model_from_strings(state=["q", "dq"], T="1/2*m*dq^2", V="k*q^2/2", fric="0", params={"m": 2, "unused": 1.0})
    assert model.params == {"m": 2.0, "unused": 1.0, "k": None}
    assert model.unused_params == ("unused",)


def test_bundled_examples_load():
    names = sls.model.example_names()
    assert {"pendulum", "double_pendulum", "two_link_arm"} <= set(names)
    for name in names:
        model = sls.load_example(name)
        assert model.name == name and model.n >= 1
