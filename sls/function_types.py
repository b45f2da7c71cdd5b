"""The types of the registry of generated functions (:mod:`sls.functions`): a generated function
(:class:`Function`), its positional arguments (:class:`Argument`) and the sizes its shapes are written in
(:func:`sizes`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model


@dataclass(frozen=True)
class Argument:
    """A positional argument: its name, its length (``"x"``, ``"n"``, ``"m"``: :func:`sizes`) and what it holds."""

    name: str
    size: str
    doc: str


#: The positional arguments a generated function may take.
STATE = Argument("x", "x", "State [q; qdot]")
INPUT = Argument("u", "m", "Input")
ACCELERATION = Argument("qddot", "n", "Accelerations, one per coordinate.")
DIRECTION = Argument("dx", "x", "Direction in the state space, one entry per state variable.")
MULTIPLIERS_ARGUMENT = Argument("lam", "k", "Constraint multipliers, one per constraint row.")


#: What a solving function computes (:attr:`Function.solve`): the accelerations ``q̈ = M⁻¹ rhs`` ...
ACCELERATIONS = "accelerations"
#: ... or the linearization ``(A, B)`` of ``ẋ = [q̇; q̈]`` about them.
LINEARIZATION = "linearization"


@dataclass(frozen=True)
class Function:
    """One generated function.

    ``outputs`` are ``(name, shape)`` pairs, a shape being a tuple of sizes
    (``"n"``, ``"2n"``, ``"m"``); ``()`` is a scalar. ``arrays`` are the
    names of the derived arrays it evaluates (see
    :func:`sls.derive.function_arrays`); ``solve`` marks the functions that
    solve with the mass matrix (``arrays[0]`` is ``M``) and says what they
    compute (:data:`ACCELERATIONS` or :data:`LINEARIZATION`; ``""`` for the
    others); ``uses`` names the function a wrapper is computed from (it has
    no kernel of its own); ``numeric`` marks a constrained model's solves,
    computed at run time from other functions' values (no kernel of their
    own either). ``graph_arrays``, when set, replaces ``arrays`` on the graph
    route (``linearized_model`` there solves with ``∂r/∂x`` instead of
    ``∂M/∂q``). ``jacobian`` marks the Jacobians of other functions' arrays
    (long, and rarely called at every step of a controller). ``calls`` names the functions it calls besides
    ``uses`` (a model with generalized speeds: ``xdot_fun`` takes ``q̇`` from ``qdot_fun``, ``linearized_model``
    its upper rows from ``qdot_jac_fun``). ``batch_only`` marks the functions only ever called with a batch (the
    directional derivatives, which their Jacobian wrappers evaluate along every state direction at once): a target
    with a separate one-state path (the Python target's floats) writes the batch path alone, and a call on one
    state goes through it as a batch of one.
    """

    name: str
    summary: str
    arguments: tuple
    outputs: tuple
    arrays: tuple
    solve: str = ""
    uses: str | None = None
    numeric: bool = False
    graph_arrays: tuple = ()
    jacobian: bool = False
    calls: tuple = ()
    batch_only: bool = False

    def shape(self, n: int, m: int, output: int = 0, k: int = 0) -> tuple:
        """The concrete shape of output number ``output``."""
        return sizes(self.outputs[output][1], n, m, k)


def sizes(
    shape: tuple, n: int, m: int, k: int = 0, n_q: int | None = None, f: int = 0, c: int = 0, p: int = 0
) -> tuple:
    """``shape`` with numbers: sizes ``"n"`` (degrees of freedom: speeds), ``"q"`` (coordinates, ``n_q``; ``n``
    unless a quaternion turns), ``"x"`` (the state, ``n_q + n``), ``"2n"`` (the tangent space of the state, where
    ``linearized_model`` lives), ``"m"`` inputs, ``"k"`` constraints, ``"nk"`` (``n + k``: the rows of the
    constrained residual), ``"f"`` frames, ``"c"`` contacts, ``"p"`` the regressor's columns
    (:func:`sls.model.inertial.regressor_names`); numbers stay."""
    n_q = n if n_q is None else n_q
    named = {"n": n, "q": n_q, "x": n_q + n, "2n": 2 * n, "m": m, "k": k, "nk": n + k, "f": f, "c": c, "p": p}
    return tuple(s if isinstance(s, int) else named[s] for s in shape)


def model_sizes(shape: tuple, model: Model) -> tuple:
    """:func:`sizes` with every count taken from ``model``."""
    from sls.model.inertial import regressor_names

    frames, contacts = len(getattr(model, "frames", ())), len(getattr(model, "contacts", ()))
    columns = len(regressor_names(model)) if "p" in shape else 0
    return sizes(shape, model.n, model.m, getattr(model, "k", 0), len(model.q), frames, contacts, columns)
