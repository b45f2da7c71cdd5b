"""The MATLAB target on constrained models (Octave): qddot_fun, multipliers_fun, contact_forces_fun, xdot_fun and
linearized_model equal the Python package's, for the bundled four-bar linkage and Solo-12 on its four feet."""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from octave import matlab_vector, needs_octave, octave_matrices

import sls
from sls.readers.urdf import load_urdf

pytestmark = needs_octave


def both(model: sls.Model, folder: Path):
    sls.generate(model, folder / "m", target="matlab")
    sls.generate(model, folder / model.name)
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(model.name)
    finally:
        sys.path.remove(str(folder))


def compare(package, folder: Path, x: np.ndarray, u: np.ndarray, contacts: bool) -> None:
    script = (
        f"x = {matlab_vector(x)}; u = {matlab_vector(u)}; "
        "disp(mat2str(qddot_fun(x, u), 17)); disp(mat2str(multipliers_fun(x, u), 17)); "
        "disp(mat2str(xdot_fun(x, u), 17)); [A, B] = linearized_model(x, u); disp(mat2str(A, 17)); "
        "disp(mat2str(B, 17));" + (" disp(mat2str(contact_forces_fun(x, u), 17));" if contacts else "")
    )
    values = octave_matrices(script, folder / "m")
    A, B = package.linearized_model(x, u)
    expected = [package.qddot_fun(x, u), package.multipliers_fun(x, u), package.xdot_fun(x, u), A, B]
    if contacts:
        expected.append(package.contact_forces_fun(x, u))
    for got, want in zip(values, expected):
        scale = max(1.0, float(np.abs(want).max()))
        assert np.abs(np.reshape(got, np.shape(want)) - want).max() <= 1e-9 * scale


def test_the_four_bar_in_matlab_is_the_python_package(tmp_path):
    package = both(sls.load_example("four_bar"), tmp_path)
    rng = np.random.default_rng(2)
    n = package.N_DOF
    x = np.concatenate([rng.uniform(-1, 1, n), rng.normal(size=n)])
    compare(package, tmp_path, x, rng.normal(size=package.N_INPUTS), contacts=False)


def test_a_robot_on_its_feet_in_matlab_is_the_python_package(tmp_path):
    pin = pytest.importorskip("pinocchio")
    robots = Path(pin.__file__).resolve().parents[4] / "share/example-robot-data/robots"
    solo = robots / "solo_description/robots/solo12.urdf"
    model = load_urdf(solo, floating_base=True, contacts=["FL_FOOT", "HR_FOOT"], name="solo_feet_matlab")
    package = both(model, tmp_path)
    rng = np.random.default_rng(3)
    peer = pin.buildModelFromUrdf(str(solo), pin.JointModelFreeFlyer())
    x = np.concatenate([pin.randomConfiguration(peer, -np.ones(19), np.ones(19)), rng.normal(size=18)])
    compare(package, tmp_path, x, rng.normal(size=package.N_INPUTS), contacts=True)
