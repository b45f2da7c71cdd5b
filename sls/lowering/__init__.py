"""Stage 3, language-neutral: lower the derived arrays to straight-line programs.

For every generated function of the registry (:mod:`sls.functions`) the
lowering decides *what* is computed, once for all targets:

* the **shared subexpressions** of the function's entries — one
  ``sympy.cse`` on the expanded route, the graph's own sharing on the graph
  route (:mod:`sls.lowering.graph_print`), both reduced to one
  :class:`Printed` form (:mod:`sls.lowering.reduce`);
* for the solving functions (``qddot_fun``, ``linearized_model``), the
  **unrolled** ``M = L D Lᵀ`` **factorization and solves** as statements
  (:mod:`sls.lowering.solve`): :class:`Let` (bind a value), :class:`Check`
  (a pivot must be positive, else the target's "not positive definite"
  path) and :class:`Fail` (a pivot known to be ≤ 0 at generation time);
* every expression as data (:mod:`sls.lowering.expr`): an :class:`Expr`
  holds its code and, as references, the names it reads and the library
  names it calls; every statement says what it reads and writes
  (:mod:`sls.lowering.statements`);
* which entries of a function's arguments a body needs
  (:mod:`sls.lowering.arguments`).

*How* it reads is a backend's business: a :class:`Path` (one per way a
backend evaluates a function — the Python target has a float path and an
array path, the C target one) supplies the printers, and the backend turns
:class:`Lowered` kernels and :class:`SolveProgram`\\ s into its language
(:func:`lowerers`, :mod:`sls.lowering.program`). Output is deterministic:
same model → same programs.
"""

from sls.lowering.arguments import PARAMETERS, Binding, argument_names, bind_arguments
from sls.lowering.expr import Expr, Ref, mark_library, mark_name, strip_parens
from sls.lowering.program import Lowered, function_floats, lower_kernel, lowerers
from sls.lowering.reduce import GraphReducer, Path, Printed, Reducer, default_prefix, print_cse, reducer
from sls.lowering.solve import Emitter, SolveNames, SolveProgram, lower_solve
from sls.lowering.statements import (
    Check,
    Fail,
    Let,
    Statement,
    Value,
    expr_of,
    is_name,
    negated,
    text_of,
    unknown_statement,
)

__all__ = [
    "PARAMETERS",
    "Binding",
    "Check",
    "Emitter",
    "Expr",
    "Fail",
    "GraphReducer",
    "Let",
    "Lowered",
    "Path",
    "Printed",
    "Reducer",
    "Ref",
    "SolveNames",
    "SolveProgram",
    "Statement",
    "Value",
    "argument_names",
    "bind_arguments",
    "default_prefix",
    "expr_of",
    "function_floats",
    "is_name",
    "lower_kernel",
    "lower_solve",
    "lowerers",
    "mark_library",
    "mark_name",
    "negated",
    "print_cse",
    "reducer",
    "strip_parens",
    "text_of",
    "unknown_statement",
]
