"""sympy.physics.mechanics habits mapped onto sls's: names that are not identifiers (``I_{1zz}``,
``\\theta``) and functions of time (``q(t)``, ``q(t).diff(t)``)."""

from __future__ import annotations

import builtins
import keyword
import re

import sympy

from sls.errors import ModelTypeError
from sls.model import RESERVED_NAMES

#: sympy.physics.mechanics-style names mapped onto identifiers: ``I_{1zz}``, ``m_{1}``, ``\\theta``, ``q'``.
MECHANICS_NAME = re.compile(r"\\?[A-Za-z][A-Za-z0-9_{}^\\',]*")


def symbol_names(values: object) -> set:
    """The names of the symbols in (nested lists and dicts of) sympy objects."""
    found, stack = set(), [values]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack += list(value.values())
        elif isinstance(value, (list, tuple, sympy.MatrixBase)):
            stack += list(value)
        elif isinstance(value, sympy.Basic):
            found |= {s.name for s in value.free_symbols if isinstance(s, sympy.Symbol)}
    return found


def identifier_for(name: str, taken: set) -> str:
    """A plain identifier for a sympy.physics.mechanics-style name.

    ``I_{1zz}`` → ``I_1zz``, ``\\theta`` → ``theta``.
    """
    text = "_".join(part for part in re.split(r"[^0-9A-Za-z]+", name.encode("ascii", "ignore").decode()) if part)
    if not text or text[0].isdigit():
        text = "p_" + text
    if keyword.iskeyword(text) or text in RESERVED_NAMES or hasattr(builtins, text):
        text += "_"
    candidate, count = text, 2
    while candidate in taken:
        candidate, count = f"{text}_{count}", count + 1
    return candidate


def time_functions(entries: list) -> tuple[dict, object]:
    """Map dynamicsymbols in ``entries`` onto plain symbols; and the time symbol.

    ``q(t)`` → ``q``, ``q(t).diff(t)`` → ``dq``.
    """
    mapping, time = {}, None
    for entry in entries:
        base = entry.expr if isinstance(entry, sympy.Derivative) else entry
        if not (isinstance(base, sympy.core.function.AppliedUndef) and len(base.args) == 1 and base.args[0].is_Symbol):
            continue
        if isinstance(entry, sympy.Derivative) and entry.variables != (base.args[0],):
            raise ModelTypeError(f"x: {entry} is a higher derivative; the state holds q(t) and q(t).diff(t) only")
        time = base.args[0]
        name = getattr(base.func, "__name__", str(base.func))
        mapping[entry] = sympy.Symbol(f"d{name}" if isinstance(entry, sympy.Derivative) else name)
    return mapping, time
