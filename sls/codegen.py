"""Stage 3: optimize the derived terms and print them as Python code.

Each generated function is built from a :class:`Kernel`: named output arrays
of sympy expressions, reduced together by common-subexpression elimination
(``sympy.cse``, temporaries ``_t0, _t1, …``) and printed twice:

* the **scalar path** (one state, ``x`` of shape ``(2n,)``) works on Python
  floats — ``x.tolist()`` once, ``math`` functions — because Python float
  arithmetic is several times faster than numpy scalars;
* the **batch path** (``x`` of shape ``(..., 2n)``) works on numpy arrays
  with ``np`` functions, one vectorised operation per temporary.

Names: states, inputs and parameters keep the user's names (validated plain
identifiers that never start with ``_``), so nothing generated can collide
with them. Output is deterministic: same model → same text.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import product

import sympy
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.pycode import PythonCodePrinter

from .derive import Dynamics


class ScalarPrinter(PythonCodePrinter):
    """Prints expressions for Python floats (``math.sin``, exact float literals)."""

    def __init__(self) -> None:
        super().__init__({"fully_qualified_modules": True, "standard": "python3"})

    def _print_Float(self, expr: sympy.Float) -> str:
        return repr(float(expr))


class BatchPrinter(NumPyPrinter):
    """Prints expressions for numpy arrays (``np.sin``, exact float literals)."""

    def __init__(self) -> None:
        super().__init__({"fully_qualified_modules": True})

    def _module_format(self, fqn: str, register: bool = True) -> str:
        text = super()._module_format(fqn, register)
        return "np." + text[len("numpy.") :] if text.startswith("numpy.") else text

    def _print_Float(self, expr: sympy.Float) -> str:
        return repr(float(expr))

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        # Arrays are float64, so integer powers need no float workaround.
        return self._hprint_Pow(expr, rational=rational, sqrt="np.sqrt")


SCALAR = ScalarPrinter()
BATCH = BatchPrinter()


@dataclass(frozen=True)
class Output:
    """One output array of a kernel: its name, shape and printed entries.

    ``scalar``/``batch`` hold the printed entries in C order (flat); entries
    that are exactly zero are ``None`` in ``nonzero`` order lists.
    """

    name: str
    shape: tuple
    scalar: list
    batch: list
    zero: list

    @property
    def scalar_literal(self) -> str:
        """A nested-list literal of the scalar entries (``[[a, b], [c, d]]``)."""
        return _nested(self.scalar, self.shape)

    @property
    def indexed(self) -> list[tuple[str, str]]:
        """``(index, batch expression)`` for the non-zero entries, index like ``"0, 1"``."""
        result = []
        for position, (expr, is_zero) in enumerate(zip(self.batch, self.zero)):
            if not is_zero:
                index = _unravel(position, self.shape)
                result.append((", ".join(map(str, index)), expr))
        return result


@dataclass(frozen=True)
class Kernel:
    """Printed code of one generated function's symbolic part.

    ``scalar_lines``/``batch_lines`` assign the common subexpressions;
    ``outputs`` maps output names to :class:`Output`.
    """

    scalar_lines: list
    batch_lines: list
    outputs: dict = field(default_factory=dict)


def build_kernel(arrays: dict) -> Kernel:
    """CSE and print ``arrays`` (name → nested tuple of expressions) as one :class:`Kernel`."""
    shapes = {name: _shape(array) for name, array in arrays.items()}
    flats = {name: list(_flatten(array)) for name, array in arrays.items()}
    everything = [expr for flat in flats.values() for expr in flat]
    temporaries = sympy.numbered_symbols("_t", real=True)
    replacements, reduced = sympy.cse(everything, symbols=temporaries, order="none")
    scalar_lines = [f"{sym} = {SCALAR.doprint(expr)}" for sym, expr in replacements]
    batch_lines = [f"{sym} = {BATCH.doprint(expr)}" for sym, expr in replacements]
    outputs = {}
    start = 0
    for name, flat in flats.items():
        part = reduced[start : start + len(flat)]
        start += len(flat)
        outputs[name] = Output(
            name=name,
            shape=shapes[name],
            scalar=[SCALAR.doprint(e) for e in part],
            batch=[BATCH.doprint(e) for e in part],
            zero=[e == 0 for e in part],
        )
    return Kernel(scalar_lines=scalar_lines, batch_lines=batch_lines, outputs=outputs)


def kernels(dynamics: Dynamics) -> dict[str, Kernel]:
    """The kernel of every generated module, by module name.

    ``qddot_fun`` computes ``M`` and ``rhs = B_u u − C q̇ − φ − fric``;
    ``linearized_model`` adds ``dM`` (∂M/∂q_l stacked on the last axis),
    ``drhs = ∂rhs/∂x`` at fixed ``q̈`` (n, 2n) and ``B_u``;
    ``tau_fun`` computes ``M q̈ + C q̇ + φ + fric`` with ``q̈`` the symbols
    ``_qddot0 …``.
    """
    d = dynamics
    model = d.model
    n, m = model.n, model.m
    u = model.inputs
    h = d.coriolis_force
    rhs = tuple(
        sympy.Add(*(d.input_matrix[k][j] * u[j] for j in range(m))) - h[k] - d.potential_gradient[k] - d.friction[k]
        for k in range(n)
    )
    drhs = tuple(
        tuple(
            sympy.Add(*(d.input_matrix_jac[k][j][l] * u[j] for j in range(m)))
            - d.coriolis_force_jac[k][l]
            - d.potential_gradient_jac[k][l]
            - d.friction_jac[k][l]
            for l in range(2 * n)
        )
        for k in range(n)
    )
    qddot_symbols = [sympy.Symbol(f"_qddot{k}", real=True) for k in range(n)]
    tau = tuple(
        sympy.Add(*(d.mass_matrix[k][j] * qddot_symbols[j] for j in range(n))) + h[k] + d.potential_gradient[k] + d.friction[k]
        for k in range(n)
    )
    M_upper = d.mass_matrix
    dM = tuple(tuple(tuple(d.mass_matrix_jac[a][b][l] for l in range(n)) for b in range(n)) for a in range(n))
    return {
        "M_fun": build_kernel({"M": d.mass_matrix}),
        "M_jac_fun": build_kernel({"M_jac": d.mass_matrix_jac}),
        "C_fun": build_kernel({"C": d.coriolis}),
        "C_jac_fun": build_kernel({"C_jac": d.coriolis_jac}),
        "phi_fun": build_kernel({"phi": d.potential_gradient}),
        "phi_jac_fun": build_kernel({"phi_jac": d.potential_gradient_jac}),
        "fric_fun": build_kernel({"fric": d.friction}),
        "fric_jac_fun": build_kernel({"fric_jac": d.friction_jac}),
        "input_matrix_fun": build_kernel({"B_u": d.input_matrix}),
        "input_matrix_jac_fun": build_kernel({"B_u_jac": d.input_matrix_jac}),
        "T_fun": build_kernel({"T": model.T}),
        "V_fun": build_kernel({"V": model.V}),
        "tau_fun": build_kernel({"tau": tau}),
        "qddot_fun": build_kernel({"M": M_upper, "rhs": rhs}),
        "linearized_model": build_kernel({"M": M_upper, "rhs": rhs, "dM": dM, "drhs": drhs, "B_u": d.input_matrix}),
    }


def _shape(array: object) -> tuple:
    shape = []
    while isinstance(array, tuple):
        shape.append(len(array))
        array = array[0] if array else None
    return tuple(shape)


def _flatten(array: object):
    if isinstance(array, tuple):
        for item in array:
            yield from _flatten(item)
    else:
        yield sympy.sympify(array)


def _unravel(position: int, shape: tuple) -> tuple:
    index = []
    for size in reversed(shape):
        index.append(position % size)
        position //= size
    return tuple(reversed(index))


def _nested(flat: list, shape: tuple) -> str:
    if not shape:
        return flat[0]
    step = len(flat) // shape[0] if shape[0] else 0
    parts = [_nested(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]
    return "[" + ", ".join(parts) + "]"


def all_indices(shape: tuple):
    """Every index tuple of ``shape`` in C order."""
    return product(*(range(s) for s in shape))
