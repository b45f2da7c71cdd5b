"""The registry of generated functions: one list every backend renders from.

Each :class:`Function` names a generated function, its arguments, its
outputs with their shapes (in terms of ``n`` degrees of freedom and ``m``
inputs), the arrays of :func:`sls.derive.function_arrays` it evaluates and a
one-line summary. The Python target writes one module per function, the C
target one C function (plus batch entry points for the solving functions);
both take names, argument lists, shapes and docs from here.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Argument:
    """A positional argument: its name, its length (``"2n"``, ``"n"`` or ``"m"``) and what it holds."""

    name: str
    size: str
    doc: str


#: The positional arguments a generated function may take.
STATE = Argument("x", "2n", "State [q; qdot]")
INPUT = Argument("u", "m", "Input")
ACCELERATION = Argument("qddot", "n", "Accelerations, one per coordinate.")


@dataclass(frozen=True)
class Function:
    """One generated function.

    ``outputs`` are ``(name, shape)`` pairs, a shape being a tuple of sizes
    (``"n"``, ``"2n"``, ``"m"``); ``()`` is a scalar. ``arrays`` are the
    names of the derived arrays it evaluates (see
    :func:`sls.derive.function_arrays`); ``solve`` marks the functions that
    solve with the mass matrix (``arrays[0]`` is ``M``); ``uses`` names the
    function a wrapper is computed from (it has no kernel of its own).
    """

    name: str
    summary: str
    arguments: tuple
    outputs: tuple
    arrays: tuple
    solve: bool = False
    uses: str | None = None

    def shape(self, n: int, m: int, output: int = 0) -> tuple:
        """The concrete shape of output number ``output``."""
        return sizes(self.outputs[output][1], n, m)


def sizes(shape: tuple, n: int, m: int) -> tuple:
    """``shape`` (sizes as ``"n"``, ``"2n"``, ``"m"``) with numbers."""
    return tuple({"n": n, "2n": 2 * n, "m": m}[s] for s in shape)


def _array(name: str, summary: str, output: str, shape: tuple, arguments: tuple = (STATE,)) -> Function:
    return Function(name, summary, arguments, ((output, shape),), (output,))


#: Every generated function, in the order of the generated package's ``__init__``.
FUNCTIONS = (
    _array("M_fun", "Mass matrix M(q) = d2T/dqdot2 (symmetric positive definite).", "M", ("n", "n")),
    _array(
        "M_jac_fun", "Jacobian of the mass matrix: M_jac[:, :, i] = dM/dx_i (zero for the qdot half).", "M_jac", ("n", "n", "2n")
    ),
    _array(
        "C_fun", "Coriolis matrix C(q, qdot), C_kj = sum_i c_ijk qdot_i with the Christoffel symbols c_ijk.", "C", ("n", "n")
    ),
    _array("C_jac_fun", "Jacobian of the Coriolis matrix: C_jac[:, :, i] = dC/dx_i.", "C_jac", ("n", "n", "2n")),
    _array("phi_fun", "Potential forces phi(q) = dV/dq.", "phi", ("n",)),
    _array("phi_jac_fun", "Jacobian of the potential forces: phi_jac[:, i] = dphi/dx_i.", "phi_jac", ("n", "2n")),
    _array(
        "fric_fun", "Friction forces fric(q, qdot) (left-hand side: M qddot + C qdot + phi = B_u u - fric).", "fric", ("n",)
    ),
    _array("fric_jac_fun", "Jacobian of the friction forces: fric_jac[:, i] = dfric/dx_i.", "fric_jac", ("n", "2n")),
    _array(
        "input_matrix_fun", "Input matrix B_u(x) = d(forces)/du (the identity for a fully actuated model).", "B_u", ("n", "m")
    ),
    _array(
        "input_matrix_jac_fun",
        "Jacobian of the input matrix: input_matrix_jac[:, :, i] = dB_u/dx_i.",
        "B_u_jac",
        ("n", "m", "2n"),
    ),
    _array("T_fun", "Kinetic energy T(x) = 1/2 qdot' M(q) qdot.", "T", ()),
    _array("V_fun", "Potential energy V(q).", "V", ()),
    _array(
        "tau_fun",
        "Inverse dynamics: generalized forces M qddot + C qdot + phi + fric for a given qddot.",
        "tau",
        ("n",),
        (STATE, ACCELERATION),
    ),
    Function(
        "qddot_fun",
        "Forward dynamics: qddot = M^-1 (B_u u - C qdot - phi - fric), by a linear solve.",
        (STATE, INPUT),
        (("qddot", ("n",)),),
        ("M", "rhs"),
        solve=True,
    ),
    Function(
        "linearized_model",
        "Linearization (A, B) of xdot = f(x, u) = [qdot; qddot] at (x, u).",
        (STATE, INPUT),
        (("A", ("2n", "2n")), ("B", ("2n", "m"))),
        ("M", "rhs", "dM", "drhs", "B_u"),
        solve=True,
    ),
    Function(
        "xdot_fun",
        "State derivative xdot = f(x, u) = [qdot; qddot], the right-hand side scipy.integrate.solve_ivp wants.",
        (STATE, INPUT),
        (("xdot", ("2n",)),),
        (),
        uses="qddot_fun",
    ),
)

#: Functions by name.
BY_NAME = {f.name: f for f in FUNCTIONS}
#: The functions with code of their own (every one but the wrappers).
KERNELS = tuple(f.name for f in FUNCTIONS if f.uses is None)
#: Every function name, in order.
NAMES = tuple(BY_NAME)
