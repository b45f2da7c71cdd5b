"""Statements (sls/lowering/statements.py): what each reads and writes, and every backend's exhaustive handling of
their kinds: a kind a backend does not know fails loudly, naming it, instead of vanishing from the code."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from sls import backends, functions
from sls.lowering import Check, Expr, Fail, Let, Lowered, Printed, SolveProgram
from sls.readers import load_example


@dataclass(frozen=True)
class Jump:
    """A statement kind no backend knows."""

    label: str

    @property
    def reads(self) -> tuple[str, ...]:
        return ()

    @property
    def writes(self) -> tuple[str, ...]:
        return ()


def test_statements_say_what_they_read_and_write():
    value = Expr.join(Expr.name("a"), "*", Expr.name("_t0"), " + 1.0")
    assert Let("_t1", value).reads == ("a", "_t0") and Let("_t1", value).writes == ("_t1",)
    assert Check(Expr.name("_d0")).reads == ("_d0",) and Check(Expr.name("_d0")).writes == ()
    assert Fail().reads == () and Fail().writes == ()


@pytest.mark.parametrize("target", backends.TARGETS)
def test_an_unknown_statement_in_a_kernel_fails_loudly(target):
    model = load_example("pendulum")
    backend = backends.backend(target)
    lines = [Let("_t0", Expr.number(2.0)), Jump("L1")]
    printed = Printed(lines=lines, entries=[Expr.name("_t0")], constants=[None])  # type: ignore[arg-type]
    lowered = [Lowered(printed, {"M": ((1, 1), slice(0, 1))}) for _ in backend.paths(model)]
    with pytest.raises(TypeError, match="unknown statement kind Jump"):
        backend.kernel(functions.BY_NAME["M_fun"], lowered, model)


@pytest.mark.parametrize("target", backends.TARGETS)
def test_an_unknown_statement_in_a_solve_fails_loudly(target):
    model = load_example("pendulum")
    backend = backends.backend(target)
    values = {"M": [1.0], "rhs": [Expr.name("g")]}
    shapes = {"M": (1, 1), "rhs": (1,)}
    program = SolveProgram([], [Jump("L2")], values, shapes, factor=[], results={"qddot": [Expr.name("g")]})  # type: ignore[list-item]
    with pytest.raises(TypeError, match="unknown statement kind Jump"):
        backend.solver(functions.BY_NAME["qddot_fun"], [program] * len(backend.paths(model)), model)
