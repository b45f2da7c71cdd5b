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
* ``linearized_model`` differentiates both equations as the Python target does, on the Jacobian kernels
  (its upper rows: ``[0, I]``, ``qdot_jac_fun``, or a quaternion base's tangent space).

Return codes: ``<PREFIX>_NOT_POSITIVE_DEFINITE`` where ``M + AᵀWA`` is not positive definite,
:data:`DEPENDENT` where ``S`` is not (the constraints are dependent there).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from sls import functions

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.backends.c.spec import CSpec
    from sls.model import Model

#: The return code of a constrained solve whose constraints are dependent (``S`` not positive definite).
DEPENDENT = 3


def solve_context(model: Model, chosen: tuple) -> dict:
    """What ``templates/c/constrained.c.j2`` needs besides the model's context: the functions ``chosen``
    (the package's), the size of ``contact_forces_fun``'s output (the last multipliers), the kind of state."""
    forces = next((f for f in chosen if f.name == "contact_forces_fun"), None)
    tree = getattr(model, "tree", None)
    return {
        "dependent": DEPENDENT,
        "force_size": math.prod(functions.model_sizes(forces.outputs[0][1], model)) if forces else 0,
        "has": sorted(f.name for f in chosen),
        "speeds": getattr(model, "kinematics", None) is not None,
        "free_flyer": tree is not None and tree.free is not None,
    }


def numeric_spec(function: functions.Function, model: Model) -> CSpec:
    """The :class:`~sls.backends.c.spec.CSpec` of a solved function (its C is ``templates/c/constrained.c.j2``'s:
    no statements of its own)."""
    from sls.backends.c.spec import COutput, CSpec, _argument_doc, c_string

    arguments = [a.name for a in function.arguments]
    outputs = []
    for name, shape in function.outputs:
        dims = functions.model_sizes(shape, model)
        pointer = "out" if len(function.outputs) == 1 else name
        outputs.append(COutput(name, pointer, dims, math.prod(dims), repr(dims)))
    signature = ", ".join(arguments)
    if model.params:
        signature += ", *, " + ", ".join(p if v is None else f"{p}={float(v)!r}" for p, v in model.params.items())
    doc = f"{function.name}($module, {signature})\n--\n\n{function.summary}\n\n" + _argument_doc(function, model)
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
