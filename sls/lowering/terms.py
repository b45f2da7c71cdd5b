"""A constrained model's terms lowered together, once for every target.

The run-time solve of ``M q̈ = f + Aᵀλ, A q̈ = g`` (``qddot_fun``, ``multipliers_fun``, ``contact_forces_fun``,
``linearized_model``) reads four arrays at one state: ``M`` (n × n), ``f = B_u u − C q̇ − φ − fric`` (n), ``A``
(k × n) and ``g`` (k). Lowered one by one (``M_fun``, ``tau_fun``, ``constraint_jac_fun``,
``constraint_bias_fun``) each recomputes the robot's kinematics and trigonometry; lowered together
(:func:`lower_terms`) they share them. The C target writes the result as one C function (its
``constrained_terms``), the JAX target as one body (``_terms.py``): on Solo-12 with four feet, about half the
statements of the four kernels apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from sls import functions
from sls.derive import Dynamics, function_arrays
from sls.lowering.program import Lowered, function_floats, lower_kernel
from sls.lowering.reduce import Path, reducer

#: The fused terms, in the order of their output: ``M`` (n × n), ``rhs`` (``f``, n), ``A`` (k × n), ``bias`` (``g``,
#: k), the names of the derived arrays (:data:`sls.derive.Dynamics`).
TERMS = ("M", "rhs", "A", "bias")
#: The fused kernel's name (not a function of the registry: the targets' solves call it).
TERMS_NAME = "constrained_terms"


def terms_size(n: int, k: int) -> int:
    """Doubles of the fused terms one after the other: ``n² + n + k n + k``."""
    return n * n + n + k * n + k


def terms_model_function(n: int, k: int) -> functions.Function:
    """The fused terms as a :class:`~sls.functions.Function` of ``(x, u)`` (one flat output of
    :func:`terms_size` doubles)."""
    return functions.Function(
        TERMS_NAME,
        "The constrained solve's terms in one pass: [M (n x n); f = B_u u - C qdot - phi - fric (n); "
        "A (k x n); g (k)], row-major, one after the other.",
        (functions.STATE, functions.INPUT),
        (("terms", (terms_size(n, k),)),),
        TERMS,
    )


def lower_terms(dynamics: Dynamics, paths: Sequence[Path]) -> list[Lowered]:
    """:data:`TERMS` of a constrained model reduced together, one :class:`Lowered` per path (outputs by the names
    of :data:`TERMS`)."""
    model = dynamics.model
    arrays = dynamics.arrays if dynamics.arrays is not None else function_arrays(dynamics)
    chosen = {name: arrays[name] for name in TERMS}
    floats = function_floats(dynamics, terms_model_function(model.n, model.k))
    return lower_kernel(chosen, floats, reducer(dynamics.graph), paths)
