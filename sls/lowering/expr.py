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


class Expr:
    """A printed expression: ``code[0]``, ``refs[0]``, ``code[1]``, …, ``refs[-1]``, ``code[-1]``.

    ``code`` holds the pieces of code between the references (one more than
    ``refs``); the text is their concatenation (:meth:`text`). Immutable.

    Programs hold hundreds of thousands of expressions, most printed once and
    never renamed: an expression keeps the printer's marked text (compact,
    joined by concatenation) and decodes its references on first use.
    """

    __slots__ = ("_marked", "_code", "_refs", "_reads")

    _code: tuple[str, ...]
    _refs: tuple[Ref, ...]
    _reads: tuple[str, ...]

    def __init__(self, marked: str) -> None:
        self._marked = marked  # _code, _refs and _reads are set when first read (_decode, reads)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Expr) and self._marked == other._marked

    def __hash__(self) -> int:
        return hash(self._marked)

    def __repr__(self) -> str:
        return f"Expr({self.code!r}, {self.refs!r})"

    # -- building ---------------------------------------------------------------

    @staticmethod
    def parse(marked: str) -> Expr:
        """The expression a printer printed with its references marked (:func:`mark_name`, :func:`mark_library`)."""
        return Expr(marked)

    @staticmethod
    def name(name: str) -> Expr:
        """The expression reading ``name`` alone."""
        return Expr(f"{NAME}{name}{END}")

    @staticmethod
    def literal(code: str) -> Expr:
        """Code that reads no name (a number, an operator)."""
        return Expr(code)

    @staticmethod
    def number(value: float) -> Expr:
        """A float constant as its literal (``repr``: exact, and read alike by Python and C)."""
        return Expr(repr(value))

    @staticmethod
    def join(*items: str | Expr) -> Expr:
        """The concatenation of ``items`` (pieces of code and expressions)."""
        return Expr("".join([item if type(item) is str else item._marked for item in items]))  # type: ignore[union-attr]

    # -- reading --------------------------------------------------------------

    def _decode(self) -> tuple[tuple[str, ...], tuple[Ref, ...]]:
        """``(code, refs)``, decoded from the marked text once."""
        try:
            return self._code, self._refs
        except AttributeError:
            marked = self._marked
            if END not in marked:
                self._code, self._refs = (marked,), ()
                return self._code, ()
            chunks = marked.split(END)  # each but the last: code, then one reference's mark and name
            last = chunks.pop()
            code: list[str] = []
            refs: list[Ref] = []
            for chunk in chunks:
                before, mark, name = chunk.rpartition(NAME)
                if not mark:
                    before, _, name = chunk.rpartition(LIBRARY)
                refs.append(Ref(name, not mark))
                code.append(before)
            code.append(last)
            self._code, self._refs = tuple(code), tuple(refs)
            return self._code, self._refs

    @property
    def code(self) -> tuple[str, ...]:
        """The pieces of code between the references."""
        return self._decode()[0]

    @property
    def refs(self) -> tuple[Ref, ...]:
        """The references, in order of appearance."""
        return self._decode()[1]

    @property
    def reads(self) -> tuple[str, ...]:
        """The names the expression reads, in order of appearance (with repeats)."""
        try:
            return self._reads
        except AttributeError:
            marked = self._marked
            if NAME not in marked:
                self._reads = ()
                return ()
            chunks = marked.split(END)  # each but the last: code, then one reference's mark and name
            chunks.pop()
            found = tuple([name for _, mark, name in (chunk.rpartition(NAME) for chunk in chunks) if mark])
            self._reads = found
            return found

    @property
    def library(self) -> frozenset[str]:
        """The names of the target's library the expression refers to (those its printer marks)."""
        if LIBRARY not in self._marked:
            return frozenset()
        return frozenset([ref.name for ref in self._decode()[1] if ref.library])

    def refers_to_library(self, prefix: str) -> bool:
        """True when a library name the expression refers to starts with ``prefix`` (``"math."``); reads the
        marked text without decoding it (cheap on a large robot's millions of entries)."""
        return f"{LIBRARY}{prefix}" in self._marked

    @property
    def is_name(self) -> bool:
        """True when the expression is a name alone."""
        marked = self._marked
        return marked.startswith(NAME) and marked.find(END) == len(marked) - 1

    def text(self, names: Mapping[str, str] | None = None, library: Mapping[str, str] | None = None) -> str:
        """The code, with the names in ``names`` and the library names in ``library`` renamed."""
        marked = self._marked
        if END not in marked:
            return marked
        if not names and not library:
            return marked.replace(NAME, "").replace(LIBRARY, "").replace(END, "")
        code, refs = self._decode()
        parts = [code[0]]
        for ref, after in zip(refs, code[1:]):
            table = library if ref.library else names
            parts.append(table.get(ref.name, ref.name) if table else ref.name)
            parts.append(after)
        return "".join(parts)

    def substitute(self, values: Mapping[str, Expr]) -> Expr:
        """The expression with each name of ``values`` (not a library name) replaced by its expression."""
        if not any(name in values for name in self.reads):
            return self
        chunks = self._marked.split(END)  # each but the last: code, then one reference's mark and name
        last = chunks.pop()
        parts: list[str] = []
        for chunk in chunks:
            before, mark, name = chunk.rpartition(NAME)
            if mark and name in values:
                parts += (before, values[name]._marked)
            else:
                parts += (chunk, END)
        parts.append(last)
        return Expr("".join(parts))

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
