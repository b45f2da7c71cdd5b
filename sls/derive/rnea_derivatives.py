"""The analytical derivatives of recursive Newton–Euler, ``∂τ/∂q`` and ``∂τ/∂v``, as nodes of an expression graph.

Carpentier & Mansard, "Analytical derivatives of rigid body dynamics algorithms" (RSS 2018), as Pinocchio's
``computeRNEADerivatives`` evaluates them: every body's motion subspace ``S``, velocity ``v``, acceleration
``a`` (gravity as an upward acceleration of the root), inertia ``Y``, momentum and force in one *reference*
frame that does not move when a joint does, then per joint the derivatives of those along its motion
(``dV/dq = v_parent × S``, ``dA/dq = a_parent × S + v_parent × dV/dq``, ``dA/dv = (v + v_parent) × S``), and
per (ancestor ``i``, descendant ``j``) pair of speeds a few products of 6-vectors:

* ``∂τ_i/∂q_j = S_iᵀ dF/dq_j`` (``dF/dq_j = Ẏ_j dV/dq_j + Y_j dA/dq_j + S_j ×* f_j``, composites of ``j``'s
  subtree; without the last term when ``i`` and ``j`` are speeds of one joint),
* ``∂τ_j/∂q_i = (Y_j S_j)ᵀ dA/dq_i + (Ẏ_jᵀ S_j)ᵀ dV/dq_i``, and the same with ``dA/dv`` and ``S_i`` for ``v``.

``Ẏ`` is Pinocchio's ``doYcrb``, ``v ×* Y − Y v× + (Y v)×̄*``, which for a rigid body is
``[[0, −2[p]×], [0, D]]`` with ``p`` the linear momentum and ``D = [ω]× I − I [ω]× − (h vᵀ + v hᵀ) + 2 (v·h) 1 − [n]×``
(``h`` the first moment, ``n`` the angular momentum, about the reference origin): a composite is a sum of 3 × 3 and
3-vector nodes. The frame is the root link's (a fixed base), or the free-flyer's own (a quaternion base): its
six speeds then move it along unit vectors (``S = I``), so ``∂τ/∂q``'s columns for the base are the derivatives
along a perturbation in the base's frame (Pinocchio's ``integrate``), and its translation drops out.

Spatial vectors are pairs of 3-vectors of nodes, linear part first (Pinocchio's order): a motion ``(v, ω)``, a
force ``(f, n)`` with its moment about the reference origin.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import sympy

from sls.algebra.graph import Graph
from sls.derive.rigid_body import AxisJoint, GraphVectors, QuaternionJoint, TreeDynamics
from sls.derive.tree_bodies import REVOLUTE, Body
from sls.model.tree import FREE

#: A spatial vector: (linear, angular), each a list of three nodes.
Spatial = tuple[list, list]


def handles(tree: TreeDynamics) -> bool:
    """True when :func:`rnea_derivatives` applies to ``tree``: every body moved by its own speed(s) (no mimic
    joint), revolute, prismatic or (the root's only body) a quaternion free-flyer."""
    seen: set = set()
    for k, body in enumerate(tree.bodies):
        if body.kind == FREE and (k != 0 or body.parent >= 0):
            return False
        if body.kind != FREE and body.kind not in REVOLUTE and body.kind != "prismatic":
            return False
        if body.multiplier != 1.0 or body.speed in seen:
            return False
        seen.add(body.speed)
    free = bool(tree.bodies) and tree.bodies[0].kind == FREE
    return not (free and any(b.parent < 0 for b in tree.bodies[1:]))


#: The graph operations :func:`rnea_derivatives` takes, about: per body, and per (ancestor or same, descendant) pair
#: of speeds (fitted on UR5, the iiwa, Solo-12 and G1: within a fifth). :func:`worth_it` weighs it against reverse mode.
OPERATIONS_PER_BODY = 513
OPERATIONS_PER_PAIR = 52
#: Reverse mode's operations per operation of the row it differentiates (1.34 to 1.55 on the same robots).
REVERSE_PER_ROW_OPERATION = 1.4


def operation_estimate(tree: TreeDynamics) -> int:
    """About how many graph operations :func:`rnea_derivatives` takes on ``tree`` (see :data:`OPERATIONS_PER_BODY`)."""
    pairs = 0
    depth: list[int] = []  # speeds from the root down to each body, its own included
    for body in tree.bodies:
        own = 6 if body.kind == FREE else 1
        depth.append(own + (depth[body.parent] if body.parent >= 0 else 0))
        pairs += own * depth[-1]
    return OPERATIONS_PER_BODY * len(tree.bodies) + OPERATIONS_PER_PAIR * pairs


def worth_it(tree: TreeDynamics, row_operations: int) -> bool:
    """True when :func:`rnea_derivatives` should take fewer operations than one reverse pass per row of a residual
    whose rows take ``row_operations`` together (each counted alone): on branched trees and floating bases, not
    on a 6- or 7-joint arm."""
    return operation_estimate(tree) < REVERSE_PER_ROW_OPERATION * row_operations


@dataclass
class _Pose:
    """A body's frame in the reference frame: ``rows`` of its rotation (3 × 3 nodes), its origin ``origin``."""

    rows: list
    origin: list


@dataclass
class _Speed:
    """One speed's motion ``S`` and its derivatives ``dV/dq``, ``dA/dq``, ``dA/dv`` (spatial), then (set on the way
    back) ``Y S``, ``Ẏᵀ S`` (its angular part: the linear one is zero), ``dF/dq`` (with ``S ×* f``) and ``dF/dv``."""

    index: int
    S: Spatial
    dV: Spatial
    dA: Spatial
    dAv: Spatial
    YS: Spatial = field(default_factory=lambda: ([], []))
    dYtS: list = field(default_factory=list)
    dFq: Spatial = field(default_factory=lambda: ([], []))
    dFv: Spatial = field(default_factory=lambda: ([], []))


class _Algebra:
    """Spatial arithmetic on graph nodes (3-vectors from the tree's :class:`~sls.derive.rigid_body.GraphVectors`)."""

    def __init__(self, tree: TreeDynamics) -> None:
        self.vec, self.g = tree.vec, tree.graph

    def add(self, *items: Spatial) -> Spatial:
        vec = self.vec
        return vec.add(*(m[0] for m in items)), vec.add(*(m[1] for m in items))

    def cross(self, m: Spatial, s: Spatial) -> Spatial:
        """Motion × motion: ``(ω × v' + v × ω', ω × ω')``."""
        vec = self.vec
        return vec.add(vec.cross(m[1], s[0]), vec.cross(m[0], s[1])), vec.cross(m[1], s[1])

    def cross_force(self, m: Spatial, f: Spatial) -> Spatial:
        """Motion ×* force: ``(ω × f, ω × n + v × f)``."""
        vec = self.vec
        return vec.cross(m[1], f[0]), vec.add(vec.cross(m[1], f[1]), vec.cross(m[0], f[0]))

    def dot(self, m: Spatial, f: Spatial) -> int:
        return self.g.add((self.vec.dot(m[0], f[0]), self.vec.dot(m[1], f[1])))

    def scale(self, m: Spatial, s: int) -> Spatial:
        return self.vec.scale(s, m[0]), self.vec.scale(s, m[1])

    def inertia_times(self, Y: tuple, m: Spatial) -> Spatial:
        """``Y m`` for ``Y = (mass, h, I)`` (``h`` the first moment, ``I`` about the origin, symmetric):
        ``(mass v + ω × h, I ω + h × v)``."""
        vec = self.vec
        mass, h, inertia = Y
        return vec.add(vec.scale(mass, m[0]), vec.cross(m[1], h)), vec.add(
            _sym_times(self.g, inertia, m[1]), vec.cross(h, m[0])
        )

    def rate_times(self, dY: tuple, m: Spatial) -> Spatial:
        """``Ẏ m`` for ``Ẏ = (2p, D)``: ``(ω × 2p, D ω)``."""
        twice_p, D = dY
        return self.vec.cross(m[1], twice_p), _times(self.g, D, m[1])

    def rate_transposed_times(self, dY: tuple, m: Spatial) -> list:
        """The angular part of ``Ẏᵀ m`` (its linear part is zero): ``2p × v + Dᵀ ω``."""
        twice_p, D = dY
        vec = self.vec
        return vec.add(vec.cross(twice_p, m[0]), _times(self.g, _transposed(D), m[1]))


def _sym_times(g: Graph, S: list, v: list) -> list:
    """``S v`` for a symmetric 3 × 3 matrix of nodes (upper triangle read)."""
    return [g.add([g.mul((S[min(a, b)][max(a, b)], v[b])) for b in range(3)]) for a in range(3)]


def _times(g: Graph, A: list, v: list) -> list:
    return [g.add([g.mul((A[a][b], v[b])) for b in range(3)]) for a in range(3)]


def _transposed(A: list) -> list:
    return [[A[b][a] for b in range(3)] for a in range(3)]


def rnea_derivatives(tree: TreeDynamics, dq: Sequence[int], ddq: Sequence[int], gravity: int) -> tuple[list, list]:
    """``(∂τ/∂q, ∂τ/∂v)``: two n × n lists of nodes (rows: the speeds' forces, columns: the speeds) of the tree's
    inverse dynamics ``τ(q, v, a)`` at the speeds ``dq`` and accelerations ``ddq`` (nodes), gravity ``gravity``
    along −z of the root. Only for a tree :func:`handles`; a free-flyer's columns are the derivatives along its
    perturbation in its own frame (see the module docstring)."""
    alg, vec, g = _Algebra(tree), tree.vec, tree.graph
    n = tree.n
    bodies = tree.bodies
    free = bool(bodies) and bodies[0].kind == FREE
    zero3 = vec.zero
    # the root's acceleration (gravity upward) in the reference frame
    if free:
        lift = tree.joints[0].to_child([g.zero, g.zero, gravity])
    else:
        lift = [g.zero, g.zero, gravity]
    root_acceleration: Spatial = (lift, zero3)
    root_velocity: Spatial = (zero3, zero3)
    identity = [[g.one if a == b else g.zero for b in range(3)] for a in range(3)]
    poses: list[_Pose] = []
    velocities: list[Spatial] = []
    accelerations: list[Spatial] = []
    speeds: list[list[_Speed]] = []
    inertias: list[tuple] = []
    rates: list[list] = []  # per body: [2p, Sym (3 × 3, symmetric), n]
    forces: list[Spatial] = []
    for body, joint in zip(bodies, tree.joints):
        parent = body.parent
        v_p = root_velocity if parent < 0 else velocities[parent]
        a_p = root_acceleration if parent < 0 else accelerations[parent]
        if body.kind == FREE:
            pose = _Pose(identity, list(zero3))
            s = body.speed
            v = (list(dq[s : s + 3]), list(dq[s + 3 : s + 6]))
            axes = [_unit(g, c) for c in range(6)]
            own = [_Speed(s + c, S, (zero3, zero3), alg.cross(a_p, S), alg.cross(v, S)) for c, S in enumerate(axes)]
            a = alg.add(a_p, (list(ddq[s : s + 3]), list(ddq[s + 3 : s + 6])))
        else:
            pose = _child_pose(
                vec,
                g,
                body,
                joint,
                identity if parent < 0 else poses[parent].rows,
                zero3 if parent < 0 else poses[parent].origin,
            )
            S = _motion(vec, body, joint, pose)
            rate, acc = dq[body.speed], ddq[body.speed]
            v = alg.add(v_p, alg.scale(S, rate))
            dV = alg.cross(v_p, S)  # = v × S (S × S = 0): dJ/dt's factor, and dA/dv = 2 dV
            a = alg.add(a_p, alg.scale(S, acc), alg.scale(dV, rate))
            dA = alg.add(alg.cross(a_p, S), alg.cross(v_p, dV))
            own = [_Speed(body.speed, S, dV, dA, alg.add(dV, dV))]
        poses.append(pose)
        velocities.append(v)
        accelerations.append(a)
        speeds.append(own)
        Y = _world_inertia(vec, g, body, pose)
        inertias.append(Y)
        momentum = alg.inertia_times(Y, v)
        forces.append(alg.add(alg.inertia_times(Y, a), alg.cross_force(v, momentum)))
        rates.append(_rate(vec, g, Y, v, momentum))
    return _backward(alg, g, n, bodies, speeds, inertias, rates, forces)


def _unit(g: Graph, c: int) -> Spatial:
    """The c-th unit spatial vector (0..2 linear, 3..5 angular)."""
    e = [g.one if i == c % 3 else g.zero for i in range(3)]
    z = [g.zero] * 3
    return (e, z) if c < 3 else (z, e)


def _child_pose(
    vec: GraphVectors, g: Graph, body: Body, joint: AxisJoint | QuaternionJoint, rows: list, origin: list
) -> _Pose:
    """A body's pose from its parent's (``rows`` of the rotation, ``origin``): rows ``E``-mapped
    (``row R_o R_q``), origin ``origin + R_parent p``."""
    new_rows = [joint.to_child(row) for row in rows]
    p = joint.offset
    shifted = [g.add([origin[a]] + [g.mul((rows[a][b], p[b])) for b in range(3)]) for a in range(3)]
    return _Pose(new_rows, shifted)


def _rotate(g: Graph, rows: list, v: Sequence) -> list:
    """``R v`` for the rows of ``R`` (nodes) and ``v`` (nodes)."""
    return [g.add([g.mul((rows[a][b], v[b])) for b in range(3)]) for a in range(3)]


def _motion(vec: GraphVectors, body: Body, joint: AxisJoint | QuaternionJoint, pose: _Pose) -> Spatial:
    """The joint's motion subspace in the reference frame: ``(o × a, a)`` (revolute) or ``(a, 0)`` (prismatic),
    ``a`` the axis turned into the reference frame, ``o`` the body's origin."""
    g = vec.g
    axis = _rotate(g, pose.rows, [vec.num(x) for x in body.axis])
    if body.kind in REVOLUTE:
        return vec.cross(pose.origin, axis), axis
    return axis, list(vec.zero)


def _world_inertia(vec: GraphVectors, g: Graph, body: Body, pose: _Pose) -> tuple:
    """``(mass, h, I)`` of a body in the reference frame (``I`` about its origin, symmetric, full 3 × 3): from the
    inertia about the centre of mass ``I_c`` (numbers), ``I = R I_c Rᵀ + m (|c|² 1 − c cᵀ)`` with ``c`` the centre
    of mass in the reference frame and ``h = m c``; a body whose parameters are symbols: :func:`_parameter_inertia`."""
    if isinstance(body.mass, sympy.Basic) and not body.mass.is_Number:
        return _parameter_inertia(vec, g, body, pose)
    m = body.mass
    com = [x / m for x in body.moment] if m != 0 else [0.0, 0.0, 0.0]
    about_com = [
        [body.inertia[a][b] - m * ((sum(x * x for x in com) if a == b else 0.0) - com[a] * com[b]) for b in range(3)]
        for a in range(3)
    ]
    mass = vec.num(m)
    R = pose.rows
    c = vec.add(pose.origin, _rotate(g, R, [vec.num(x) for x in com]))
    h = vec.scale(mass, c)
    I_c = [[vec.num(x) for x in row] for row in about_com]
    RI = [[g.add([g.mul((R[a][k], I_c[k][b])) for k in range(3)]) for b in range(3)] for a in range(3)]
    hc = vec.dot(h, c)
    inertia = [[g.zero] * 3 for _ in range(3)]
    for a in range(3):
        for b in range(a, 3):
            parts = [g.add([g.mul((RI[a][k], R[b][k])) for k in range(3)]), g.neg(g.mul((h[a], c[b])))]
            if a == b:
                parts.append(hc)
            inertia[a][b] = inertia[b][a] = g.add(parts)
    return mass, h, inertia


def _parameter_inertia(vec: GraphVectors, g: Graph, body: Body, pose: _Pose) -> tuple:
    """:func:`_world_inertia` of a body whose mass ``m``, first moment ``h_b`` and inertia ``I_o`` about its origin are
    inertial parameters (:mod:`sls.model.inertial`), linear in them: with ``o`` the body's origin and ``R`` its
    rotation, ``h = m o + R h_b`` and ``I = R I_o Rᵀ + m (|o|² 1 − o oᵀ) + 2 (o·R h_b) 1 − o (R h_b)ᵀ − (R h_b) oᵀ``."""
    mass, R, o = vec.num(body.mass), pose.rows, pose.origin
    turned = _rotate(g, R, [vec.num(x) for x in body.moment])
    h = vec.add(vec.scale(mass, o), turned)
    I_o = [[vec.num(x) for x in row] for row in body.inertia]
    RI = [[g.add([g.mul((R[a][k], I_o[k][b])) for k in range(3)]) for b in range(3)] for a in range(3)]
    diagonal = g.add((g.mul((mass, vec.dot(o, o))), g.mul((g.number(2), vec.dot(o, turned)))))
    inertia = [[g.zero] * 3 for _ in range(3)]
    for a in range(3):
        for b in range(a, 3):
            parts = [
                g.add([g.mul((RI[a][k], R[b][k])) for k in range(3)]),
                g.neg(g.mul((mass, o[a], o[b]))),
                g.neg(g.mul((o[a], turned[b]))),
                g.neg(g.mul((turned[a], o[b]))),
            ]
            if a == b:
                parts.append(diagonal)
            inertia[a][b] = inertia[b][a] = g.add(parts)
    return mass, h, inertia


def _rate(vec: GraphVectors, g: Graph, Y: tuple, v: Spatial, momentum: Spatial) -> list:
    """A body's ``Ẏ`` parts: ``[2p, Sym, n]`` with ``Sym = [ω]× I − I [ω]× − (h v_linᵀ + v_lin hᵀ) + 2 (v_lin·h) 1``
    (symmetric) and the momentum ``(p, n)``."""
    _, h, inertia = Y
    lin, omega = v
    two = g.number(2)
    # W I, W = [ω]×: row a of W is ω × e_a turned: (W I)[a][b] = Σ_k W[a][k] I[k][b]
    W = [[g.zero, g.neg(omega[2]), omega[1]], [omega[2], g.zero, g.neg(omega[0])], [g.neg(omega[1]), omega[0], g.zero]]
    WI = [[g.add([g.mul((W[a][k], inertia[k][b])) for k in range(3)]) for b in range(3)] for a in range(3)]
    vh = vec.dot(lin, h)
    sym = [[g.zero] * 3 for _ in range(3)]
    for a in range(3):
        for b in range(a, 3):
            parts = [WI[a][b], WI[b][a], g.neg(g.mul((h[a], lin[b]))), g.neg(g.mul((lin[a], h[b])))]
            if a == b:
                parts.append(g.mul((two, vh)))
            sym[a][b] = sym[b][a] = g.add(parts)
    return [vec.scale(two, momentum[0]), sym, momentum[1]]


def _backward(
    alg: _Algebra, g: Graph, n: int, bodies: tuple, speeds: list, inertias: list, rates: list, forces: list
) -> tuple[list, list]:
    """The backward pass: composites from the leaves, the entries of ``∂τ/∂q`` and ``∂τ/∂v`` per pair."""
    zero = g.zero
    d_q = [[zero] * n for _ in range(n)]
    d_v = [[zero] * n for _ in range(n)]
    below: list[list[_Speed]] = [[] for _ in bodies]  # the speeds of each body's strict subtree
    vec = alg.vec
    inertias = list(inertias)
    rates = [list(r) for r in rates]
    forces = list(forces)
    for k in reversed(range(len(bodies))):
        mass, h, inertia = inertias[k]
        Y = (mass, h, inertia)
        twice_p, sym, momentum = rates[k]
        D = [[g.sub(sym[a][b], _skew(g, momentum)[a][b]) for b in range(3)] for a in range(3)]
        dY = (twice_p, D)
        f = forces[k]
        own = speeds[k]
        for s in own:
            s.YS = alg.inertia_times(Y, s.S)
            s.dYtS = alg.rate_transposed_times(dY, s.S)
            s.dFv = alg.add(alg.rate_times(dY, s.S), alg.inertia_times(Y, s.dAv))
            s.dFq = alg.add(alg.rate_times(dY, s.dV), alg.inertia_times(Y, s.dA))
        for i in own:
            for j in own:  # one joint's speeds: without S_j ×* f
                d_q[i.index][j.index] = alg.dot(i.S, j.dFq)
                d_v[i.index][j.index] = alg.dot(i.S, j.dFv)
            for j in below[k]:
                d_q[i.index][j.index] = alg.dot(i.S, j.dFq)
                d_v[i.index][j.index] = alg.dot(i.S, j.dFv)
                d_q[j.index][i.index] = g.add((alg.dot(i.dA, j.YS), vec.dot(i.dV[1], j.dYtS)))
                d_v[j.index][i.index] = g.add((alg.dot(i.dAv, j.YS), vec.dot(i.S[1], j.dYtS)))
        for s in own:
            s.dFq = alg.add(s.dFq, alg.cross_force(s.S, f))
        parent = bodies[k].parent
        if parent >= 0:
            below[parent] += own + below[k]
            pm, ph, pI = inertias[parent]
            inertias[parent] = (
                g.add((pm, mass)),
                vec.add(ph, h),
                [[g.add((pI[a][b], inertia[a][b])) for b in range(3)] for a in range(3)],
            )
            p2, psym, pmom = rates[parent]
            rates[parent] = [
                vec.add(p2, twice_p),
                [[g.add((psym[a][b], sym[a][b])) for b in range(3)] for a in range(3)],
                vec.add(pmom, momentum),
            ]
            forces[parent] = alg.add(forces[parent], f)
    return d_q, d_v


def _skew(g: Graph, v: list) -> list:
    """``[v]×`` (nodes)."""
    z = g.zero
    return [[z, g.neg(v[2]), v[1]], [v[2], z, g.neg(v[0])], [g.neg(v[1]), v[0], z]]
