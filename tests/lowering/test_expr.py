"""Expressions as data (sls/lowering/expr.py): printed code with the names it reads and the library names it calls
as references, built from a printer's marked output and renamed without reading text."""

from __future__ import annotations

import sympy as sp

from sls.backends.c.printer import CPrinter
from sls.backends.python.printer import BATCH, SCALAR
from sls.lowering.expr import Expr, Ref, mark_library, mark_name, reads

x, y = sp.symbols("x y", real=True)


def test_a_marked_text_parses_into_code_and_references():
    marked = f"{mark_library('sin')}({mark_name('x')}) + 2*{mark_name('_t0')}"
    expr = Expr.parse(marked)
    assert expr.code == ("", "(", ") + 2*", "")
    assert expr.refs == (Ref("sin", True), Ref("x"), Ref("_t0"))
    assert expr.text() == "sin(x) + 2*_t0"
    assert expr.reads == ("x", "_t0") and expr.library == {"sin"}
    assert not expr.is_name and Expr.parse(mark_name("x")).is_name and not Expr.literal("1.5").is_name


def test_renaming_replaces_references_only():
    expr = Expr.join(Expr.name("x"), " + ", Expr.literal("x1"), "*", Expr.name("x"))  # "x1" is code, not a name
    assert expr.text() == "x + x1*x"
    assert expr.text(names={"x": "w[3]"}) == "w[3] + x1*w[3]"
    workspace = Expr.join(Expr.name("w"), "[3]")
    substituted = expr.substitute({"x": workspace})
    assert substituted.text() == "w[3] + x1*w[3]" and substituted.reads == ("w", "w")
    lane = Expr.parse(f"{mark_library('sin')}({mark_name('q')})").text(library={"sin": "m_lane_sin"})
    assert lane == "m_lane_sin(q)"


def test_join_concatenates_code_and_expressions():
    a, b = Expr.name("a"), Expr.join(Expr.name("b"), "*", Expr.number(-0.5))
    joined = Expr.join("-", a, " - ", b, " + 1.0")
    assert joined.text() == "-a - b*-0.5 + 1.0" and joined.reads == ("a", "b")
    assert reads([a, b, joined]) == {"a", "b"}
    assert str(joined) == joined.text()


def test_the_printers_mark_what_the_expression_reads_and_calls():
    expr = sp.sin(x * y) + sp.sqrt(x + 1) + x ** sp.Rational(5, 2) + sp.Max(x, y)
    for printer, library in ((SCALAR, {"math.sin", "math.sqrt", "max"}), (BATCH, {"np.sin", "np.sqrt", "np.maximum"})):
        printed = Expr.parse(printer.doprint(expr))
        assert set(printed.reads) == {"x", "y"}
        assert printed.library == library, printer
        for prefix in ("math.", "np.", "max", "x"):  # x is read, not called: not a library name
            assert printed.refers_to_library(prefix) == any(name.startswith(prefix) for name in library), prefix
    printed = Expr.parse(CPrinter({"x": "x_"}).expression(expr))
    assert set(printed.reads) == {"x_", "y"} and printed.library == {"sin", "sqrt", "pow", "fmax"}
