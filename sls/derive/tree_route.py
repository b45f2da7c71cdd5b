"""The tree route: a robot's recursive dynamics on the expression graph (:func:`derive_on_tree`).

``M``, ``h = C q̇``, ``τ``, ``T`` and ``V`` come from the recursions of :mod:`sls.derive.rigid_body`
(recursive Newton–Euler, composite rigid bodies) instead of from differentiating ``T``; everything else is
built from those nodes as on the graph route (:class:`~sls.derive.graph_route.GraphTerms`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import ClassVar

import sympy

from sls.derive.dynamics import Dynamics
from sls.derive.graph_route import GraphTerms
from sls.derive.named_arrays import Algebra, acceleration_symbols
from sls.model import Model

#: Trees of up to this many speeds take ``C`` from the Christoffel symbols (as the graph route), larger ones from
#: ``½ (Ṁ + J − Jᵀ)`` (:meth:`TreeTerms._C`). Operations of ``C`` (Christoffel → new): UR5 (6) 1 177 → 1 734,
#: Panda (8) 4 557 → 5 382, Solo-12 (18) 6 585 → 6 236, iCub (32) 35 831 → 28 343, G1 (35) 54 544 → 33 018,
#: TIAGo dual-arm (101) 250 922 → 112 671, dm_control's dog (85) 693 575 → 213 354.
CORIOLIS_BY_CHRISTOFFEL_UP_TO = 12


def derive_on_tree(model: Model, wanted: Collection[str] | None = None) -> Dynamics:
    """Every term of :class:`Dynamics` for a robot tree (``model.tree``), from the recursions of
    :mod:`sls.derive.rigid_body`.

    On the graph, without ``T``: ``τ(q, q̇, a)`` by recursive Newton–Euler
    (``a`` the symbols of :func:`~sls.derive.named_arrays.acceleration_symbols`),
    ``M`` by the composite-rigid-body algorithm, ``h = C q̇ = τ(q, q̇, 0)``
    without gravity, ``T`` and ``V`` from the bodies' velocities and heights,
    ``φ = ∂V/∂q`` (reverse mode), ``rhs = B_u u − τ(q, q̇, 0) − fric`` with
    gravity. ``residual_jac`` is ``∂r/∂x`` of ``r = τ(q, q̇, a) + fric − B_u u``
    (one reverse pass per row, or the Newton–Euler part by :mod:`sls.derive.rnea_derivatives` where that is
    fewer operations). Everything else (``∂M/∂q``,
    ``C``, ``∂C/∂x``, ``∂φ/∂x``, …) is derived from those nodes as on the
    graph route (:func:`~sls.derive.graph_route.derive_on_graph`); ``wanted`` as there.
    """
    return TreeTerms(model).dynamics(wanted)


class TreeTerms(GraphTerms):
    """The tree route: ``M``, ``h``, ``τ``, ``T``, ``V`` by the recursions of :mod:`sls.derive.rigid_body`,
    ``φ = ∂V/∂q``."""

    method = "tree"
    NEEDS: ClassVar[dict] = {"tau": ("inverse",), "regressor": ("inverse",), "rhs": ("B",)}

    def _start(self) -> None:
        from sls.algebra.expressions import symbol
        from sls.derive import body_frames, rigid_body
        from sls.model.tree import Robot

        graph, model = self.graph, self.model
        if not isinstance(model.tree, Robot):
            raise ValueError("the tree route needs a robot model (model.tree, e.g. from a URDF file)")
        self.fric = [graph.from_sympy(f) for f in model.fric]
        self.forces = [graph.from_sympy(f) for f in model.forces]
        self.inputs = [graph.symbol(u) for u in model.inputs]
        self.tree = rigid_body.TreeDynamics(graph, body_frames.bodies(model.tree), self.q, self.n)
        # gravity: the parameter g of a URDF model (sls.readers.urdf.GRAVITY), absent when no body's height changes V
        self.gravity = graph.symbol(symbol("g")) if "g" in model.params else graph.zero
        self.zeros = [graph.zero] * self.n
        self.accelerations = [graph.symbol(s) for s in acceleration_symbols(self.n)]
        self.energies = (self.tree.kinetic_energy(self.dq), self.tree.potential_energy(self.gravity))
        self._extras()

    def _extras(self) -> None:
        """A tree from an MJCF file: the joints' ``armature`` (``a``: ``½ a q̇²`` in ``T``, ``a`` on ``M``'s
        diagonal, ``a q̈`` in ``τ``) and their springs (in ``V``; their forces ``∂V_s/∂q`` in ``τ`` and ``rhs``)."""
        import sympy

        from sls.derive.rigid_body import constant

        graph, robot = self.graph, self.model.tree
        assert robot is not None  # checked by _start
        self.armature = {  # a number, or a parameter (an MJCF file read with inertial_params)
            k: graph.from_sympy(a) if isinstance(a, sympy.Basic) and a.free_symbols else graph.number(constant(a))
            for k, a in enumerate(robot.armature)
            if a != 0
        }
        self.armature_turning = self._armature_turning()
        self.springs: list | None = None
        T, V = self.energies
        if self.armature:
            half = graph.number(sympy.Rational(1, 2))
            T = graph.add([T, *(graph.mul((half, a, self.dq[k], self.dq[k])) for k, a in self.armature.items())])
        if robot.springs != 0:
            spring = graph.from_sympy(robot.springs)
            self.springs = graph.gradient(spring, self.q)
            if self.S is not None:  # the springs' forces along the speeds (a free-flyer's: Sᵀ ∂V_s/∂q)
                self.springs = [entries[0] for entries in self.along_speeds([[f] for f in self.springs])]
            V = graph.add((V, spring))
        self.energies = (T, V)

    def _armature_turning(self) -> dict:
        """``{row: node}``: the armature's velocity-product force ``a (ω × v)`` on a free joint's linear speeds.

        MuJoCo adds a free joint's armature ``a`` to its six dofs' diagonal of ``M``, its linear ones in the world's
        frame: the energy ``½ a (|v|² + |ω|²)``, which is the same in the body's frame, where the linear rows turn
        with the body (``a (v̇ + ω × v)``). Angular and ball-joint armature has no such force (``ω × a ω = 0``)."""
        from sls.derive.rigid_body import GraphVectors
        from sls.model.tree import FREE

        graph, robot = self.graph, self.model.tree
        assert robot is not None
        forces = {}
        for slot in robot.quaternions:
            if slot.kind != FREE or not all(k in self.armature for k in range(slot.v, slot.v + 3)):
                continue
            a = self.armature[slot.v]
            v, w = self.dq[slot.v : slot.v + 3], self.dq[slot.v + 3 : slot.v + 6]
            for r, turn in enumerate(GraphVectors(graph).cross(w, v)):
                forces[slot.v + r] = graph.mul((a, turn))
        return forces

    def _with_extras(self, tau: list, accelerations: list, springs: bool = True) -> list:
        """``τ`` plus the armature's ``a q̈`` (and on a free joint's linear speeds ``a (ω × v)``) and, with
        ``springs``, the springs' forces (``tau`` itself when there are none)."""
        graph = self.graph
        extra: list[list[int]] = [[] for _ in tau]
        for k, a in self.armature.items():
            if accelerations[k] != graph.zero:
                extra[k].append(graph.mul((a, accelerations[k])))
        for k, force in self.armature_turning.items():
            extra[k].append(force)
        for k, force in enumerate(self.springs or () if springs else ()):
            extra[k].append(force)
        return [graph.add((t, *e)) if e else t for t, e in zip(tau, extra)]

    def _M(self) -> list:
        M = self.tree.mass_matrix()
        for k, a in self.armature.items():
            M[k][k] = self.graph.add((M[k][k], a))
        return M

    def _C(self) -> list:
        """``C`` without the Christoffel tensor on trees of more than :data:`CORIOLIS_BY_CHRISTOFFEL_UP_TO`
        speeds: ``C = ½ (Ṁ + J − Jᵀ)`` (plus the speeds' gyroscopic ``G``, as on the graph route), O(n²) nodes.

        With ``J_kj = X_j (M v)_k`` (``v`` held fixed; ``X_j = Σ_l S_lj ∂/∂q_l``, ``∂/∂q_j`` when the speeds are the
        rates) and ``Ṁ = Σ_i v_i X_i M``, the Christoffel sum ``C_kj = Σ_i ½ (X_i M_kj + X_j M_ki − X_k M_ij) v_i``
        is term by term ``½ (Ṁ_kj + J_kj − J_jk)``: the same matrix (``Ṁ − 2C = Jᵀ − J`` is skew), from one
        directional derivative of ``M`` along ``q̇ = S v`` and one forward pass per coordinate of ``M v = τ(q, 0, v)``
        (Newton–Euler without gravity, plus the armature's ``a v``) instead of n³ symbols.
        """
        if self.n <= CORIOLIS_BY_CHRISTOFFEL_UP_TO:
            return super()._C()
        graph, n, v = self.graph, self.n, self.dq
        half = graph.number(sympy.Rational(1, 2))
        M = self.get("M")
        rates = self.get("qdot") if self.S is not None else v
        seeds = {q: rate for q, rate in zip(self.q, rates) if rate != graph.zero}
        M_dot = graph.forward([e for row in M for e in row], seeds)
        momentum = self.tree.inverse_dynamics(self.zeros, v, graph.zero)  # M v without the armature
        momentum = [
            graph.add((p, graph.mul((self.armature[k], v[k])))) if k in self.armature else p
            for k, p in enumerate(momentum)
        ]
        by_coordinate = graph.jacobian(momentum, self.q)  # [k][l] = ∂(M v)_k/∂q_l, one forward pass per q_l
        J_columns = self.along_speeds([[by_coordinate[k][c] for k in range(n)] for c in range(self.n_q)])
        C = [
            [
                graph.mul((half, graph.sub(graph.add((M_dot[k * n + j], J_columns[j][k])), J_columns[k][j])))
                for j in range(n)
            ]
            for k in range(n)
        ]
        if self.kinematics is None or self.kinematics.commuting:
            return C
        G = self._gyroscopic()
        return [[graph.add((C[k][j], G[k][j])) for j in range(n)] for k in range(n)]

    def _constraints(self) -> dict:
        """A robot's contacts (:func:`~sls.derive.tree_frames.contact_terms`), or the graph route's constraints."""
        model = self.model
        if not model.contacts:
            return super()._constraints()
        if model.constraints or model.velocity_constraints:
            raise ValueError("a robot's constraints are its contacts; other constraints cannot be added to them")
        from sls.derive.tree_frames import contact_terms
        from sls.model.tree import Robot

        assert isinstance(model.tree, Robot)
        return contact_terms(self.tree, model.tree, model.contacts, self.x, self.dq, float(model.stabilization))

    def _frames(self) -> dict:
        """Poses, Jacobians, ``J̇v`` of ``model.frames`` and the centre of mass (:mod:`sls.derive.tree_frames`)."""
        from sls.derive.tree_frames import frame_arrays
        from sls.model.tree import Robot

        assert isinstance(self.model.tree, Robot)
        return frame_arrays(self.tree, self.model.tree, self.model.frames, self.dq)

    def _h(self) -> list:
        """``h = C v = τ(q, v, 0)`` without gravity (and the armature's turning, :meth:`_armature_turning`)."""
        return self._with_extras(self.tree.inverse_dynamics(self.dq, self.zeros, self.graph.zero), self.zeros, False)

    def _phi(self) -> list:
        """``φ = ∂V/∂q`` by reverse mode through the heights (smaller than a gravity-only Newton–Euler pass); with
        generalized speeds ``φ = Sᵀ ∂V/∂q``."""
        gradient = self.graph.gradient(self.energies[1], self.q)
        if self.S is None:
            return gradient
        return [entries[0] for entries in self.along_speeds([[g] for g in gradient])]

    def _inverse(self) -> list:
        """``τ(q, q̇, a) + fric`` with gravity: the inverse dynamics ``tau_fun`` returns."""
        tau = self.tree.inverse_dynamics(self.dq, self.accelerations, self.gravity)
        tau = self._with_extras(tau, self.accelerations)
        return [self.graph.add((t, f)) for t, f in zip(tau, self.fric)]

    def _residual_jac(self) -> list:
        """``∂r/∂x`` (n rows of n_q + n nodes): the Newton–Euler part by its analytical derivatives
        (:mod:`sls.derive.rnea_derivatives`) when the tree allows them, the rest (friction, springs, ``B(q) u``)
        by reverse mode; else one reverse pass per row of ``r`` (:meth:`GraphTerms._residual_jac`).

        A quaternion base's derivatives along its perturbation ``δ`` in its own frame become columns of its
        coordinates that give them back through ``S(q)`` (``∂r/∂x S``, how every target uses these rows): the
        position's ``(∂r/∂δv) Rᵀ``, the quaternion's ``2 (∂r/∂δω) Qᵀ`` for ``S``'s quaternion block ``½ Q``
        (``QᵀQ = I`` for a unit quaternion); their part along the quaternion itself, which ``S`` drops, is zero.
        """
        from sls.derive.rnea_derivatives import handles, rnea_derivatives, worth_it

        residual = self.residual()  # r's nodes first, as the reverse passes have them: tau_fun's code unchanged
        graph, n = self.graph, self.n
        if not handles(self.tree) or not worth_it(self.tree, sum(graph.operation_count([r]) for r in residual)):
            return super()._residual_jac()
        d_q, d_v = rnea_derivatives(self.tree, self.dq, self.accelerations, self.gravity)
        applied = self._applied()
        extras = self._with_extras([graph.zero] * n, [graph.zero] * n)  # the springs (no armature: a is fixed)
        rest = [graph.sub(graph.add((e, f)), b) for e, f, b in zip(extras, self.fric, applied)]
        rows = []
        for k in range(n):
            tail = graph.gradient(rest[k], self.x) if rest[k] != graph.zero else [graph.zero] * len(self.x)
            coordinates = self._coordinate_columns(d_q[k])
            rows.append([graph.add((a, b)) for a, b in zip(coordinates + d_v[k], tail)])
        return rows

    def _coordinate_columns(self, row: list) -> list:
        """A row of ``∂τ/∂q`` over the speeds (n) as a row over the coordinates (n_q): itself without a quaternion
        base, else the base's 6 columns as 7 (see :meth:`_residual_jac`), then the joints'."""
        if self.n_q == self.n:
            return row
        from sls.derive.rigid_body import QuaternionJoint

        graph = self.graph
        joint = self.tree.joints[0]
        assert isinstance(joint, QuaternionJoint)
        R = joint.R
        position = [graph.add([graph.mul((row[k], R[c][k])) for k in range(3)]) for c in range(3)]
        two = graph.number(2)
        x, y, z, w = (graph.mul((two, e)) for e in self.q[3:7])  # 2 Q's entries
        neg = graph.neg
        Q = [[w, neg(z), y], [z, w, neg(x)], [neg(y), x, w], [neg(x), neg(y), neg(z)]]
        turn = [graph.add([graph.mul((row[3 + c], Q[r][c])) for c in range(3)]) for r in range(4)]
        return position + turn + row[6:]

    def residual(self) -> list:
        """``r = τ(q, q̇, a) + fric − B_u u``."""
        applied = self._applied()
        return [self.graph.sub(t, b) for t, b in zip(self.get("inverse"), applied)]

    def tau(self, alg: Algebra, d: Dynamics) -> tuple:
        return tuple(self.get("inverse"))

    def rhs(self, alg: Algebra, d: Dynamics) -> tuple:
        """``B_u u − τ(q, q̇, 0) − fric`` (one Newton–Euler pass for ``C q̇ + φ``)."""
        graph = self.graph
        bias = self._with_extras(self.tree.inverse_dynamics(self.dq, self.zeros, self.gravity), self.zeros)
        applied = self._applied()
        return tuple(graph.sub(graph.sub(b, t), f) for b, t, f in zip(applied, bias, self.fric))
