"""The tree route's Coriolis matrix without the Christoffel tensor (``C = ½ (Ṁ + J − Jᵀ)`` plus the speeds'
gyroscopic term, :meth:`sls.derive.tree_route.TreeTerms._C`) against the Christoffel sum it replaces and against
the skew-symmetry of ``Ṁ − 2C`` with ``Ṁ`` from central differences of ``M_fun`` along the motion.

The two ``C`` come from different code paths: the Christoffel symbols from ``∂M/∂q`` (one forward pass per
coordinate over the composite-body ``M``), the new one from reverse passes through Newton–Euler's ``M v``.
"""

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import random_states

import sls
import sls.derive.tree_route as tree_route
from sls.readers.urdf import load_urdf

mujoco = pytest.importorskip("mujoco")
pin = pytest.importorskip("pinocchio")
ROBOTS = Path(pin.__file__).resolve().parents[4] / "share" / "example-robot-data" / "robots"

#: Two free bodies, one with a ball joint and a hinge below it (non-commuting speeds, two quaternion slots).
TWO_FREE = """<mujoco model="coriolis_two_free"><worldbody>
<body name="a" pos="0 0 1"><freejoint/><geom type="box" size=".2 .1 .05" mass="2"/>
  <body name="b" pos=".3 0 0"><joint type="ball"/><geom type="capsule" fromto="0 0 0 .3 .1 0" size=".05"/>
    <body name="c" pos=".3 .1 0"><joint type="hinge" axis="0 1 1"/><geom type="box" size=".1 .05 .02" pos=".1 0 0"/>
    </body></body></body>
<body name="d" pos="1 1 1"><freejoint/><geom type="ellipsoid" size=".1 .2 .3"/></body>
</worldbody></mujoco>"""

CASES = {
    "Solo-12, quaternion base": ("urdf", "solo_description/robots/solo12.urdf", True),
    "Panda, fixed base": ("urdf", "panda_description/urdf/panda.urdf", False),
    "two free bodies, a ball and a hinge": ("mjcf", TWO_FREE, False),
}


def _model(kind: str, source: str, floating: bool, folder: Path, name: str):
    if kind == "urdf":
        return load_urdf(ROBOTS / source, floating_base=floating, name=name)
    path = folder / f"{name}.xml"
    path.write_text(source)
    return sls.load_mjcf(path, name=name)


def _package(model, folder: Path, christoffel_up_to: int, monkeypatch):
    monkeypatch.setattr(tree_route, "CORIOLIS_BY_CHRISTOFFEL_UP_TO", christoffel_up_to)
    out = folder / model.name
    speeds = ["qdot_fun"] if model.kinematics is not None else []
    sls.generate(model, out, functions=["M_fun", "C_fun", *speeds])
    sys.path.insert(0, str(folder))
    try:
        return importlib.import_module(model.name)
    finally:
        sys.path.remove(str(folder))


@pytest.fixture(scope="module", params=list(CASES))
def packages(request, tmp_path_factory):
    """(package with C from ½ (Ṁ + J − Jᵀ), package with C from the Christoffel symbols) of one case, generated once
    for the tests below (none of them changes a package)."""
    kind, source, floating = CASES[request.param]
    folder = tmp_path_factory.mktemp("coriolis")
    tag = folder.name.replace("-", "_")
    with pytest.MonkeyPatch.context() as monkeypatch:
        new = _package(_model(kind, source, floating, folder, f"cor_new_{tag}"), folder, 0, monkeypatch)
        old = _package(_model(kind, source, floating, folder, f"cor_old_{tag}"), folder, 10**6, monkeypatch)
    return new, old


def _states(package, count: int, seed: int = 3) -> np.ndarray:
    return random_states(package, count, seed, 1.5)


def test_coriolis_matrix_equals_the_christoffel_sum(packages):
    new, old = packages
    x = _states(new, 200)
    C_new, C_old = new.C_fun(x), old.C_fun(x)
    scale = max(1.0, float(np.abs(C_old).max()))
    assert np.abs(C_new - C_old).max() / scale < 1e-12
    assert np.abs(C_new).max() > 1e-3  # not a zero matrix on both sides


def test_mass_matrix_rate_minus_twice_coriolis_is_skew(packages):
    new, _ = packages
    n_q = getattr(new, "N_Q", new.N_DOF)
    h = 1e-6
    for x in _states(new, 20, seed=11):
        q, v = x[:n_q], x[n_q:]
        rate = new.qdot_fun(x) if hasattr(new, "qdot_fun") else v
        M_dot = (new.M_fun(np.concatenate([q + h * rate, v])) - new.M_fun(np.concatenate([q - h * rate, v]))) / (2 * h)
        N = M_dot - 2 * new.C_fun(x)
        assert np.abs(N + N.T).max() < 1e-6 * max(1.0, float(np.abs(M_dot).max()))
