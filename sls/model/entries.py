"""The shapes of a model's entries: lists, expressions sls can print as numeric code, one expression per
degree of freedom; and walks over an expression that visit each distinct subexpression once."""

from __future__ import annotations

from collections.abc import Iterator

import sympy
from sympy.matrices.expressions.matexpr import MatrixElement

from sls.algebra.expressions import FUNCTIONS
from sls.errors import ModelError, ModelTypeError, brief


def as_list(value: object, what: str) -> list:
    if isinstance(value, (sympy.MatrixBase, sympy.NDimArray)):
        return list(value)
    if isinstance(value, (list, tuple)):
        return list(value)
    raise ModelTypeError(f"{what}: expected a list, got {type(value).__name__}")


def expression(value: object, what: str) -> sympy.Expr:
    if isinstance(value, bool) or not isinstance(value, (sympy.Expr, int, float)):
        raise ModelTypeError(f"{what}: expected a sympy expression or number, got {type(value).__name__}")
    expr = sympy.sympify(value) if not isinstance(value, sympy.Expr) else value
    for node in distinct_nodes(expr):
        problem = _forbidden(node)
        if problem:
            raise ModelError(f"{what}: {problem}: {brief(node, 80)}")
    return expr


def vector(value: object, n: int, what: str, noun: str) -> tuple:
    if isinstance(value, (int, float, sympy.Expr)) and not isinstance(value, bool) and value == 0:
        return (sympy.Integer(0),) * n
    if isinstance(value, sympy.Expr):
        value = [value]  # one expression: the model has one degree of freedom (checked below)
    entries = as_list(value, what)
    if len(entries) != n:
        raise ModelError(
            f"{what}: expected {n} {'entry' if n == 1 else 'entries'} (one {noun} per degree of freedom), "
            f"got {len(entries)}"
        )
    return tuple(expression(e, f"{what}[{i}]") for i, e in enumerate(entries))


def distinct_nodes(expr: sympy.Basic) -> Iterator[sympy.Basic]:
    """Every subexpression of ``expr`` once, parents before children.

    A robot's energies share subtrees (a link's velocity appears in every link below it):
    a tree walk such as ``sympy.preorder_traversal`` visits a shared subtree once per use,
    exponentially often in the depth of the robot; this walk visits each object once.
    """
    seen: set[int] = set()
    stack = [expr]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(reversed(node.args))


def symbols_in(expr: sympy.Basic) -> set[sympy.Symbol]:
    """The symbols of ``expr`` (its ``free_symbols``: sls refuses binding constructs such as
    integrals), each distinct subexpression visited once (see :func:`distinct_nodes`)."""
    return {node for node in distinct_nodes(expr) if isinstance(node, sympy.Symbol)}


def _forbidden(node: sympy.Basic) -> str:
    """Why sls cannot print ``node`` as numeric code ('' when it can)."""
    if node.is_Number or node in (sympy.I, sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        if node is sympy.I or not node.is_finite or not node.is_extended_real:
            return "not a finite real number"
        return ""
    if isinstance(node, (sympy.Derivative, sympy.Integral, sympy.Subs)):
        return "unevaluated derivatives and integrals are not supported"
    if isinstance(node, sympy.core.function.AppliedUndef):
        return f"undefined function {node.func} (use sympy's functions, e.g. {', '.join(list(FUNCTIONS)[:6])}, ...)"
    if isinstance(
        node, (sympy.MatrixBase, sympy.MatrixExpr, MatrixElement, sympy.Indexed, sympy.IndexedBase, sympy.Idx)
    ):
        return "matrix and indexed objects are not supported; use plain symbols"
    if isinstance(node, sympy.Symbol) and type(node) not in (sympy.Symbol, sympy.Dummy):
        return f"{type(node).__name__} objects are not supported; use plain symbols"
    return ""
