"""The CasADi target's code: the lowered programs (:mod:`sls.lowering`) as lines building ``SX`` expressions.

Each generated function is a :class:`Body`: the lines binding the arguments' entries the body reads
(``q1 = _in_x[0]``), the shared temporaries and, for the solving functions, the unrolled ``M = L D Lᵀ``
factorization and solves of :mod:`sls.lowering.solve` (every temporary an ``SX`` intermediate: CasADi keeps the
sharing), then the outputs as sparse matrices (:class:`Output`: the entries known to be zero are structural
zeros). The pivots' checks (``M`` positive definite) have no counterpart in a symbolic graph: they are left out, and
a singular ``M`` gives ``inf``/``nan`` entries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sls import functions
from sls.lowering import Check, Expr, Fail, Let, Lowered, SolveProgram, Statement, Value, text_of, unknown_statement
from sls.lowering.arguments import PARAMETERS, bind_arguments

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model


def input_local(argument: str) -> str:
    """The local holding the symbolic input ``argument`` (``_in_x``, ``_in_p``): no user name starts with ``_``,
    and no temporary of the lowering starts with ``_in_``."""
    return f"_in_{argument}"


def called(function: str) -> str:
    """The builder's argument holding the package's function ``function`` (``_fn_qdot_jac_fun``)."""
    return f"_fn_{function}"


def matrix_shape(shape: tuple) -> tuple[int, int]:
    """The CasADi matrix holding an array of ``shape``: a scalar is 1×1, a vector a column, a matrix itself and an
    array of three axes ``(a, b, c)`` the matrix ``(a·b, c)`` (numpy's ``reshape(a * b, c)``: row ``i·b + j`` holds
    ``[i, j, :]``)."""
    if not shape:
        return 1, 1
    if len(shape) == 1:
        return shape[0], 1
    rows = 1
    for size in shape[:-1]:
        rows *= size
    return rows, shape[-1]


@dataclass(frozen=True)
class Output:
    """One output: its ``name``, the matrix's ``rows`` and ``cols`` and its non-zero ``entries`` as
    ``(row, col, code)`` (the flat C-order entries of the array, :func:`matrix_shape`)."""

    name: str
    rows: int
    cols: int
    entries: list[tuple[int, int, str]]


def output(name: str, shape: tuple, values: Sequence[Value]) -> Output:
    """The :class:`Output` of an array of ``shape`` from its flat values (floats or expressions)."""
    rows, cols = matrix_shape(shape)
    entries = [
        (k // cols, k % cols, text_of(v)) for k, v in enumerate(values) if not (isinstance(v, float) and v == 0.0)
    ]
    return Output(name, rows, cols, entries)


@dataclass(frozen=True)
class Body:
    """One ``casadi.Function``'s construction: its ``inputs`` (``(name, size)``, the parameters ``p`` last),
    ``lines`` (the bindings of the arguments' entries, then the statements) and ``outputs``; ``uses`` names the
    package's functions its builder takes (``qdot_jac_fun`` for a model with generalized speeds, as the argument
    :func:`called`) and ``after``
    the lines run on the outputs ``_out_0, _out_1, …`` once they are assembled; ``runtime`` the helpers of the
    package's ``_runtime`` they call."""

    inputs: list[tuple[str, int]]
    lines: list[str]
    outputs: list[Output]
    uses: tuple = ()
    after: list[str] = field(default_factory=list)
    #: Helpers of the package's ``_runtime`` the lines call, as ``(name in _runtime, local name)``.
    runtime: tuple = ()


def _lines(statements: Iterable[Statement]) -> list[str]:
    """``statements`` as lines of Python over ``SX`` (a pivot's check has no symbolic counterpart: left out)."""
    lines = []
    for statement in statements:
        match statement:
            case Let(name=name, value=value):
                lines.append(f"{name} = {value.text()}")
            case Check():
                pass
            case Fail():
                lines.append("# M is never positive definite: the solve below divides by a pivot <= 0")
            case _:
                raise unknown_statement(statement, "the CasADi target")
    return lines


def _reads(statements: Iterable[Statement], values: Iterable[Value]) -> set[str]:
    """Every name the statements and the values read."""
    names = {name for statement in statements for name in statement.reads}
    return names | {name for v in values if isinstance(v, Expr) for name in v.reads}


def _inputs(function: functions.Function, model: Model) -> list[tuple[str, int]]:
    """The function's symbolic inputs: its positional arguments, then the parameters ``p``."""
    sizes = [(a.name, functions.model_sizes((a.size,), model)[0]) for a in function.arguments]
    return sizes + [(PARAMETERS, len(model.params))]


def _bindings(inputs: list[tuple[str, int]], model: Model, reads: set[str]) -> list[str]:
    """``name = _in_x[k]`` for every entry of the inputs the body reads."""
    chosen = bind_arguments([name for name, _ in inputs], model, reads, lambda name: name)
    return [f"{b.local} = {input_local(b.argument)}[{b.index}]" for b in chosen]


def kernel_body(function: functions.Function, lowered: Lowered, model: Model) -> Body:
    """The :class:`Body` of an array function from its lowered kernel."""
    outputs = []
    values: list[Value] = []
    for name in lowered.outputs:
        shape, entries, constants = lowered.output(name)
        flat: list[Value] = [c if c is not None else e for e, c in zip(entries, constants)]
        values += flat
        outputs.append(output(name, shape, flat))
    statements = lowered.printed.lines
    inputs = _inputs(function, model)
    lines = _bindings(inputs, model, _reads(statements, values)) + _lines(statements)
    return Body(inputs, lines, outputs)


def _solve_statements(program: SolveProgram) -> list[Statement]:
    """Every statement of an unrolled program, in evaluation order (a phased one binds ``q̈`` before its late
    part)."""
    statements = [*program.lines, *program.bindings, *(program.factor or []), *program.steps]
    if program.phased:
        solved = zip(program.accelerations, program.results["qddot"])
        statements += [Let(a, v if isinstance(v, Expr) else Expr.number(v)) for a, v in solved]
        statements += [*program.late, *program.tail]
    return statements


def solver_body(function: functions.Function, program: SolveProgram, model: Model) -> Body:
    """The :class:`Body` of a solving function (``qddot_fun``, ``linearized_model``) from its unrolled program."""
    if not program.unrolled:
        raise ValueError("the CasADi target unrolls every solve (unroll_max = None)")
    n, m = model.n, model.m
    after: list[str] = []
    runtime: tuple = ()
    if function.solve == functions.ACCELERATIONS:
        results = program.results["qddot"]
        outputs = [output("qddot", (n,), results)]
    else:
        A_rows, B_rows = program.results["A"], program.results["B"]
        n_x = len(A_rows[0]) if A_rows else 2 * n
        n_q = n_x - n
        # the kinematic rows: [0 I] when v = q̇, else d(S(q) v)/dx from the function it calls (qdot_jac_fun)
        identity = n_q == n and not function.calls
        top = [1.0 if identity and col == n + a else 0.0 for a in range(n_q) for col in range(n_x)]
        after = [f"_out_0[0:{n_q}, :] = {called(name)}(_in_x, _in_p)" for name in function.calls]
        if n_q != n:  # a quaternion base: (A, B) in the tangent space, from (A_x, B_x) and the kinematics' Jacobian
            (rates,) = function.calls
            after = [f"_out_0, _out_1 = _tangent(_out_0, _out_1, {called(rates)}(_in_x, _in_p), _in_x, {n_q}, {n})"]
            runtime = (("tangent_linearization", "_tangent"),)
        A = top + [v for row in A_rows for v in row]
        B = [0.0] * (n_q * m) + [v for row in B_rows for v in row]
        results = A + B
        outputs = [output("A", (n_x, n_x), A), output("B", (n_x, m), B)]
    statements = _solve_statements(program)
    inputs = _inputs(function, model)
    lines = _bindings(inputs, model, _reads(statements, results)) + _lines(statements)
    return Body(inputs, lines, outputs, tuple(function.calls), after, runtime)
