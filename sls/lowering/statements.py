"""The statements of a lowered program and the values of a solve: what every backend turns into its language.

Each statement says which names it reads and writes (:attr:`Let.reads`,
:attr:`Let.writes`, …), so a backend schedules, prunes and binds arguments
from data. A backend handles every kind with an exhaustive ``match`` whose
last case raises :func:`unknown_statement`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sls.lowering.expr import Expr


@dataclass(frozen=True)
class Let:
    """Bind ``value`` to ``name``: a temporary, an entry or a step of a solve. The backend writes the binding."""

    name: str
    value: Expr

    @property
    def reads(self) -> tuple[str, ...]:
        """The names ``value`` reads."""
        return self.value.reads

    @property
    def writes(self) -> tuple[str, ...]:
        """The name it binds."""
        return (self.name,)


@dataclass(frozen=True)
class Check:
    """The pivot ``pivot`` (a name) must be positive; otherwise ``M`` is not positive definite."""

    pivot: Expr

    @property
    def reads(self) -> tuple[str, ...]:
        return self.pivot.reads

    @property
    def writes(self) -> tuple[str, ...]:
        return ()


@dataclass(frozen=True)
class Fail:
    """A pivot is ≤ 0 whatever the state: ``M`` is never positive definite."""

    @property
    def reads(self) -> tuple[str, ...]:
        return ()

    @property
    def writes(self) -> tuple[str, ...]:
        return ()


#: A statement of a lowered program: what a backend turns into a line of its language.
Statement = Let | Check | Fail

#: A value in a solve: a float constant known at generation time, or an expression (a name, or arithmetic
#: over names and float literals with ``+ - * /``, which reads the same in Python, C and MATLAB).
Value = float | Expr


def unknown_statement(statement: object, target: str) -> TypeError:
    """The error of a backend meeting a statement kind it does not handle (raise it from a ``match``'s last case)."""
    return TypeError(f"{target}: unknown statement kind {type(statement).__name__}: {statement!r}")


def text_of(value: Value) -> str:
    """A value as code (a float constant as its literal)."""
    return repr(value) if isinstance(value, float) else value.text()


def expr_of(value: Value) -> Expr:
    """A value as an expression (a float constant as its literal)."""
    return Expr.number(value) if isinstance(value, float) else value


def is_name(value: Value) -> bool:
    """True when ``value`` is a name alone (not a constant, not an expression)."""
    return not isinstance(value, float) and value.is_name


def negated(value: Value) -> Value:
    """``−value`` for a float constant or an expression (a name: then ``-name``)."""
    return -value if isinstance(value, float) else Expr.join("-", value)
