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


def build(model: sls.Model, folder: Path):
    """Generate ``model`` into ``folder`` and import it."""
    sls.generate(model, folder)
    return import_package(folder)


@pytest.fixture
def generate_package(tmp_path):
    """``generate_package(model)`` → imported generated package (fresh folder each call)."""
    counter = itertools.count()

    def make(model: sls.Model):
        return build(model, tmp_path / f"pkg{next(counter)}")

    return make


@pytest.fixture(scope="session")
def system_package(tmp_path_factory):
    """``system_package(name)`` → the generated package of the test system ``name`` (see systems.py), built once."""
    from systems import systems

    cache = {}

    def get(name: str):
        if name not in cache:
            cache[name] = build(systems()[name].make_model(), tmp_path_factory.mktemp(name) / "pkg")
        return cache[name]

    return get
