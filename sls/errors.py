"""Exception hierarchy of sls.

Every mistake a user can make ends in one of these, with a one-line message
that says what is wrong and where. The CLI prints only the message and maps
the class to an exit code (:data:`ModelError` → 1, :data:`UsageError` → 2).

* :class:`SlsError` — base of all sls errors.
* :class:`ExpressionError` (``ValueError``) — an expression string that does
  not parse or uses something outside the whitelist.
* :class:`ModelError` (``ValueError``) — a model that parses but is wrong
  (T not quadratic in q̇, wrong ``fric`` length, singular mass matrix, ...).
* :class:`ModelFileError` (``ModelError``) — a model file that is missing,
  unreadable, malformed, or lacks a key.
* :class:`ModelTypeError` (``TypeError``) — a Python-API argument of the wrong
  type (e.g. ``T`` is a string instead of a sympy expression).
* :class:`UsageError` (``ValueError``) — command-line usage mistakes such as
  ``--param`` text that is not ``NAME=NUMBER``.
* :class:`OutputError` (``ValueError``) — the output directory cannot be
  written safely (it is a file, or holds a file sls did not write).
"""

from __future__ import annotations


class SlsError(Exception):
    """Base class of every error sls raises on purpose.

    The message is always one line: embedded line breaks (from a TOML
    decoder, a user's exception text, a printed sympy term) are folded into
    spaces, so the CLI's ``error: ...`` line is exactly one line.
    """

    exit_code = 1

    def __init__(self, *args: object) -> None:
        if len(args) == 1 and isinstance(args[0], str):
            args = (one_line(args[0]),)
        super().__init__(*args)


def one_line(text: str) -> str:
    """``text`` with every run of whitespace containing a line break folded into one space."""
    if text.splitlines() == [text]:
        return text
    return " ".join(part.strip() for part in text.splitlines() if part.strip())


def brief(value: object, limit: int = 160) -> str:
    """``str(value)`` on one line, shortened to ``limit`` characters (for terms in messages)."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ExpressionError(SlsError, ValueError):
    """An expression string does not parse or uses a forbidden construct."""


class ModelError(SlsError, ValueError):
    """The model is malformed (wrong shapes, non-quadratic T, singular M, ...)."""


class ModelFileError(ModelError):
    """A model file is missing, unreadable, malformed or lacks a key."""


class ModelTypeError(SlsError, TypeError):
    """A Python-API argument has the wrong type."""


class UsageError(SlsError, ValueError):
    """The command line was used wrongly."""

    exit_code = 2


class OutputError(SlsError, ValueError):
    """The output directory cannot be written without losing something."""


class ControlError(SlsError, ValueError):
    """A control-workflow request that cannot be met (:mod:`sls.control`).

    E.g. a state no input can hold at rest, a pair (x_eq, u_eq) that is not an
    equilibrium, an (A, B) that is not stabilizable, or weights Q, R of the
    wrong shape.
    """


class DesignFileError(ControlError):
    """A saved control design (``sls lqr --save FILE``, :func:`sls.control.save_design`) is missing or is not
    a design file. The command line exits with 2 for it, as for a usage mistake."""

    exit_code = 2


class MissingDependencyError(SlsError, RuntimeError):
    """An optional dependency (e.g. matplotlib for plots) is not installed."""
