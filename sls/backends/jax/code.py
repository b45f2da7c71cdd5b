"""The JAX target's code: the lowered programs (:mod:`sls.lowering`) as the lines of its templates.

Every function body evaluates **one** state: the states, inputs and parameters are scalars (0-d arrays or
tracers), the shared temporaries (``_t0, …`` / ``_g0, …``) are ``jnp`` expressions of them, and an output is
``jnp.array`` of its flat entries reshaped. The package's public functions batch such a body over leading axes
by :func:`jax.vmap` (``templates/jax/_runtime.py.j2``). The solving functions assemble ``M`` and their
right-hand sides and call the runtime's Cholesky solve (no explicit inverse).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sls.lowering import Let, Lowered, SolveProgram, Statement, Value, expr_of, text_of, unknown_statement


@dataclass(frozen=True)
class JaxOutput:
    """One output of a kernel: its name, shape and the expression of its array (``jnp.array`` of the flat
    entries, reshaped; a scalar output is its one entry), and ``entries``, the same flat entries as a Python list
    (numbers where known: the runtime's Cholesky factor skips the known zeros)."""

    name: str
    shape: tuple
    array: str
    entries: str = "[]"


@dataclass(frozen=True)
class JaxKernel:
    """One function's body: ``lines`` bind the temporaries, ``outputs`` name → :class:`JaxOutput`."""

    lines: list
    outputs: dict


@dataclass(frozen=True)
class JaxSolver:
    """A solving function's body: ``lines`` bind the temporaries; ``arrays`` build the assembled arrays of one
    state by name (``M`` n×n, ``rhs``, and for ``linearized_model`` ``dM`` and ``drhs`` or, phased,
    ``residual_jac``, then ``B_u``); ``entries`` the same arrays as Python lists of their flat entries (C order;
    numbers where known), which the runtime's Cholesky factor reads (``M``, ``rhs``). A phased program binds
    ``accelerations`` to the solved ``q̈`` and runs ``late`` before its last solve (see
    :class:`~sls.lowering.SolveProgram`)."""

    lines: list
    arrays: dict
    accelerations: list = field(default_factory=list)
    late: list = field(default_factory=list)
    entries: dict = field(default_factory=dict)

    @property
    def phased(self) -> bool:
        return bool(self.accelerations)


def array_text(entries: Sequence[str], shape: tuple) -> str:
    """The expression of an array of ``shape`` from its flat entries (C order), of the state's type."""
    if not shape:
        return f"_runtime.scalar({entries[0]}, _x.dtype)"
    flat = "_runtime.array([" + ", ".join(entries) + "], _x.dtype)"
    return flat if len(shape) == 1 else f"{flat}.reshape({shape})"


#: Calls whose values are computed once (:func:`separated`): sines and cosines, bounded, so that the runtime's
#: ``separate`` keeps every finite value exact.
SEPARATED = ("jnp.sin(", "jnp.cos(")


def separated(names: Sequence[str]) -> str:
    """The line passing the temporaries ``names`` through the runtime's ``separate``: XLA then computes each once
    instead of copying it (and what it is made of) into every kernel that reads it."""
    return f"{', '.join(names)}, = _runtime.separate({', '.join(names)})"


def readers(statements: Iterable[Statement], values: Iterable[Value] = ()) -> Counter:
    """How many of ``statements`` and ``values`` (the outputs' entries) read each name."""
    count: Counter = Counter()
    for reads in [statement.reads for statement in statements] + [expr_of(value).reads for value in values]:
        count.update(set(reads))
    return count


def kept(name: str) -> str:
    """The line passing the temporary ``name`` through the runtime's ``keep``: computed once (not copied into every
    kernel reading it) when one state is compiled on its own; unchanged otherwise."""
    return f"{name} = _runtime.keep({name})"


def lines_of(statements: Iterable[Statement], read_by: Counter | None = None) -> list[str]:
    """The ``Let`` statements as lines of Python (a JAX body has no checks: it cannot raise on values). The
    temporaries holding a sine or cosine are separated (:func:`separated`) before the first statement that
    reads one of them, and at the end; those that ``read_by`` (name → readers) says are read more than once pass
    through the runtime's ``keep`` (:func:`kept`) after their binding when their expression holds two references or
    more (names read or functions called: ``-a`` and ``0.5*a``, one operation, are not worth a kernel of their
    own)."""
    lines: list[str] = []
    pending: list[str] = []
    read_by = read_by if read_by is not None else Counter()
    for statement in statements:
        match statement:
            case Let(name=name, value=value):
                if pending and not pending_free(statement.reads, pending):
                    lines.append(separated(pending))
                    pending = []
                text = value.text()
                lines.append(f"{name} = {text}")
                if any(call in text for call in SEPARATED):
                    pending.append(name)
                elif read_by[name] > 1 and len(value.refs) > 1:
                    lines.append(kept(name))
            case _:
                raise unknown_statement(statement, "the JAX target")
    if pending:
        lines.append(separated(pending))
    return lines


def pending_free(reads: Iterable[str], pending: Sequence[str]) -> bool:
    """Whether a statement reading ``reads`` reads none of the ``pending`` temporaries."""
    return not set(reads) & set(pending)


def build_kernel(lowered: Lowered) -> JaxKernel:
    """The :class:`JaxKernel` of an array function from its lowered path."""
    outputs, values = {}, []
    for name in lowered.outputs:
        shape, entries, _ = lowered.output(name)
        texts = [entry.text() for entry in entries]
        outputs[name] = JaxOutput(name, shape, array_text(texts, shape), "[" + ", ".join(texts) + "]")
        values += entries
    statements = lowered.printed.lines
    return JaxKernel(lines=lines_of(statements, readers(statements, values)), outputs=outputs)


def _values_text(values: Sequence[Value], shape: tuple) -> str:
    return array_text([text_of(v) for v in values], shape)


def _entries_text(values: Sequence[Value]) -> str:
    """The flat entries as a Python list (numbers stay numbers: the runtime's factor skips the known zeros)."""
    return "[" + ", ".join(text_of(v) for v in values) + "]"


def solver_code(program: SolveProgram) -> JaxSolver:
    """The :class:`JaxSolver` of a solving function from its lowered program (not unrolled)."""
    statements = [*program.lines, *program.bindings, *program.late]
    read_by = readers(statements, [value for values in program.values.values() for value in values])
    lines = lines_of(program.lines, read_by) + lines_of(program.bindings, read_by)  # an unknown statement fails here
    if program.unrolled:
        raise ValueError("the JAX target solves from the assembled arrays (unroll_max = 0)")
    return JaxSolver(
        lines=lines,
        arrays={key: _values_text(program.values[key], program.shapes[key]) for key in program.values},
        accelerations=list(program.accelerations),
        late=lines_of(program.late, read_by),
        entries={key: _entries_text(program.values[key]) for key in ("M", "rhs") if key in program.values},
    )
