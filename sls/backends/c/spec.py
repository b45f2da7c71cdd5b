"""What the C templates (``templates/c``) need about the model and each generated function."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sls import functions
from sls.backends.c.body import CFunction
from sls.backends.c.lanes import Lanes, lane_kernel
from sls.backends.c.names import HEADER_MARK
from sls.backends.c.statements import CallArray, SolveRows, Statement, Zeros, row_block, stores
from sls.lowering.arguments import PARAMETERS, bind_arguments

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model


def c_context(model: Model, prefix: str, names: dict) -> dict:
    """Template variables of the C files."""
    params = list(model.params.items())
    return {
        "prefix": prefix,
        "macro": prefix.upper(),
        "renamed": sorted(names.items()),
        "c_params": [
            {"name": name, "c": names.get(name, name), "default": None if value is None else repr(float(value))}
            for name, value in params
        ],
        "required": [name for name, value in params if value is None],
        "c_state": [names.get(s.name, s.name) for s in model.state],
        "c_inputs": [names.get(s.name, s.name) for s in model.inputs],
        "marker": HEADER_MARK,
        "row_block": row_block(2 * model.n + model.m),
    }


@dataclass(frozen=True)
class COutput:
    """One output of a C function: its ``name``, the ``pointer`` argument it is written through, its ``shape``,
    ``size`` (doubles) and the shape as Python text (``shape_text``)."""

    name: str
    pointer: str
    shape: tuple[int, ...]
    size: int
    shape_text: str


@dataclass(frozen=True)
class Bound:
    """Statements of a C function (or one of its parts) as lines, with their argument binding: ``bindings``
    (``const double`` locals for the names the lines use), ``unused`` (pointers cast to ``void``) and whether
    they read a parameter (``uses_params``); ``fails`` for a part that may return a failure code."""

    lines: list[str]
    bindings: list[str]
    unused: list[str]
    uses_params: bool
    fails: bool = False


@dataclass(frozen=True)
class SolvePattern:
    """The places of the entries of ``L`` (``M = Lᵀ D L``) ``<prefix>_solve_rows`` reads, as C initializers:
    ``row_start``/``row_col`` by rows (entry ``p`` of ``lower`` is ``L[i, row_col[p]]`` for
    ``row_start[i] ≤ p < row_start[i + 1]``), ``col_start``/``col_row``/``col_pos`` by columns (column ``j``
    has ``L[col_row[p], j] = lower[col_pos[p]]`` for ``col_start[j] ≤ p < col_start[j + 1]``). ``size`` is the
    length of the entry arrays (at least 1)."""

    size: int
    row_start: str
    row_col: str
    col_start: str
    col_row: str
    col_pos: str

    @classmethod
    def of(cls, pattern: tuple[tuple[int, int], ...], n: int) -> SolvePattern:
        """The arrays of a pattern ``((i, j), …)`` (``i > j``, row by row) of an ``n × n`` ``L``."""
        by_column = sorted(range(len(pattern)), key=lambda p: (pattern[p][1], pattern[p][0]))

        def starts(index: int) -> str:
            counts = [0] * (n + 1)
            for place in pattern:
                counts[place[index] + 1] += 1
            for k in range(n):
                counts[k + 1] += counts[k]
            return _initializer(counts)

        return cls(
            size=max(len(pattern), 1),
            row_start=starts(0),
            row_col=_initializer([j for _, j in pattern]),
            col_start=starts(1),
            col_row=_initializer([pattern[p][0] for p in by_column]),
            col_pos=_initializer(by_column),
        )


def _initializer(values: list[int]) -> str:
    """``{1, 2, 3}`` (``{0}`` for no values: C has no empty arrays)."""
    return "{" + ", ".join(str(v) for v in values or [0]) + "}"


@dataclass(frozen=True)
class CSpec:
    """What the C templates (``templates/c``) need about one generated function."""

    name: str
    summary: str
    arguments: list[str]
    sizes: list[int]
    outputs: list[COutput]
    solve: bool
    scalar: bool
    bindings: list[str]
    unused: list[str]
    uses_params: bool
    body: list[str]
    parts: list[Bound]
    lanes: Lanes | None
    workspace: int
    pointers: list[str]
    doc: str
    wrapper: bool
    solve_rows: bool = False
    #: The places of ``L``'s entries of a tree's ``solve_rows`` (``M = Lᵀ D L`` leaves first, see
    #: :class:`~sls.backends.c.statements.SolveRows`), ``None`` for the dense ``M = L D Lᵀ``.
    solve_pattern: SolvePattern | None = None
    #: Lines added to the function's comment in the header (its extra argument, the layout of its outputs).
    notes: tuple[str, ...] = ()
    #: Whether the function's parts are also built for AVX2 and FMA (``<PREFIX>_CLONES``; the solving functions).
    clones: bool = False
    #: Entries at the start of each output that the single-state call from Python does not check for being finite:
    #: a robot's ``linearized_model``'s upper rows of ``A`` and ``B`` (``[0 I]``, or ``[−ad(v)/2, I]`` for a
    #: quaternion base, and zeros) come from the state alone, which that call has checked (see
    #: :func:`_state_rows`).
    unchecked: tuple[int, int] = (0, 0)


def function_spec(function: functions.Function, model: Model, prefix: str, names: dict, code: CFunction) -> CSpec:
    """What the C templates need about one generated function."""
    arguments = [a.name for a in function.arguments]
    outputs = []
    for name, shape in function.outputs:
        dims = functions.model_sizes(shape, model)
        pointer = "out" if len(function.outputs) == 1 else name
        outputs.append(COutput(name, pointer, dims, math.prod(dims), repr(dims)))
    pointers = arguments + [PARAMETERS] + [o.pointer for o in outputs]

    def bound(statements: list[Statement], extra: tuple = (), source: str = "{argument}[{k}]") -> Bound:
        """A part's argument binding: ``const double`` locals for the names it uses, ``(void)`` for unused pointers."""
        used = {name for s in statements for name in s.reads} | {w for s in statements for w in stores(s)}
        entries = bind_arguments(arguments + [PARAMETERS], model, used, lambda name: names.get(name, name))
        bindings = [f"const double {e.local} = {source.format(argument=e.argument, k=e.index)};" for e in entries]
        taken = {e.argument for e in entries}
        unused = [a for a in pointers + list(extra) if a not in taken and a not in used]
        return Bound(code.lines(statements), bindings, unused, PARAMETERS in taken)

    parts = []
    if len(code.parts) > 1 or code.workspace:  # parts, or one part with a workspace (SolveRows' R)
        for part in code.parts:
            b = bound(part.statements, ("w",))
            parts.append(Bound(b.lines, b.bindings, b.unused, b.uses_params, part.fails))
    if parts:
        main = Bound([], [], [], any(q.uses_params for q in parts))
    else:
        main = bound(code.statements)
    lanes = lane_kernel(code, prefix) if function.solve else None
    if lanes is not None:
        binding = bound([s for s in code.statements if not isinstance(s, Zeros)], source="_lane_{argument}[{k}][i]")
        lanes = Lanes(lanes.lines, lanes.stores, lanes.trig, binding.bindings)
    signature = ", ".join(arguments)
    if model.params:
        signature += ", *, " + ", ".join(p if v is None else f"{p}={float(v)!r}" for p, v in model.params.items())
    doc = f"{function.name}($module, {signature})\n--\n\n{function.summary}\n\n" + _argument_doc(function, model)
    return CSpec(
        name=function.name,
        summary=function.summary,
        arguments=arguments,
        sizes=[functions.model_sizes((a.size,), model)[0] for a in function.arguments],
        outputs=outputs,
        solve=bool(function.solve),
        scalar=function.outputs[0][1] == (),
        bindings=main.bindings,
        unused=[a for a in main.unused if a != PARAMETERS] if not parts else [],
        uses_params=main.uses_params,
        body=main.lines,
        parts=parts,
        lanes=lanes,
        workspace=code.workspace,
        pointers=pointers,
        doc=c_string(doc),
        wrapper=function.uses is not None,
        solve_rows=any(isinstance(s, SolveRows) for s in code.statements),
        solve_pattern=_solve_pattern(code.statements),
        notes=_notes(function, model),
        clones=bool(function.solve),
        unchecked=_state_rows(code.statements),
    )


def _state_rows(statements: list[Statement]) -> tuple[int, int]:
    """The entries of ``A`` and ``B`` written from the state alone, at their start: the upper ``n`` rows of a
    ``linearized_model`` that solves in loops (:class:`~sls.backends.c.statements.SolveRows`) and writes those
    rows itself (no call of ``qdot_jac_fun``); ``(0, 0)`` for any other function."""
    rows = [s for s in statements if isinstance(s, SolveRows)]
    if len(rows) != 1 or any(isinstance(s, CallArray) for s in statements):
        return (0, 0)
    n, m = rows[0].n, rows[0].m
    return (2 * n * n, n * m)


def _solve_pattern(statements: list[Statement]) -> SolvePattern | None:
    """The :class:`SolvePattern` of a tree's :class:`~sls.backends.c.statements.SolveRows`, if any."""
    for statement in statements:
        if isinstance(statement, SolveRows) and statement.pattern is not None:
            return SolvePattern.of(statement.pattern, statement.n)
    return None


def _notes(function: functions.Function, model: Model) -> tuple[str, ...]:
    """Lines of the function's comment in the header besides its outputs."""
    notes = [f"qddot: {model.n} accelerations."] if functions.ACCELERATION in function.arguments else []
    speeds = getattr(model, "kinematics", None) is not None
    if function.solve == functions.LINEARIZATION and model.n_q != model.n:
        notes.append("In the tangent space (2n = 2 N_DOF): dx = [dq; dv], dq as pinocchio.integrate takes it.")
        notes.append("A = [[-ad(v_base)/2 on the base block, I], [dvdot/dq S(q), dvdot/dv]], B = [[0], [M^-1 B_u]].")
    elif function.solve == functions.LINEARIZATION and speeds:
        notes.append("A = [[d(S(q) v)/dx], [dvdot/dx]] (upper rows: qdot_jac_fun), B = [[0], [M^-1 B_u]].")
    elif function.solve == functions.LINEARIZATION:
        notes.append("A = [[0, I], [dqddot/dx]], B = [[0], [M^-1 B_u]].")
    if function.uses and speeds:
        notes.append("out = [S(q) v; vdot]: qdot_fun, then qddot_fun (vdot, the speeds' rates).")
    return tuple(notes)


def _argument_doc(function: functions.Function, model: Model) -> str:
    """The arguments and results of a compiled function, for its docstring (the Python target's conventions)."""
    lines = []
    for argument in function.arguments:
        size = functions.model_sizes((argument.size,), model)[0]
        what = {
            "x": f"state [{', '.join(s.name for s in model.state)}]",
            "u": f"input [{', '.join(s.name for s in model.inputs)}]",
        }
        lines.append(
            f"{argument.name}: shape ({size},) or (..., {size}), the {what.get(argument.name, 'accelerations')}; "
            "leading axes are a batch."
        )
    for name, shape in function.outputs:
        dims = functions.model_sizes(shape, model)
        lines.append(
            f"Returns {name}: "
            + (
                "a float, or an array of shape (...) for a batch."
                if not dims
                else f"shape {dims}, or (...,) + {dims} for a batch."
            )
        )
    if model.params:
        lines.append("Parameters are keyword arguments (numbers, or arrays broadcast against the batch).")
    return "\n".join(lines)


def c_string(text: str) -> str:
    """``text`` as a C string literal (ASCII; one source line per text line)."""
    escaped = text.encode("ascii", "backslashreplace").decode().replace("\\", "\\\\").replace('"', '\\"')
    parts = escaped.split("\n")
    return "\n".join(f'"{part}\\n"' if k < len(parts) - 1 else f'"{part}"' for k, part in enumerate(parts))
