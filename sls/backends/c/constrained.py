"""The C target's constrained models: the structured solve of ``M q̈ = f + Aᵀλ, A q̈ = g`` in C.

A constrained model (holonomic constraints, velocity constraints, a robot's contacts) has its
``qddot_fun``, ``multipliers_fun``, ``contact_forces_fun`` and ``linearized_model`` solved at run time
(:attr:`sls.functions.Function.numeric`). The Python target solves them in numpy on its generated kernels
(``runtime/_constrained.py``); the C target writes the same math in C, in its own file
``c/<name>_constrained.c`` (``templates/c/constrained.c.j2``):

* one fused kernel, ``<name>_constrained_terms(x, u, p, out)`` in ``c/<name>.c`` (:func:`terms_function`):
  ``M`` (n × n), ``f = B_u u − C q̇ − φ − fric`` (n), ``A`` (k × n) and ``g`` (k) in one pass, sharing their
  subexpressions (a robot's kinematics are computed once);
* the solve, in loops over the constraint rows (any k, any kind of row): ``W = diag(trace(M)/n / |A_i|²)``,
  one Cholesky factorization of ``M + AᵀWA``, the Schur complement ``S = A (M + AᵀWA)⁻¹ Aᵀ`` factored too,
  ``λ = S⁻¹ (g − A (M + AᵀWA)⁻¹ f_a)`` and ``q̈ = (M + AᵀWA)⁻¹ (f_a + Aᵀλ)`` with ``f_a = f + AᵀW g`` (the
  multipliers' sign of the Python target);
* ``linearized_model`` differentiates both equations as the Python target does, on the C Jacobian kernels.

Return codes: ``<PREFIX>_NOT_POSITIVE_DEFINITE`` where ``M + AᵀWA`` is not positive definite,
:data:`DEPENDENT` where ``S`` is not (the constraints are dependent).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sls import functions
from sls.backends.c.body import CFunction, c_function
from sls.backends.c.statements import Statement, Store, Zeros
from sls.lowering import expr_of, function_floats, lower_kernel, reducer

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model

#: The return code of a constrained solve whose constraints are dependent (``S`` not positive definite).
DEPENDENT = 3
#: The arrays of the fused kernel, in the order of its output.
TERMS = ("M", "rhs", "A", "bias")
#: The fused kernel's name (not in the package's Python API: ``c/<name>.c`` and the header only).
TERMS_NAME = "constrained_terms"


def terms_size(model: Model) -> int:
    """Doubles of the fused kernel's output: ``n² + n + k n + k``."""
    n, k = model.n, model.k
    return n * n + n + k * n + k


def terms_function(dynamics: Any, paths: list) -> CFunction:
    """The fused kernel (:data:`TERMS`) as a :class:`~sls.backends.c.body.CFunction` writing ``out``."""
    model = dynamics.model
    arrays = dynamics.arrays if dynamics.arrays is not None else _arrays(dynamics)
    chosen = {name: arrays[name] for name in TERMS}
    floats = function_floats(dynamics, terms_model_function(model))
    (lowered,) = lower_kernel(chosen, floats, reducer(dynamics.graph), paths)
    statements: list[Statement] = list(lowered.printed.lines)
    values: list = []
    for name in TERMS:
        _, entries, constants = lowered.output(name)
        values += [c if c is not None else entry for entry, c in zip(entries, constants)]
    zero = [isinstance(v, float) and v == 0.0 for v in values]
    if sum(zero) >= 16:
        statements.append(Zeros("out", len(values)))
        statements += [Store("out", k, expr_of(v)) for k, v in enumerate(values) if not zero[k]]
    else:
        statements += [Store("out", k, expr_of(v)) for k, v in enumerate(values)]
    assert len(values) == terms_size(model)
    return c_function(TERMS_NAME, statements)


def _arrays(dynamics: Any) -> dict:
    from sls.derive import function_arrays

    return function_arrays(dynamics)


def terms_model_function(model: Model) -> functions.Function:
    """The fused kernel as a :class:`~sls.functions.Function` of ``(x, u)`` (its output's size a number)."""
    return functions.Function(
        TERMS_NAME,
        "The constrained solve's terms in one pass: [M (n x n); f = B_u u - C qdot - phi - fric (n); "
        "A (k x n); g (k)], row-major, one after the other.",
        (functions.STATE, functions.INPUT),
        (("terms", (terms_size(model),)),),
        TERMS,
    )


def solve_context(model: Model, prefix: str, chosen: tuple) -> dict:
    """What ``templates/c/constrained.c.j2`` needs besides the model's context: sizes and the kernels it calls."""
    names = {f.name for f in chosen}
    forces = next((f for f in chosen if f.name == "contact_forces_fun"), None)
    force_size = 0
    if forces is not None:
        dims = functions.model_sizes(forces.outputs[0][1], model)
        force_size = 1
        for d in dims:
            force_size *= d
    tree = getattr(model, "tree", None)
    return {
        "dependent": DEPENDENT,
        "terms": f"{prefix}_{TERMS_NAME}",
        "terms_size": terms_size(model),
        "force_size": force_size,
        "has": sorted(names),
        "speeds": getattr(model, "kinematics", None) is not None,
        "free_flyer": tree is not None and tree.free is not None,
    }


def numeric_spec(function: functions.Function, model: Model) -> Any:
    """The :class:`~sls.backends.c.spec.CSpec` of a solved function (its C is ``templates/c/constrained.c.j2``'s:
    no statements of its own)."""
    from sls.backends.c.spec import COutput, CSpec, _argument_doc, c_string

    arguments = [a.name for a in function.arguments]
    outputs = []
    for name, shape in function.outputs:
        dims = functions.model_sizes(shape, model)
        size = 1
        for d in dims:
            size *= d
        outputs.append(COutput(name, "out" if len(function.outputs) == 1 else name, dims, size, repr(dims)))
    signature = ", ".join(arguments)
    if model.params:
        signature += ", *, " + ", ".join(p if v is None else f"{p}={float(v)!r}" for p, v in model.params.items())
    doc = f"{function.name}($module, {signature})\n--\n\n{function.summary}\n\n" + _argument_doc(function, model)
    notes = (
        "Constrained: M qddot = f + A' lambda, A qddot = g, solved in <name>_constrained.c;",
        f"returns {DEPENDENT} (its outputs untouched) where the constraints are dependent (S singular).",
    )
    return CSpec(
        name=function.name,
        summary=function.summary,
        arguments=arguments,
        sizes=[functions.model_sizes((a.size,), model)[0] for a in function.arguments],
        outputs=outputs,
        solve=bool(function.solve),
        scalar=False,
        bindings=[],
        unused=[],
        uses_params=True,
        body=[],
        parts=[],
        lanes=None,
        workspace=0,
        pointers=arguments + ["p"] + [o.pointer for o in outputs],
        doc=c_string(doc),
        wrapper=False,
        notes=notes,
    )
