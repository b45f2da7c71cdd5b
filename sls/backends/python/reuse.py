"""Temporaries of a large straight-line kernel bound to the names of dead ones (:func:`reuse_names`).

A generated kernel binds each shared temporary to a name of its own (``_g0, _g1, …``). CPython keeps every
bound value alive until the function returns, and a function's frame holds a slot per name: iCub's
``qddot_fun`` had 3 159 locals. Past about 1 900 slots a frame no longer fits the interpreter's 16 KiB stack
chunk and every call allocates and frees one (about 10 µs on the project's machine, 3.11); and values that
stay alive are allocated afresh instead of from the float free list. So a kernel of more than
:data:`REUSE_ABOVE` temporaries binds each new temporary to the name of one no longer read (the most
recently freed, a stack), as a register allocator would: the value it held is released there, and the
frame needs a slot per temporary *alive at once*. Smaller kernels keep one name per temporary (what they
gain is small, the code reads as the lowering named it).

Only the kernel's own statements are renamed: a name read after them (an output entry, a binding, a step
of the solve) keeps its name and its value. The result is deterministic (same statements, same names).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from sls.lowering import Expr, Let, Statement, Value

#: Kernels with more temporaries than this reuse the names of dead ones (see the module docstring).
REUSE_ABOVE = 600


def reads_of(statements: Iterable[Statement], values: Iterable[Value] = ()) -> set[str]:
    """The names read by ``statements`` and by the expressions among ``values`` (float constants read none)."""
    found: set[str] = set()
    for statement in statements:
        found.update(statement.reads)
    for value in values:
        if not isinstance(value, float):
            found.update(value.reads)
    return found


def needed_first(statements: Sequence[Statement], early: set[str]) -> list[Statement]:
    """``statements`` (``Let``\\ s, each name bound once, in an order that binds names before reading them) with
    those the names ``early`` need moved first, each part in its own order: what is computed for the other
    outputs (``M``, read only at the end) no longer stays alive while the early ones are computed."""
    if len(statements) <= REUSE_ABOVE or not all(isinstance(s, Let) for s in statements):
        return list(statements)
    needed = set(early)
    first: list[Statement] = []
    for statement in reversed(statements):  # a name is read after it is bound: one sweep from the end
        if isinstance(statement, Let) and statement.name in needed:
            needed.update(statement.reads)
            first.append(statement)
    chosen = {id(s) for s in first}
    return first[::-1] + [s for s in statements if id(s) not in chosen]


def reuse_names(statements: Sequence[Statement], kept: set[str]) -> list[Statement]:
    """``statements`` (a kernel's ``Let``\\ s, each name bound once) with every temporary not in ``kept`` bound to
    the name of a temporary no longer read, when there are more than :data:`REUSE_ABOVE` of them; else (or when
    a statement is not a ``Let``) the statements as they are. ``kept``: the names read after the statements."""
    if len(statements) <= REUSE_ABOVE or not all(isinstance(s, Let) for s in statements):
        return list(statements)
    lets: list[Let] = [s for s in statements if isinstance(s, Let)]
    last: dict[str, int] = {}
    for position, let in enumerate(lets):
        for name in let.reads:
            last[name] = position
    renamed: dict[str, str] = {}  # a live temporary's original name -> the name it is bound to
    free: list[str] = []  # names whose values are no longer read, most recently freed last
    result: list[Statement] = []
    for position, let in enumerate(lets):
        value = let.value
        reads = [name for name in dict.fromkeys(value.reads) if name in renamed]
        if reads:
            value = value.substitute({name: Expr.name(renamed[name]) for name in reads})
        for name in dict.fromkeys(let.reads):  # values read here for the last time: their names are free
            if last[name] == position and name in renamed:
                free.append(renamed.pop(name))
        name = let.name
        if name not in kept:
            bound = free.pop() if free else name
            if last.get(name, position) > position:
                renamed[name] = bound
            else:  # never read: its name is free again at once
                free.append(bound)
            name = bound
        result.append(Let(name, value))
    return result
