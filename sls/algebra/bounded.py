"""Bounded simplification and numeric probes of sympy expressions.

* :func:`bounded` runs a simplification within a size bound (``sympy.count_ops``) and a CPU-time bound, and gives back
  its input unchanged past either: a large model costs longer code, never a derivation that does not finish;
  :func:`tidy`, :func:`cancelled` and :func:`settled` are the simplifications the kinematics and the
  ``sympy.physics.mechanics`` reader apply through it.
* :func:`numeric_values` evaluates expressions that share most of their subtrees (those built by differentiation)
  once per distinct node; :func:`constant_value` and :func:`vanishes_at_random_points` recognise a constant or a
  zero at random points to 30 digits without simplifying.
"""

from __future__ import annotations

import random
import signal
import threading
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import Any

import sympy
from sympy.core.function import AppliedUndef

#: Random points at which a bracket that does not simplify to a combination of the speeds' directions is tried.
BRACKET_PROBES = 3
#: Largest expression (``sympy.count_ops``) that is simplified (rational functions cancelled, trigonometric
#: identities applied) or expanded for an exact zero test: beyond it the cost of simplifying grows far faster than
#: the expression (a 9-DOF chain's speed basis), and the expression is kept exact but unsimplified.
SIMPLIFY_LIMIT = 400
#: Largest expression given to ``sympy.simplify`` (trigonometric identities: far costlier than cancelling).
TRIG_LIMIT = 150
#: CPU seconds one simplification may take (:func:`bounded`); past them its input is kept as it is.
SIMPLIFY_SECONDS = 5.0


def numeric_values(
    exprs: Sequence[sympy.Expr],
    values: dict,
    functions: dict,
    number: Callable[[sympy.Expr], object],
    sqrt: Callable[[Any], object],
    other: Callable[[sympy.Basic], object],
) -> list:
    """The values of ``exprs`` with the symbols set to ``values``, each distinct subexpression evaluated once.

    Expressions built by differentiation share most of their subtrees: walking the tree with a cache costs their
    distinct nodes, where ``lambdify`` or ``evalf`` work on every copy (minutes for a 9-DOF chain's speed basis).
    ``functions`` maps sympy functions onto numeric ones (numpy's or mpmath's), ``number`` converts a number,
    ``sqrt`` takes square roots and ``other(node)`` evaluates any other node (with its whole subtree).
    """
    cache: dict = dict(values)
    for root in exprs:
        stack = [(root, False)]
        while stack:
            node, ready = stack.pop()
            if node in cache:
                continue
            if node.is_Number or node.is_NumberSymbol:
                cache[node] = number(node)
            elif not (node.is_Add or node.is_Mul or node.is_Pow or node.func in functions):
                cache[node] = other(node)  # a symbol without a value, Piecewise, Heaviside, atan2, ...
            elif not ready:
                stack.append((node, True))
                stack.extend((arg, False) for arg in node.args if arg not in cache)
            else:
                cache[node] = _numeric_node(node, [cache[arg] for arg in node.args], functions, sqrt)
    return [cache[e] for e in exprs]


def _numeric_node(node: sympy.Basic, args: list, functions: dict, sqrt: Callable) -> object:
    if node.is_Add or node.is_Mul:
        total = args[0]
        for arg in args[1:]:
            total = total + arg if node.is_Add else total * arg
        return total
    if node.is_Pow:
        if node.exp == -1:
            return 1 / args[0]
        if node.exp == sympy.S.Half:
            return sqrt(args[0])
        return args[0] ** args[1]
    return functions[node.func](*args)


#: mpmath's functions for the sympy functions :func:`constant_value` meets (others through ``evalf``).
def _mpmath_functions() -> dict:
    import mpmath  # type: ignore[import-untyped, unused-ignore]

    return {
        sympy.sin: mpmath.sin,
        sympy.cos: mpmath.cos,
        sympy.tan: mpmath.tan,
        sympy.cot: mpmath.cot,
        sympy.sec: mpmath.sec,
        sympy.csc: mpmath.csc,
        sympy.asin: mpmath.asin,
        sympy.acos: mpmath.acos,
        sympy.atan: mpmath.atan,
        sympy.sinh: mpmath.sinh,
        sympy.cosh: mpmath.cosh,
        sympy.tanh: mpmath.tanh,
        sympy.exp: mpmath.exp,
        sympy.log: mpmath.log,
        sympy.Abs: abs,
    }


def constant_value(expr: sympy.Expr, points: int = BRACKET_PROBES) -> sympy.Rational | None:
    """The rational number (denominator at most 1000) that ``expr`` equals at ``points`` random points to 30 of
    40 digits, else ``None``: how a large structure coefficient that is a constant (0 or ±1, as those of rigid
    bodies' angular velocities) is recognised without simplifying it."""
    import mpmath  # type: ignore[import-untyped, unused-ignore]

    rng = random.Random(20240602)
    symbols = expression_variables(expr)
    functions = _mpmath_functions()
    found = None
    with mpmath.workdps(40):
        tolerance = mpmath.mpf(10) ** -30
        for _ in range(points):
            point = {s: mpmath.mpf(rng.uniform(0.2, 1.3)) for s in symbols}
            exact = {s: sympy.Float(x, 40) for s, x in point.items()}

            def other(node: sympy.Basic, exact: dict = exact) -> object:
                return mpmath.mpmathify(complex(node.evalf(40, subs=exact)))

            value = numeric_values(
                [expr], point, functions, lambda n: mpmath.mpmathify(sympy.N(n, 40)), mpmath.sqrt, other
            )[0]
            if abs(mpmath.im(value)) > tolerance:
                return None
            value = mpmath.re(value)
            if found is None:
                found = sympy.Rational(Fraction(float(value)).limit_denominator(1000))
            if abs(value - mpmath.mpf(found.p) / found.q) > tolerance * max(1, abs(value)):
                return None
    return found


def vanishes_at_random_points(expr: sympy.Expr) -> bool:
    """Whether ``expr`` is zero (to 1e-9 relative to its terms) at :data:`BRACKET_PROBES` random points."""
    rng = random.Random(20240601)
    symbols = expression_variables(expr)
    terms = list(sympy.Add.make_args(bounded(sympy.expand, expr)))
    for _ in range(BRACKET_PROBES):
        point = {s: sympy.Float(rng.uniform(0.2, 1.3), 30) for s in symbols}
        values = precise_values([expr, *terms], point)
        value = abs(complex(values[0]))
        scale = max([1.0] + [abs(complex(t)) for t in values[1:]])
        if value > 1e-9 * scale:
            return False
    return True


def expression_variables(expr: sympy.Expr) -> list:
    """The symbols and the functions of time (``q(t)``, as kinematic equations hold them) of ``expr``, by name."""
    found = set(expr.free_symbols) | set(expr.atoms(AppliedUndef))
    return sorted(found, key=str)


def precise_values(exprs: Sequence[sympy.Expr], point: dict) -> list:
    """The values of ``exprs`` at ``point`` (symbols to sympy Floats) to 30 digits (mpmath numbers)."""
    import mpmath  # type: ignore[import-untyped, unused-ignore]

    with mpmath.workdps(30):
        values = {s: mpmath.mpf(x) for s, x in point.items()}

        def other(node: sympy.Basic) -> object:
            return mpmath.mpmathify(complex(node.evalf(30, subs=point)))

        return numeric_values(
            exprs, values, _mpmath_functions(), lambda n: mpmath.mpmathify(sympy.N(n, 30)), mpmath.sqrt, other
        )


class _Overtime(Exception):
    """Raised by the CPU timer of :func:`bounded` inside a simplification that ran too long."""


_timing = threading.local()


def bounded(
    simplify: Callable[[sympy.Expr], sympy.Expr],
    expr: sympy.Expr,
    limit: int | None = None,
    seconds: float | None = None,
) -> sympy.Expr:
    """``simplify(expr)``, or ``expr`` itself when it is larger than ``limit`` operations (``sympy.count_ops``,
    default :data:`SIMPLIFY_LIMIT`) or when ``simplify`` takes more than ``seconds`` of CPU time (default
    :data:`SIMPLIFY_SECONDS`).

    The size bound is deterministic and the one that matters: the time bound is a safety net against a
    simplification that wanders (``trigsimp`` reaching ``factor`` on an unlucky ordering of terms), armed by a CPU
    timer (``SIGVTALRM``) in the main thread where the platform has one; elsewhere, and inside another bounded call,
    the size bound alone applies.
    """
    if sympy.count_ops(expr) > (SIMPLIFY_LIMIT if limit is None else limit):
        return expr
    if (
        getattr(_timing, "active", False)
        or not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        return simplify(expr)

    def overtime(signum: int, frame: object) -> None:
        raise _Overtime

    previous = signal.signal(signal.SIGVTALRM, overtime)
    _timing.active = True
    timer = (0.0, 0.0)
    try:
        timer = signal.setitimer(signal.ITIMER_VIRTUAL, SIMPLIFY_SECONDS if seconds is None else seconds)
        try:
            return simplify(expr)
        finally:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
    except _Overtime:
        return expr
    finally:
        _timing.active = False
        signal.signal(signal.SIGVTALRM, previous)
        if timer[0] > 0:  # someone else's virtual timer, put back
            signal.setitimer(signal.ITIMER_VIRTUAL, *timer)


def settled(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` replaced by the constant it equals (:func:`constant_value`: the structure coefficients of rigid
    bodies' angular velocities are 0 and ±1, whatever their size), else tidied (:func:`tidy`)."""
    if expr.is_number:
        return expr
    constant = constant_value(expr)
    return tidy(expr) if constant is None else constant


def cancelled(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` with its rational functions cancelled (within the bounds of :func:`bounded`)."""
    return expr if expr.is_number else bounded(lambda e: sympy.cancel(sympy.together(e)), expr)


def tidy(expr: sympy.Expr) -> sympy.Expr:
    """``expr`` simplified: rational functions cancelled (cheap), ``sympy.simplify`` only where functions remain;
    within the bounds of :func:`bounded` (larger expressions are kept as they are)."""
    if expr.is_number:
        return expr
    cancelled = bounded(lambda e: sympy.cancel(sympy.together(e)), expr)
    if not cancelled.atoms(sympy.Function):
        return cancelled
    simplified = bounded(sympy.simplify, cancelled, TRIG_LIMIT)
    return simplified if sympy.count_ops(simplified) <= sympy.count_ops(cancelled) else cancelled
