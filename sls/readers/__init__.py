"""Stage 1, the readers: every way in to a :class:`~sls.model.Model` (the front ends).

* :func:`model_from_strings` — expression strings (:mod:`sls.readers.strings`: TOML files, inline flags),
* :func:`model_from_mechanics` — sympy.physics.mechanics ``KanesMethod``, ``LagrangesMethod`` and ``System`` objects
  as written (:mod:`sls.readers.mechanics_models`),
* :func:`model_from_sympy` — sympy objects (:mod:`sls.readers.sympy_api`: Python model files, the Python API;
  sympy.physics.mechanics names and functions of time are mapped by :mod:`sls.readers.mechanics`),
* :func:`load_toml`, :func:`load_python` — model files (:mod:`sls.readers.files`),
* :func:`load_urdf`, :func:`load_urdf_table` — URDF robots (the package :mod:`sls.readers.urdf`),
* :func:`load_mjcf`, :func:`load_mjcf_table` — MuJoCo MJCF models (the package :mod:`sls.readers.mjcf`),
* the bundled examples (:mod:`sls.readers.examples`: :func:`example_names`, :func:`example_description`,
  :func:`load_example`, :func:`is_urdf_example`) and the n-link pendulum (:mod:`sls.readers.nlink`).

Every reader ends in :func:`sls.model.build_model`, where the structural checks live; the readers only find,
parse and convert (they import :mod:`sls.model`, never the other way round).
"""

from __future__ import annotations

from sls.readers.common import read_model_text
from sls.readers.examples import (
    DEFAULT_EXAMPLE,
    EXAMPLE_SUFFIXES,
    example_description,
    example_names,
    is_urdf_example,
    load_example,
)
from sls.readers.files import MODEL_KEYS, load_python, load_toml, model_from_mapping
from sls.readers.mechanics_models import model_from_mechanics
from sls.readers.mjcf import MJCF_SUFFIXES, load_mjcf, load_mjcf_table
from sls.readers.strings import model_from_strings
from sls.readers.sympy_api import model_from_sympy
from sls.readers.urdf import load_urdf, load_urdf_table

__all__ = [
    "DEFAULT_EXAMPLE",
    "EXAMPLE_SUFFIXES",
    "MJCF_SUFFIXES",
    "MODEL_KEYS",
    "example_description",
    "example_names",
    "is_urdf_example",
    "load_example",
    "load_mjcf",
    "load_mjcf_table",
    "load_python",
    "load_toml",
    "load_urdf",
    "load_urdf_table",
    "model_from_mapping",
    "model_from_mechanics",
    "model_from_strings",
    "model_from_sympy",
    "read_model_text",
]
