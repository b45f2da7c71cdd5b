"""Stage 2: derive the symbolic terms of the equations of motion.

For a :class:`~sls.model.Model` with coordinates ``q`` (n), rates ``q̇`` and
state ``x = [q; q̇]`` (2n), the equations of motion are

.. math::

    M(q)\\,\\ddot q + C(q, \\dot q)\\,\\dot q + \\varphi(q) = B_u(x)\\,u - f(x)

with

* ``M = ∂²T/∂q̇²`` — read off the quadratic form ``T = ½ q̇ᵀ M q̇`` term by
  term (exactly the Hessian, without differentiating),
* ``c_ijk = ½(∂M_kj/∂q_i + ∂M_ki/∂q_j − ∂M_ij/∂q_k)`` — Christoffel symbols
  of the first kind, symmetric in ``i, j``,
* ``C_kj = Σ_i c_ijk q̇_i`` — the Coriolis matrix, so that ``Ṁ − 2C`` is
  skew-symmetric,
* ``φ = ∂V/∂q``, ``f = fric``, ``B_u = ∂forces/∂u`` (``I`` when fully actuated).

Jacobians with respect to ``x`` are taken with what is known in closed form:
``∂M/∂q̇ = 0``, ``∂C_kj/∂q̇_l = c_ljk``, ``∂φ/∂q̇ = 0``, and ``M`` symmetric,
so only ``∂M/∂q`` and ``∂²M/∂q∂q`` (symmetric pairs) are differentiated.

Array conventions: nested tuples of sympy expressions, the last index of a
Jacobian is the state index (``jac[...][l] = ∂(...)/∂x_l``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import sympy

from sls.algebra.calculus import diff
from sls.algebra.graph import Graph, Unsupported
from sls.arrays import flatten, nest, shape_of
from sls.model import Model, quadratic_terms

ZERO = sympy.Integer(0)


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

    ``method`` is the route that derived them (:data:`METHODS`). On the
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
    of :func:`acceleration_symbols`) and ``u``: evaluated at the solved
    ``q̈`` it gives the lower half of ``A = −M⁻¹ ∂r/∂x`` without ``∂M/∂q``
    (see :func:`derive_on_graph`).

    ``arrays`` (set by :func:`derive`) holds every array the generated
    functions evaluate, by name (:func:`function_arrays`); with
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
    arrays: dict | None = None

    def as_sympy(self, array: tuple) -> tuple:
        """``array`` (one of the fields) with sympy expressions as entries, on either route."""
        if self.graph is None:
            return array
        return nest(self.graph.as_sympy_list(flatten(array)), shape_of(array))


def mass_matrix(model: Model, simplify: bool = False) -> tuple:
    """``M = ∂²T/∂q̇²`` as an (n, n) nested tuple, symmetric by construction.

    With ``simplify``, each entry goes through ``sympy.trigsimp`` (e.g.
    ``sin(q)**2 + cos(q)**2`` → ``1``), so everything derived from ``M`` is
    shorter too.
    """
    n = model.n
    entries: list[list[list[sympy.Expr]]] = [[[] for _ in range(n)] for _ in range(n)]
    for coefficient, i, j in quadratic_terms(model.T, model.dq):
        if i == j:
            entries[i][i].append(2 * coefficient)
        else:
            entries[i][j].append(coefficient)
    tidy = sympy.trigsimp if simplify else (lambda expr: expr)
    upper = [[tidy(sympy.Add(*entries[i][j])) if j >= i else None for j in range(n)] for i in range(n)]
    return tuple(tuple(upper[min(i, j)][max(i, j)] for j in range(n)) for i in range(n))


def mass_matrix_derivatives(M: tuple, q: tuple) -> tuple:
    """``dM[l][a][b] = ∂M_ab/∂q_l``, shape (n, n, n), symmetric in ``a, b``."""
    n = len(q)
    result = []
    for col in range(n):
        upper = {(a, b): diff(M[a][b], q[col]) for a in range(n) for b in range(a, n)}
        result.append(tuple(tuple(upper[min(a, b), max(a, b)] for b in range(n)) for a in range(n)))
    return tuple(result)


def christoffel(dM: tuple) -> tuple:
    """Christoffel symbols of the first kind, ``c[i][j][k] = c_ijk``, shape (n, n, n).

    ``c_ijk = ½(∂M_kj/∂q_i + ∂M_ki/∂q_j − ∂M_ij/∂q_k)`` with ``dM[l][a][b] =
    ∂M_ab/∂q_l``; symmetric in ``i, j``.
    """
    n = len(dM)
    half = sympy.Rational(1, 2)
    cache = {}
    for i in range(n):
        for j in range(i, n):
            for k in range(n):
                cache[i, j, k] = half * (dM[i][k][j] + dM[j][k][i] - dM[k][i][j])
    return tuple(tuple(tuple(cache[min(i, j), max(i, j), k] for k in range(n)) for j in range(n)) for i in range(n))


def coriolis(c: tuple, dq: tuple) -> tuple:
    """Coriolis matrix ``C_kj = Σ_i c_ijk q̇_i``, shape (n, n)."""
    n = len(dq)
    return tuple(tuple(sympy.Add(*(c[i][j][k] * dq[i] for i in range(n))) for j in range(n)) for k in range(n))


def coriolis_jacobian(dM: tuple, c: tuple, q: tuple, dq: tuple) -> tuple:
    """``∂C_kj/∂x_l``, shape (n, n, 2n).

    For ``l < n``: ``Σ_i ½(∂²M_kj/∂q_i∂q_l + ∂²M_ki/∂q_j∂q_l − ∂²M_ij/∂q_k∂q_l) q̇_i``
    with the second derivatives taken once per symmetric pair; for the
    velocity part ``∂C_kj/∂q̇_l = c_ljk``.
    """
    n = len(q)
    second = {}

    def d2(a: int, b: int, i: int, col: int) -> sympy.Expr:
        key = (min(a, b), max(a, b), min(i, col), max(i, col))
        if key not in second:
            first = dM[key[2]][key[0]][key[1]]
            second[key] = diff(first, q[key[3]]) if first != 0 else ZERO
        return second[key]

    half = sympy.Rational(1, 2)
    jac = [[[None] * (2 * n) for _ in range(n)] for _ in range(n)]
    for k in range(n):
        for j in range(n):
            for col in range(n):
                terms = []
                for i in range(n):
                    # Most second derivatives vanish: build the sum only from the ones that do not.
                    a, b, e = d2(k, j, i, col), d2(k, i, j, col), d2(i, j, k, col)
                    if a != 0 or b != 0 or e != 0:
                        terms.append(half * (a + b - e) * dq[i])
                jac[k][j][col] = sympy.Add(*terms)
                jac[k][j][n + col] = c[col][j][k]
    return tuple(tuple(tuple(row) for row in plane) for plane in jac)


def jacobian(vector: tuple, x: tuple) -> tuple:
    """``J[a][l] = ∂vector_a/∂x_l``, shape (len(vector), len(x))."""
    return tuple(tuple(diff(entry, xl) if entry != 0 else ZERO for xl in x) for entry in vector)


def derive(
    model: Model, simplify: bool = False, method: str = "auto", wanted: Collection[str] | None = None
) -> Dynamics:
    """Derive the terms of :class:`Dynamics` for ``model``.

    ``method`` picks the route (:data:`METHODS`): ``"expanded"`` (entries as
    flat expressions, the readable form for small models), ``"graph"``
    (derivatives on a shared expression graph, :func:`derive_on_graph`, for
    large models), ``"tree"`` (a robot model's recursive dynamics on the
    graph, :func:`derive_on_tree`; needs ``model.tree``) or ``"auto"``
    (:func:`choose_method`). ``simplify`` applies ``sympy.trigsimp`` to ``M``
    and ``φ`` before anything is differentiated further (off by default: it
    is exact but can be slow for large models); it implies the expanded route.

    ``wanted`` names the arrays of :func:`function_arrays` to build (``None``:
    all); only they and what they need are derived (e.g. ``{"M", "rhs",
    "residual_jac", "B_u", "tau"}`` never builds the Christoffel symbols or
    ``∂C/∂x``). ``arrays`` of the result holds exactly those names; fields of
    :class:`Dynamics` not built are ``None`` (``mass_matrix`` is always built:
    validation checks it).
    """
    if method not in METHODS:
        raise ValueError(f"derivation method must be one of {', '.join(METHODS)}, got {method!r}")
    wanted = _check_wanted(wanted)
    if method == "auto":
        method = choose_method(model, simplify)
    if method == "tree":
        if getattr(model, "tree", None) is None:
            raise ValueError("the tree route needs a robot model (model.tree, e.g. from a URDF file)")
        return derive_on_tree(model, wanted)
    if method == "graph":
        try:
            return derive_on_graph(model, wanted)
        except Unsupported as exc:
            from sls.errors import ModelError

            pieces = [model.T, model.V, *model.fric, *model.forces, *model.constraints, *model.velocity_constraints]
            what = "Piecewise" if any(e.has(sympy.Piecewise) for e in pieces) else str(exc)
            raise ModelError(
                f"the graph route cannot hold {what} (given through the Python API); "
                "derive this model with method='expanded' (or 'auto')"
            ) from None
    dynamics = derive_expanded(model, simplify, wanted)
    names = None if wanted is None else [k for k in ARRAY_NAMES if k in wanted]
    return replace(dynamics, arrays=function_arrays(dynamics, names))


#: The arrays ``qddot_fun`` and the graph route's ``linearized_model`` evaluate together.
SOLVED_ARRAYS = ("M", "rhs", "residual_jac", "B_u")


def _shared(graph: Graph, arrays: dict) -> dict:
    """``arrays`` (graph nodes) rebuilt together by :meth:`~sls.algebra.graph.Graph.share_sums`.

    Same values, fewer additions.
    """
    flats = {key: flatten(array) for key, array in arrays.items()}
    shared = iter(graph.share_sums([e for flat in flats.values() for e in flat]))
    return {key: nest([next(shared) for _ in flat], shape_of(arrays[key])) for key, flat in flats.items()}


def acceleration_symbols(n: int) -> tuple:
    """The placeholders ``_qddot0 … _qddot{n-1}`` standing for the accelerations in ``tau``."""
    return tuple(sympy.Symbol(f"_qddot{k}", real=True) for k in range(n))


def function_arrays(
    d: Dynamics,
    names: Sequence[str] | None = None,
    *,
    tau: Callable | None = None,
    rhs: Callable | None = None,
) -> dict:
    """Every array a generated function evaluates (see :mod:`sls.functions`), by name.

    The fields of :class:`Dynamics` under short names (``M``, ``M_jac``, ``C``,
    ``C_jac``, ``phi``, ``phi_jac``, ``fric``, ``fric_jac``, ``B_u``,
    ``B_u_jac``, ``T``, ``V``), and what the solving functions combine from
    them: ``rhs = B_u u − C q̇ − φ − fric`` (n), ``drhs = ∂rhs/∂x`` at fixed
    ``q̈`` (n, 2n), ``dM[a][b][l] = ∂M_ab/∂q_l`` (n, n, n) and ``tau = M q̈ +
    C q̇ + φ + fric`` with ``q̈`` the symbols of :func:`acceleration_symbols`;
    a constrained model's ``c``, ``A``, ``A_jac``, ``bias`` and ``bias_jac``
    (the ``constraint*`` fields). Entries are sympy expressions, or graph nodes
    on the graph routes.

    ``names`` (default: all of :data:`ARRAY_NAMES`) limits the result to
    those arrays (only they are combined); ``tau(alg, d)`` and ``rhs(alg, d)``
    replace the combinations above (the tree route computes both by
    recursive Newton–Euler).
    """
    names = ARRAY_NAMES if names is None else tuple(names)
    model = d.model
    n, m = model.n, model.m
    alg = _SympyAlgebra() if d.graph is None else _GraphAlgebra(d.graph)
    u = [alg.symbol(s) for s in model.inputs]
    h = d.coriolis_force
    result = {}
    if "rhs" in names:
        result["rhs"] = rhs(alg, d) if rhs is not None else tuple(
            alg.minus(
                alg.minus(
                    alg.minus(alg.total(alg.product(d.input_matrix[k][j], u[j]) for j in range(m)), h[k]),
                    d.potential_gradient[k],
                ),
                d.friction[k],
            )
            for k in range(n)
        )
    if "drhs" in names:
        result["drhs"] = tuple(
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
                for col in range(2 * n)
            )
            for k in range(n)
        )
    if "tau" in names:
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
    if "dM" in names:
        result["dM"] = tuple(
            tuple(tuple(d.mass_matrix_jac[a][b][col] for col in range(n)) for b in range(n)) for a in range(n)
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
    }
    order = ("M", "M_jac", "C", "C_jac", "phi", "phi_jac", "fric", "fric_jac", "B_u", "B_u_jac", "T", "V", "tau", "rhs",
             "dM", "drhs", "c", "A", "A_jac", "bias", "bias_jac", "residual_jac")
    return {name: result[name] if name in result else fields[name] for name in order if name in names}


class _SympyAlgebra:
    """Arithmetic on sympy expressions (the expanded route)."""

    zero = sympy.Integer(0)

    @staticmethod
    def total(items) -> sympy.Expr:
        return sympy.Add(*items)

    @staticmethod
    def product(a, b) -> sympy.Expr:
        return a * b

    @staticmethod
    def plus(a, b) -> sympy.Expr:
        return a + b

    @staticmethod
    def minus(a, b) -> sympy.Expr:
        return a - b

    @staticmethod
    def symbol(s: sympy.Symbol) -> sympy.Symbol:
        return s


class _GraphAlgebra:
    """The same arithmetic on nodes of a :class:`~sls.algebra.graph.Graph` (the graph route)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.zero = graph.zero

    def total(self, items) -> int:
        return self.graph.add(list(items))

    def product(self, a, b) -> int:
        return self.graph.mul((a, b))

    def plus(self, a, b) -> int:
        return self.graph.add((a, b))

    def minus(self, a, b) -> int:
        return self.graph.sub(a, b)

    def symbol(self, s: sympy.Symbol) -> int:
        return self.graph.symbol(s)


def derive_expanded(model: Model, simplify: bool = False, wanted: Collection[str] | None = None) -> Dynamics:
    """Every term of :class:`Dynamics` as flat expressions (M read off the expanded T).

    ``wanted`` (names of :func:`function_arrays`, ``None``: all) skips the
    Christoffel symbols, ``∂C/∂x``, ``∂φ/∂x`` and ``∂B_u/∂x`` when no wanted
    array needs them (those fields are then ``None``).
    """
    n, q, dq, x = model.n, model.q, model.dq, model.state

    def needs(*names: str) -> bool:
        return wanted is None or any(name in wanted for name in names)

    M = mass_matrix(model, simplify)
    # The fields nothing wanted needs stay None. Each group of names below is a subset of the one before
    # (C needs ∂M/∂q, ∂C/∂x needs C), hence the nesting.
    skipped: dict = dict.fromkeys(
        ("mass_matrix_jac", "christoffel", "coriolis", "coriolis_jac", "coriolis_force", "coriolis_force_jac"), None
    )
    if needs("M_jac", "dM", "C", "C_jac", "rhs", "tau", "drhs"):
        dM = mass_matrix_derivatives(M, q)
        skipped["mass_matrix_jac"] = tuple(
            tuple(tuple(dM[col][a][b] for col in range(n)) + (ZERO,) * n for b in range(n)) for a in range(n)
        )
        if needs("C", "C_jac", "rhs", "tau", "drhs"):
            c = christoffel(dM)
            C = coriolis(c, dq)
            skipped.update(christoffel=c, coriolis=C)
            skipped["coriolis_force"] = tuple(sympy.Add(*(C[k][j] * dq[j] for j in range(n))) for k in range(n))
            if needs("C_jac", "drhs"):
                C_jac = coriolis_jacobian(dM, c, q, dq)
                # ∂(C q̇)_k/∂q_l = Σ_j ∂C_kj/∂q_l q̇_j and ∂(C q̇)/∂q̇ = 2C (Christoffel symmetry).
                skipped["coriolis_jac"] = C_jac
                skipped["coriolis_force_jac"] = tuple(
                    tuple(sympy.Add(*(C_jac[k][j][col] * dq[j] for j in range(n))) for col in range(n))
                    + tuple(2 * C[k][col] for col in range(n))
                    for k in range(n)
                )
    phi = tuple(diff(model.V, qk) for qk in q)
    if simplify:
        phi = tuple(sympy.trigsimp(entry) for entry in phi)
    phi_jac = None
    if needs("phi_jac", "drhs"):
        upper = tuple(tuple(diff(phi[k], q[col]) if col >= k else None for col in range(n)) for k in range(n))
        phi_jac = tuple(
            tuple(upper[min(k, col)][max(k, col)] for col in range(n)) + (ZERO,) * n for k in range(n)
        )
    B = tuple(tuple(diff(force, u) for u in model.inputs) for force in model.forces)
    B_jac = None
    if needs("B_u_jac", "drhs"):
        B_jac = tuple(tuple(tuple(diff(b, xl) if b != 0 else ZERO for xl in x) for b in row) for row in B)
    constraints = _constraint_terms_expanded(model)
    skipped.update(
        potential_gradient_jac=phi_jac,
        friction_jac=jacobian(model.fric, x) if needs("fric_jac", "drhs") else None,
        input_matrix_jac=B_jac,
    )
    return Dynamics(
        **constraints,
        **skipped,
        model=model,
        mass_matrix=M,
        potential_gradient=phi,
        friction=model.fric,
        input_matrix=B,
    )


def _constraint_terms_expanded(model: Model) -> dict:
    """The constraint fields of :class:`Dynamics` as sympy expressions (empty when unconstrained)."""
    if not model.constrained:
        return {}
    n, q, dq, x = model.n, model.q, model.dq, model.state
    holonomic, rolling = model.constraints, model.velocity_constraints
    A = [[diff(c, qj) for qj in q] for c in holonomic] + [[diff(v, dqj) for dqj in dq] for v in rolling]
    velocity = [sympy.Add(*(A[i][j] * dq[j] for j in range(n))) for i in range(len(holonomic))] + list(rolling)
    bias = []
    omega = sympy.Float(model.stabilization)
    for i, v in enumerate(velocity):
        entry = -sympy.Add(*(diff(v, q[col]) * dq[col] for col in range(n)))
        if model.stabilization:
            entry -= 2 * omega * v + (omega**2 * holonomic[i] if i < len(holonomic) else ZERO)
        bias.append(entry)
    return {
        "constraint": tuple(holonomic) + tuple(rolling),
        "constraint_jac": tuple(tuple(row) for row in A),
        "constraint_jac_jac": tuple(
            tuple(tuple(diff(a, q[col]) if col < n and a != 0 else ZERO for col in range(2 * n)) for a in row)
            for row in A
        ),
        "constraint_bias": tuple(bias),
        "constraint_bias_jac": jacobian(tuple(bias), x),
    }


def _constraint_terms_graph(model: Model, graph: Graph, q: list, dq: list) -> dict:
    """The constraint fields of :class:`Dynamics` as nodes of ``graph`` (empty when unconstrained)."""
    if not model.constrained:
        return {}
    n = model.n
    x = q + dq
    holonomic = [graph.from_sympy(c) for c in model.constraints]
    rolling = [graph.from_sympy(v) for v in model.velocity_constraints]
    A = (graph.jacobian(holonomic, q) if holonomic else []) + (graph.jacobian(rolling, dq) if rolling else [])
    velocity = [graph.add(graph.mul((A[i][j], dq[j])) for j in range(n)) for i in range(len(holonomic))] + rolling
    convective = graph.forward(velocity, dict(zip(q, dq)))
    bias = [graph.neg(e) for e in convective]
    if model.stabilization:
        omega = sympy.Float(model.stabilization)
        two_omega, omega2 = graph.number(2 * omega), graph.number(omega**2)
        for i, v in enumerate(velocity):
            terms = [bias[i], graph.neg(graph.mul((two_omega, v)))]
            if i < len(holonomic):
                terms.append(graph.neg(graph.mul((omega2, holonomic[i]))))
            bias[i] = graph.add(terms)
    A_flat = [e for row in A for e in row]
    dA = [graph.forward(A_flat, {q[col]: graph.one}) for col in range(n)]
    k = len(A)
    return {
        "constraint": tuple(holonomic + rolling),
        "constraint_jac": nest(A_flat, (k, n)),
        "constraint_jac_jac": nest(
            [dA[col][r] if col < n else graph.zero for r in range(k * n) for col in range(2 * n)], (k, n, 2 * n)
        ),
        "constraint_bias": tuple(bias),
        "constraint_bias_jac": nest([e for row in graph.jacobian(bias, x) for e in row], (k, 2 * n)),
    }


# --------------------------------------------------------------------------
# the graph route: derivatives on a shared expression graph

#: Derivation routes: ``auto`` picks ``tree`` for robot models, else ``expanded`` or ``graph`` by model size.
METHODS = ("auto", "expanded", "graph", "tree")

#: ``auto`` takes the graph route when expanding T would give more terms than this.
EXPANSION_LIMIT = 1000


def choose_method(model: Model, simplify: bool = False) -> str:
    """``"tree"`` for robot models, ``"expanded"`` for models whose T expands to few terms (or with
    ``simplify``), else ``"graph"``.

    A robot model (``model.tree`` set, e.g. from a URDF file) takes the tree
    route (:func:`derive_on_tree`): its recursions stay small where the
    energies of 3-D arms do not.
    The expanded route writes every entry as one flat expression: the most
    readable code, and for small models the fastest. Its cost grows with the
    number of terms of the expanded ``T`` (n⁵ on a relative-angle chain), so
    beyond :data:`EXPANSION_LIMIT` terms (estimated on the graph without
    expanding: a product multiplies term counts, a sum adds them) the graph
    route is taken. Models that the graph cannot hold (e.g. ``Piecewise``)
    stay on the expanded route.
    """
    if simplify:
        return "expanded"
    if getattr(model, "tree", None) is not None:
        return "tree"
    graph = Graph()
    try:
        T = graph.from_sympy(model.T)
    except Unsupported:
        return "expanded"
    return "graph" if graph.term_estimate(T) > EXPANSION_LIMIT else "expanded"


def derive_on_graph(model: Model, wanted: Collection[str] | None = None) -> Dynamics:
    """Every term of :class:`Dynamics`, differentiated on one expression graph.

    ``T``'s velocity sums are first collected by their rate-free parts and
    sums sharing terms regrouped (:meth:`~sls.algebra.graph.Graph.collect_rates`,
    :meth:`~sls.algebra.graph.Graph.share_sums`). With the momentum ``p = ∂T/∂q̇``
    (reverse mode, together with ``∂T/∂q``):

    * ``M_ij = ∂p_i/∂q̇_j`` (forward mode, one pass per column),
    * ``h = C q̇ = (∂p/∂q) q̇ − ∂T/∂q`` (one directional derivative of ``p``),
    * ``∂M/∂q`` (forward mode), the Christoffel symbols ``c_ijk`` as sums of its
      nodes and ``C_kj = Σ_i c_ijk q̇_i``,
    * ``φ = ∂V/∂q``, ``B_u = ∂forces/∂u``, and every Jacobian by forward
      mode (``∂h/∂x`` by reverse mode, one pass per row; ``∂C/∂q_l = ½ ∂²h/∂q_l∂q̇``
      along ``q̇``, which skips the nodes that depend on ``q`` alone).

    For the linearization, ``residual_jac = ∂r/∂x`` of ``r = d/dt p − ∂T/∂q +
    φ + fric − B_u u`` at fixed ``q̈ = a`` (symbols) and ``u``, where ``d/dt p =
    (∂p/∂q) q̇ + M a`` is one directional derivative of ``p``: one reverse pass
    per row, with ``a`` in the graph, so ``(∂M/∂q) a`` is never formed entry
    by entry (``∂M/∂q`` has n³ entries; the row passes share the work of the
    whole graph).

    No Christoffel tensor and no expanded ``T``: the cost grows with the size
    of the graph. The arrays hold graph nodes; code is printed straight from
    the graph (:mod:`sls.lowering.graph_print`). ``wanted`` (names of
    :func:`function_arrays`, ``None``: all) limits the work to those arrays
    and what they need; the fields not built are ``None``.
    """
    return _EnergyTerms(model).dynamics(wanted)


def derive_on_tree(model: Model, wanted: Collection[str] | None = None) -> Dynamics:
    """Every term of :class:`Dynamics` for a robot tree (``model.tree``), from the recursions of
    :mod:`sls.derive.rigid_body`.

    On the graph, without ``T``: ``τ(q, q̇, a)`` by recursive Newton–Euler
    (``a`` the symbols of :func:`acceleration_symbols`),
    ``M`` by the composite-rigid-body algorithm, ``h = C q̇ = τ(q, q̇, 0)``
    without gravity, ``T`` and ``V`` from the bodies' velocities and heights,
    ``φ = ∂V/∂q`` (reverse mode), ``rhs = B_u u − τ(q, q̇, 0) − fric`` with
    gravity. ``residual_jac`` is ``∂r/∂x`` of ``r = τ(q, q̇, a) + fric − B_u u``
    (one reverse pass per row). Everything else (``∂M/∂q``,
    ``C``, ``∂C/∂x``, ``∂φ/∂x``, …) is derived from those nodes as on the
    graph route (:func:`derive_on_graph`); ``wanted`` as there.
    """
    return _TreeTerms(model).dynamics(wanted)


#: What each array of :func:`function_arrays` needs built on the graph routes (steps of :class:`_GraphTerms`).
_NEEDS = {
    "M": ("M",),
    "M_jac": ("dM",),
    "dM": ("dM",),
    "C": ("C",),
    "C_jac": ("dC",),
    "phi": ("phi",),
    "phi_jac": ("phi_jac",),
    "fric": (),
    "fric_jac": ("fric_jac",),
    "B_u": ("B",),
    "B_u_jac": ("dB",),
    "T": (),
    "V": (),
    "tau": ("M", "h", "phi"),
    "rhs": ("h", "phi", "B"),
    "drhs": ("h_jac", "phi_jac", "fric_jac", "dB"),
    "residual_jac": ("residual_jac",),
    "c": ("constraints",),
    "A": ("constraints",),
    "A_jac": ("constraints",),
    "bias": ("constraints",),
    "bias_jac": ("constraints",),
}

#: Every name :func:`function_arrays` returns.
ARRAY_NAMES = tuple(_NEEDS)


def _check_wanted(wanted: Collection[str] | None) -> set[str] | None:
    if wanted is None:
        return None
    unknown = sorted(set(wanted) - set(ARRAY_NAMES))
    if unknown:
        raise ValueError(f"unknown array name(s) {', '.join(unknown)}; known: {', '.join(ARRAY_NAMES)}")
    return set(wanted)


class _GraphTerms:
    """The graph routes' arrays, each built on first use (steps named in :data:`_NEEDS`).

    Subclasses give the route's own ``M``, ``h``, ``φ``, energies and
    residual; ``∂M/∂q``, ``C``, ``∂C/∂x``, ``∂h/∂x``, ``∂φ/∂x``, ``B_u`` and
    the constraint terms are common. With every array wanted the steps run
    in :data:`ORDER` (node ids, hence the printed code, do not depend on
    ``wanted`` = ``None`` vs. all names).
    """

    method = "graph"
    #: Route-specific entries overriding :data:`_NEEDS`.
    NEEDS: ClassVar[dict] = {}
    ORDER = ("M", "h", "dM", "C", "h_jac", "dC", "phi", "phi_jac", "fric_jac", "B", "dB", "residual_jac", "constraints")

    # Set by the route's ``_start``: nodes of fric (n), forces (n), inputs (m) and (T, V).
    fric: list[int]
    forces: list[int]
    inputs: list[int]
    energies: tuple[int, ...]
    #: The node ½ (set by ``_dM``).
    half: int

    def __init__(self, model: Model) -> None:
        self.model = model
        self.graph = graph = Graph()
        self.n = model.n
        self.q = [graph.symbol(s) for s in model.q]
        self.dq = [graph.symbol(s) for s in model.dq]
        self.x = self.q + self.dq
        self._cache: dict[str, Any] = {}

    def _start(self) -> None:
        """Route-specific nodes every array needs (energies, friction, forces, inputs)."""

    def get(self, step: str) -> Any:
        """The result of ``step`` (its method ``_<step>``), built on first use: lists of nodes, or dicts by index."""
        if step not in self._cache:
            self._cache[step] = getattr(self, "_" + step)()
        return self._cache[step]

    # -- common steps

    def _dM(self) -> list:
        graph, n = self.graph, self.n
        self.half = graph.number(sympy.Rational(1, 2))
        M_flat = [e for row in self.get("M") for e in row]
        return [graph.forward(M_flat, {self.q[col]: graph.one}) for col in range(n)]  # dM[col][a*n + b] = ∂M_ab/∂q_l

    def _christoffel(self) -> dict:
        """``c_ijk = ½(∂M_kj/∂q_i + ∂M_ki/∂q_j − ∂M_ij/∂q_k)``: sums of nodes of ``dM``."""
        graph, n, dM = self.graph, self.n, self.get("dM")
        c = {}
        for i in range(n):
            for j in range(i, n):
                for k in range(n):
                    c[i, j, k] = c[j, i, k] = graph.mul(
                        (self.half, graph.add((dM[i][k * n + j], dM[j][k * n + i], graph.neg(dM[k][i * n + j]))))
                    )
        return c

    def _C(self) -> list:
        graph, n, dq = self.graph, self.n, self.dq
        self._cache["christoffel"] = c = self._christoffel()
        return [[graph.add(graph.mul((c[i, j, k], dq[i])) for i in range(n)) for j in range(n)] for k in range(n)]

    def _h_jac(self) -> list:
        return [self.graph.gradient(hk, self.x) for hk in self.get("h")]

    def _dC(self) -> dict:
        # ∂C_kj/∂q_l = ½ ∂²h_k/∂q_l∂q̇_j: differentiating ∂h/∂q along q̇ skips every node that
        # depends on q alone (most of the graph), where differentiating C along q_l would not;
        # ∂C_kj/∂q̇_l = c_ljk.
        graph, n, dq = self.graph, self.n, self.dq
        self.get("C")
        h_jac = self.get("h_jac")
        c = self._cache["christoffel"]
        h_q = [h_jac[k][col] for k in range(n) for col in range(n)]
        C_q = [graph.forward(h_q, {dq[j]: self.half}) for j in range(n)]
        dC = {(k, j, col): C_q[j][k * n + col] for k in range(n) for j in range(n) for col in range(n)}
        dC.update({(k, j, n + col): c[col, j, k] for k in range(n) for j in range(n) for col in range(n)})
        return dC

    def _phi_jac(self) -> list:
        return self.graph.jacobian(self.get("phi"), self.x)

    def _fric_jac(self) -> list:
        return self.graph.jacobian(self.fric, self.x)

    def _B(self) -> list:
        return self.graph.jacobian(self.forces, self.inputs)

    def _dB(self) -> list:
        B_flat = [e for row in self.get("B") for e in row]
        return [self.graph.forward(B_flat, {xl: self.graph.one}) for xl in self.x]

    def _residual_jac(self) -> list:
        """``∂r/∂x`` (n rows of 2n nodes) of the residual at fixed ``a`` and ``u``: one reverse pass per row."""
        return [self.graph.gradient(r, self.x) for r in self.residual()]

    def residual(self) -> list:
        """The route's residual ``r`` (n nodes) at fixed ``a`` and ``u``."""
        raise NotImplementedError

    def _applied(self) -> list:
        graph, B = self.graph, self.get("B")
        return [graph.add(graph.mul((B[k][j], self.inputs[j])) for j in range(self.model.m)) for k in range(self.n)]

    def _constraints(self) -> dict:
        return _constraint_terms_graph(self.model, self.graph, self.q, self.dq)

    # -- the arrays

    def dynamics(self, wanted: Collection[str] | None = None) -> Dynamics:
        """The :class:`Dynamics` with the arrays ``wanted`` (and ``M``, which validation checks) built."""
        wanted = _check_wanted(wanted)
        names = ARRAY_NAMES if wanted is None else [name for name in ARRAY_NAMES if name in wanted]
        steps = {"M"} | {step for name in names for step in self.NEEDS.get(name, _NEEDS[name])}
        self._start()
        for step in self.ORDER:
            if step in steps:
                self.get(step)
        fields = self._fields()
        dynamics = Dynamics(**fields)
        arrays = self._arrays(dynamics, names)
        shared = [key for key in SOLVED_ARRAYS if key in arrays]
        arrays.update(_shared(self.graph, {key: arrays[key] for key in shared}))
        return replace(dynamics, arrays=arrays)

    def _fields(self) -> dict:
        """The fields of :class:`Dynamics` (``None`` where not built)."""
        graph, n, m, got = self.graph, self.n, self.model.m, self._cache
        zero = graph.zero
        fields = dict(got.get("constraints") or {})
        M = got["M"]
        fields.update(
            model=self.model,
            mass_matrix=nest([e for row in M for e in row], (n, n)),
            christoffel=None,
            friction=tuple(self.fric),
            method=self.method,
            graph=graph,
            energies=self.energies,
            mass_matrix_jac=None,
            coriolis=None,
            coriolis_jac=None,
            coriolis_force=None,
            coriolis_force_jac=None,
            potential_gradient=None,
            potential_gradient_jac=None,
            friction_jac=None,
            input_matrix=None,
            input_matrix_jac=None,
        )
        if "dM" in got:
            dM = got["dM"]
            fields["mass_matrix_jac"] = nest(
                [dM[col][a * n + b] if col < n else zero for a in range(n) for b in range(n) for col in range(2 * n)],
                (n, n, 2 * n),
            )
        if "C" in got:
            fields["coriolis"] = nest([e for row in got["C"] for e in row], (n, n))
        if "dC" in got:
            dC = got["dC"]
            fields["coriolis_jac"] = nest(
                [dC[k, j, col] for k in range(n) for j in range(n) for col in range(2 * n)], (n, n, 2 * n)
            )
        if "h" in got:
            fields["coriolis_force"] = tuple(got["h"])
        if "h_jac" in got:
            fields["coriolis_force_jac"] = nest([e for row in got["h_jac"] for e in row], (n, 2 * n))
        if "phi" in got:
            fields["potential_gradient"] = tuple(got["phi"])
        if "phi_jac" in got:
            fields["potential_gradient_jac"] = nest([e for row in got["phi_jac"] for e in row], (n, 2 * n))
        if "fric_jac" in got:
            fields["friction_jac"] = nest([e for row in got["fric_jac"] for e in row], (n, 2 * n))
        if "B" in got:
            B_flat = [e for row in got["B"] for e in row]
            fields["input_matrix"] = nest(B_flat, (n, m))
        if "dB" in got:
            dB = got["dB"]
            fields["input_matrix_jac"] = nest(
                [dB[col][r] for r in range(n * m) for col in range(2 * n)], (n, m, 2 * n)
            )
        if "residual_jac" in got:
            fields["residual_jac"] = nest([e for row in got["residual_jac"] for e in row], (n, 2 * n))
        return fields

    def _arrays(self, d: Dynamics, names: Sequence[str]) -> dict:
        """The arrays ``names`` of :func:`function_arrays` (``rhs``, ``drhs``, ``tau`` built here, in that order)."""
        all_arrays = function_arrays(d, names, tau=self.tau, rhs=self.rhs)
        return {name: all_arrays[name] for name in names}

    #: Route-specific ``tau`` and ``rhs`` builders (``None``: from ``M``, ``h`` and ``φ``).
    tau: Callable[[Any, Dynamics], tuple] | None = None
    rhs: Callable[[Any, Dynamics], tuple] | None = None


class _EnergyTerms(_GraphTerms):
    """The graph route: everything from ``T`` and ``V`` (see :func:`derive_on_graph`)."""

    def _start(self) -> None:
        graph, model = self.graph, self.model
        energies = [graph.from_sympy(model.T), graph.from_sympy(model.V)]
        products = graph.collect_products(energies, self.dq)
        if graph.operation_count(products) < graph.operation_count(energies):
            energies = products
        collected = graph.collect_rates(energies, self.dq)
        if graph.operation_count(collected) <= graph.operation_count(energies):
            energies = collected
        self.energies = tuple(graph.share_sums(energies))
        self.fric = [graph.from_sympy(f) for f in model.fric]
        self.forces = [graph.from_sympy(f) for f in model.forces]
        self.inputs = [graph.symbol(u) for u in model.inputs]
        gradient = graph.gradient(self.energies[0], self.x)
        self.T_q, self.momentum = gradient[: self.n], gradient[self.n :]

    def _M(self) -> list:
        graph, n = self.graph, self.n
        columns = [graph.forward(self.momentum, {self.dq[j]: graph.one}) for j in range(n)]
        return [[columns[max(i, j)][min(i, j)] for j in range(n)] for i in range(n)]

    def _h(self) -> list:
        convective = self.graph.forward(self.momentum, dict(zip(self.q, self.dq)))
        return [self.graph.sub(a, b) for a, b in zip(convective, self.T_q)]

    def _phi(self) -> list:
        return self.graph.gradient(self.energies[1], self.q)

    def residual(self) -> list:
        """``r = (∂p/∂q) q̇ + M a − ∂T/∂q + φ + fric − B_u u``.

        The first two terms are one directional derivative of ``p``.
        """
        graph, n = self.graph, self.n
        a = [graph.symbol(s) for s in acceleration_symbols(n)]
        seeds = dict(zip(self.q, self.dq))
        seeds.update(zip(self.dq, a))
        momentum_rate = graph.forward(self.momentum, seeds)  # (∂p/∂q) q̇ + M a
        phi, applied = self.get("phi"), self._applied()
        return [
            graph.add((momentum_rate[k], graph.neg(self.T_q[k]), phi[k], self.fric[k], graph.neg(applied[k])))
            for k in range(n)
        ]


class _TreeTerms(_GraphTerms):
    """The tree route: ``M``, ``h``, ``τ``, ``T``, ``V`` by the recursions of :mod:`sls.derive.rigid_body`,
    ``φ = ∂V/∂q``."""

    method = "tree"
    NEEDS: ClassVar[dict] = {"tau": ("inverse",), "rhs": ("B",)}

    def _start(self) -> None:
        from sls.algebra.expressions import symbol
        from sls.derive import rigid_body
        from sls.model.tree import Robot

        graph, model = self.graph, self.model
        if not isinstance(model.tree, Robot):
            raise ValueError("the tree route needs a robot model (model.tree, e.g. from a URDF file)")
        self.fric = [graph.from_sympy(f) for f in model.fric]
        self.forces = [graph.from_sympy(f) for f in model.forces]
        self.inputs = [graph.symbol(u) for u in model.inputs]
        self.tree = rigid_body.TreeDynamics(graph, rigid_body.bodies(model.tree), self.q, self.n)
        # gravity: the parameter g of a URDF model (sls.readers.urdf.GRAVITY), absent when no body's height changes V
        self.gravity = graph.symbol(symbol("g")) if "g" in model.params else graph.zero
        self.zeros = [graph.zero] * self.n
        self.accelerations = [graph.symbol(s) for s in acceleration_symbols(self.n)]
        self.energies = (self.tree.kinetic_energy(self.dq), self.tree.potential_energy(self.gravity))

    def _M(self) -> list:
        return self.tree.mass_matrix()

    def _h(self) -> list:
        return self.tree.inverse_dynamics(self.dq, self.zeros, self.graph.zero)

    def _phi(self) -> list:
        """``φ = ∂V/∂q`` by reverse mode through the heights (smaller than a gravity-only Newton–Euler pass)."""
        return self.graph.gradient(self.energies[1], self.q)

    def _inverse(self) -> list:
        """``τ(q, q̇, a) + fric`` with gravity: the inverse dynamics ``tau_fun`` returns."""
        tau = self.tree.inverse_dynamics(self.dq, self.accelerations, self.gravity)
        return [self.graph.add((t, f)) for t, f in zip(tau, self.fric)]

    def residual(self) -> list:
        """``r = τ(q, q̇, a) + fric − B_u u``."""
        applied = self._applied()
        return [self.graph.sub(t, b) for t, b in zip(self.get("inverse"), applied)]

    def tau(self, alg: object, d: Dynamics) -> tuple:
        return tuple(self.get("inverse"))

    def rhs(self, alg: object, d: Dynamics) -> tuple:
        """``B_u u − τ(q, q̇, 0) − fric`` (one Newton–Euler pass for ``C q̇ + φ``)."""
        graph = self.graph
        bias = self.tree.inverse_dynamics(self.dq, self.zeros, self.gravity)
        applied = self._applied()
        return tuple(graph.sub(graph.sub(b, t), f) for b, t, f in zip(applied, bias, self.fric))
