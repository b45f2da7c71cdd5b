"""model_from_mechanics in every target: the heavy top and the rolling disc with body-fixed speeds, written by the C
and MATLAB targets, move as KanesMethod's own right-hand side (the Python target is checked in
test_mechanics_models.py)."""

import shutil
import subprocess

import numpy as np
import pytest
from conftest import import_package
from test_mechanics_models import DISC, TOP, contact_disc, heavy_top, random_states, reference

import sls

OCTAVE = shutil.which("octave-cli") or shutil.which("octave")
COMPILER = shutil.which("cc") or shutil.which("gcc")


def systems():
    top, torque = heavy_top()
    return {
        "heavy top": (sls.model_from_mechanics(top, params=TOP, name="top", inputs=[torque]), top, TOP, [torque]),
        "rolling disc": (sls.model_from_mechanics(contact_disc(), params=DISC, name="disc"), None, DISC, []),
    }


def expected_motion(name: str, kane, params: dict, inputs: list):
    kane = kane if kane is not None else contact_disc()
    return reference(kane, kane.q, kane.u, params, inputs)


@pytest.mark.skipif(COMPILER is None, reason="no C compiler")
@pytest.mark.parametrize("name", ["heavy top", "rolling disc"])
def test_the_c_target_moves_as_kanes_method(name, tmp_path):
    model, kane, params, inputs = systems()[name]
    sls.generate(model, tmp_path / model.name, target="c")
    package = import_package(tmp_path / model.name)
    rhs = expected_motion(name, kane, params, inputs)
    rng = np.random.default_rng(2)
    for x in random_states(3, 20):
        u = rng.normal(size=package.N_INPUTS)
        expected = rhs(x, u if inputs else ())
        got = package.xdot_fun(x, u if inputs else np.zeros(package.N_INPUTS))
        assert np.abs(got - expected).max() < 1e-10 * max(1.0, np.abs(expected).max())


@pytest.mark.skipif(OCTAVE is None, reason="GNU Octave is not installed (Debian package 'octave'; .ci/run installs it)")
@pytest.mark.parametrize("name", ["heavy top", "rolling disc"])
def test_the_matlab_target_moves_as_kanes_method(name, tmp_path):
    model, kane, params, inputs = systems()[name]
    sls.generate(model, tmp_path / "m", target="matlab")
    rhs = expected_motion(name, kane, params, inputs)
    states = random_states(3, 5)
    u = np.random.default_rng(3).normal(size=(5, model.m))
    calls = " ".join(
        f"disp(mat2str(xdot_fun({np.array2string(x, separator=' ', precision=17, max_line_width=10**6)}, "
        f"{np.array2string(u[k] if inputs else np.zeros(model.m), separator=' ', precision=17)}), 17));"
        for k, x in enumerate(states)
    )
    result = subprocess.run(
        [OCTAVE, "--no-init-file", "--no-window-system", "--quiet", "--eval", "format long; " + calls],
        cwd=tmp_path / "m",
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    rows = [line for line in result.stdout.splitlines() if line.startswith("[")]
    assert len(rows) == len(states)
    for k, (x, row) in enumerate(zip(states, rows)):
        got = np.array([float(v) for v in row.strip("[]").replace(";", " ").split()])
        expected = rhs(x, u[k] if inputs else ())
        assert np.abs(got - expected).max() < 1e-10 * max(1.0, np.abs(expected).max())
