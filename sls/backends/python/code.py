"""The Python target's code: the lowered programs (:mod:`sls.lowering`) as the lines of its templates.

Each generated function is built from a :class:`Kernel` (array functions) or
a :class:`SolverCode` (``qddot_fun``, ``linearized_model``): the function's
entries reduced together (shared temporaries ``_t0, _t1, …`` on the expanded
route, ``_g0, _g1, …`` on the graph route) and printed twice:

* the **scalar path** (one state, ``x`` of shape ``(2n,)``) works on Python
  floats — ``x.tolist()`` once, ``math`` functions — because Python float
  arithmetic is several times faster than numpy scalars;
* the **batch path** (``x`` of shape ``(..., 2n)``) works on numpy arrays
  with ``np`` functions, one vectorised operation per temporary.

A function :attr:`~sls.functions.Function.batch_only` (the directional
derivatives, only called with batches of directions) is printed on the batch
path alone: a call on one state is a batch of one.

Names: states, inputs and parameters keep the user's names (validated plain
identifiers that never start with ``_``), so nothing generated can collide
with them. Output is deterministic: same model → same text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sls import functions
from sls.arrays import unravel
from sls.backends.python.reuse import needed_first, reads_of, reuse_names
from sls.lowering import Check, Expr, Fail, Let, Lowered, SolveProgram, Statement, Value, text_of, unknown_statement


@dataclass(frozen=True)
class Output:
    """One output array of a kernel: its name, shape and printed entries.

    ``scalar``/``batch`` hold the printed entries in C order (flat); ``zero``
    flags the entries that are exactly zero. Scalar entries are guaranteed to
    be Python floats (entries that depend on no state are wrapped in
    ``float(...)``), so ``np.array`` of them is float64 without a ``dtype``.
    """

    name: str
    shape: tuple
    scalar: list
    batch: list
    zero: list

    @property
    def scalar_literal(self) -> str:
        """A nested-list literal of the scalar entries (``[[a, b], [c, d]]``)."""
        return _nested(self.scalar, self.shape)

    @property
    def scalar_array(self) -> str:
        """The scalar-path expression building the output ndarray (flat list, then reshape)."""
        flat = "np.array([" + ", ".join(self.scalar) + "])"
        return flat if len(self.shape) <= 1 else f"{flat}.reshape({self.shape})"

    @property
    def indexed(self) -> list[tuple[str, str]]:
        """``(index, batch expression)`` for the non-zero entries, index like ``"0, 1"``."""
        result = []
        for position, (expr, is_zero) in enumerate(zip(self.batch, self.zero)):
            if not is_zero:
                index = unravel(position, self.shape)
                result.append((", ".join(map(str, index)), expr))
        return result


@dataclass(frozen=True)
class Kernel:
    """Printed code of one generated function's symbolic part.

    ``scalar_lines``/``batch_lines`` assign the common subexpressions;
    ``outputs`` maps output names to :class:`Output`; ``uses_math``: the
    scalar path calls :mod:`math` (the module imports it only then);
    ``scalar_path``: the module has a scalar path (not for a function
    :attr:`~sls.functions.Function.batch_only`, whose one-state calls are a
    batch of one: ``scalar_lines`` and the outputs' ``scalar`` entries are empty).
    """

    scalar_lines: list
    batch_lines: list
    outputs: dict = field(default_factory=dict)
    uses_math: bool = True
    scalar_path: bool = True


def build_kernel(scalar: Lowered | None, batch: Lowered) -> Kernel:
    """The :class:`Kernel` of an array function from its two lowered paths (``scalar`` ``None``: the batch path
    alone, for a function :attr:`~sls.functions.Function.batch_only`)."""
    outputs = {}
    scalar_entries: list[Expr] = []
    for name in batch.outputs:
        shape, batch_entries, constants = batch.output(name)
        entries = [] if scalar is None else scalar.output(name)[1]
        scalar_entries += entries
        outputs[name] = Output(
            name=name,
            shape=shape,
            scalar=[entry.text() for entry in entries],
            batch=[entry.text() for entry in batch_entries],
            zero=[c == 0.0 for c in constants],
        )
    batch_lines = _lines(reuse_names(batch.printed.lines, reads_of((), batch.printed.entries)), False)
    if scalar is None:
        return Kernel(scalar_lines=[], batch_lines=batch_lines, outputs=outputs, uses_math=False, scalar_path=False)
    return Kernel(
        scalar_lines=_lines(reuse_names(scalar.printed.lines, reads_of((), scalar.printed.entries)), True),
        batch_lines=batch_lines,
        outputs=outputs,
        uses_math=uses_math(_expressions(scalar.printed.lines)) or uses_math(scalar_entries),
    )


def uses_math(exprs: Iterable[Expr]) -> bool:
    """True when the expressions ``exprs`` (of the scalar path) call a :mod:`math` function or read a constant of
    it (``math.sin``, ``math.pi``: library names the scalar printer marks)."""
    return any(expr.refers_to_library("math.") for expr in exprs)


def _expressions(statements: Iterable[Statement]) -> list[Expr]:
    """The expressions of ``statements``."""
    result: list[Expr] = []
    for statement in statements:
        match statement:
            case Let(value=value):
                result.append(value)
            case Check(pivot=pivot):
                result.append(pivot)
            case Fail():
                pass
            case _:
                raise unknown_statement(statement, "the Python target")
    return result


# --------------------------------------------------------------------------
# forward dynamics and linearization: one kernel plus an unrolled solve


@dataclass(frozen=True)
class SolverCode:
    """Code of ``qddot_fun`` or ``linearized_model`` after the argument unpacking.

    ``scalar_lines`` (Python floats) and ``batch_lines`` (arrays with leading
    batch axes) evaluate the fused kernel, factor ``M = L D Lᵀ`` (unrolled
    when ``unrolled``), solve and end with ``return``. A pivot ``≤ 0`` (``M``
    not positive definite) raises ``_NotPositiveDefinite``, caught in the
    same lines, which then hand the assembled arrays to the module's
    ``_generic`` (numpy's Cholesky and solve, raising ``LinAlgError`` naming
    the state). ``uses_math``: the scalar lines call :mod:`math`;
    ``raises``: they raise or catch ``_NotPositiveDefinite``; ``packed``: ``n`` when the scalar lines
    hand ``M`` to numpy built from its upper triangle (:func:`_packed_mass`; the module defines
    ``_M_FROM_UPPER``), else 0.
    """

    scalar_lines: list
    batch_lines: list
    unrolled: bool
    phased: bool = False
    uses_math: bool = True
    raises: bool = True
    packed: int = 0
    #: A packed ``qddot_fun``'s scalar path: ``M``'s upper triangle (packed row by row) with its constant entries
    #: (0.0 where the others go) and the places of the others, which it packs with the right-hand side.
    constants: tuple = ()
    symbolic: tuple = ()


def _assemble(values: Sequence[Value], shape: tuple, scalar: bool) -> str:
    """Code building an array of ``shape`` (batch axes first) from flat ``values``."""
    items = "[" + ", ".join(map(text_of, values)) + "]"
    if scalar:
        return f"np.array({items}, dtype=float).reshape({shape})"
    return f"_stack({items}, _x.shape[:-1], {shape})"


def _packed_mass(M: Sequence[Value], n: int) -> str:
    """Scalar-path code building the ``(n, n)`` array of the symmetric ``M`` (flat, row by row) from its upper
    triangle: numpy converts ``n (n + 1) / 2`` floats instead of ``n²``, packed as C doubles by the module's
    ``_PACK_UPPER`` (a ``struct.Struct(...).pack``; ``np.array`` of a list takes three times as long), and
    ``_M_FROM_UPPER`` maps every entry to its place in the packed triangle)."""
    return "np.frombuffer(" + _packed_upper(M, n) + ")[_M_FROM_UPPER]"


def _packed_upper(M: Sequence[Value], n: int) -> str:
    """Code of the bytes of ``M``'s upper triangle packed row by row as C doubles (the module's ``_PACK_UPPER``)."""
    upper = [M[a * n + b] for a in range(n) for b in range(a, n)]
    return "_PACK_UPPER(" + ", ".join(map(text_of, upper)) + ")"


def _lines(statements: Iterable[Statement], scalar: bool) -> list[str]:
    """``statements`` as lines of Python (``scalar``: on floats, else on arrays of a batch)."""
    lines = []
    for statement in statements:
        match statement:
            case Let(name=name, value=value):
                lines.append(f"{name} = {value.text()}")
            case Check(pivot=pivot):
                lines.append(f"if not {pivot.text()} > 0.0:" if scalar else f"if not np.all({pivot.text()} > 0.0):")
                lines.append("    raise _NotPositiveDefinite")
            case Fail():
                lines.append("raise _NotPositiveDefinite")
            case _:
                raise unknown_statement(statement, "the Python target")
    return lines


def _returns(kind: str, results: dict, n: int, m: int, scalar: bool) -> list:
    """The ``return`` of a solving function of ``kind`` (:attr:`sls.functions.Function.solve`) from its results."""
    if kind == functions.ACCELERATIONS:
        z = results["qddot"]
        if scalar:
            return ["return np.array([" + ", ".join(map(text_of, z)) + "])"]
        return [
            f"_out = np.empty(_x.shape[:-1] + ({n},))",
            *[f"_out[..., {k}] = {text_of(v)}" for k, v in enumerate(z)],
            "return _out",
        ]
    A_rows, B_rows = results["A"], results["B"]
    # (A, B) of x = [q; v] (n_x = n_q + n): the kinematic rows [0 I] when v = q̇, zeros for a model with generalized
    # speeds to fill them (its linearized_model wrapper), then the dynamics rows
    n_x = len(A_rows[0]) if A_rows else 2 * n
    n_q = n_x - n
    top_A = [[1.0 if n_q == n and b == n + a else 0.0 for b in range(n_x)] for a in range(n_q)]
    if scalar:
        A_flat = [v for row in top_A + A_rows for v in row]
        B_flat = [0.0] * (n_q * m) + [v for row in B_rows for v in row]
        return [
            "return (",
            "    np.array([" + ", ".join(map(text_of, A_flat)) + f"]).reshape({(n_x, n_x)}),",
            "    np.array([" + ", ".join(map(text_of, B_flat)) + f"]).reshape({(n_x, m)}),",
            ")",
        ]
    lines = ["_batch = _x.shape[:-1]", f"_A = np.zeros(_batch + ({n_x}, {n_x}))"]
    if n_q == n:
        lines.append(f"_A[..., :{n}, {n}:] = np.eye({n})")
    for a in range(n):
        for col in range(n_x):
            if A_rows[a][col] != 0.0:
                lines.append(f"_A[..., {n_q + a}, {col}] = {text_of(A_rows[a][col])}")
    lines.append(f"_B = np.zeros(_batch + ({n_x}, {m}))")
    for a in range(n):
        for j in range(m):
            if B_rows[a][j] != 0.0:
                lines.append(f"_B[..., {n_q + a}, {j}] = {text_of(B_rows[a][j])}")
    lines.append("return _A, _B")
    return lines


def _phased_lines(kind: str, program: SolveProgram, n: int, m: int, scalar: bool) -> list[str]:
    """A phased program (see :class:`~sls.lowering.SolveProgram`) after its kernel and bindings.

    With the unrolled factorization: solve ``q̈``, bind it, evaluate the late
    entries, solve ``A`` and ``B``; a pivot ``≤ 0`` switches to numpy
    (``_acceleration`` raises ``LinAlgError`` naming the state when ``M`` is
    not positive definite) for ``q̈`` and the final solves (``_generic``).
    """
    assemble = {key: _assemble(program.values[key], program.shapes[key], scalar) for key in program.values}
    unpack = ", ".join(program.accelerations) + ("," if n == 1 else "")
    if scalar:
        numeric = [f"{unpack} = _acceleration(_mass, {assemble['rhs']}, _x).tolist()"]
    else:
        numeric = [f"{unpack} = np.moveaxis(_acceleration(_mass, {assemble['rhs']}, _x), -1, 0)"]
    generic = f"return _generic(_mass, {assemble['residual_jac']}, {assemble['B_u']}, _x)"
    late = _lines(program.late, scalar)
    if not program.unrolled:
        mass = _packed_mass(program.values["M"], n) if scalar else assemble["M"]
        return [f"_mass = {mass}", *numeric, *late, generic]
    lines = ["_factored = True", "try:"]
    lines += ["    " + line for line in _lines(program.factor or [], scalar)] or ["    pass"]
    lines += ["except _NotPositiveDefinite:", "    _factored = False", "if _factored:"]
    solved = _lines(program.steps, scalar) + [
        f"{a} = {text_of(v)}" for a, v in zip(program.accelerations, program.results["qddot"])
    ]
    lines += ["    " + line for line in solved]
    lines += ["else:", f"    _mass = {assemble['M']}", *["    " + line for line in numeric]]
    lines += late
    lines += ["if not _factored:", "    " + generic]
    lines += _lines(program.tail, scalar)
    return lines + _returns(kind, program.results, n, m, scalar)


def solver_code(kind: str, programs: Sequence[SolveProgram], n: int, m: int) -> SolverCode:
    """The :class:`SolverCode` of a solving function of ``kind`` (:attr:`sls.functions.Function.solve`:
    ``qddot_fun``, ``linearized_model``) from its two lowered paths."""
    result = {}
    constants: tuple = ()
    symbolic: tuple = ()
    for scalar, program in zip((True, False), programs):
        early = reads_of((), [v for key, array in program.values.items() if key != "M" for v in array])
        kernel = reuse_names(needed_first(program.lines, early), _read_after_kernel(program))
        lines = _lines(kernel, scalar) + _lines(program.bindings, scalar)
        if program.phased:
            result[scalar] = lines + _phased_lines(kind, program, n, m, scalar)
            continue
        generic = (
            "return _generic("
            + ", ".join(_assemble(program.values[k], program.shapes[k], scalar) for k in program.values)
            + ", _x)"
        )
        if not program.unrolled:
            if scalar:  # the hot path of a large model: M packed
                assembled = {k: _assemble(program.values[k], program.shapes[k], scalar) for k in program.values}
                assembled["M"] = _packed_mass(program.values["M"], n)
                generic = "return _generic(" + ", ".join(assembled.values()) + ", _x)"
                if kind == functions.ACCELERATIONS:  # one LAPACK call on the packed triangle (the module's _packed)
                    M = program.values["M"]
                    upper = [M[a * n + b] for a in range(n) for b in range(a, n)]
                    given = [v for v in upper if not isinstance(v, float)] + list(program.values["rhs"])
                    generic = "return _packed(_PACK_ENTRIES(" + ", ".join(map(text_of, given)) + "), _x)"
                    constants = tuple(v if isinstance(v, float) else 0.0 for v in upper)
                    symbolic = tuple(k for k, v in enumerate(upper) if not isinstance(v, float))
            lines.append(generic)
        else:
            factor_lines = _lines(program.factor or [], scalar)
            if factor_lines:
                lines.append("try:")
                lines += ["    " + line for line in factor_lines]
                lines += ["except _NotPositiveDefinite:", "    " + generic]
            lines += _lines(program.steps, scalar)
            lines += _returns(kind, program.results, n, m, scalar)
        result[scalar] = lines
    return SolverCode(
        scalar_lines=result[True],
        batch_lines=result[False],
        unrolled=programs[0].unrolled,
        phased=programs[0].phased,
        uses_math=uses_math(_expressions(_statements(programs[0]))),
        # a phased program always catches the failure of its factorization; another only when it has one
        raises=programs[0].unrolled and (programs[0].phased or bool(programs[0].factor)),
        packed=0 if programs[0].unrolled else n,
        constants=constants,
        symbolic=symbolic,
    )


def _read_after_kernel(program: SolveProgram) -> set[str]:
    """The names read after ``program``'s kernel (``lines``): by its bindings, factor, solves, late entries and
    the arrays it hands to numpy."""
    later = [*program.bindings, *(program.factor or []), *program.steps, *program.late, *program.tail]
    values = [v for array in program.values.values() for v in array]
    for result in program.results.values():  # q̈ (values), or the rows of A and B
        values += [v for entry in result for v in (entry if isinstance(entry, list) else [entry])]
    return reads_of(later, values)


def _statements(program: SolveProgram) -> list[Statement]:
    """Every statement of ``program``."""
    return [
        *program.lines,
        *program.bindings,
        *(program.factor or []),
        *program.steps,
        *program.late,
        *program.tail,
    ]


def _nested(flat: list, shape: tuple) -> str:
    if not shape:
        return flat[0]
    step = len(flat) // shape[0] if shape[0] else 0
    parts = [_nested(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]
    return "[" + ", ".join(parts) + "]"
