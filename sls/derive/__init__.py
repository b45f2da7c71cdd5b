"""Stage 2: derive the symbolic terms of the equations of motion.

For a :class:`~sls.model.Model` with coordinates ``q`` (n), rates ``q̇`` and
state ``x = [q; q̇]`` (2n), the equations of motion are

.. math::

    M(q)\\,\\ddot q + C(q, \\dot q)\\,\\dot q + \\varphi(q) = B_u(x)\\,u - f(x)

with ``M = ∂²T/∂q̇²``, ``C`` the Coriolis matrix of the Christoffel symbols of
``M`` (``Ṁ − 2C`` skew-symmetric), ``φ = ∂V/∂q``, ``f = fric`` and
``B_u = ∂forces/∂u``. :func:`derive` builds them by one of three routes
(:data:`METHODS`, chosen by :func:`choose_method`):

* :mod:`sls.derive.expanded` — the classic Christoffel derivation, every entry
  one flat sympy expression;
* :mod:`sls.derive.graph_route` — every derivative built on one hash-consed
  expression graph (:mod:`sls.algebra.graph`) by forward and reverse mode;
* :mod:`sls.derive.tree_route` — a robot tree's recursive Newton–Euler and
  composite-rigid-body algorithms (:mod:`sls.derive.rigid_body`) on that graph.

Every route returns a :class:`Dynamics` (:mod:`sls.derive.dynamics`) whose
``arrays`` are the named arrays of :func:`function_arrays`
(:mod:`sls.derive.named_arrays`) the generated functions evaluate.
:mod:`sls.derive.validate` checks the derived terms, :mod:`sls.derive.symbolic`
gives them as sympy matrices.

This module re-exports the public names of those modules.
"""

from sls.derive.dynamics import Dynamics
from sls.derive.expanded import (
    christoffel,
    coriolis,
    coriolis_jacobian,
    derive_expanded,
    jacobian,
    mass_matrix,
    mass_matrix_derivatives,
)
from sls.derive.graph_route import derive_on_graph
from sls.derive.named_arrays import (
    ARRAY_NAMES,
    DIRECTION_ARRAYS,
    SOLVED_ARRAYS,
    acceleration_symbols,
    check_wanted,
    direction_symbols,
    function_arrays,
    multiplier_symbols,
)
from sls.derive.routes import EXPANSION_LIMIT, METHODS, choose_method, derive
from sls.derive.tree_route import derive_on_tree

__all__ = [
    "ARRAY_NAMES",
    "DIRECTION_ARRAYS",
    "EXPANSION_LIMIT",
    "METHODS",
    "SOLVED_ARRAYS",
    "Dynamics",
    "acceleration_symbols",
    "check_wanted",
    "choose_method",
    "christoffel",
    "coriolis",
    "coriolis_jacobian",
    "derive",
    "direction_symbols",
    "derive_expanded",
    "derive_on_graph",
    "derive_on_tree",
    "function_arrays",
    "jacobian",
    "mass_matrix",
    "mass_matrix_derivatives",
    "multiplier_symbols",
]
