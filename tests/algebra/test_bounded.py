"""Bounded simplification and numeric probes (:mod:`sls.algebra.bounded`)."""

from __future__ import annotations

import time

import mpmath
import sympy

from sls.algebra.bounded import (
    bounded,
    constant_value,
    numeric_values,
    settled,
    tidy,
    vanishes_at_random_points,
)

x, y = sympy.symbols("x y")


def test_a_simplification_past_its_time_keeps_its_input():
    """The CPU timer of bounded(): a simplification that does not end is abandoned, the exact input kept."""

    def wanders(expr: sympy.Expr) -> sympy.Expr:
        while True:
            expr = sympy.expand((expr + 1) ** 2 - expr**2)

    start = time.perf_counter()
    assert bounded(wanders, sympy.sin(x) ** 2, seconds=0.2) == sympy.sin(x) ** 2
    assert time.perf_counter() - start < 10
    assert bounded(sympy.trigsimp, sympy.sin(x) ** 2 + sympy.cos(x) ** 2) == 1


def test_an_expression_past_the_size_bound_is_kept_as_it_is():
    identity = sympy.sin(x) ** 2 + sympy.cos(x) ** 2
    assert bounded(sympy.trigsimp, identity, limit=3) == identity
    assert tidy(identity) == 1
    assert tidy((x**2 - y**2) / (x - y)) == x + y


def test_a_large_constant_is_recognised_at_random_points_without_simplifying():
    """sin² + cos² of a long argument, times 3/2, is 3/2; a nonconstant expression is not a constant."""
    argument = sympy.Add(*(sympy.sin(k * x) * sympy.cos(y) ** k for k in range(1, 8)))
    constant = sympy.Rational(3, 2) * (sympy.sin(argument) ** 2 + sympy.cos(argument) ** 2)
    assert constant_value(constant) == sympy.Rational(3, 2)
    assert settled(constant) == sympy.Rational(3, 2)
    assert constant_value(sympy.sin(x) + y) is None


def test_a_zero_is_recognised_at_random_points():
    assert vanishes_at_random_points(sympy.sin(2 * x) - 2 * sympy.sin(x) * sympy.cos(x))
    assert not vanishes_at_random_points(sympy.sin(2 * x) - sympy.sin(x) * sympy.cos(x))


def test_numeric_values_evaluate_shared_subtrees_once_and_agree_with_evalf():
    shared = sympy.sin(x * y) + sympy.sqrt(x)
    exprs = [shared**2 + 1 / shared, sympy.cos(shared) * x]
    point = {x: mpmath.mpf("0.7"), y: mpmath.mpf("1.3")}
    functions = {sympy.sin: mpmath.sin, sympy.cos: mpmath.cos}
    calls = []

    def other(node):
        calls.append(node)
        return mpmath.mpmathify(complex(node.evalf(30)))

    values = numeric_values(exprs, point, functions, lambda n: mpmath.mpf(float(n)), mpmath.sqrt, other)
    want = [complex(e.evalf(30, subs={x: 0.7, y: 1.3})).real for e in exprs]
    assert all(abs(float(v) - w) < 1e-12 for v, w in zip(values, want))
    assert not calls  # every node was a number, a symbol with a value, or a function it knows
