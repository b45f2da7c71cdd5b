"""Two tools for reading sympy.physics.mechanics models: plain symbols for functions of time (:class:`Plain`) and
numeric checks of identities at random points (:class:`Probe`).

sympy.physics.mechanics writes coordinates and speeds as functions of time (``q1(t)``, ``u1(t)``, and for a
Lagrangian ``q1(t).diff(t)``); sls writes plain symbols. :class:`Plain` maps one onto the other and refuses, in
one line, anything left that still depends on time.

Whether a model can be written as sls writes it (``T(q, v)``, potential and generalized forces) depends on
identities between its vectors (a velocity is the rate of a position, an angular velocity the rate of an
orientation). :class:`Probe` tests such identities at a few random points (coordinates drawn away from the
poles of the usual angle charts, speeds and inputs normal, parameters their given values or drawn in
[0.5, 1.5]); a fixed seed keeps the verdict deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import sympy
from sympy.core.function import AppliedUndef

from sls.algebra.bounded import numeric_values
from sls.algebra.calculus import diff
from sls.errors import ModelError, brief

#: How many random points a probe evaluates.
PROBE_POINTS = 3
#: Relative tolerance of an identity tested numerically.
PROBE_TOLERANCE = 1e-8


#: Elementwise numpy functions for the sympy functions :func:`evaluate` meets (others go through ``lambdify``).
NUMPY_FUNCTIONS = {
    sympy.sin: np.sin,
    sympy.cos: np.cos,
    sympy.tan: np.tan,
    sympy.cot: lambda x: 1 / np.tan(x),
    sympy.sec: lambda x: 1 / np.cos(x),
    sympy.csc: lambda x: 1 / np.sin(x),
    sympy.asin: np.arcsin,
    sympy.acos: np.arccos,
    sympy.atan: np.arctan,
    sympy.sinh: np.sinh,
    sympy.cosh: np.cosh,
    sympy.tanh: np.tanh,
    sympy.exp: np.exp,
    sympy.log: np.log,
    sympy.Abs: np.abs,
}


def evaluate(exprs: Sequence[sympy.Expr], values: dict) -> list:
    """The values of ``exprs`` with the symbols set to ``values`` (numpy arrays of one shape, complex), each
    distinct subexpression evaluated once (:func:`sls.model.kinematics.numeric_values`); functions without a numpy
    twin go through ``lambdify``."""

    def other(node: sympy.Basic) -> object:
        symbols = sorted(node.free_symbols, key=lambda s: s.name)
        return sympy.lambdify(symbols, node, modules="numpy")(*(values[s] for s in symbols))

    return numeric_values(exprs, values, NUMPY_FUNCTIONS, complex, np.sqrt, other)


def _newton(x: np.ndarray, q: list, c: list, J: list, at: dict) -> np.ndarray | None:
    """``x`` moved onto ``c(q) = 0`` by Gauss–Newton steps of least norm (``J`` the rows of ``∂c/∂q``, flattened;
    ``at`` the values of the other symbols); ``None`` when it does not converge."""
    for _step in range(60):
        point = at | {s: complex(x[k]) for k, s in enumerate(q)}
        with np.errstate(all="ignore"):
            residual = np.real(np.array(evaluate(c, point), dtype=complex))
            jacobian = np.real(np.array(evaluate(J, point), dtype=complex)).reshape(len(c), len(q))
        if not (np.all(np.isfinite(residual)) and np.all(np.isfinite(jacobian))):
            return None
        if np.abs(residual).max() <= 1e-14 * (1.0 + np.abs(x).max()):
            return x
        x = x - np.linalg.pinv(jacobian) @ residual
    return None


class Plain:
    """Maps the functions of time of a model (``q1(t)``, ``u1(t)``, ``q1(t).diff(t)``) onto plain symbols.

    ``mapping`` maps each function of time (or derivative) to its plain symbol, ``time`` is the time symbol.
    Calling it on an expression returns the expression in plain symbols, refusing (one line, ``what`` names the
    place) an expression that still depends on time, or that uses a symbol with the name of a mapped function.
    """

    def __init__(self, mapping: dict, time: sympy.Symbol, roles: dict[str, str]) -> None:
        self.mapping = dict(mapping)
        self.time = time
        self.roles = dict(roles)  # plain name -> "coordinate q1(t)", "speed u1(t)", "input T(t)"
        self.symbols = {s.name: s for s in self.mapping.values()}

    def __call__(self, value: object, what: str) -> sympy.Expr:
        expr = sympy.sympify(value)
        clash = sorted(
            s.name for s in expr.free_symbols if isinstance(s, sympy.Symbol) and s.name in self.roles and s != self.time
        )
        if clash:
            raise ModelError(
                f"{what}: the symbol {clash[0]} has the name of the {self.roles[clash[0]]}; rename one of them"
            )
        plain = expr.xreplace(self.mapping)
        functions = sorted({str(f) for f in plain.atoms(AppliedUndef, sympy.Derivative) if self.time in f.free_symbols})
        if functions:
            raise ModelError(
                f"{what}: depends on {functions[0]}, a function of time that is neither a coordinate, a speed nor "
                f"a declared input (inputs=[...]): {brief(plain, 80)}"
            )
        if self.time in plain.free_symbols:
            raise ModelError(
                f"{what}: depends on the time {self.time} explicitly, which sls cannot take: {brief(plain, 80)}"
            )
        return plain

    def matrix(self, matrix: sympy.MatrixBase, what: str) -> sympy.Matrix:
        """Every entry of ``matrix`` in plain symbols (see :meth:`__call__`)."""
        return sympy.Matrix(matrix.shape[0], matrix.shape[1], [self(e, what) for e in matrix])


class Probe:
    """Evaluates plain expressions at :data:`PROBE_POINTS` random points of the model's variables.

    ``coordinates`` and ``speeds`` are plain symbols, ``inputs`` names; ``values`` maps parameter names to the values
    the user gave. Coordinates are drawn in ±[0.3, 1.2] (away from 0 and ±π/2, the poles of the common Euler
    angle charts), speeds and inputs from a standard normal, other parameters in [0.5, 1.5].
    """

    def __init__(
        self,
        coordinates: Iterable,
        speeds: Iterable,
        inputs: Iterable,
        values: dict[str, float],
        seed: int = 7,
        constraints: Sequence[sympy.Expr] = (),
    ) -> None:
        self.rng = np.random.default_rng(seed)
        self.coordinates, self.speeds, self.inputs = set(coordinates), set(speeds), {str(i) for i in inputs}
        self.values = {name: float(value) for name, value in values.items() if value is not None}
        self.drawn: dict[sympy.Symbol, np.ndarray] = {}
        self.constraints = [sympy.sympify(c) for c in constraints if sympy.sympify(c).free_symbols & self.coordinates]

    def value(self, s: sympy.Symbol) -> np.ndarray:
        """The values (one per point) of the symbol ``s``, drawn the first time it is asked for."""
        if s not in self.drawn:
            if s in self.coordinates and self.constraints:
                self._draw_on_constraints()
            elif s in self.coordinates:
                self.drawn[s] = self._coordinate()
            elif s in self.speeds or s.name in self.inputs:
                self.drawn[s] = self.rng.normal(size=PROBE_POINTS)
            elif s.name in self.values:
                self.drawn[s] = np.full(PROBE_POINTS, self.values[s.name])
            else:
                self.drawn[s] = self.rng.uniform(0.5, 1.5, PROBE_POINTS)
        return self.drawn[s]

    def _coordinate(self) -> np.ndarray:
        sign = self.rng.choice([-1.0, 1.0], PROBE_POINTS)
        return sign * self.rng.uniform(0.3, 1.2, PROBE_POINTS)

    def _draw_on_constraints(self) -> None:
        """Every coordinate at once, each point moved onto the configuration constraints ``c(q) = 0`` by
        Gauss–Newton steps of least norm (a unit quaternion's norm, a closed loop), redrawn when it does not
        converge: identities such as "the angular velocity is the rate of the orientation" may hold there only."""
        q = sorted(self.coordinates, key=lambda s: s.name)
        c = self.constraints
        J = [diff(ci, qk) for ci in c for qk in q]
        for s in sorted(set().union(*(e.free_symbols for e in c)) - set(q), key=lambda s: s.name):
            self.value(s)
        fixed = {s: v.astype(complex) for s, v in self.drawn.items()}
        for point in range(PROBE_POINTS):
            at = {s: v[point] for s, v in fixed.items()}
            for _attempt in range(5):
                x = _newton(np.array([self._coordinate()[0] for _ in q]), q, c, J, at)
                if x is not None:
                    break
            for k, s in enumerate(q):
                self.drawn.setdefault(s, np.zeros(PROBE_POINTS))[point] = np.nan if x is None else x[k]

    def __call__(self, exprs: Iterable[sympy.Expr]) -> np.ndarray:
        """The values of ``exprs`` (k of them) at the points, shape ``(PROBE_POINTS, k)`` (complex)."""
        exprs = [sympy.sympify(e) for e in exprs]
        if not exprs:
            return np.zeros((PROBE_POINTS, 0), dtype=complex)
        for s in sorted(set().union(*(e.free_symbols for e in exprs)), key=lambda s: s.name):
            self.value(s)  # drawn in the order of the names, as the probe always drew them
        with np.errstate(all="ignore"):
            values = evaluate(exprs, {s: v.astype(complex) for s, v in self.drawn.items()})
        return np.column_stack([np.broadcast_to(np.asarray(v, dtype=complex), (PROBE_POINTS,)) for v in values])

    def agree(self, left: Sequence[sympy.Expr], right: Sequence[sympy.Expr]) -> bool:
        """Whether ``left[i] = right[i]`` for every i at every point where both are finite (at least one)."""
        a, b = self(left), self(right)
        finite = np.all(np.isfinite(a), axis=1) & np.all(np.isfinite(b), axis=1)
        if not finite.any():
            return False
        a, b = a[finite], b[finite]
        return bool(np.all(np.abs(a - b) <= PROBE_TOLERANCE * (1.0 + np.abs(a) + np.abs(b))))

    def vanish(self, exprs: Sequence[sympy.Expr]) -> bool:
        """Whether every expression of ``exprs`` is zero at the points (:meth:`agree` with zeros)."""
        return self.agree(exprs, [sympy.Integer(0)] * len(exprs))

    def rank(self, rows: Sequence[Sequence[sympy.Expr]], point: int) -> int:
        """The numeric rank of the matrix ``rows`` at the probe point ``point``."""
        if not rows:
            return 0
        width = len(rows[0])
        values = self([e for row in rows for e in row])[point].reshape(len(rows), width)
        return int(np.linalg.matrix_rank(values, tol=1e-9 * max(1.0, float(np.abs(values).max()))))
