"""The graph route: every term differentiated on one hash-consed expression graph (:func:`derive_on_graph`).

:class:`GraphTerms` builds the arrays the graph routes share (``∂M/∂q``, ``C``, ``∂C/∂x``, ``∂h/∂x``,
``∂φ/∂x``, ``B_u``, the constraint terms), each on first use, from a route's own ``M``, ``h = C q̇``,
``φ``, energies and residual; :class:`EnergyTerms` gives those from ``T`` and ``V`` (this route),
:class:`~sls.derive.tree_route.TreeTerms` from a robot tree's recursions (the tree route).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace
from typing import Any, ClassVar

import sympy

from sls.algebra.graph import Graph
from sls.arrays import flatten, nest, shape_of
from sls.derive.constraint_terms import constraint_jacobians_graph, constraint_terms_graph, kkt_jacobian_graph
from sls.derive.dynamics import Dynamics
from sls.derive.named_arrays import (
    ARRAY_NAMES,
    DIRECTION_ARRAYS,
    FRAME_ARRAYS,
    SOLVED_ARRAYS,
    SPEED_ARRAYS,
    ArrayBuilder,
    acceleration_symbols,
    check_wanted,
    direction_symbols,
    frame_array_names,
    function_arrays,
    regressor_array_names,
)
from sls.derive.speeds_route import speed_kinematics
from sls.errors import ModelError
from sls.model import Model


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
    :func:`~sls.derive.named_arrays.function_arrays`, ``None``: all) limits the work to those arrays
    and what they need; the fields not built are ``None``.
    """
    return EnergyTerms(model).dynamics(wanted)


#: What each array of :func:`~sls.derive.named_arrays.function_arrays` needs built on the graph routes
#: (steps of :class:`GraphTerms`).
NEEDS_BY_ARRAY = {
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
    "A_jac": ("constraint_jacobians",),
    "bias": ("constraints",),
    "bias_jac": ("constraint_jacobians",),
    "kkt_jac": ("kkt_jac",),
    "qdot": ("qdot",),
    "qdot_jac": ("qdot_jac",),
    **{name: ("frames",) for name in FRAME_ARRAYS},
    "regressor": ("M", "h", "phi"),
    "M_dir": ("M_dir",),
    "C_dir": ("C_dir",),
    "B_u_dir": ("B_dir",),
}


def shared_arrays(graph: Graph, arrays: dict) -> dict:
    """``arrays`` (graph nodes) rebuilt together by :meth:`~sls.algebra.graph.Graph.share_sums`: same values, fewer
    additions."""
    flats = {key: flatten(array) for key, array in arrays.items()}
    shared = iter(graph.share_sums([e for flat in flats.values() for e in flat]))
    return {key: nest([next(shared) for _ in flat], shape_of(arrays[key])) for key, flat in flats.items()}


def _tuples(array: object) -> object:
    """Nested lists as the nested tuples of :mod:`sls.arrays`."""
    return tuple(_tuples(item) for item in array) if isinstance(array, (list, tuple)) else array


class GraphTerms:
    """The graph routes' arrays, each built on first use (steps named in :data:`NEEDS_BY_ARRAY`).

    Subclasses give the route's own ``M``, ``h``, ``φ``, energies and
    residual; ``∂M/∂q``, ``C``, ``∂C/∂x``, ``∂h/∂x``, ``∂φ/∂x``, ``B_u`` and
    the constraint terms are common. With every array wanted the steps run
    in :data:`ORDER` (node ids, hence the printed code, do not depend on
    ``wanted`` = ``None`` vs. all names).
    """

    method = "graph"
    #: Route-specific entries overriding :data:`NEEDS_BY_ARRAY`.
    NEEDS: ClassVar[dict] = {}
    ORDER = (
        "M", "h", "dM", "C", "h_jac", "dC", "phi", "phi_jac", "fric_jac", "B", "dB", "residual_jac", "constraints",
        "constraint_jacobians",
        "qdot", "qdot_jac", "frames", "M_dir", "C_dir", "B_dir", "kkt_jac",
    )  # fmt: skip

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
        self.n_q = len(model.q)
        self.q = [graph.symbol(s) for s in model.q]
        self.dq = [graph.symbol(s) for s in model.dq]
        self.x = self.q + self.dq
        self._cache: dict[str, Any] = {}
        #: Generalized speeds (``model.kinematics``): their :class:`~sls.model.kinematics.Kinematics`, and
        #: ``S`` (n_q × n nodes); ``None`` when the speeds are the rates.
        self.kinematics = speed_kinematics(model) if model.kinematics is not None else None
        self.S = None if self.kinematics is None else [[graph.from_sympy(e) for e in row] for row in self.kinematics.S]

    def _start(self) -> None:
        """Route-specific nodes every array needs (energies, friction, forces, inputs)."""

    def get(self, step: str) -> Any:
        """The result of ``step`` (its method ``_<step>``), built on first use: lists of nodes, or dicts by index."""
        if step not in self._cache:
            self._cache[step] = getattr(self, "_" + step)()
        return self._cache[step]

    # -- common steps

    def _dM(self) -> list:
        graph = self.graph
        self.half = graph.number(sympy.Rational(1, 2))
        M_flat = [e for row in self.get("M") for e in row]
        # dM[col][a*n + b] = ∂M_ab/∂q_l
        return [graph.forward(M_flat, {self.q[col]: graph.one}) for col in range(self.n_q)]

    def along_speeds(self, derivatives: list) -> list:
        """``X_r f = Σ_l S_lr ∂f/∂q_l`` (n lists) from ``derivatives[l]`` (lists of ``∂f/∂q_l``, n_q of them): the
        derivatives along the speeds' directions (:mod:`sls.derive.speeds`); ``derivatives`` itself when ``S = I``."""
        if self.S is None:
            return derivatives
        graph, S = self.graph, self.S
        size = len(derivatives[0]) if derivatives else 0
        return [
            [
                graph.add([graph.mul((S[k][r], derivatives[k][e])) for k in range(self.n_q) if S[k][r] != graph.zero])
                for e in range(size)
            ]
            for r in range(self.n)
        ]

    def _christoffel(self) -> list:
        """``c_ijk = ½(X_i M_kj + X_j M_ki − X_k M_ij)``: sums of nodes of ``dM`` (along the speeds,
        :meth:`along_speeds`; ``X_i = ∂/∂q_i`` when the speeds are the rates), flat: ``c_ijk`` at
        ``(i·n + j)·n + k`` (a list, not a dictionary by index: n³ entries)."""
        graph, n, dM = self.graph, self.n, self.along_speeds(self.get("dM"))
        c = [graph.zero] * (n * n * n)
        for i in range(n):
            for j in range(i, n):
                for k in range(n):
                    c[(i * n + j) * n + k] = c[(j * n + i) * n + k] = graph.mul(
                        (self.half, graph.add((dM[i][k * n + j], dM[j][k * n + i], graph.neg(dM[k][i * n + j]))))
                    )
        return c

    def _C(self) -> list:
        graph, n, dq = self.graph, self.n, self.dq
        c = self.get("christoffel")
        C = [
            [graph.add(graph.mul((c[(i * n + j) * n + k], dq[i])) for i in range(n)) for j in range(n)]
            for k in range(n)
        ]
        if self.kinematics is None or self.kinematics.commuting:
            return C
        G = self._gyroscopic()
        return [[graph.add((C[k][j], G[k][j])) for j in range(n)] for k in range(n)]

    def _gyroscopic(self) -> list:
        """``G = Γ(v)ᵀ M − M Γ(v)`` (n × n), ``Γ(v)[j][k] = Σ_b γ^j_kb v_b``.

        As :func:`sls.derive.speeds.gyroscopic_matrix`, on the graph."""
        graph, n, dq, M, zero = self.graph, self.n, self.dq, self.get("M"), self.graph.zero
        structure = self.kinematics.structure if self.kinematics is not None else ()
        Gamma = [
            [
                graph.add(
                    [graph.mul((graph.from_sympy(structure[j][k][b]), dq[b])) for b in range(n) if structure[j][k][b]]
                )
                for k in range(n)
            ]
            for j in range(n)
        ]
        # Γ is zero outside the quaternion joints' blocks: the products with its zeros are left out (a zero adds
        # nothing to a sum), n² instead of n³ of them on a robot with two free joints
        by_column = [[j for j in range(n) if Gamma[j][k] != zero] for k in range(n)]
        return [
            [
                graph.sub(
                    graph.add([graph.mul((Gamma[j][k], M[j][col])) for j in by_column[k]]),
                    graph.add([graph.mul((M[k][j], Gamma[j][col])) for j in by_column[col]]),
                )
                for col in range(n)
            ]
            for k in range(n)
        ]

    def _h_jac(self) -> list:
        return [self.graph.gradient(hk, self.x) for hk in self.get("h")]

    def _dC(self) -> list:
        """``∂C_kj/∂x_col`` as one flat list in the order ``(k, j, col)`` (``n·n·len(x)`` nodes: a list, not a
        dictionary by index, since a 100-joint robot has two million of them)."""
        # ∂C_kj/∂q_l = ½ ∂²h_k/∂q_l∂q̇_j: differentiating ∂h/∂q along q̇ skips every node that
        # depends on q alone (most of the graph), where differentiating C along q_l would not;
        # ∂C_kj/∂q̇_l = c_ljk.
        graph, n, dq = self.graph, self.n, self.dq
        C = self.get("C")
        if self.S is not None:  # C = C⁰ + G is not ½ ∂h/∂v: every entry differentiated along each x
            C_flat = [e for row in C for e in row]
            columns = [graph.forward(C_flat, {xl: graph.one}) for xl in self.x]
            return [columns[col][k * n + j] for k in range(n) for j in range(n) for col in range(len(self.x))]
        h_jac = self.get("h_jac")
        c = self.get("christoffel")
        h_q = [h_jac[k][col] for k in range(n) for col in range(n)]
        C_q = [graph.forward(h_q, {dq[j]: self.half}) for j in range(n)]
        return [
            C_q[j][k * n + col] if col < n else c[((col - n) * n + j) * n + k]
            for k in range(n)
            for j in range(n)
            for col in range(2 * n)
        ]

    def _directional(self, array: list, wrt: list) -> list:
        """``Σ_i ∂a/∂w_i dx_i`` of every entry of ``array`` (rows of nodes), flat, along the direction symbols
        ``dx`` (:func:`~sls.derive.named_arrays.direction_symbols`, one per state variable; those of ``wrt``, a
        prefix of the state, seed the pass): one forward pass for the whole array."""
        graph = self.graph
        direction = [graph.symbol(s) for s in direction_symbols(len(self.x))]
        return graph.forward([e for row in array for e in row], dict(zip(wrt, direction)))

    def _M_dir(self) -> list:
        """``Σ_l ∂M/∂q_l dx_l`` (n·n nodes, row-major): ``M_jac``'s columns one direction at a time."""
        return self._directional(self.get("M"), self.q)

    def _C_dir(self) -> list:
        """``Σ_i ∂C/∂x_i dx_i`` (n·n nodes, row-major): ``C_jac``'s columns one direction at a time."""
        return self._directional(self.get("C"), self.x)

    def _B_dir(self) -> list:
        """``Σ_i ∂B_u/∂x_i dx_i`` (n·m nodes, row-major): ``input_matrix_jac``'s columns one direction at a time."""
        return self._directional(self.get("B"), self.x)

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

    def _kkt_jac(self) -> list:
        """``∂/∂x [r − Aᵀλ; A a − g]`` at fixed ``a``, ``λ``, ``u`` (:func:`.constraint_terms.kkt_jacobian_graph`)."""
        terms = self.get("constraints")
        return kkt_jacobian_graph(self.graph, terms, self.get("residual_jac"), self.q, self.x) if terms else []

    def residual(self) -> list:
        """The route's residual ``r`` (n nodes) at fixed ``a`` and ``u``."""
        raise NotImplementedError

    def _applied(self) -> list:
        graph, B = self.graph, self.get("B")
        return [graph.add(graph.mul((B[k][j], self.inputs[j])) for j in range(self.model.m)) for k in range(self.n)]

    def _constraints(self) -> dict:
        return constraint_terms_graph(self.model, self.graph, self.q, self.dq, self.S)

    def _constraint_jacobians(self) -> dict:
        """``∂A/∂x``, ``∂g/∂x`` (:func:`.constraint_terms.constraint_jacobians_graph`) for the constraint functions'
        Jacobians alone; ``A`` along the coordinates (a robot's contacts: the whole state, its speeds' columns 0)."""
        along = self.x if self.model.contacts else self.q
        return constraint_jacobians_graph(self.graph, self.get("constraints"), along, self.x)

    def _frames(self) -> dict:
        """The frame arrays of a model given by its energies (:mod:`sls.derive.point_frames`) as graph nodes; a
        robot's are the tree route's (:mod:`sls.derive.tree_frames`)."""
        if not getattr(self.model, "frame_points", ()):
            raise ModelError("frames are generated for robots (a URDF file) on the tree route")
        from sls.derive.point_frames import point_frame_arrays

        arrays = point_frame_arrays(self.model)
        return {key: nest([self.graph.from_sympy(e) for e in flatten(a)], shape_of(a)) for key, a in arrays.items()}

    def _qdot(self) -> list:
        """``q̇ = S(q) v`` (n_q nodes)."""
        rates = self.model.kinematics if self.model.kinematics is not None else self.model.dq
        return [self.graph.from_sympy(e) for e in rates]

    def _qdot_jac(self) -> list:
        """``∂(S v)/∂x`` (n_q rows of n_q + n nodes)."""
        return self.graph.jacobian(self.get("qdot"), self.x)

    # -- the arrays

    def dynamics(self, wanted: Collection[str] | None = None) -> Dynamics:
        """The :class:`Dynamics` with the arrays ``wanted`` (and ``M``, which validation checks) built."""
        wanted = check_wanted(wanted)
        known = ARRAY_NAMES + (SPEED_ARRAYS if self.model.kinematics is not None else ())
        known += frame_array_names(self.model) + regressor_array_names(self.model)
        names = known if wanted is None else [name for name in known + DIRECTION_ARRAYS if name in wanted]
        steps = {"M"} | {step for name in names for step in self.NEEDS.get(name, NEEDS_BY_ARRAY[name])}
        self._start()
        for step in self.ORDER:
            if step in steps:
                self.get(step)
        fields = self._fields()
        dynamics = Dynamics(**fields)
        arrays = self._arrays(dynamics, names)
        shared = [key for key in SOLVED_ARRAYS if key in arrays]
        arrays.update(shared_arrays(self.graph, {key: arrays[key] for key in shared}))
        return replace(dynamics, arrays=arrays)

    def _fields(self) -> dict:
        """The fields of :class:`Dynamics` (``None`` where not built)."""
        graph, n, m, got = self.graph, self.n, self.model.m, self._cache
        zero = graph.zero
        fields = {**(got.get("constraints") or {}), **(got.get("constraint_jacobians") or {})}
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
        n_q, n_x = self.n_q, len(self.x)
        if "dM" in got:
            dM = got["dM"]
            fields["mass_matrix_jac"] = nest(
                [dM[col][a * n + b] if col < n_q else zero for a in range(n) for b in range(n) for col in range(n_x)],
                (n, n, n_x),
            )
        if "C" in got:
            fields["coriolis"] = nest([e for row in got["C"] for e in row], (n, n))
        if "dC" in got:
            fields["coriolis_jac"] = nest(got["dC"], (n, n, n_x))
        if "h" in got:
            fields["coriolis_force"] = tuple(got["h"])
        if "h_jac" in got:
            fields["coriolis_force_jac"] = nest([e for row in got["h_jac"] for e in row], (n, n_x))
        if "phi" in got:
            fields["potential_gradient"] = tuple(got["phi"])
        if "phi_jac" in got:
            fields["potential_gradient_jac"] = nest([e for row in got["phi_jac"] for e in row], (n, n_x))
        if "fric_jac" in got:
            fields["friction_jac"] = nest([e for row in got["fric_jac"] for e in row], (n, n_x))
        if "B" in got:
            B_flat = [e for row in got["B"] for e in row]
            fields["input_matrix"] = nest(B_flat, (n, m))
        if "dB" in got:
            dB = got["dB"]
            fields["input_matrix_jac"] = nest([dB[col][r] for r in range(n * m) for col in range(n_x)], (n, m, n_x))
        if "residual_jac" in got:
            fields["residual_jac"] = nest([e for row in got["residual_jac"] for e in row], (n, n_x))
        if got.get("kkt_jac"):
            rows = got["kkt_jac"]
            fields["kkt_jac"] = nest([e for row in rows for e in row], (len(rows), n_x))
        if "frames" in got:
            fields["frame_arrays"] = {key: _tuples(array) for key, array in got["frames"].items()}
        if "qdot" in got:
            fields["kinematics"] = tuple(got["qdot"])
        if "qdot_jac" in got:
            fields["kinematics_jac"] = nest([e for row in got["qdot_jac"] for e in row], (n_q, n_x))
        return fields

    def _arrays(self, d: Dynamics, names: Sequence[str]) -> dict:
        """The arrays ``names`` of :func:`function_arrays` (``rhs``, ``drhs``, ``tau`` built here, in that order)."""
        all_arrays = function_arrays(
            d, [name for name in names if name not in DIRECTION_ARRAYS], tau=self.tau, rhs=self.rhs
        )
        n, m = self.n, self.model.m
        for name, step, shape in (("M_dir", "M_dir", (n, n)), ("C_dir", "C_dir", (n, n)), ("B_u_dir", "B_dir", (n, m))):
            if name in names:
                all_arrays[name] = nest(self.get(step), shape)
        return {name: all_arrays[name] for name in names}

    #: Route-specific ``tau`` and ``rhs`` builders (``None``: from ``M``, ``h`` and ``φ``).
    tau: ArrayBuilder | None = None
    rhs: ArrayBuilder | None = None


class EnergyTerms(GraphTerms):
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
