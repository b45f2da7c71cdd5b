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
  tangent space; the contacts' derivatives in the same tangent space).

Return codes: ``<PREFIX>_NOT_POSITIVE_DEFINITE`` where ``M + AᵀWA`` is not positive definite,
:data:`DEPENDENT` where ``S`` is not (the constraints are dependent there).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from sls import functions
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


def solve_context(model: Model, chosen: tuple, terms: CFunction) -> dict:
    """What ``templates/c/constrained.c.j2`` needs besides the model's context: each solved function's role (its
    :attr:`~sls.functions.Function.solve`, or ``"multipliers"``: it writes the last multipliers, as many as its
    output holds), whether the package linearizes, the kind of state, and the unrolled solve
    (:func:`unrolled_solve`, on the structure of ``M`` and ``A`` in the fused kernel's code ``terms``)."""
    n, k = model.n, model.k
    stored = stored_pattern(terms)
    tree = getattr(model, "tree", None)
    return {
        "dependent": DEPENDENT,
        # a solve's kind, else what the multipliers give: all of them, or the contacts' (an output sized by "c")
        "roles": {f.name: _role(f) for f in chosen if f.numeric},
        "linearizes": any(f.numeric and f.solve == functions.LINEARIZATION for f in chosen),
        "contact_derivatives": any(_role(f) == "contact_derivatives" for f in chosen if f.numeric),
        "differentiates": any(functions.differentiates(f) for f in chosen),
        "speeds": getattr(model, "kinematics", None) is not None,
        "free_flyer": tree is not None and tree.free is not None,
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


#: Largest unrolled solve (multiply-adds) written as straight-line code; beyond, the loops alone.
UNROLL_LIMIT = 20000
#: The unrolled solve factors M alone: a pivot below this fraction of its diagonal entry (M singular or nearly, as
#: a unit quaternion's attitude makes it) hands the state to the augmented solve of the loops.
PIVOT = 1e-6


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


def unrolled_solve(n: int, k: int, mass: set[int], jacobian: set[int]) -> list[str] | None:
    """The constrained solve as straight-line C on the structure of ``M`` (``mass``: its stored entries, row-major
    n × n) and ``A`` (``jacobian``: k × n), or ``None`` when it would be longer than :data:`UNROLL_LIMIT`: the speeds
    reversed (a tree's leaves first: little fill-in), ``M = L Lᵀ``, ``X = L⁻¹ [f, Aᵀ]``, ``S = X_Aᵀ X_A = L_S L_Sᵀ``,
    ``λ = S⁻¹ (g − X_Aᵀ X_f)``, ``q̈ = L⁻ᵀ (X_f + X_A λ)``, on the entries that are not zero at every state only.

    The textbook Schur complement on ``M``: the same ``q̈`` and ``λ`` as the augmented solve of the loops (the Python
    target's, ``M + AᵀWA``) where ``M`` is positive definite; where a pivot is below :data:`PIVOT` of its diagonal
    entry it returns ``-1`` and the caller solves with the loops. Reads ``M`` (n × n), ``A`` (k × n), ``f`` (n),
    ``g`` (k); writes ``qddot`` (n) and ``lam`` (k)."""

    def rev(a: int) -> int:
        return n - 1 - a

    rows = [sorted(rev(a) for a in range(n) if c * n + a in jacobian) for c in range(k)]
    pattern = {(i, i) for i in range(n)}
    for index in mass:
        i, j = rev(index // n), rev(index % n)
        pattern.add((max(i, j), min(i, j)))
    for j in range(n):  # the fill of L
        below = [i for i in range(j + 1, n) if (i, j) in pattern]
        pattern.update((p, q) for p in below for q in below if p > q)
    lower = {i: [j for j in range(i) if (i, j) in pattern] for i in range(n)}
    upper = {j: [i for i in range(j + 1, n) if (i, j) in pattern] for j in range(n)}

    def ma(i: int, j: int) -> str:
        a, b = rev(i), rev(j)
        return f"M[{a * n + b}]" if (a * n + b in mass or b * n + a in mass) else "0.0"

    def minus(start: str, products: list[str]) -> str:
        return start + "".join(f" - {p}" for p in products)

    lines: list[str] = []
    for j in range(n):  # L L' = M (reversed)
        products = [f"L{j}_{q}*L{j}_{q}" for q in lower[j]]
        lines.append(f"const double d{j} = {minus(ma(j, j), products)};")
        lines.append(f"if (!(d{j} > {PIVOT!r}*fabs({ma(j, j)}))) return -1;")
        lines.append(f"const double r{j} = 1.0/sqrt(d{j});")
        for i in upper[j]:
            products = [f"L{i}_{q}*L{j}_{q}" for q in lower[j] if (i, q) in pattern]
            lines.append(f"const double L{i}_{j} = ({minus(ma(i, j), products)})*r{j};")
    vectors: list[list[int]] = []
    for c in range(-1, k):  # X = L^-1 [f, A'] (c = -1: f)
        nonzero: list[int] = []
        for i in range(n):
            if c < 0:
                start = f"f[{rev(i)}]"
            else:
                start = f"A[{c * n + rev(i)}]" if i in rows[c] else "0.0"
            products = [f"L{i}_{q}*X{c + 1}_{q}" for q in lower[i] if q in nonzero]
            if start == "0.0" and not products:
                continue
            nonzero.append(i)
            lines.append(f"const double X{c + 1}_{i} = ({minus(start, products)})*r{i};")
        vectors.append(nonzero)
    common = {(c, d): sorted(set(vectors[c + 1]) & set(vectors[d + 1])) for c in range(k) for d in range(c + 1)}
    for c in range(k):  # S = X_A' X_A, s = g - X_A' X_f
        products = [f"X{c + 1}_{i}*X0_{i}" for i in vectors[c + 1] if i in vectors[0]]
        lines.append(f"const double s{c} = {minus(f'g[{c}]', products)};")
        for d in range(c + 1):
            terms = [f"X{c + 1}_{i}*X{d + 1}_{i}" for i in common[c, d]]
            lines.append(f"const double S{c}_{d} = {' + '.join(terms) or '0.0'};")
    for j in range(k):  # S = LS LS'
        products = [f"LS{j}_{q}*LS{j}_{q}" for q in range(j)]
        lines.append(f"const double e{j} = {minus(f'S{j}_{j}', products)};")
        lines.append(f"if (!(e{j} > 1e-13*fabs(S{j}_{j}))) return -1;")
        lines.append(f"const double rs{j} = 1.0/sqrt(e{j});")
        for i in range(j + 1, k):
            products = [f"LS{i}_{q}*LS{j}_{q}" for q in range(j)]
            lines.append(f"const double LS{i}_{j} = ({minus(f'S{i}_{j}', products)})*rs{j};")
    for j in range(k):
        products = [f"LS{j}_{q}*z{q}" for q in range(j)]
        lines.append(f"const double z{j} = ({minus(f's{j}', products)})*rs{j};")
    for j in reversed(range(k)):
        products = [f"LS{i}_{j}*lam{i}" for i in range(j + 1, k)]
        lines.append(f"const double lam{j} = ({minus(f'z{j}', products)})*rs{j};")
        lines.append(f"lam[{j}] = lam{j};")
    for i in reversed(range(n)):  # qddot = L'^-1 (X_f + X_A lam)
        start = " + ".join(
            [f"X0_{i}"] * (i in vectors[0]) + [f"X{c + 1}_{i}*lam{c}" for c in range(k) if i in vectors[c + 1]]
        )
        products = [f"L{q}_{i}*y{q}" for q in upper[i]]
        lines.append(f"const double y{i} = ({minus(start or '0.0', products)})*r{i};")
        lines.append(f"qddot[{rev(i)}] = y{i};")
    if sum(line.count("*") for line in lines) > UNROLL_LIMIT:
        return None
    return lines
