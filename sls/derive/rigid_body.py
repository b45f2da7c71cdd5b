"""Recursive rigid-body dynamics of a robot tree, emitted as nodes of an expression graph.

The graph route differentiates the kinetic energy ``T`` of the whole robot;
on 3-D arms that graph is large (every body's velocity is squared and summed,
and its second derivatives are what ``M`` and ``C q̇`` are made of). A robot
tree (:class:`~sls.model.tree.Robot`) has a far smaller description of the same
dynamics, the recursions of Featherstone's *Rigid Body Dynamics Algorithms*
that Pinocchio and RobCoGen evaluate: velocities and accelerations propagated
from the root link by link, each in the link's own frame, then forces back
from the leaves. This module writes those recursions as straight-line nodes
of a :class:`~sls.algebra.graph.Graph`:

* the constant part of every joint transform (``<origin rpy>`` composed with
  the fixed joints above it) is a matrix of numbers, so exact zeros vanish
  and nothing is multiplied out symbolically;
* a revolute joint about a coordinate axis rotates two components (``cos``,
  ``sin`` of its angle), any other axis by Rodrigues' formula;
* links fixed to a moving link are merged into its body (mass, first moment
  and inertia about the body's origin summed, as numbers); every vector is three
  nodes, whose products with zero fold (a zero rate or gravity prunes terms).

Conventions (those of :mod:`sls.readers.urdf`)
----------------------------------------------
The root link is fixed to the world, gravity ``g`` points along −z of its
frame. A moving joint from parent ``P`` to child ``C`` has the constant
rotation ``R_o`` and offset ``t`` (``P``'s frame), the unit axis ``a`` (in
``C``'s frame) and the joint rotation ``R_q`` (``I`` for prismatic joints);
vectors map to the child's frame by ``E v = R_qᵀ R_oᵀ v``; the child's origin
is at ``p = t (+ R_o a q for a prismatic joint)``.

Per body, in its own frame: ``ω`` angular velocity, ``v`` velocity of the
origin, ``ω̇``, ``v̇`` their (classical) accelerations, with

* ``ω_C = E ω_P + a q̇`` (revolute), ``v_C = E (v_P + ω_P × p) + a q̇`` (prismatic),
* ``ω̇_C = E ω̇_P + a q̈ + ω_C × a q̇`` (revolute),
* ``v̇_C = E (v̇_P + ω̇_P × p + ω_P × (ω_P × p)) + a q̈ + 2 ω_C × a q̇`` (prismatic),
* the root's ``v̇ = g e_z`` (gravity as an upward acceleration of the base),
* a ball joint (speeds ``w``, the relative angular velocity in ``C``'s frame, ``R_q`` its quaternion's rotation):
  ``ω_C = E ω_P + w``, ``ω̇_C = E ω̇_P + ẇ + ω_C × w``; a free joint (a body of the world): its speeds are ``v, ω``,

and with the body's mass ``m``, first moment ``h = m c`` and inertia
``I_o`` about its origin, the force and moment it needs (about its origin)

* ``f = m v̇ + ω̇ × h + ω × (ω × h)``, ``n = I_o ω̇ + ω × (I_o ω) + h × v̇``,

summed from the leaves (``f_P += R f_C``, ``n_P += R n_C + p × R f_C`` with
``R = R_o R_q``); the joint force is ``τ_j = a · n`` (revolute) or
``a · f`` (prismatic). A mimic joint moves with ``multiplier`` times its
coordinate's ``q, q̇, q̈`` (plus ``offset`` on ``q``), and its ``τ_j`` counts
``multiplier`` times on that coordinate. The energies are
``T = Σ ½ m v·v + v·(ω × h) + ½ ω·I_o ω`` and ``V = g Σ (m z₀ + e_z·h)``
(``z₀`` the height of the body's origin, ``e_z`` the world's vertical in its
frame), over the bodies that move.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy

from sls.algebra.graph import Graph
from sls.derive.inertia_rotation import UPPER, AxisTurn, rotated, symmetric_times
from sls.derive.joint_rotation import premultiplied, turn, turn_back
from sls.derive.tree_bodies import REVOLUTE, Body, bodies, constant, transpose
from sls.model.tree import BALL, FREE

__all__ = ["REVOLUTE", "Body", "TreeDynamics", "bodies", "constant"]


# --------------------------------------------------------------------------
# vectors of graph nodes


class GraphVectors:
    """3-vector arithmetic on graph nodes (lists of three node ids), numbers folded."""

    def __init__(self, graph: Graph) -> None:
        self.g = graph
        self.zero = [graph.zero] * 3

    def num(self, value: float) -> int:
        """A number as a graph constant (:func:`constant`), or an expression in parameters (a body's inertial
        parameters, :mod:`sls.model.inertial`) as its nodes."""
        exact = constant(value)
        return self.g.from_sympy(exact) if exact.free_symbols else self.g.number(exact)

    def add(self, *vectors: list) -> list:
        return [self.g.add([v[i] for v in vectors]) for i in range(3)]

    def scale(self, s: int, v: list) -> list:
        return [self.g.mul((s, e)) for e in v]

    def dot(self, a: list, b: list) -> int:
        return self.g.add([self.g.mul((x, y)) for x, y in zip(a, b)])

    def cross(self, a: list, b: list) -> list:
        g = self.g
        return [g.sub(g.mul((a[i], b[j])), g.mul((a[j], b[i]))) for i, j in ((1, 2), (2, 0), (0, 1))]

    def matvec(self, A: Sequence, v: list) -> list:
        """``A v`` for a constant matrix ``A`` (numbers)."""
        return [self.g.add([self.g.mul((self.num(A[i][k]), v[k])) for k in range(3)]) for i in range(3)]

    def tmatvec(self, A: Sequence, v: list) -> list:
        """``Aᵀ v`` for a constant matrix ``A`` (numbers)."""
        return self.matvec(transpose(A), v)

    def along(self, axis: Sequence[float], s: int) -> list:
        """``axis · s`` (a constant axis times a node)."""
        return [self.g.mul((self.num(a), s)) for a in axis]


class AxisJoint:
    """The motion of one body's joint at given ``q`` (a node): maps between the parent's and the body's frames."""

    def __init__(self, vec: GraphVectors, body: Body, q: int) -> None:
        self.vec, self.body = vec, body
        g = vec.g
        self.revolute = body.kind in REVOLUTE
        axis = [constant(a) for a in body.axis]
        self.principal = sum(a != 0 for a in axis) == 1
        #: cos q and sin q (nodes) of a revolute joint; None for a prismatic one
        self.c: int | None
        self.s: int | None
        if self.revolute:
            self.c = g.function(sympy.cos, (q,))
            self.s = g.function(sympy.sin, (q,))
            self.offset = [vec.num(t) for t in body.offset]
        else:
            self.c = self.s = None
            slide = vec.matvec(body.rotation, vec.along(body.axis, q))  # R_o a q
            self.offset = vec.add([vec.num(t) for t in body.offset], slide)
        #: ``R_o R_q`` as nodes where turning vectors by it is cheaper (:mod:`sls.derive.joint_rotation`), else None
        self.turned: list[list[int]] | None = None
        #: the turn ``R_q`` about a coordinate axis, for symmetric matrices (:mod:`sls.derive.inertia_rotation`)
        self.axis_turn: AxisTurn | None = None
        if self.revolute and self.principal and self.c is not None and self.s is not None:
            self.turned = premultiplied(g, body.rotation, body.axis, self.c, self.s)
            k = next(i for i, a in enumerate(axis) if a != 0)
            self.axis_turn = AxisTurn(g, k, self.c, self.s, axis[k] < 0)

    def _rotate(self, v: list, sign: int) -> list:
        """``R_q v`` (``sign`` +1) or ``R_qᵀ v`` (``sign`` −1) about the body's axis."""
        vec, g = self.vec, self.vec.g
        c, s = self.c, self.s
        if not self.revolute or c is None or s is None:
            return v
        if self.principal:  # the sign on the products, not on s: no node −s to bind per joint
            k = next(i for i, a in enumerate(self.body.axis) if constant(a) != 0)
            i, j = (k + 1) % 3, (k + 2) % 3
            out = list(v)
            if sign * (1 if constant(self.body.axis[k]) > 0 else -1) > 0:
                out[i] = g.sub(g.mul((c, v[i])), g.mul((s, v[j])))
                out[j] = g.add((g.mul((s, v[i])), g.mul((c, v[j]))))
            else:
                out[i] = g.add((g.mul((c, v[i])), g.mul((s, v[j]))))
                out[j] = g.sub(g.mul((c, v[j])), g.mul((s, v[i])))
            return out
        if sign < 0:
            s = g.neg(s)
        # Rodrigues: R v = c v + s (a × v) + (1 − c)(a·v) a
        a = [vec.num(x) for x in self.body.axis]
        along = g.mul((g.sub(g.one, c), vec.dot(a, v)))
        return vec.add(vec.scale(c, v), vec.scale(s, vec.cross(a, v)), vec.scale(along, a))

    def to_child(self, v: list) -> list:
        """``E v = R_qᵀ R_oᵀ v``: a parent-frame vector in the body's frame."""
        if self.turned is not None:
            return turn_back(self.vec.g, self.turned, v)
        return self._rotate(self.vec.tmatvec(self.body.rotation, v), -1)

    def to_parent(self, v: list) -> list:
        """``R_o R_q v``: a body-frame vector in the parent's frame."""
        if self.turned is not None:
            return turn(self.vec.g, self.turned, v)
        return self.vec.matvec(self.body.rotation, self._rotate(v, +1))


class QuaternionJoint:
    """A quaternion joint (:mod:`sls.model.free_flyer`) at its coordinates ``q`` (nodes): a free-flyer's seven
    (the body sits at ``t + R_o p`` turned by ``R_o R(quat)``; its six speeds are its own ``v`` and ``ω``) or a
    ball joint's four (the body sits at ``t`` turned by ``R_o R(quat)``; its three speeds are its ``ω`` relative
    to its parent, in its own frame)."""

    revolute = False

    def __init__(self, vec: GraphVectors, body: Body, q: Sequence[int]) -> None:
        self.vec, self.body = vec, body
        g = vec.g
        x, y, z, w = q[-4:]
        two = g.number(2)

        def twice(*pairs: tuple) -> int:
            return g.mul((two, g.add([g.mul(pair) if sign > 0 else g.neg(g.mul(pair)) for sign, pair in pairs])))

        def diagonal(a: int, b: int) -> int:
            return g.sub(g.one, twice((1, (a, a)), (1, (b, b))))

        #: R (nodes, 3×3): the quaternion's rotation, body to the joint's frame
        self.R = [
            [diagonal(y, z), twice((1, (x, y)), (-1, (z, w))), twice((1, (x, z)), (1, (y, w)))],
            [twice((1, (x, y)), (1, (z, w))), diagonal(x, z), twice((1, (y, z)), (-1, (x, w)))],
            [twice((1, (x, z)), (-1, (y, w))), twice((1, (y, z)), (1, (x, w))), diagonal(x, y)],
        ]
        self.offset = [vec.num(t) for t in body.offset]
        if body.kind == FREE:
            self.offset = vec.add(self.offset, vec.matvec(body.rotation, list(q[0:3])))

    def to_child(self, v: list) -> list:
        """``Rᵀ R_oᵀ v``: a parent-frame vector in the body's frame."""
        g, w = self.vec.g, self.vec.tmatvec(self.body.rotation, v)
        return [g.add([g.mul((self.R[k][i], w[k])) for k in range(3)]) for i in range(3)]

    def to_parent(self, v: list) -> list:
        """``R_o R v``: a body-frame vector in the parent's frame."""
        g = self.vec.g
        turned = [g.add([g.mul((self.R[i][k], v[k])) for k in range(3)]) for i in range(3)]
        return self.vec.matvec(self.body.rotation, turned)


def _motion_axes(body: Body, joint: AxisJoint | QuaternionJoint) -> list:
    """``[(speed index, revolute, axis), …]``: the directions a body's speeds move it, in its own frame (one per
    joint; a free-flyer's six: its three axes sliding, then turning; a ball joint's three: turning)."""
    unit = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
    if body.kind == BALL:
        return [(body.speed + i, True, unit[i]) for i in range(3)]
    if body.kind != FREE:
        return [(body.speed, joint.revolute, body.axis)]
    return [(body.speed + i, False, unit[i]) for i in range(3)] + [
        (body.speed + 3 + i, True, unit[i]) for i in range(3)
    ]


@dataclass
class TreeDynamics:
    """The recursions of one robot on a graph: joints set up once, passes run for any rates and accelerations.

    ``q`` are the coordinate nodes (n). Every pass returns generalized forces
    (n nodes, one per coordinate) or energies; see the module docstring.
    """

    graph: Graph
    bodies: tuple
    q: list
    n: int

    def __post_init__(self) -> None:
        self.vec = GraphVectors(self.graph)
        self.joints: list[AxisJoint | QuaternionJoint] = [
            QuaternionJoint(self.vec, b, self.q[b.coordinate : b.coordinate + (7 if b.kind == FREE else 4)])
            if b.kind in (FREE, BALL)
            else AxisJoint(self.vec, b, self._joint_value(b, self.q, shift=True))
            for b in self.bodies
        ]
        self._frames: dict = {}

    def _joint_value(self, body: Body, values: Sequence[int], shift: bool = False) -> int:
        """The joint's ``q`` from the coordinates (``shift``: with the mimic offset), or its ``q̇`` or ``q̈``
        from the speeds or their rates."""
        g = self.graph
        value = values[body.coordinate if shift else body.speed]
        offset = body.shift + body.angle if shift else 0.0  # the mimic offset, the turn of the body's frame
        if value == g.zero:
            return value if not offset else g.number(constant(offset))
        if body.multiplier != 1.0:
            value = g.mul((g.number(constant(body.multiplier)), value))
        if offset:
            value = g.add((value, g.number(constant(offset))))
        return value

    def velocities(self, dq: Sequence[int]) -> list:
        """``[(ω, v), …]`` per body in its frame for the rates ``dq``."""
        key = tuple(dq)
        if key in self._frames:
            return self._frames[key]
        vec = self.vec
        frames: list = []
        for body, joint in zip(self.bodies, self.joints):
            if body.kind == FREE:
                frames.append((list(dq[body.speed + 3 : body.speed + 6]), list(dq[body.speed : body.speed + 3])))
                continue
            omega_p, v_p = (vec.zero, vec.zero) if body.parent < 0 else frames[body.parent]
            rate = self._joint_value(body, dq)
            omega = joint.to_child(omega_p)
            v = joint.to_child(vec.add(v_p, vec.cross(omega_p, joint.offset)))
            if body.kind == BALL:  # its speeds: the angular velocity relative to the parent, in its frame
                omega = vec.add(omega, list(dq[body.speed : body.speed + 3]))
            elif joint.revolute:
                omega = vec.add(omega, vec.along(body.axis, rate))
            else:
                v = vec.add(v, vec.along(body.axis, rate))
            frames.append((omega, v))
        self._frames[key] = frames
        return frames

    def inverse_dynamics(self, dq: Sequence[int], ddq: Sequence[int], gravity: int) -> list:
        """Recursive Newton–Euler: the generalized forces ``τ(q, q̇, q̈)`` (gravity ``gravity`` along −z)."""
        vec, g = self.vec, self.graph
        frames = self.velocities(dq)
        accelerations: list = []
        forces: list = []
        root = (vec.zero, [g.zero, g.zero, gravity])
        for k, (body, omega) in enumerate(zip(self.bodies, (frame[0] for frame in frames))):
            domega, dv = self._body_acceleration(k, frames, accelerations, dq, ddq, root)
            accelerations.append((domega, dv))
            forces.append(self._body_force(body, omega, domega, dv))
        torques: list = [[g.zero]] * len(self.bodies)
        for k in reversed(range(len(self.bodies))):
            body, joint = self.bodies[k], self.joints[k]
            f, n = forces[k]
            if body.kind in (FREE, BALL):
                torques[k] = (f if body.kind == FREE else []) + n  # the body wrench (moment) in its frame
            else:
                torques[k] = [vec.dot([vec.num(a) for a in body.axis], n if joint.revolute else f)]
            if body.parent >= 0:
                f_p = joint.to_parent(f)
                n_p = vec.add(joint.to_parent(n), vec.cross(joint.offset, f_p))
                pf, pn = forces[body.parent]
                forces[body.parent] = (vec.add(pf, f_p), vec.add(pn, n_p))
        return self._generalized(torques)

    def accelerations(self, dq: Sequence[int], ddq: Sequence[int], gravity: int) -> list:
        """``[(ω̇, v̇), …]`` per body in its frame: the classical accelerations of the forward pass of
        :meth:`inverse_dynamics` (gravity ``gravity`` as an upward acceleration of the root)."""
        vec, g = self.vec, self.graph
        frames = self.velocities(dq)
        root = (vec.zero, [g.zero, g.zero, gravity])
        found: list = []
        for k in range(len(self.bodies)):
            found.append(self._body_acceleration(k, frames, found, dq, ddq, root))
        return found

    def _body_acceleration(
        self, k: int, frames: list, accelerations: list, dq: Sequence[int], ddq: Sequence[int], root: tuple
    ) -> tuple:
        """``(ω̇, v̇)`` of body ``k`` from its parent's (``accelerations``, parents first)."""
        vec, g = self.vec, self.graph
        body, joint = self.bodies[k], self.joints[k]
        omega, velocity = frames[k]
        if body.kind == FREE:  # ω̇ and v̇ + ω × v of the body's origin, gravity turned into its frame
            s = body.speed
            domega = list(ddq[s + 3 : s + 6])
            return domega, vec.add(joint.to_child(root[1]), list(ddq[s : s + 3]), vec.cross(omega, velocity))
        (domega_p, dv_p) = root if body.parent < 0 else accelerations[body.parent]
        omega_p = vec.zero if body.parent < 0 else frames[body.parent][0]
        rate, acc = self._joint_value(body, dq), self._joint_value(body, ddq)
        p = joint.offset
        domega = joint.to_child(domega_p)
        dv = joint.to_child(vec.add(dv_p, vec.cross(domega_p, p), vec.cross(omega_p, vec.cross(omega_p, p))))
        if body.kind == BALL:  # ω̇ = E ω̇_P + ẇ + ω × w, w the relative angular velocity (its speeds)
            w = list(dq[body.speed : body.speed + 3])
            return vec.add(domega, list(ddq[body.speed : body.speed + 3]), vec.cross(omega, w)), dv
        motion = vec.along(body.axis, rate)
        if joint.revolute:
            domega = vec.add(domega, vec.along(body.axis, acc), vec.cross(omega, motion))
        else:
            two = g.number(2)
            dv = vec.add(dv, vec.along(body.axis, acc), vec.scale(two, vec.cross(omega, motion)))
        return domega, dv

    def _body_force(self, body: Body, omega: list, domega: list, dv: list) -> tuple:
        """``(f, n)`` the body needs: ``f = m v̇ + ω̇ × h + ω × (ω × h)``, ``n = I_o ω̇ + ω × (I_o ω) + h × v̇``."""
        vec = self.vec
        m, h = vec.num(body.mass), [vec.num(x) for x in body.moment]
        f = vec.add(vec.scale(m, dv), vec.cross(domega, h), vec.cross(omega, vec.cross(omega, h)))
        n = vec.add(
            vec.matvec(body.inertia, domega), vec.cross(omega, vec.matvec(body.inertia, omega)), vec.cross(h, dv)
        )
        return f, n

    def _generalized(self, torques: list) -> list:
        """Joint forces summed onto their coordinates (a mimic joint's times its multiplier)."""
        g = self.graph
        terms: list = [[] for _ in range(self.n)]
        for body, taus in zip(self.bodies, torques):
            for offset, tau in enumerate(taus):
                if body.multiplier != 1.0:
                    tau = g.mul((g.number(constant(body.multiplier)), tau))
                terms[body.speed + offset].append(tau)
        return [g.add(t) for t in terms]

    def mass_matrix(self) -> list:
        """``M`` (n × n nodes) by the composite-rigid-body algorithm (see :meth:`composite_inertias`).

        For each body ``j`` the force its subtree needs for a unit joint
        acceleration (``(a × h_c, I_c a)`` for a revolute joint, ``(m_c a, h_c × a)``
        for a prismatic one, with the composite ``(m_c, h_c, I_c)``) is carried to
        the root; its projection on each joint ``i`` on the way is the joint-space
        entry ``H_ij`` (``H_ji`` by symmetry). ``M = Gᵀ H G`` for the map ``G`` of
        the mimic joints (one term per entry without them).
        """
        vec, g = self.vec, self.graph
        composite = self.composite_inertias()
        terms: dict = {}
        for j, (body, joint) in enumerate(zip(self.bodies, self.joints)):
            m, h, inertia = composite[j]
            for column, revolute, direction in _motion_axes(body, joint):
                axis = [vec.num(a) for a in direction]
                if revolute:
                    f, n = vec.cross(axis, h), symmetric_times(self.graph, inertia, axis)
                else:
                    f, n = vec.scale(m, axis), vec.cross(h, axis)
                i = j
                while True:
                    other = self.bodies[i]
                    for row, turns, other_axis in _motion_axes(other, self.joints[i]):
                        entry = vec.dot([vec.num(a) for a in other_axis], n if turns else f)
                        scale = other.multiplier * body.multiplier
                        if scale != 1.0:
                            entry = g.mul((g.number(constant(scale)), entry))
                        pair = (row, column)
                        terms.setdefault(pair, []).append(entry)
                        if i != j:
                            terms.setdefault(pair[::-1], []).append(entry)
                    if other.parent < 0:
                        break
                    f_p = self.joints[i].to_parent(f)
                    n = vec.add(self.joints[i].to_parent(n), vec.cross(self.joints[i].offset, f_p))
                    f, i = f_p, other.parent
        upper = {(a, b): g.add(terms.get((a, b), ())) for a in range(self.n) for b in range(a, self.n)}
        return [[upper[min(a, b), max(a, b)] for b in range(self.n)] for a in range(self.n)]

    def composite_inertias(self) -> list:
        """``(m_c, h_c, I_c)`` per body: the inertia of its subtree in its frame (about its origin), leaves first.

        A child's composite moves to its parent's frame by ``R = R_o R_q`` and
        the offset ``p``: ``h' = R h + m p``, ``I' = R I Rᵀ + 2(p·R h) 1 − p (R h)ᵀ −
        (R h) pᵀ + m (|p|² 1 − p pᵀ)``; only the upper triangle of ``I`` is used.
        """
        vec, g = self.vec, self.graph
        n = len(self.bodies)
        # every composite entry as one flat sum (its numbers folded into one): the body's own, then its children's
        mass_terms = [[vec.num(b.mass)] for b in self.bodies]
        moment_terms = [[[vec.num(x)] for x in b.moment] for b in self.bodies]
        inertia_terms = [{(a, c): [vec.num(b.inertia[a][c])] for a, c in UPPER} for b in self.bodies]
        masses: list = [None] * n
        moments: list = [None] * n
        inertias: list = [None] * n
        two = g.number(2)
        for k in reversed(range(n)):
            body, joint = self.bodies[k], self.joints[k]
            masses[k] = m = g.add(mass_terms[k])
            moments[k] = h = [g.add(terms) for terms in moment_terms[k]]
            entries = {key: g.add(terms) for key, terms in inertia_terms[k].items()}
            inertias[k] = inertia = [[entries[min(a, c), max(a, c)] for c in range(3)] for a in range(3)]
            if body.parent < 0:
                continue
            p = joint.offset
            h_R = joint.to_parent(h)
            I_R = rotated(joint, inertia)
            up = body.parent
            mass_terms[up].append(m)
            for a in range(3):
                moment_terms[up][a] += [h_R[a], g.mul((m, p[a]))]
            # the diagonal's 2 (p·u) − 2 p_a u_a + m (|p|² − p_a²) as Σ_{c≠a} (2 p_c u_c + m p_c²)
            twice = [g.mul((two, p[c], h_R[c])) for c in range(3)]
            for a, b in UPPER:
                parts = [I_R[a][b]]
                if a == b:
                    parts += [e for c in range(3) if c != a for e in (twice[c], g.mul((m, p[c], p[c])))]
                else:
                    parts += [
                        g.neg(g.mul((p[a], h_R[b]))),
                        g.neg(g.mul((h_R[a], p[b]))),
                        g.neg(g.mul((m, p[a], p[b]))),
                    ]
                inertia_terms[up][a, b] += parts
        return list(zip(masses, moments, inertias))

    def kinetic_energy(self, dq: Sequence[int]) -> int:
        """``T = Σ ½ m v·v + v·(ω × h) + ½ ω·I_o ω``."""
        vec, g = self.vec, self.graph
        half = g.number(sympy.Rational(1, 2))
        terms = []
        for body, (omega, v) in zip(self.bodies, self.velocities(dq)):
            h = [vec.num(x) for x in body.moment]
            terms.append(g.mul((half, vec.num(body.mass), vec.dot(v, v))))
            terms.append(vec.dot(v, vec.cross(omega, h)))
            terms.append(g.mul((half, vec.dot(omega, vec.matvec(body.inertia, omega)))))
        return g.add(terms)

    def potential_energy(self, gravity: int) -> int:
        """``V = g Σ (m z₀ + e_z·h)`` with the heights ``z₀`` of the body origins."""
        vec, g = self.vec, self.graph
        frames: list = []
        terms = []
        for body, joint in zip(self.bodies, self.joints):
            up_p, height_p = ([g.zero, g.zero, g.one], g.zero) if body.parent < 0 else frames[body.parent]
            up, height = joint.to_child(up_p), g.add((height_p, vec.dot(up_p, joint.offset)))
            frames.append((up, height))
            terms.append(g.mul((vec.num(body.mass), height)))
            terms.append(vec.dot(up, [vec.num(x) for x in body.moment]))
        return g.mul((gravity, g.add(terms)))
