"""Expressions as data: printed code with the names it reads (and the library names it calls) as references.

A backend's printers (sympy code printers, the graph printer of
:mod:`sls.lowering.graph_print`) print each expression once, in the lowering;
what reaches the backends is an :class:`Expr`: the pieces of code between
references (:class:`Ref`), each reference a name the expression reads (a
state, an input, a parameter, a temporary) or a name of the target's
library (``sin``, ``math.sin``, ``np.where``). A backend reads the names
from :attr:`Expr.reads`, renames with :meth:`Expr.text` or
:meth:`Expr.substitute` and never parses printed text.

The printers mark references while printing (:func:`mark_name`,
:func:`mark_library`: control characters no code contains), and the
lowering turns their output into an :class:`Expr` (:meth:`Expr.parse`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

#: Opens a name an expression reads; :data:`END` closes it. (The marks are control characters no code holds,
#: and no line break: sympy's printers split their output into lines.)
NAME = "\x01"
#: Opens a name of the target's library (a function, or a constant such as ``math.pi``); :data:`END` closes it.
LIBRARY = "\x02"
#: Closes a reference.
END = "\x03"


def mark_name(name: str) -> str:
    """``name`` marked as a name the printed expression reads (for a printer's ``_print_Symbol``)."""
    return f"{NAME}{name}{END}"


def mark_library(name: str) -> str:
    """``name`` marked as a name of the target's library (a function or constant the printed code calls)."""
    return f"{LIBRARY}{name}{END}"


@dataclass(frozen=True, slots=True)
class Ref:
    """A reference in an :class:`Expr`: a ``name`` it reads, or (``library``) a name of the target's library."""

    name: str
    library: bool = False


_REFS: dict[tuple[str, bool], Ref] = {}


def _ref(name: str, library: bool) -> Ref:
    """The one :class:`Ref` of ``(name, library)`` (programs hold millions of references to a few names)."""
    key = (name, library)
    found = _REFS.get(key)
    if found is None:
        found = _REFS[key] = Ref(name, library)
    return found


@dataclass(frozen=True, slots=True)
class Expr:
    """A printed expression: ``code[0]``, ``refs[0]``, ``code[1]``, …, ``refs[-1]``, ``code[-1]``.

    ``code`` holds the pieces of code between the references (one more than
    ``refs``); the text is their concatenation (:meth:`text`).
    """

    code: tuple[str, ...]
    refs: tuple[Ref, ...] = ()

    # -- building ---------------------------------------------------------------

    @staticmethod
    def parse(marked: str) -> Expr:
        """The expression a printer printed with its references marked (:func:`mark_name`, :func:`mark_library`)."""
        if END not in marked:
            return Expr((marked,))
        chunks = marked.split(END)
        code: list[str] = []
        refs: list[Ref] = []
        for chunk in chunks[:-1]:
            start = max(chunk.rfind(NAME), chunk.rfind(LIBRARY))
            code.append(chunk[:start])
            refs.append(_ref(chunk[start + 1 :], chunk[start] == LIBRARY))
        code.append(chunks[-1])
        return Expr(tuple(code), tuple(refs))

    @staticmethod
    def name(name: str) -> Expr:
        """The expression reading ``name`` alone."""
        return Expr(("", ""), (_ref(name, False),))

    @staticmethod
    def literal(code: str) -> Expr:
        """Code that reads no name (a number, an operator)."""
        return Expr((code,))

    @staticmethod
    def number(value: float) -> Expr:
        """A float constant as its literal (``repr``: exact, and read alike by Python and C)."""
        return Expr((repr(value),))

    @staticmethod
    def join(*items: str | Expr) -> Expr:
        """The concatenation of ``items`` (pieces of code and expressions)."""
        code = [""]
        refs: list[Ref] = []
        for item in items:
            if isinstance(item, str):
                code[-1] += item
            else:
                code[-1] += item.code[0]
                refs += item.refs
                code += item.code[1:]
        return Expr(tuple(code), tuple(refs))

    # -- reading --------------------------------------------------------------

    @property
    def reads(self) -> tuple[str, ...]:
        """The names the expression reads, in order of appearance (with repeats)."""
        return tuple(ref.name for ref in self.refs if not ref.library)

    @property
    def library(self) -> frozenset[str]:
        """The names of the target's library the expression refers to (those its printer marks)."""
        return frozenset(ref.name for ref in self.refs if ref.library)

    @property
    def is_name(self) -> bool:
        """True when the expression is a name alone."""
        return len(self.refs) == 1 and not self.refs[0].library and self.code == ("", "")

    def text(self, names: Mapping[str, str] | None = None, library: Mapping[str, str] | None = None) -> str:
        """The code, with the names in ``names`` and the library names in ``library`` renamed."""
        code, refs = self.code, self.refs
        if not refs:
            return code[0]
        parts = [code[0]]
        for ref, after in zip(refs, code[1:]):
            table = library if ref.library else names
            parts.append(table.get(ref.name, ref.name) if table else ref.name)
            parts.append(after)
        return "".join(parts)

    def substitute(self, values: Mapping[str, Expr]) -> Expr:
        """The expression with each name of ``values`` (not a library name) replaced by its expression."""
        if not any(not ref.library and ref.name in values for ref in self.refs):
            return self
        items: list[str | Expr] = [self.code[0]]
        for ref, after in zip(self.refs, self.code[1:]):
            items.append(values[ref.name] if not ref.library and ref.name in values else Expr(("", ""), (ref,)))
            items.append(after)
        return Expr.join(*items)

    def __str__(self) -> str:
        return self.text()


def reads(exprs: Iterable[Expr]) -> set[str]:
    """Every name the expressions ``exprs`` read."""
    return {name for expr in exprs for name in expr.reads}


def strip_parens(text: str) -> str:
    """``text`` without one pair of parentheses enclosing all of it."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for position, char in enumerate(text):
        depth += char == "("
        depth -= char == ")"
        if depth == 0 and position < len(text) - 1:
            return text
    return text[1:-1]
