"""The C target's constrained models: the structured solve of ``M q̈ = f + Aᵀλ, A q̈ = g`` in C.

A constrained model (holonomic constraints, velocity constraints, a robot's contacts) has its
``qddot_fun``, ``multipliers_fun``, ``contact_forces_fun`` and ``linearized_model`` solved at run time
(:attr:`sls.functions.Function.numeric`). The Python target solves them in numpy on its generated kernels
(``runtime/_constrained.py``); the C target writes the same math in C99, in a file of its own,
``c/<name>_constrained.c`` (``templates/c/constrained.c.j2``), on the kernels of ``c/<name>.c``:

* the terms ``M`` (``M_fun``), ``A`` (``constraint_jac_fun``, k × n, any rows: holonomic, velocity, a
  contact's 3 or 6), ``g`` (``constraint_bias_fun``) and ``f = B_u u − C q̇ − φ − fric``
  (``input_matrix_fun``, ``tau_fun`` at ``q̈ = 0``);
* ``W = diag(trace(M)/n / |A_i|²)``, the Cholesky factor ``L`` of ``M + AᵀWA``, ``X = L⁻¹ [f_a, Aᵀ]``
  (``f_a = f + AᵀW g``), the Cholesky factor of the Schur complement ``S = X_Aᵀ X_A = A (M + AᵀWA)⁻¹ Aᵀ``,
  ``λ = S⁻¹ (g − X_Aᵀ X_f)`` and ``q̈ = L⁻ᵀ (X_f + X_A λ)``: the Python target's solution and multipliers' sign;
* ``linearized_model`` and ``contact_forces_jac_fun`` differentiate both equations as the Python target does:
  ``[M −Aᵀ; A 0] [∂q̈; ∂λ] = −constrained_residual_jac_fun(x, u, q̈, λ)`` (and ``[B_u; 0]`` for the inputs) with the
  factors of the solve (``linearized_model``'s upper rows: ``[0, I]``, ``qdot_jac_fun``, or a quaternion base's
  tangent space; the contacts' derivatives in the same tangent space);
* where the structure allows (:mod:`sls.backends.c.unrolled`), the solve is straight-line code on the entries of the
  factors of ``M`` and ``S = A M⁻¹ Aᵀ`` that are not zero at every state, and the derivatives' columns are solved
  with the same factors by straight-line code in a loop over the columns that the compiler vectorizes; the loops
  above take the states where a pivot of ``M`` is too small.

Return codes: ``<PREFIX>_NOT_POSITIVE_DEFINITE`` where ``M + AᵀWA`` is not positive definite,
:data:`DEPENDENT` where ``S`` is not (the constraints are dependent there).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from sls import functions
from sls.backends.c.unrolled import unrolled_solve
from sls.lowering import terms as lowered_terms
from sls.lowering.terms import TERMS, TERMS_NAME

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.backends.c.body import CFunction
    from sls.backends.c.spec import CSpec
    from sls.model import Model

#: The return code of a constrained solve whose constraints are dependent (``S`` not positive definite).
DEPENDENT = 3


def terms_size(model: Model) -> int:
    """Doubles of the fused kernel's output: ``n² + n + k n + k``."""
    return lowered_terms.terms_size(model.n, model.k)


def terms_model_function(model: Model) -> functions.Function:
    """The fused kernel as a :class:`~sls.functions.Function` of ``(x, u)`` (its output's size a number)."""
    return lowered_terms.terms_model_function(model.n, model.k)


def terms_function(dynamics: Any, paths: list) -> CFunction:
    """The fused kernel: :data:`TERMS` reduced together (:func:`sls.lowering.terms.lower_terms`: a robot's
    kinematics and trigonometry computed once, where ``M_fun``, ``tau_fun``, ``constraint_jac_fun`` and
    ``constraint_bias_fun`` each compute them), writing ``out``."""
    from sls.backends.c.body import CFunction, Part, eliminate_dead_code, schedule
    from sls.backends.c.statements import Statement, Store, Zeros
    from sls.lowering import expr_of

    (lowered,) = lowered_terms.lower_terms(dynamics, paths)
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
    # one part, however long: values crossing parts would go through memory at every call
    statements = schedule(eliminate_dead_code(statements))
    return CFunction(TERMS_NAME, statements, [Part(statements)])


def solve_context(model: Model, chosen: tuple, terms: CFunction, rates: object = None) -> dict:
    """What ``templates/c/constrained.c.j2`` needs besides the model's context: each solved function's role (its
    :attr:`~sls.functions.Function.solve`, or ``"multipliers"``: it writes the last multipliers, as many as its
    output holds), whether the package linearizes, the kind of state, and the unrolled solve
    (:func:`sls.backends.c.unrolled.unrolled_solve`, on the structure of ``M`` and ``A`` in the fused kernel's code
    ``terms``), and the entries of ``S(q) = ∂q̇/∂v`` that are not zero at every state (``(row, column)`` pairs, from
    the code ``rates`` of the function they call, ``qdot_jac_fun``; empty without it)."""
    n, k = model.n, model.k
    stored = stored_pattern(terms)
    n_x = model.n_q + n
    speeds = sorted(divmod(i, n_x) for i in stored_pattern(rates)) if rates is not None else []
    tree = getattr(model, "tree", None)
    free_flyer = tree is not None and tree.free is not None
    if free_flyer and not speeds and rates is not None:
        raise RuntimeError("sls: qdot_jac_fun's C code stores no entry: cannot map a quaternion base's derivatives")
    return {
        "dependent": DEPENDENT,
        # a solve's kind, else what the multipliers give: all of them, or the contacts' (an output sized by "c")
        "roles": {f.name: _role(f) for f in chosen if f.numeric},
        "linearizes": any(f.numeric and f.solve == functions.LINEARIZATION for f in chosen),
        "contact_derivatives": any(_role(f) == "contact_derivatives" for f in chosen if f.numeric),
        "differentiates": any(functions.differentiates(f) for f in chosen),
        "speeds": getattr(model, "kinematics", None) is not None,
        "free_flyer": free_flyer,
        "rates": [(j, column - model.n_q) for j, column in speeds if column >= model.n_q],
        "unrolled": unrolled_solve(
            n,
            k,
            {i for i in stored if i < n * n},
            {i - n * n - n for i in stored if n * n + n <= i < n * n + n + k * n},
        ),
    }


def _role(function: functions.Function) -> str:
    """What a solved function writes: its :attr:`~sls.functions.Function.solve`, the contacts' multipliers
    (``"contacts"``: an output sized by ``"c"``), their derivatives (``"contact_derivatives"``) or every
    multiplier (``"multipliers"``)."""
    if function.solve:
        return function.solve
    if function.name == functions.CONTACT_FORCES_JAC.name:
        return "contact_derivatives"
    return "contacts" if function.outputs[0][1][0] == "c" else "multipliers"


def numeric_spec(function: functions.Function, model: Model) -> CSpec:
    """The :class:`~sls.backends.c.spec.CSpec` of a solved function (its C is ``templates/c/constrained.c.j2``'s:
    no statements of its own)."""
    from sls.backends.c.spec import COutput, CSpec, c_string

    arguments = [a.name for a in function.arguments]
    outputs = []
    for name, shape in function.outputs:
        dims = functions.model_sizes(shape, model)
        pointer = "out" if len(function.outputs) == 1 else name
        outputs.append(COutput(name, pointer, dims, math.prod(dims), repr(dims)))
    signature = ", ".join(arguments)
    if model.params:
        signature += ", *, " + ", ".join(p if v is None else f"{p}={float(v)!r}" for p, v in model.params.items())
    lines = [
        f"{a.name}: shape ({size},) or (..., {size}); leading axes are a batch."
        for a, size in zip(function.arguments, (functions.model_sizes((a.size,), model)[0] for a in function.arguments))
    ]
    lines += [f"Returns {o.name}: shape {o.shape}, or (...,) + {o.shape} for a batch." for o in outputs]
    if model.params:
        lines.append("Parameters are keyword arguments (numbers, or arrays broadcast against the batch).")
    doc = f"{function.name}($module, {signature})\n--\n\n{function.summary}\n\n" + "\n".join(lines)
    notes = (
        "Constrained: M qddot = f + A' lambda with A qddot = g, solved in <name>_constrained.c; returns",
        f"{DEPENDENT} (outputs untouched) where the constraints are dependent (A (M + A'WA)^-1 A' singular).",
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
        pointers=[*arguments, "p", *(o.pointer for o in outputs)],
        doc=c_string(doc),
        wrapper=False,
        notes=notes,
    )


def stored_pattern(code: object) -> set[int]:
    """The entries of an array function's ``out`` its C code stores a value into that is not a zero literal
    (the others are zero at every state): indices into the row-major output."""
    from sls.backends.c.statements import Store

    result = set()
    for statement in getattr(code, "statements", ()):
        if isinstance(statement, Store) and statement.array == "out":
            text = statement.value.text()
            try:
                zero = float(text) == 0.0
            except ValueError:
                zero = False
            if not zero:
                result.add(statement.index)
    return result
