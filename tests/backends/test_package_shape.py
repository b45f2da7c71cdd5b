"""One package shape: ``N_Q``, ``N_V``, ``STATE`` and ``INPUTS`` in every package of every target (a MATLAB
package's in ``model_info()``), whatever the model; ``vdot_fun`` chosen by ``--functions`` wherever the package
exposes it.

The expected sizes and names are the model's own (``sls.Model``), not read back from a generated file.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import import_package
from octave import needs_octave, run_octave

import sls
from sls.errors import ModelError

#: A model in generalized speeds, small enough for every target: qdot = 2 v.
SPEEDS = {"state": ["q", "v"], "T": "1/2*m*v^2", "V": "1 - cos(q)", "fric": "0", "kinematics": ["2*v"]}


def _speeds_model():
    return sls.model_from_strings(name="speeds", params={"m": 1.5}, **SPEEDS)


MODELS = {"pendulum": lambda: sls.load_example("pendulum"), "speeds": _speeds_model}
PYTHON_SHAPED = ("python", "c", "casadi", "jax")


def _needs(target):
    if target == "casadi":
        pytest.importorskip("casadi")
    if target == "jax":
        pytest.importorskip("jax")


@pytest.mark.parametrize("target", PYTHON_SHAPED)
@pytest.mark.parametrize("kind", sorted(MODELS))
def test_every_python_package_has_the_sizes_and_names(kind, target, tmp_path):
    _needs(target)
    model = MODELS[kind]()
    sls.generate(model, tmp_path / "pkg", target=target)
    package = import_package(tmp_path / "pkg")
    assert (package.N_Q, package.N_V) == (len(model.q), len(model.dq)) == (model.n, model.n)
    assert package.STATE == tuple(s.name for s in model.state)
    assert package.INPUTS == tuple(s.name for s in model.inputs)
    assert package.N_DOF == model.n and package.N_INPUTS == model.m
    assert {"N_Q", "N_V", "STATE", "INPUTS"} <= set(dir(package))
    if kind == "speeds":  # vdot_fun: the speeds' rates, qddot_fun's other name
        assert "vdot_fun" in package.__all__
        assert _vdot(package, target) == pytest.approx(VDOT)


#: The speeds model's vdot at q = 0.3 (any v, u = 0): m vdot = S' (-dV/dq) = -2 sin(q).
VDOT = -2 * math.sin(0.3) / 1.5


def _vdot(package, target: str) -> float:
    """The package's ``vdot_fun`` at q = 0.3, v = 0.2, u = 0 (a CasADi function takes the parameters as ``p``)."""
    if target == "casadi":
        return float(package.vdot_fun([0.3, 0.2], [0.0], package.parameters()).full().ravel()[0])
    return float(np.asarray(package.vdot_fun([0.3, 0.2], [0.0]), dtype=float).ravel()[0])


@pytest.mark.parametrize("kind", sorted(MODELS))
def test_a_matlab_package_has_them_in_model_info(kind, tmp_path):
    model = MODELS[kind]()
    sls.generate(model, tmp_path, target="matlab")
    text = (tmp_path / "model_info.m").read_text()
    assert f"info.N_Q = {model.n};" in text and f"info.N_V = {model.n};" in text
    state = ", ".join(f"'{s.name}'" for s in model.state)
    assert f"info.STATE = {{{state}}};" in text
    assert "info.INPUTS = {'u1'};" in text


@needs_octave
def test_model_info_runs_in_octave(tmp_path):
    model = _speeds_model()
    sls.generate(model, tmp_path, target="matlab")
    script = (
        "i = model_info(); printf('%d %d %d %d|', i.N_DOF, i.N_Q, i.N_V, i.N_INPUTS); "
        "printf('%s,', i.STATE{:}); printf('|%s', i.INPUTS{:}); printf('|%g', i.PARAMS.m); "
        "printf('|%d\\n', numel(i.FUNCTIONS));"
    )
    out = run_octave(script, tmp_path).strip().splitlines()[-1]
    assert out == f"1 1 1 1|q,v,|u1|1.5|{len(sls.functions.names(model))}"


@pytest.mark.parametrize("target", [*PYTHON_SHAPED, "matlab"])
def test_functions_vdot_fun_where_the_package_exposes_it(target, tmp_path):
    _needs(target)
    model = _speeds_model()
    assert sls.functions.check(model, "vdot_fun") == ("qddot_fun",)
    assert sls.functions.check(model, ["vdot_fun", "xdot_fun"]) == ("qddot_fun", "xdot_fun")
    sls.generate(model, tmp_path / "pkg", target=target, functions=["vdot_fun"])
    if target == "matlab":
        assert sorted(p.name for p in (tmp_path / "pkg").iterdir()) == ["model_info.m", "qddot_fun.m"]
        return
    package = import_package(tmp_path / "pkg")
    assert _vdot(package, target) == pytest.approx(VDOT)


def test_vdot_fun_of_a_model_without_speeds_names_qddot_fun():
    with pytest.raises(ModelError, match="vdot_fun.* exists with generalized speeds only: name qddot_fun"):
        sls.functions.check(sls.load_example("pendulum"), ["vdot_fun"])
