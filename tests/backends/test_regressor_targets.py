"""``regressor_fun``, ``PI`` and ``PI_NAMES`` (a robot with ``inertial_params``, docs/inertial.md) in every target:
the C, JAX, CasADi and MATLAB packages equal the numpy one, single states, batches and parameters by keyword."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import import_package
from octave import matlab_vector, needs_octave, octave_matrices

import sls
from sls.readers import load_example

LINKS = ["forearm_link", "wrist_3_link"]
FUNCTIONS = ["tau_fun", "regressor_fun"]


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """UR5 with two links' parameters: the model and its numpy package."""
    model = load_example("ur5", inertial_params=LINKS)
    folder = tmp_path_factory.mktemp("numpy") / "ur5"
    sls.generate(model, folder, functions=FUNCTIONS)
    return model, import_package(folder)


def states(count: int = 4) -> tuple:
    rng = np.random.default_rng(2)
    return rng.normal(size=(count, 12)), rng.normal(size=(count, 6))


@pytest.mark.parametrize("target", ["c", "jax"])
def test_python_packages(reference, target, tmp_path):
    if target == "jax":
        pytest.importorskip("jax")
    model, numpy_package = reference
    sls.generate(model, tmp_path / "ur5", target=target, functions=FUNCTIONS)
    package = import_package(tmp_path / "ur5")
    assert package.PI_NAMES == numpy_package.PI_NAMES and np.array_equal(package.PI, numpy_package.PI)
    X, A = states()
    heavy = {"wrist_3_link_m": 2.5}
    for x, a in zip(X, A):
        Y = np.asarray(package.regressor_fun(x, a))
        np.testing.assert_allclose(Y, numpy_package.regressor_fun(x, a), rtol=1e-12, atol=1e-12)
        got = np.asarray(package.tau_fun(x, a, **heavy))
        np.testing.assert_allclose(got, numpy_package.tau_fun(x, a, **heavy), rtol=1e-12, atol=1e-12)
    batch = np.asarray(package.regressor_fun(X, A))
    assert batch.shape == (4, 6, 20)
    np.testing.assert_allclose(batch, numpy_package.regressor_fun(X, A), rtol=1e-12, atol=1e-12)


def test_casadi(reference, tmp_path):
    pytest.importorskip("casadi")
    model, numpy_package = reference
    sls.generate(model, tmp_path / "ur5", target="casadi", functions=FUNCTIONS)
    package = import_package(tmp_path / "ur5")
    assert package.PI_NAMES == numpy_package.PI_NAMES and np.array_equal(package.PI, numpy_package.PI)
    p = package.parameters(wrist_3_link_m=2.5)
    for x, a in zip(*states()):
        Y = np.asarray(package.regressor_fun(x, a, p)).reshape(6, 20)
        want = numpy_package.regressor_fun(x, a, wrist_3_link_m=2.5)
        np.testing.assert_allclose(Y, want, rtol=1e-12, atol=1e-12)


@needs_octave
def test_matlab(reference, tmp_path):
    model, numpy_package = reference
    sls.generate(model, tmp_path / "ur5", target="matlab", functions=FUNCTIONS)
    x, a = (values[0] for values in states(1))
    script = (
        f"info = model_info(); x = {matlab_vector(x)}'; a = {matlab_vector(a)}'; "
        "disp(mat2str(regressor_fun(x, a), 17)); disp(mat2str(info.PI', 17));"
    )
    Y, PI = octave_matrices(script, tmp_path / "ur5")
    np.testing.assert_allclose(Y, numpy_package.regressor_fun(x, a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(PI.ravel(), numpy_package.PI, rtol=0, atol=0)
