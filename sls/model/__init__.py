"""Stage 1, the model: the :class:`Model` type and the checks of its structure.

A model is the user's ``T``, ``V``, ``fric`` and state ``x = [q; q̇]``, plus
optional parameter defaults, an input map, loads, constraints and ranges. Every
reader (:mod:`sls.readers`: TOML and Python model files, inline flags, the Python
API, URDF robots) ends in :func:`build_model`, where every structural check
happens, so the inputs cannot drift apart.

Modules, one job each:

* :mod:`sls.model.model` — the :class:`Model` type;
* :mod:`sls.model.build` — :func:`build_model`, the one constructor;
* :mod:`sls.model.names` — valid names (:func:`check_name`), parameter values (:func:`check_value`), header labels,
  the name a user gives a model (:func:`with_name`), the closest valid name to a misspelt one (:func:`did_you_mean`);
* :mod:`sls.model.entries` — lists, printable expressions, one expression per degree of freedom;
* :mod:`sls.model.energies` — ``T`` quadratic in q̇ (:func:`quadratic_terms`), ``V`` free of it;
* :mod:`sls.model.loads` — forces linear in the inputs and the loads (:func:`load_forces`);
* :mod:`sls.model.constraints` — holonomic and velocity constraints;
* :mod:`sls.model.ranges` — where the model lives (:func:`check_ranges`, :func:`with_ranges`);
* :mod:`sls.model.tree` — a robot's kinematic tree (:class:`~sls.model.tree.Robot`), for the tree derivation.
"""

from __future__ import annotations

from sls.model.build import build_model
from sls.model.energies import quadratic_terms
from sls.model.entries import distinct_nodes, symbols_in
from sls.model.loads import LOAD_KINDS, diff_piecewise, load_forces
from sls.model.model import Model
from sls.model.names import (
    ARGUMENT_NAMES,
    RESERVED_NAMES,
    check_model_name,
    check_name,
    check_value,
    closest,
    did_you_mean,
    safe_label,
    unknown_key,
    with_name,
)
from sls.model.ranges import check_ranges, with_ranges

__all__ = [
    "ARGUMENT_NAMES",
    "LOAD_KINDS",
    "RESERVED_NAMES",
    "Model",
    "build_model",
    "check_model_name",
    "check_name",
    "check_ranges",
    "check_value",
    "closest",
    "did_you_mean",
    "diff_piecewise",
    "distinct_nodes",
    "load_forces",
    "quadratic_terms",
    "safe_label",
    "symbols_in",
    "unknown_key",
    "with_name",
    "with_ranges",
]
