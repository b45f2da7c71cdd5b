"""The result of a derivation: :class:`Dynamics`, every symbolic term sls generates code for.

Array conventions: nested tuples whose entries are sympy expressions (the expanded route) or nodes of one
:class:`~sls.algebra.graph.Graph` (the graph and tree routes); the last index of a Jacobian is the state
index (``jac[...][l] = ∂(...)/∂x_l``, ``x = [q; q̇]``).
"""

from __future__ import annotations

from dataclasses import dataclass

from sls.algebra.graph import Graph
from sls.arrays import flatten, nest, shape_of
from sls.model import Model


@dataclass(frozen=True)
class Dynamics:
    """Every symbolic term sls generates code for.

    Shapes (n degrees of freedom, m inputs): ``mass_matrix`` (n, n),
    ``mass_matrix_jac`` (n, n, 2n), ``christoffel`` (n, n, n) with
    ``christoffel[i][j][k] = c_ijk``, ``coriolis`` (n, n), ``coriolis_jac``
    (n, n, 2n), ``coriolis_force = C q̇`` (n), ``coriolis_force_jac`` (n, 2n),
    ``potential_gradient = φ`` (n), ``potential_gradient_jac`` (n, 2n),
    ``friction`` (n), ``friction_jac`` (n, 2n), ``input_matrix = B_u``
    (n, m), ``input_matrix_jac`` (n, m, 2n).

    ``method`` is the route that derived them (:data:`~sls.derive.routes.METHODS`). On the
    ``"expanded"`` route every entry is a sympy expression. On the
    ``"graph"`` and ``"tree"`` routes every entry is a node (an ``int``) of
    ``graph``, a :class:`~sls.algebra.graph.Graph` sharing all subexpressions;
    ``energies`` holds the nodes of ``T`` and ``V`` and ``christoffel`` is
    ``None`` (the graph never needs the tensor). :meth:`as_sympy` gives any
    array as sympy expressions on every route.

    A constrained model (k constraints, holonomic rows first) also has
    ``constraint`` (k): ``c(q)`` and ``a(q) q̇``; ``constraint_jac`` (k, n):
    ``A``; ``constraint_jac_jac`` (k, n, 2n): ``∂A/∂x``; ``constraint_bias``
    (k): ``g = −Ȧ q̇ − 2ω A q̇ − ω² c`` (ω the Baumgarte rate, ``c`` zero for
    the velocity rows), so that ``A q̈ = g``; ``constraint_bias_jac`` (k, 2n).
    Unconstrained models have empty tuples there.

    ``residual_jac`` (n, 2n, graph and tree routes only, else empty) is ``∂r/∂x`` of the
    residual ``r = M q̈ + C q̇ + φ + fric − B_u u`` at fixed ``q̈`` (the symbols
    of :func:`~sls.derive.named_arrays.acceleration_symbols`) and ``u``: evaluated at the solved
    ``q̈`` it gives the lower half of ``A = −M⁻¹ ∂r/∂x`` without ``∂M/∂q``
    (see :func:`~sls.derive.graph_route.derive_on_graph`).

    ``kkt_jac`` ((n + k), 2n, graph and tree routes of a constrained model, else empty: the flat routes build it in
    :func:`~sls.derive.named_arrays.function_arrays`) is the Jacobian of the constrained residual
    ``[r − Aᵀλ; A q̈ − g]`` at fixed ``q̈``, ``λ`` (the symbols of
    :func:`~sls.derive.named_arrays.multiplier_symbols`) and ``u``: evaluated at the solved ``q̈`` and ``λ`` it
    is the right-hand side of the constrained linearization (:func:`~sls.derive.named_arrays.kkt_jacobian`).

    A model with generalized speeds (``model.kinematics``) also has ``kinematics`` (n): ``q̇ = S(q) v``, and
    ``kinematics_jac`` (n, 2n): its Jacobian, the upper rows of the linearization's ``A``; empty otherwise
    (``q̇ = v``).

    ``arrays`` (set by :func:`~sls.derive.routes.derive`) holds every array the generated
    functions evaluate, by name (:func:`~sls.derive.named_arrays.function_arrays`); with
    ``derive(..., wanted=...)`` only the wanted ones, and the fields nothing
    wanted needs are ``None`` (``mass_matrix`` is always built).
    """

    model: Model
    mass_matrix: tuple
    mass_matrix_jac: tuple
    christoffel: tuple
    coriolis: tuple
    coriolis_jac: tuple
    coriolis_force: tuple
    coriolis_force_jac: tuple
    potential_gradient: tuple
    potential_gradient_jac: tuple
    friction: tuple
    friction_jac: tuple
    input_matrix: tuple
    input_matrix_jac: tuple
    method: str = "expanded"
    graph: Graph | None = None
    energies: tuple = ()
    constraint: tuple = ()
    constraint_jac: tuple = ()
    constraint_jac_jac: tuple = ()
    constraint_bias: tuple = ()
    constraint_bias_jac: tuple = ()
    residual_jac: tuple = ()
    kkt_jac: tuple = ()
    kinematics: tuple = ()
    kinematics_jac: tuple = ()
    #: A robot's frame arrays (:data:`~sls.derive.tree_frames.FRAME_ARRAYS`) by name, when it names frames.
    frame_arrays: dict | None = None
    arrays: dict | None = None

    def as_sympy(self, array: tuple) -> tuple:
        """``array`` (one of the fields) with sympy expressions as entries, on either route."""
        if self.graph is None:
            return array
        return nest(self.graph.as_sympy_list(flatten(array)), shape_of(array))
