"""The Jacobian modules of a model too large for their entries (``Model.jacobians == "directions"``): ``M_jac_fun``,
``C_jac_fun`` and ``input_matrix_jac_fun`` evaluate ``M_dir_fun``, ``C_dir_fun`` and ``input_matrix_dir_fun`` along
every state direction (:data:`sls.functions.BY_DIRECTIONS`).

Checked on small models with the size limit lowered: against the same model's Jacobians written entry by entry (a
different derivation: one forward pass per state variable), against central differences of ``M_fun``, ``C_fun`` and
``input_matrix_fun``, and through the solves of a constrained model that call them at run time.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from conftest import import_package, random_states

import sls
from sls import functions
from sls.readers import load_example, load_toml
from sls.readers.urdf import load_urdf

pin = pytest.importorskip("pinocchio")
ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"

#: A cart with a pendulum driven through a state-dependent input matrix (B_u depends on q), on the graph route.
DRIVEN = """
state = ["s", "th", "ds", "dth"]
T = "1/2*(M + m)*ds^2 + m*l*cos(th)*ds*dth + 1/2*m*l^2*dth^2"
V = "m*g*l*cos(th)"
fric = ["b*ds", "c*dth*abs(dth)"]
inputs = ["f"]
forces = ["f*cos(th)", "f*l*sin(th)"]
[params]
M = 1.5
m = 0.4
l = 0.7
g = 9.81
b = 0.2
c = 0.05
"""

JACOBIANS = ("M_jac_fun", "C_jac_fun", "input_matrix_jac_fun")


def _both(model, tmp_path: Path, monkeypatch, **options) -> tuple:
    """(package with Jacobians entry by entry, package with them by directions) of ``model``."""
    sls.generate(model, tmp_path / "entries", **options)
    monkeypatch.setattr(functions, "DIRECTIONS_FROM", 0)
    sls.generate(model, tmp_path / "directions", **options)
    return import_package(tmp_path / "entries"), import_package(tmp_path / "directions")


def _solo(tmp_path: Path):
    return load_urdf(ROBOTS / "solo_description/robots/solo12.urdf", floating_base=True, name="solo_dirs")


def _driven(tmp_path: Path):
    path = tmp_path / "driven_pendulum.toml"
    path.write_text(DRIVEN)
    return load_toml(path)


def _states(package, count: int, seed: int = 2) -> np.ndarray:
    return random_states(package, count, seed, 1.2)


CASES = {
    "Solo-12, quaternion base (tree route)": (_solo, {}),
    "a driven pendulum with a state-dependent input matrix (graph route)": (_driven, {"method": "graph"}),
}


@pytest.fixture(params=list(CASES))
def packages(request, tmp_path, monkeypatch):
    build, options = CASES[request.param]
    return _both(build(tmp_path), tmp_path, monkeypatch, **options)


def test_the_package_has_the_directional_functions(packages):
    entries, directions = packages
    for name in functions.DIRECTIONAL_FUNCTION_NAMES:
        assert name in directions.__all__ and name not in entries.__all__


def test_jacobians_equal_those_written_entry_by_entry(packages):
    entries, directions = packages
    x = _states(entries, 6)
    for name in JACOBIANS:
        expected, got = getattr(entries, name)(x), getattr(directions, name)(x)
        assert got.shape == expected.shape
        assert np.abs(got - expected).max() <= 1e-12 * max(1.0, np.abs(expected).max())
        single = getattr(directions, name)(x[0])  # one state: the same as the batch's first
        np.testing.assert_allclose(single, got[0], rtol=0, atol=1e-13 * max(1.0, np.abs(expected).max()))
    assert np.abs(directions.C_jac_fun(x)).max() > 1e-3  # not zero on both sides


def test_directional_functions_equal_central_differences(packages):
    _, package = packages
    rng = np.random.default_rng(5)
    h = 1e-6
    for x in _states(package, 4, seed=9):
        dx = rng.normal(size=x.shape)
        for direct, value in (
            ("M_dir_fun", "M_fun"),
            ("C_dir_fun", "C_fun"),
            ("input_matrix_dir_fun", "input_matrix_fun"),
        ):
            difference = (getattr(package, value)(x + h * dx) - getattr(package, value)(x - h * dx)) / (2 * h)
            along = getattr(package, direct)(x, dx)
            assert np.abs(along - difference).max() <= 1e-6 * max(1.0, np.abs(difference).max())


def test_a_constrained_model_solves_with_jacobians_by_directions(tmp_path, monkeypatch):
    entries, directions = _both(load_example("four_bar"), tmp_path, monkeypatch, method="graph")
    assert "C_dir_fun" in directions.__all__
    x = np.array([0.3, 0.0, 0.0, 0.4, 0.0, 0.0])
    u = np.zeros(len(directions.INPUTS))
    A, B = entries.linearized_model(x, u)
    A_dir, B_dir = directions.linearized_model(x, u)
    np.testing.assert_allclose(A_dir, A, rtol=0, atol=1e-12 * max(1.0, np.abs(A).max()))
    np.testing.assert_allclose(B_dir, B, rtol=0, atol=1e-12 * max(1.0, np.abs(B).max()))


def test_which_models_and_targets_write_jacobians_by_directions():
    small = load_example("double_pendulum")
    assert not functions.jacobians_by_directions(small)
    assert sls.backends.backend("python").jacobians_by_directions
    assert not sls.backends.backend("c").jacobians_by_directions
    tiago = load_urdf(ROBOTS / "tiago_description/robots/tiago_dual.urdf")
    assert tiago.n * tiago.n * len(tiago.state) >= functions.DIRECTIONS_FROM
    assert functions.jacobians_by_directions(tiago)
