"""Safe parsing of expression strings into sympy objects.

Expression strings come from model files and command-line flags, which may be
shared, so they are *data*: they are never passed to ``eval``, ``exec``,
``sympify`` or ``parse_expr``. Instead the text is parsed with :func:`ast.parse`
and the syntax tree is walked with a whitelist, building sympy objects
directly. Accepted:

* numbers (``int`` and ``float`` literals), ``pi``;
* names (plain identifiers not starting with ``_``) → real sympy symbols;
* ``+ - * / **`` and unary ``+ -``; ``^`` means ``**`` (MATLAB habit, same
  precedence as ``**``; note it is right-associative like Python's ``**``);
* calls of the whitelisted functions in :data:`FUNCTIONS` with the right
  number of positional arguments.

Everything else (attribute access, subscripts, lambdas, keyword arguments,
comparisons, strings, calls of other names, dunder names) raises
:class:`~sls.errors.ExpressionError` naming the offending piece. Size,
nesting depth and numeric exponents are bounded so no input can hang the
parser or exhaust memory.

The length bound is generous (:data:`MAX_LENGTH`, megabytes): machine-written
models of real robots have sums of thousands of terms, and parsing stays
linear in the length. Python 3.11+'s :func:`ast.parse` refuses a flat sum of
more than a few thousand terms (``a + b + ...`` is a left-nested tree, and
building it hits the interpreter's recursion limit); such a text is split at
its top-level ``+``/``-`` signs, each term parsed on its own, and the terms
joined again into the very tree :func:`ast.parse` would have built (see
:func:`_parse_tree`). The recursion limit is never raised.
"""

from __future__ import annotations

import ast
import keyword
import math
import re
import warnings
from collections.abc import Callable

import sympy

from sls.errors import ExpressionError

#: Whitelisted functions: name → (sympy constructor, number of arguments).
FUNCTIONS: dict[str, tuple[Callable[..., sympy.Expr], int]] = {
    "sin": (sympy.sin, 1),
    "cos": (sympy.cos, 1),
    "tan": (sympy.tan, 1),
    "asin": (sympy.asin, 1),
    "acos": (sympy.acos, 1),
    "atan": (sympy.atan, 1),
    "atan2": (sympy.atan2, 2),
    "sinh": (sympy.sinh, 1),
    "cosh": (sympy.cosh, 1),
    "tanh": (sympy.tanh, 1),
    "exp": (sympy.exp, 1),
    "log": (sympy.log, 1),
    "sqrt": (sympy.sqrt, 1),
    "abs": (sympy.Abs, 1),
    "sign": (sympy.sign, 1),
    # Piecewise-smooth functions for contact-style laws (k*Max(0, -y)^2, c*Heaviside(-y)*dy): their
    # derivatives are taken piece by piece (sls.algebra.calculus.diff), so derived terms stay finite.
    "Max": (sympy.Max, 2),
    "Min": (sympy.Min, 2),
    "Heaviside": (sympy.Heaviside, 1),
}

#: Named constants.
CONSTANTS: dict[str, sympy.Expr] = {"pi": sympy.pi}

#: Longest accepted expression text, in characters: 4 MB, some 100 000 terms of
#: a machine-written kinetic energy. Parsing is linear, about 10-20 µs per
#: character (mostly sympy building the terms).
MAX_LENGTH = 4_000_000
#: Deepest accepted nesting of operations and calls.
MAX_DEPTH = 200
#: Largest accepted magnitude of a numeric exponent.
MAX_EXPONENT = 100
#: Largest accepted magnitude of a number literal.
MAX_LITERAL = 1e300


def symbol(name: str) -> sympy.Symbol:
    """The sympy symbol sls uses for ``name``: real-valued, no other assumptions."""
    return sympy.Symbol(name, real=True)


def parse_expression(text: str, what: str = "expression") -> sympy.Expr:
    """Parse ``text`` into a sympy expression without executing anything.

    Parameters
    ----------
    text : str
        The expression, e.g. ``"1/2*m*l^2*dq^2"``.
    what : str
        What the expression is (``"T"``, ``"fric[2]"``), used in error messages.

    Returns
    -------
    sympy.Expr
        The expression; every name becomes ``Symbol(name, real=True)``.

    Raises
    ------
    ExpressionError
        If the text is empty, too long, does not parse, or uses anything
        outside the whitelist; the message names ``what`` and the offending piece.
    """
    if not isinstance(text, str):
        raise ExpressionError(f"{what}: expected an expression string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"{what}: expression is too long ({len(text)} characters; the limit is {MAX_LENGTH})")
    if not text.strip():
        raise ExpressionError(f"{what}: expression is empty")
    bad = _BAD_CHARACTER.search(text)
    if bad:
        raise ExpressionError(
            f"{what}: character {bad.group()!r} at column {bad.start() + 1} of {_quote(text)} is not allowed "
            "(expressions are plain ASCII: names, numbers, + - * / ^ ** and parentheses)"
        )
    # Line breaks (multi-line TOML strings) are plain white space, one character each.
    text = text.replace("\t", " ").replace("\r", " ").replace("\n", " ")
    stripped = text.strip()
    source = stripped.replace("^", "**")
    digits = _LONG_INTEGER.search(stripped)
    if digits:  # Python would refuse to convert it, with advice about sys.set_int_max_str_digits()
        raise ExpressionError(
            f"{what}: number is too large: {_quote(digits.group())} (column {digits.start() + 1}; "
            f"the limit is {MAX_LITERAL:g})"
        )
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. SyntaxWarning for "(q, q)(1)": the builder refuses it anyway
            tree = _parse_tree(source)
    except SyntaxError as exc:
        reserved = _keyword_name(stripped)
        if reserved is not None:
            raise ExpressionError(
                f"{what}: {reserved.group()!r} (column {reserved.start() + 1} of {_quote(text)}) is a reserved name "
                "(a Python keyword): rename it"
            ) from None
        where = ""
        if exc.offset == 0 or (exc.offset and exc.offset > len(source)):
            where = " at the end"
        elif exc.offset and (exc.lineno or 1) == 1:
            where = f" at column {_original_column(stripped, exc.offset)}"
        raise ExpressionError(f"{what}: cannot parse {_quote(text)}{where}: {exc.msg}") from None
    except (RecursionError, MemoryError, ValueError, OverflowError):
        raise ExpressionError(f"{what}: cannot parse {_quote(text)}: too deeply nested or too large") from None
    builder = _Builder(what, source, stripped)
    try:
        result = builder.build(tree, 0)
    except ExpressionError:
        raise
    except (RecursionError, MemoryError):
        raise ExpressionError(f"{what}: expression {_quote(text)} is too deeply nested or too large") from None
    except (ArithmeticError, ValueError, TypeError) as exc:  # sympy refusing some numeric corner
        raise ExpressionError(f"{what}: cannot evaluate {_quote(text)}: {type(exc).__name__}: {exc}") from None
    atom = _non_finite_atom(result)
    if atom is not None:
        raise ExpressionError(
            f"{what}: {_quote(text)} contains {atom}, which is not a finite real number (e.g. log(0), sqrt(-1), 1/0)"
        )
    return result


#: A character expressions may not contain: non-ASCII, control characters but white space, ``#``.
_BAD_CHARACTER = re.compile(r"[^\x20-\x7e\t\n\r]|#")
#: An integer literal Python's int() would not convert (more digits than any number within MAX_LITERAL has).
_LONG_INTEGER = re.compile(r"(?<![0-9A-Za-z_.])[0-9][0-9_]{400,}")
#: A name of an expression (for finding a Python keyword used as one).
_NAME = re.compile(r"(?<![0-9A-Za-z_.])[A-Za-z_][A-Za-z0-9_]*")
#: Texts made of these characters only may be split into terms (no quotes, brackets, commas, ...).
_SPLITTABLE = re.compile(r"[A-Za-z0-9_.,+\-*/() ]*")
#: Terms parsed at once when a long sum is split (well within the depth ast.parse allows).
_TERMS_PER_PIECE = 500
#: One token of a splittable text: a number (with the sign of its exponent: ``1.5e-3``), a name, or one character.
_TOKEN = re.compile(r"[0-9.][A-Za-z0-9_.]*(?:(?<=[eE])[-+][0-9_]*)?|[A-Za-z_][A-Za-z0-9_]*|\S")


def _keyword_name(text: str) -> re.Match | None:
    """The first name in ``text`` that is a Python keyword used as a name (``lambda``, ``if``; not the
    constants ``True``, ``False``, ``None`` nor the operators ``and``, ``or``, ``not``, ``in``, ``is``), or ``None``."""
    operators = {"True", "False", "None", "and", "or", "not", "in", "is"}
    for match in _NAME.finditer(text):
        if keyword.iskeyword(match.group()) and match.group() not in operators:
            return match
    return None


def _parse_tree(source: str) -> ast.expr:
    """The syntax tree of ``source`` (one line), as ``ast.parse(source, mode="eval").body``.

    If :func:`ast.parse` gives up on the depth of a long flat sum (Python 3.11+
    builds ``a + b + c`` as ``(a + b) + c`` recursively), the text is cut at
    its top-level binary ``+``/``-`` signs into runs of :data:`_TERMS_PER_PIECE`
    terms, each run is parsed alone (the sign that starts it becomes a unary
    sign), its column offsets are shifted back to its place in ``source``,
    and the runs are chained with ``Add`` nodes: the same sum, with a tree
    the builder walks without recursion. Linear in the length; raises
    ``SyntaxError`` or ``RecursionError`` like ``ast.parse``.
    """
    try:
        return ast.parse(source, mode="eval").body
    except RecursionError:
        if not _SPLITTABLE.fullmatch(source):
            raise
    cuts = _top_level_signs(source)[_TERMS_PER_PIECE - 1 :: _TERMS_PER_PIECE]
    node: ast.expr | None = None
    for start, end in zip([0] + cuts, cuts + [len(source)]):
        piece = source[start:end]
        offset = start + len(piece) - len(piece.lstrip())
        try:
            term = ast.parse(piece.strip(), mode="eval").body
        except SyntaxError as exc:
            if exc.offset:
                exc.offset += offset
            raise
        _shift_columns(term, offset)
        if node is not None:
            term = ast.BinOp(
                left=node,
                op=ast.Add(),
                right=term,
                lineno=1,
                end_lineno=1,
                col_offset=node.col_offset,
                end_col_offset=term.end_col_offset,
            )
        node = term
    assert node is not None  # there is always at least one piece
    return node


def _shift_columns(tree: ast.expr, offset: int) -> None:
    """Add ``offset`` to the column offsets of every node of ``tree`` (a faster ``ast.walk``)."""
    # The nodes of an expression that have columns: expressions, keyword arguments, lambda parameters.
    columned = (ast.expr, ast.keyword, ast.arg)
    stack: list[ast.expr | ast.keyword | ast.arg] = [tree]
    while stack:
        node = stack.pop()
        node.col_offset += offset
        if node.end_col_offset is not None:
            node.end_col_offset += offset
        if isinstance(node, ast.BinOp):
            stack += (node.left, node.right)
        elif isinstance(node, ast.UnaryOp):
            stack.append(node.operand)
        elif isinstance(node, ast.Call):
            stack.append(node.func)
            stack += node.args
        elif not isinstance(node, (ast.Name, ast.Constant)):
            stack += (child for child in ast.iter_child_nodes(node) if isinstance(child, columned))


def _top_level_signs(source: str) -> list[int]:
    """Positions of the binary ``+``/``-`` signs of ``source`` outside parentheses.

    A sign is binary when an operand (a name, a number or ``)``) ends just
    before it; one regular-expression pass over the text.
    """
    cuts = []
    depth = 0
    operand_before = False
    for match in _TOKEN.finditer(source):
        token = match.group()
        if token in "+-" and depth == 0 and operand_before:
            cuts.append(match.start())
        elif token == "(":
            depth += 1
        elif token == ")":
            depth -= 1
        operand_before = token == ")" or token[0].isalnum() or token[0] in "_."
    return cuts


def _original_column(stripped: str, offset: int) -> int:
    """Map a 1-based column of the ``^``→``**`` source back to the user's text."""
    column = 0
    position = 0
    for char in stripped:
        step = 2 if char == "^" else 1
        if position + step >= offset:
            return column + 1
        position += step
        column += 1
    return column + 1


def _non_finite_atom(expr: sympy.Expr) -> sympy.Basic | None:
    """The first atom of ``expr`` that is not a finite real number (I, zoo, oo, nan), else ``None``."""
    for atom in expr.atoms(sympy.Number, sympy.NumberSymbol, sympy.core.numbers.ImaginaryUnit):
        if atom is sympy.I or not atom.is_finite or not atom.is_extended_real:
            return atom
    return None


def _quote(text: str, limit: int = 80) -> str:
    text = text.strip()
    if len(text) > limit:
        text = text[: limit - 3] + "..."
    return repr(text)


class _Builder:
    """Walks a whitelisted :mod:`ast` tree and builds the sympy expression."""

    def __init__(self, what: str, source: str, original: str):
        self.what = what
        self.source = source
        self.original = original

    def fail(self, node: ast.AST, message: str) -> ExpressionError:
        piece = ast.get_source_segment(self.source, node) or type(node).__name__
        column = getattr(node, "col_offset", None)
        where = f" (column {_original_column(self.original, column + 1)})" if column is not None else ""
        return ExpressionError(f"{self.what}: {message}: {_quote(piece)}{where}")

    def build(self, node: ast.AST, depth: int) -> sympy.Expr:
        if depth > MAX_DEPTH:
            raise ExpressionError(f"{self.what}: expression is nested too deeply (more than {MAX_DEPTH} levels)")
        if isinstance(node, ast.Constant):
            return self.number(node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.UAdd, ast.USub)):
            operand = self.build(node.operand, depth + 1)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            return self.power(node, depth)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            return self.chain(node, depth, (ast.Add, ast.Sub))
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Div)):
            return self.chain(node, depth, (ast.Mult, ast.Div))
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        raise self.fail(node, f"{_describe(node)} is not allowed in an expression")

    def chain(self, node: ast.expr, depth: int, ops: tuple) -> sympy.Expr:
        """A left-nested run of ``+ -`` (or ``* /``), built flat and without recursion.

        ``a + b + c + ...`` parses as ``((a + b) + c) + ...``; walking that spine
        iteratively keeps long sums and products within the nesting limit and
        builds them in linear time.
        """
        operands = []
        while isinstance(node, ast.BinOp) and isinstance(node.op, ops):
            operands.append((node.op, node.right, node))
            node = node.left
        result = [self.build(node, depth + 1)]
        for op, right, whole in reversed(operands):
            value = self.build(right, depth + 1)
            if isinstance(op, ast.Sub):
                value = -value
            elif isinstance(op, ast.Div):
                if value == 0:
                    raise self.fail(whole, "division by zero")
                value = 1 / value if value.is_number else value**-1
            result.append(value)
        if ops[0] is ast.Add:
            combined = sympy.Add(*result)  # canonical whatever the grouping
        else:
            # Pairwise, as Python would evaluate ``a*b*c`` on sympy objects, so a
            # number times a sum distributes exactly as in a Python model file.
            combined = result[0]
            for value in result[1:]:
                combined = combined * value
        if combined.is_Number and _log10_magnitude(combined) > math.log10(MAX_LITERAL):
            raise self.fail(node if not operands else operands[0][2], "number is too large")
        if combined is sympy.nan or combined.has(sympy.zoo):
            raise self.fail(operands[0][2] if operands else node, "division by zero")
        return combined

    def number(self, node: ast.Constant) -> sympy.Expr:
        value = node.value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(node, f"{type(value).__name__} literal is not allowed")
        if isinstance(value, int):
            if value.bit_length() > 996:  # about 1e300
                raise self.fail(node, "number is too large")
            return sympy.Integer(value)
        if not math.isfinite(value) or abs(value) > MAX_LITERAL:
            raise self.fail(node, "number is too large")
        return sympy.Float(value)

    def name(self, node: ast.Name) -> sympy.Expr:
        name = node.id
        if name in CONSTANTS:
            return CONSTANTS[name]
        if name in FUNCTIONS:
            raise self.fail(node, f"function '{name}' used without a call")
        if name.startswith("_"):
            raise self.fail(node, "names starting with '_' are not allowed")
        if not name.isascii():
            raise self.fail(node, "names must be plain ASCII identifiers")
        return symbol(name)

    def power(self, node: ast.BinOp, depth: int) -> sympy.Expr:
        base = self.build(node.left, depth + 1)
        exponent = self.build(node.right, depth + 1)
        if exponent.is_number:
            value = _log10_magnitude(exponent)
            value = 10**value if value < 10 else math.inf
            if not exponent.is_finite or not abs(value) <= MAX_EXPONENT:
                raise self.fail(node, f"exponent is too large (the limit is {MAX_EXPONENT})")
            if base.is_number and _log10_magnitude(base) * abs(value) > math.log10(MAX_LITERAL):
                raise self.fail(node, "number is too large")
        elif base.is_number and _log10_magnitude(base) > 3:
            raise self.fail(node, "number raised to a symbolic power is too large")
        if base == 0 and exponent.is_number and exponent.is_nonpositive:
            raise self.fail(node, "zero raised to a non-positive power")
        return base**exponent

    def call(self, node: ast.Call, depth: int) -> sympy.Expr:
        if not isinstance(node.func, ast.Name):
            raise self.fail(node.func, f"{_describe(node.func)} is not allowed in an expression")
        name = node.func.id
        if name not in FUNCTIONS:
            raise self.fail(node.func, f"unknown function '{name}' (allowed: {', '.join(FUNCTIONS)})")
        if node.keywords:
            raise self.fail(node, f"function '{name}' takes no keyword arguments")
        function, arity = FUNCTIONS[name]
        if any(isinstance(a, ast.Starred) for a in node.args):
            raise self.fail(node, f"function '{name}' takes no starred (*) arguments")
        if len(node.args) != arity:
            plural = "s" if arity != 1 else ""
            raise self.fail(node, f"function '{name}' takes exactly {arity} argument{plural}, got {len(node.args)}")
        args = [self.build(arg, depth + 1) for arg in node.args]
        result = function(*args)
        if result.is_number:
            if _non_finite_atom(result) is not None or result.is_extended_real is False:
                raise self.fail(node, "the value is not a finite real number")
            if _log10_magnitude(result) > math.log10(MAX_LITERAL):
                raise self.fail(node, "number is too large")
        return result


def _log10_magnitude(number: sympy.Expr) -> float:
    """log10 of ``|number|`` (0 for zero; ``inf`` when too large to tell), without forming huge values."""
    if number.is_Integer:  # exact and fast (math.log10 takes ints of any size)
        return math.log10(abs(int(number))) if number != 0 else 0.0
    try:
        magnitude = abs(complex(number.evalf(20)))
    except (OverflowError, TypeError, ValueError, ArithmeticError):
        return math.inf
    if not math.isfinite(magnitude):
        return math.inf
    return math.log10(magnitude) if magnitude > 0 else 0.0


def _describe(node: ast.AST) -> str:
    """A short human name for a syntax node, for error messages."""
    names = {
        ast.Attribute: "attribute access",
        ast.Subscript: "subscript",
        ast.Lambda: "lambda",
        ast.Compare: "comparison",
        ast.BoolOp: "boolean operator",
        ast.IfExp: "conditional expression",
        ast.Tuple: "tuple",
        ast.List: "list",
        ast.Dict: "dict",
        ast.Set: "set",
        ast.JoinedStr: "f-string",
        ast.NamedExpr: "assignment expression",
        ast.Starred: "starred expression",
        ast.Call: "call",
        ast.Await: "await",
        ast.Yield: "yield",
        ast.YieldFrom: "yield",
        ast.GeneratorExp: "generator expression",
        ast.ListComp: "comprehension",
        ast.SetComp: "comprehension",
        ast.DictComp: "comprehension",
    }
    if isinstance(node, ast.BinOp):
        return f"operator '{type(node.op).__name__}'"
    if isinstance(node, ast.UnaryOp):
        return f"unary operator '{type(node.op).__name__}'"
    return names.get(type(node), type(node).__name__)
