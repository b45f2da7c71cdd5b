"""The Jacobian modules of a model too large for their entries (``Model.jacobians == "directions"``): ``M_jac_fun``,
``C_jac_fun`` and ``input_matrix_jac_fun`` evaluate ``M_dir_fun``, ``C_dir_fun`` and ``input_matrix_dir_fun`` along
every state direction (:data:`sls.functions.BY_DIRECTIONS`).

Checked on small models with the size limit lowered: against the same model's Jacobians written entry by entry (a
different derivation: one forward pass per state variable), against central differences of ``M_fun``, ``C_fun`` and
``input_matrix_fun``, and through the solves of a constrained model that call them at run time. The directional
functions are written with their batch path alone (:attr:`sls.functions.Function.batch_only`): a call on one state is
a batch of one, with the same results, shapes and errors.
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

#: A pendulum whose mass sqrt(th) is defined for th >= 0 only: its M_dir = dx_th / (2 sqrt(th)) is not, at th <= 0.
ROOTED = """
state = ["th", "dth"]
T = "1/2*sqrt(th)*dth^2"
V = "g*th"
fric = ["0"]
[params]
g = 9.81
"""

JACOBIANS = ("M_jac_fun", "C_jac_fun", "input_matrix_jac_fun")
#: Each directional function and the function whose derivative it is.
DIRECTIONAL = {"M_dir_fun": "M_fun", "C_dir_fun": "C_fun", "input_matrix_dir_fun": "input_matrix_fun"}


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


@pytest.fixture(scope="module", params=list(CASES))
def packages(request, tmp_path_factory):
    """(entries, directions) of each case, generated once for the tests below (none of them changes a package)."""
    build, options = CASES[request.param]
    folder = tmp_path_factory.mktemp("directions")
    with pytest.MonkeyPatch.context() as monkeypatch:
        return _both(build(folder), folder, monkeypatch, **options)


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
        for direct, value in DIRECTIONAL.items():
            difference = (getattr(package, value)(x + h * dx) - getattr(package, value)(x - h * dx)) / (2 * h)
            along = getattr(package, direct)(x, dx)
            assert along.shape == difference.shape
            assert np.abs(along - difference).max() <= 1e-6 * max(1.0, np.abs(difference).max())


def test_directional_functions_are_written_with_the_batch_path_alone(packages):
    entries, directions = packages
    assert {f.name for f in functions.FUNCTIONS + functions.DIRECTIONAL_FUNCTIONS if f.batch_only} == set(DIRECTIONAL)
    folder = Path(directions.__file__).parent
    for direct, value in DIRECTIONAL.items():
        text = (folder / f"{direct}.py").read_text()
        # the scalar path: Python floats unpacked from the checked values, math functions, its own error branch
        assert "_values is not None" not in text and "import math" not in text
        assert "_runtime.undefined(" in text and "_runtime.undefined_batch(" in text  # one state, then a batch
        assert "_values is not None" in (folder / f"{value}.py").read_text()  # the others keep theirs
    assert "_values is not None" in (Path(entries.__file__).parent / "M_jac_fun.py").read_text()


def test_a_directional_call_on_one_state_is_a_batch_of_one(packages):
    _, package = packages
    rng = np.random.default_rng(11)
    states = _states(package, 5, seed=4)
    steps = rng.normal(size=states.shape)
    for direct in DIRECTIONAL:
        function = getattr(package, direct)
        batch = function(states, steps)
        scale = max(1.0, np.abs(batch).max())
        assert batch.shape[0] == len(states)
        assert direct == "input_matrix_dir_fun" or np.abs(batch).max() > 1e-3  # (Solo-12's B_u is constant)
        for x, dx, expected in zip(states, steps, batch):
            single = function(x, dx)
            assert type(single) is np.ndarray and single.shape == expected.shape
            np.testing.assert_allclose(single, expected, rtol=0, atol=1e-13 * scale)
            np.testing.assert_allclose(function(x[None], dx[None])[0], single, rtol=0, atol=1e-13 * scale)
            np.testing.assert_allclose(function(list(x), dx.tolist()), single, rtol=0, atol=0)
        # one state along several directions (broadcast), as the Jacobian modules call it
        along = function(states[0], steps)
        np.testing.assert_allclose(along[1], function(states[0], steps[1]), rtol=0, atol=1e-13 * scale)


def test_a_directional_call_refuses_bad_input_in_one_line(packages):
    _, package = packages
    x = _states(package, 1, seed=3)[0]
    dx = np.ones_like(x)
    with pytest.raises(ValueError, match="x must be finite"):
        package.C_dir_fun(np.where(np.arange(x.size) == 0, np.nan, x), dx)
    with pytest.raises(ValueError, match="dx must be finite"):
        package.C_dir_fun(x, np.where(np.arange(x.size) == 1, np.inf, dx))
    with pytest.raises(ValueError, match="dx"):
        package.M_dir_fun(x, dx[:-1])


def test_a_directional_function_fails_at_one_state_as_on_a_batch(tmp_path, monkeypatch):
    path = tmp_path / "rooted.toml"
    path.write_text(ROOTED)
    monkeypatch.setattr(functions, "DIRECTIONS_FROM", 0)
    sls.generate(load_toml(path), tmp_path / "rooted", method="graph")
    package = import_package(tmp_path / "rooted")
    dx = np.array([1.0, 0.0])
    np.testing.assert_allclose(package.M_dir_fun([4.0, 0.3], dx), [[0.25]], rtol=1e-15)  # 1 / (2 sqrt(4))
    for th in (-1.0, 0.0):  # sqrt of a negative number, division by zero
        with pytest.raises(package._runtime.DomainError, match=rf"M_dir_fun is not defined at x = \[th={th:g}, "):
            package.M_dir_fun([th, 0.3], dx)
    with pytest.raises(package._runtime.DomainError, match=r"M_dir_fun is not defined at x = \[th=-2, dth=0.5\]"):
        package.M_dir_fun([[4.0, 0.3], [-2.0, 0.5], [-3.0, 0.1]], dx)


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
