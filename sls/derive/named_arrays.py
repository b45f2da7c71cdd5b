"""The named arrays the generated functions evaluate (:func:`function_arrays`), shared by every route.

:data:`ARRAY_NAMES` lists them; ``derive(..., wanted=...)`` takes a subset (:func:`check_wanted`). Entries
are sympy expressions on the expanded route and nodes of the route's graph on the graph and tree routes: the
same combinations are written once, over :class:`SympyAlgebra` or :class:`GraphAlgebra`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence

import sympy

from sls.algebra.graph import Graph
from sls.derive.dynamics import Dynamics

#: Every name :func:`function_arrays` returns, in the order derivations visit them.
ARRAY_NAMES = (
    "M",
    "M_jac",
    "dM",
    "C",
    "C_jac",
    "phi",
    "phi_jac",
    "fric",
    "fric_jac",
    "B_u",
    "B_u_jac",
    "T",
    "V",
    "tau",
    "rhs",
    "drhs",
    "residual_jac",
    "c",
    "A",
    "A_jac",
    "bias",
    "bias_jac",
    "kkt_jac",
)

#: What the expanded routes (flat sympy entries) combine ``kkt_jac`` from (:func:`function_arrays`).
KKT_JAC_NEEDS = ("M_jac", "drhs", "A_jac", "bias_jac")

#: The arrays of a model with generalized speeds (``model.kinematics``): ``q̇ = S(q) v`` and its Jacobian.
SPEED_ARRAYS = ("qdot", "qdot_jac")

#: The arrays of a robot's frames (:mod:`sls.derive.tree_frames`): poses, Jacobians, ``J̇v``, the centre of mass.
FRAME_ARRAYS = ("frame_pose", "frame_jacobian", "frame_jacobian_local", "frame_jdot_v", "com", "com_jacobian")


#: The regressor ``∂τ/∂π`` of a robot whose inertial parameters are parameters (:mod:`sls.model.inertial`).
REGRESSOR_ARRAYS = ("regressor",)


def regressor_array_names(model: object) -> tuple:
    """:data:`REGRESSOR_ARRAYS` when ``model`` has inertial parameters, else ``()``."""
    from sls.model.inertial import regressor_names

    return REGRESSOR_ARRAYS if regressor_names(model) else ()  # type: ignore[arg-type]


def frame_array_names(model: object) -> tuple:
    """The frame arrays ``model`` has: a robot's :data:`FRAME_ARRAYS`, those of a model given by its energies
    (``frame_points``: no centre of mass), or none."""
    if not getattr(model, "frames", ()):
        return ()
    return FRAME_ARRAYS[:4] if getattr(model, "frame_points", ()) else FRAME_ARRAYS


#: The arrays ``qddot_fun`` and the graph route's ``linearized_model`` evaluate together.
#: The directional derivatives ``Σ_i ∂M/∂x_i dx_i``, ``Σ_i ∂C/∂x_i dx_i`` (n × n) and ``Σ_i ∂B_u/∂x_i dx_i`` (n × m;
#: ``dx`` the symbols of
#: :func:`direction_symbols`): the Jacobian modules of a model whose Jacobians have too many entries to write one by one
#: (:data:`sls.functions.DIRECTIONAL_FUNCTIONS`; graph routes only).
DIRECTION_ARRAYS = ("M_dir", "C_dir", "B_u_dir")

SOLVED_ARRAYS = ("M", "rhs", "residual_jac", "B_u")


def check_wanted(wanted: Collection[str] | None) -> set[str] | None:
    """``wanted`` as a set of names of :data:`ARRAY_NAMES` (``None`` stays ``None``: every array).

    Raises ``ValueError`` naming the unknown names and the known ones.
    """
    if wanted is None:
        return None
    known = ARRAY_NAMES + SPEED_ARRAYS + FRAME_ARRAYS + DIRECTION_ARRAYS + REGRESSOR_ARRAYS
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        raise ValueError(f"unknown array name(s) {', '.join(unknown)}; known: {', '.join(known)}")
    return set(wanted)


class SympyAlgebra:
    """Arithmetic on sympy expressions (the expanded route)."""

    zero = sympy.Integer(0)

    @staticmethod
    def total(items: Iterable[sympy.Expr]) -> sympy.Expr:
        return sympy.Add(*items)

    @staticmethod
    def product(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
        return a * b

    @staticmethod
    def plus(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
        return a + b

    @staticmethod
    def minus(a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
        return a - b

    @staticmethod
    def symbol(s: sympy.Symbol) -> sympy.Symbol:
        return s


class GraphAlgebra:
    """The same arithmetic on nodes of a :class:`~sls.algebra.graph.Graph` (the graph and tree routes)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.zero = graph.zero

    def total(self, items: Iterable[int]) -> int:
        return self.graph.add(list(items))

    def product(self, a: int, b: int) -> int:
        return self.graph.mul((a, b))

    def plus(self, a: int, b: int) -> int:
        return self.graph.add((a, b))

    def minus(self, a: int, b: int) -> int:
        return self.graph.sub(a, b)

    def symbol(self, s: sympy.Symbol) -> int:
        return self.graph.symbol(s)


#: What :func:`function_arrays` combines entries with (and hands to a route's own ``tau`` and ``rhs``).
Algebra = SympyAlgebra | GraphAlgebra
#: A route's own builder of ``tau`` or ``rhs``: ``(algebra, dynamics) -> array``.
ArrayBuilder = Callable[[Algebra, Dynamics], tuple]


def acceleration_symbols(n: int) -> tuple:
    """The placeholders ``_qddot0 … _qddot{n-1}`` standing for the accelerations in ``tau``."""
    return tuple(sympy.Symbol(f"_qddot{k}", real=True) for k in range(n))


def multiplier_symbols(k: int) -> tuple:
    """The placeholders ``_lam0 … _lam{k-1}`` standing for a constrained model's multipliers ``λ`` in ``kkt_jac``."""
    return tuple(sympy.Symbol(f"_lam{i}", real=True) for i in range(k))


def direction_symbols(n_x: int) -> tuple:
    """The placeholders ``_dx0 … _dx{n_x-1}``: a direction in the state space (the argument ``dx`` of the
    directional functions, :data:`DIRECTION_ARRAYS`)."""
    return tuple(sympy.Symbol(f"_dx{k}", real=True) for k in range(n_x))


def function_arrays(
    d: Dynamics,
    names: Sequence[str] | None = None,
    *,
    tau: ArrayBuilder | None = None,
    rhs: ArrayBuilder | None = None,
) -> dict:
    """Every array a generated function evaluates (see :mod:`sls.functions`), by name.

    The fields of :class:`Dynamics` under short names (``M``, ``M_jac``, ``C``,
    ``C_jac``, ``phi``, ``phi_jac``, ``fric``, ``fric_jac``, ``B_u``,
    ``B_u_jac``, ``T``, ``V``), and what the solving functions combine from
    them: ``rhs = B_u u − C q̇ − φ − fric`` (n), ``drhs = ∂rhs/∂x`` at fixed
    ``q̈`` (n, 2n), ``dM[a][b][l] = ∂M_ab/∂q_l`` (n, n, n) and ``tau = M q̈ +
    C q̇ + φ + fric`` with ``q̈`` the symbols of :func:`acceleration_symbols`;
    a constrained model's ``c``, ``A``, ``A_jac``, ``bias`` and ``bias_jac``
    (the ``constraint*`` fields); a model with generalized speeds' ``qdot`` (n) and ``qdot_jac`` (n, 2n)
    (:data:`SPEED_ARRAYS`). Entries are sympy expressions, or graph nodes
    on the graph routes.

    ``names`` (default: all of :data:`ARRAY_NAMES`) limits the result to
    those arrays (only they are combined); ``tau(alg, d)`` and ``rhs(alg, d)``
    replace the combinations above (the tree route computes both by
    recursive Newton–Euler).
    """
    if names is None:
        frames = tuple(k for k in FRAME_ARRAYS if k in (d.frame_arrays or {}))
        names = ARRAY_NAMES + (SPEED_ARRAYS if d.kinematics else ()) + frames + regressor_array_names(d.model)
    names = tuple(names)
    model = d.model
    n, m = model.n, model.m
    alg: Algebra = SympyAlgebra() if d.graph is None else GraphAlgebra(d.graph)
    u = [alg.symbol(s) for s in model.inputs]
    h = d.coriolis_force
    result = {}
    if "rhs" in names:
        result["rhs"] = (
            rhs(alg, d)
            if rhs is not None
            else tuple(
                alg.minus(
                    alg.minus(
                        alg.minus(alg.total(alg.product(d.input_matrix[k][j], u[j]) for j in range(m)), h[k]),
                        d.potential_gradient[k],
                    ),
                    d.friction[k],
                )
                for k in range(n)
            )
        )
    flat_kkt = "kkt_jac" in names and bool(d.constraint_jac) and not d.kkt_jac  # built here from the fields
    if "drhs" in names or flat_kkt:
        result["drhs"] = rhs_jacobian(alg, d)
    if "tau" in names or "regressor" in names:
        if tau is not None:
            result["tau"] = tau(alg, d)
        else:
            qddot = [alg.symbol(s) for s in acceleration_symbols(n)]
            result["tau"] = tuple(
                alg.plus(
                    alg.plus(
                        alg.plus(alg.total(alg.product(d.mass_matrix[k][j], qddot[j]) for j in range(n)), h[k]),
                        d.potential_gradient[k],
                    ),
                    d.friction[k],
                )
                for k in range(n)
            )
    if "regressor" in names:
        result["regressor"] = regressor(alg, d, result["tau"])
    if flat_kkt:
        result["kkt_jac"] = kkt_jacobian(alg, d, result["drhs"])
    if "dM" in names:
        result["dM"] = tuple(
            tuple(tuple(d.mass_matrix_jac[a][b][col] for col in range(model.n_q)) for b in range(n)) for a in range(n)
        )
    energies = (model.T, model.V) if d.graph is None else d.energies
    fields = {
        "M": d.mass_matrix,
        "M_jac": d.mass_matrix_jac,
        "C": d.coriolis,
        "C_jac": d.coriolis_jac,
        "phi": d.potential_gradient,
        "phi_jac": d.potential_gradient_jac,
        "fric": d.friction,
        "fric_jac": d.friction_jac,
        "B_u": d.input_matrix,
        "B_u_jac": d.input_matrix_jac,
        "T": energies[0],
        "V": energies[1],
        "c": d.constraint,
        "A": d.constraint_jac,
        "A_jac": d.constraint_jac_jac,
        "bias": d.constraint_bias,
        "bias_jac": d.constraint_bias_jac,
        "residual_jac": d.residual_jac,
        "kkt_jac": d.kkt_jac,
        "qdot": d.kinematics,
        "qdot_jac": d.kinematics_jac,
        **(d.frame_arrays or {}),
    }
    order = (
        "M",
        "M_jac",
        "C",
        "C_jac",
        "phi",
        "phi_jac",
        "fric",
        "fric_jac",
        "B_u",
        "B_u_jac",
        "T",
        "V",
        "tau",
        "rhs",
        "dM",
        "drhs",
        "c",
        "A",
        "A_jac",
        "bias",
        "bias_jac",
        "residual_jac",
        "kkt_jac",
        *SPEED_ARRAYS,
        *FRAME_ARRAYS,
        *REGRESSOR_ARRAYS,
    )
    return {name: result[name] if name in result else fields[name] for name in order if name in names}


def regressor(alg: Algebra, d: Dynamics, tau: Sequence) -> tuple:
    """``Y = ∂τ/∂π`` (n × len(π)), ``π`` the columns of :func:`~sls.model.inertial.regressor_names`: exact, as ``τ``
    is linear in them (sympy's derivative on the expanded route, one reverse pass per row of ``τ`` on a graph)."""
    from sls.algebra.expressions import symbol
    from sls.model.inertial import regressor_names

    columns = [symbol(name) for name in regressor_names(d.model)]
    if isinstance(alg, SympyAlgebra):
        return tuple(tuple(sympy.diff(t, p) for p in columns) for t in tau)
    graph = alg.graph
    wrt = [graph.symbol(p) for p in columns]
    return tuple(tuple(graph.gradient(t, wrt)) for t in tau)


def rhs_jacobian(alg: Algebra, d: Dynamics) -> tuple:
    """``drhs = ∂rhs/∂x`` (n × len(x)) of ``rhs = B_u u − C q̇ − φ − fric`` at fixed ``u``, from the Jacobian fields
    of ``d``."""
    model = d.model
    n, m = model.n, model.m
    u = [alg.symbol(s) for s in model.inputs]
    return tuple(
        tuple(
            alg.minus(
                alg.minus(
                    alg.minus(
                        alg.total(alg.product(d.input_matrix_jac[k][j][col], u[j]) for j in range(m)),
                        d.coriolis_force_jac[k][col],
                    ),
                    d.potential_gradient_jac[k][col],
                ),
                d.friction_jac[k][col],
            )
            for col in range(len(model.state))
        )
        for k in range(n)
    )


def kkt_jacobian(alg: Algebra, d: Dynamics, drhs: tuple) -> tuple:
    """``kkt_jac`` ((n + k) × len(x)) of a constrained model from the fields of ``d``: the Jacobian with respect to
    ``x`` of the constrained residual ``[r − Aᵀλ; A a − g]`` at fixed accelerations ``a``
    (:func:`acceleration_symbols`), multipliers ``λ`` (:func:`multiplier_symbols`) and inputs ``u``, with
    ``r = M a + C q̇ + φ + fric − B_u u``: rows ``Σ_b ∂M_jb/∂x a_b − ∂rhs_j/∂x − Σ_i λ_i ∂A_ij/∂x``, then
    ``Σ_b ∂A_ib/∂x a_b − ∂g_i/∂x``. ``()`` for an unconstrained model.

    The linearization of ``M q̈ = f + Aᵀλ, A q̈ = g`` solves ``[M −Aᵀ; A 0] [∂q̈; ∂λ] = −kkt_jac`` (and
    ``[B_u; 0]`` for the inputs) with the factors of the forward solve. The graph routes build the same array
    without ``∂M/∂q`` and ``∂A/∂x`` (:meth:`~sls.derive.graph_route.GraphTerms._kkt_jac`)."""
    model = d.model
    if not d.constraint_jac:
        return ()
    n, k, n_x = model.n, len(d.constraint_jac), len(model.state)
    a = [alg.symbol(s) for s in acceleration_symbols(n)]
    lam = [alg.symbol(s) for s in multiplier_symbols(k)]
    dM, dA, dg = d.mass_matrix_jac, d.constraint_jac_jac, d.constraint_bias_jac
    assert dM is not None
    rows = [
        tuple(
            alg.minus(
                alg.minus(alg.total(alg.product(dM[j][b][col], a[b]) for b in range(n)), drhs[j][col]),
                alg.total(alg.product(dA[i][j][col], lam[i]) for i in range(k)),
            )
            for col in range(n_x)
        )
        for j in range(n)
    ]
    rows += [
        tuple(
            alg.minus(alg.total(alg.product(dA[i][b][col], a[b]) for b in range(n)), dg[i][col]) for col in range(n_x)
        )
        for i in range(k)
    ]
    return tuple(rows)
