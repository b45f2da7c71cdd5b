"""Shared fixtures and helpers: generate a model into a temporary folder and import it; run the ``sls`` command.

Test files import the helpers with ``from conftest import ...`` (the tests folder is on ``sys.path``);
no test file imports another test file.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import sls

REFERENCE = Path(__file__).parent / "reference"
#: The checkout these tests belong to.
REPO = Path(__file__).resolve().parent.parent

#: A spherical pendulum (θ from the upward vertical): M = diag(m l², m l² sin²θ) is singular at θ = 0.
SPHERICAL = dict(
    state=["th", "ph", "dth", "dph"],
    T="1/2*m*l^2*(dth^2 + sin(th)^2*dph^2)",
    V="-m*g*l*cos(th)",
    fric="0",
    params={"m": 1.0, "l": 1.0, "g": 9.81},
    name="spherical",
)
_counter = itertools.count()


def import_package(path: Path):
    """Import the generated package at ``path`` under a fresh unique name."""
    name = f"_sls_test_pkg_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(
        name, Path(path) / "__init__.py", submodule_search_locations=[str(path)]
    )
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


#: Both derivation routes are checked against the same references.
METHODS = ("expanded", "graph")


def build(model: sls.Model, folder: Path, method: str = "auto"):
    """Generate ``model`` into ``folder`` (derivation route ``method``) and import it."""
    sls.generate(model, folder, method=method)
    return import_package(folder)


@pytest.fixture
def generate_package(tmp_path):
    """``generate_package(model, method="auto")`` → imported generated package (fresh folder each call)."""
    counter = itertools.count()

    def make(model: sls.Model, method: str = "auto"):
        return build(model, tmp_path / f"pkg{next(counter)}", method)

    return make


@pytest.fixture(scope="session", params=METHODS)
def system_package(request, tmp_path_factory):
    """``system_package(name)`` → the generated package of the test system ``name`` (see systems.py), built once
    per derivation route (tests using this fixture run once for each of :data:`METHODS`)."""
    from systems import systems

    cache = {}
    method = request.param

    def get(name: str):
        if name not in cache:
            cache[name] = build(
                systems()[name].make_model(), tmp_path_factory.mktemp(f"{name}-{method}") / "pkg", method
            )
        return cache[name]

    return get


# --------------------------------------------------------------------------
# the sls command as a user runs it


def sls_command() -> list[str]:
    """The console script installed with this interpreter, else this checkout's sls as a module
    (see :func:`sls_env`)."""
    found = Path(sys.executable).with_name("sls")
    return [str(found)] if found.exists() else [sys.executable, "-m", "sls"]


def sls_env() -> dict:
    """The environment for subprocesses: without PYTHONPATH when sls is installed, else pointing at this checkout."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if not Path(sys.executable).with_name("sls").exists():
        env["PYTHONPATH"] = str(REPO)
    return env


def sls_script() -> str:
    """The console script of the sls installed into this interpreter's environment (the test fails without one)."""
    name = "sls.exe" if os.name == "nt" else "sls"
    beside = Path(sys.executable).parent / name
    if beside.is_file():
        return str(beside)
    found = shutil.which("sls")
    if found is None:
        pytest.fail("the sls console script is not installed (pip install . puts it next to python)")
    return found


def run(*args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
    """``sls *args`` through the installed console script in ``cwd`` (asserting exit code 0 when ``check``)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    result = subprocess.run([sls_script(), *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=120)
    if check:
        assert result.returncode == 0, f"sls {' '.join(args)} failed ({result.returncode}):\n{result.stderr}"
    return result


def agree(got, want, what: str, tol: float = 1e-12, same_type: bool = True) -> None:
    """``got`` equals ``want`` to ``tol`` relative to the largest entry of ``want``: float64 arrays of the same
    shape (tuples entry by entry); with ``same_type`` also of the same Python type (array or float)."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), what
        for g, w in zip(got, want):
            agree(g, w, what, tol, same_type)
        return
    if same_type:
        assert type(got) is type(want), f"{what}: {type(got).__name__} != {type(want).__name__}"
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype == np.float64, f"{what}: {got.shape} != {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want), initial=0.0)))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale, err_msg=what)


def random_states(package, count: int, seed: int, spread: float) -> np.ndarray:
    """``count`` random states of a generated ``package``: coordinates uniform in ``[-spread, spread]`` (unit
    quaternions through ``package.normalize`` where the model has them), speeds standard normal."""
    rng = np.random.default_rng(seed)
    n_q, n_v = getattr(package, "N_Q", package.N_DOF), getattr(package, "N_V", package.N_DOF)
    q = rng.uniform(-spread, spread, size=(count, n_q))
    if hasattr(package, "normalize"):
        q = np.array([package.normalize(qk) for qk in q])
    return np.concatenate([q, rng.normal(size=(count, n_v))], axis=1)
