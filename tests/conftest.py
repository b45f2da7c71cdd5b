"""Shared fixtures: generate a model into a temporary folder and import it."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path

import pytest

import sls

REFERENCE = Path(__file__).parent / "reference"
_counter = itertools.count()


def import_package(path: Path):
    """Import the generated package at ``path`` under a fresh unique name."""
    name = f"_sls_test_pkg_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, Path(path) / "__init__.py", submodule_search_locations=[str(path)])
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
            cache[name] = build(systems()[name].make_model(), tmp_path_factory.mktemp(f"{name}-{method}") / "pkg", method)
        return cache[name]

    return get
