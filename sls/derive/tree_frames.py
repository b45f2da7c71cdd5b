"""Frame kinematics of a robot tree on the expression graph: poses, Jacobians, ``J̇v`` and the centre of mass.

Conventions (Pinocchio's ``LOCAL_WORLD_ALIGNED``): a frame is a link's frame; its pose is ``[[R, p], [0, 1]]`` in
the world (the root link's frame); its twist ``[ṗ; ω]`` has the velocity of its origin and the angular velocity, both
in world axes; ``J`` (6 × n, linear rows first) maps the speeds to it (``LOCAL``: the same twist in the frame's
own axes); ``J̇v`` is the classical acceleration of the origin and the angular acceleration, world axes, at zero
``v̇`` (Pinocchio's ``getFrameClassicalAcceleration`` after ``forwardKinematics(q, v, 0)``). The centre of mass
is that of the links that move (links fixed to the root are part of the world, as in Pinocchio's
``centerOfMass``), and its Jacobian maps the speeds to its velocity.

Every body's world pose follows from its parent's: ``R_w = R_w,parent R_o R_q``, ``p_w = p_w,parent + R_w,parent p``;
its velocities and accelerations (body frame) come from :meth:`~sls.derive.rigid_body.TreeDynamics.velocities` and
:meth:`~sls.derive.rigid_body.TreeDynamics.accelerations`; a link fixed to a body at ``(R, t)`` has
``ṗ = R_w (v + ω × t)`` and ``p̈ = R_w (v̇ + ω̇ × t + ω × (ω × t))``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from sls.algebra.expressions import symbol
from sls.algebra.graph import Graph
from sls.arrays import nest
from sls.derive.body_frames import placements
from sls.derive.named_arrays import FRAME_ARRAYS
from sls.derive.rigid_body import TreeDynamics, constant
from sls.errors import ModelError
from sls.model.model import STABILIZATION_PARAMETER
from sls.model.tree import Robot, contact_parameter


@dataclass(frozen=True)
class LinkMotion:
    """A link's frame on the graph: ``rotation`` (3 × 3 nodes) and ``origin`` (3) in the world, the twist ``[ṗ; ω]``
    (6, world axes), the same in the link's own axes (``local``, 6) and the drift ``[p̈; ω̇]`` at ``v̇ = 0``
    (6, world axes)."""

    rotation: list
    origin: list
    twist: list
    local: list
    drift: list


class TreeMotion:
    """Every body's world pose, velocities and zero-``v̇`` accelerations, built once; :meth:`link` per link."""

    def __init__(self, tree: TreeDynamics, robot: Robot, dq: Sequence[int]) -> None:
        g = tree.graph
        self.tree, self.robot = tree, robot
        self.where = placements(robot)
        self.poses = world_poses(tree)
        self.velocities = tree.velocities(dq)
        self.accelerations = tree.accelerations(dq, [g.zero] * tree.n, g.zero)

    def link(self, name: str, what: str = "frames") -> LinkMotion:
        """The motion of link ``name`` (``what`` names the list it came from, for the error)."""
        g, vec = self.tree.graph, self.tree.vec
        if name not in self.where:
            raise ModelError(f"{what}: '{name}' is not a link of the robot")
        body, R, t = self.where[name]
        offset = [vec.num(value) for value in t]
        if body < 0:
            rotation = [[vec.num(value) for value in row] for row in R]
            return LinkMotion(rotation, offset, [g.zero] * 6, [g.zero] * 6, [g.zero] * 6)
        R_b, p_b = self.poses[body]
        omega, v = self.velocities[body]
        domega, dv = self.accelerations[body]
        linear = vec.add(v, vec.cross(omega, offset))
        acceleration = vec.add(dv, vec.cross(domega, offset), vec.cross(omega, vec.cross(omega, offset)))
        return LinkMotion(
            rotation=_matmul_constant(g, R_b, R, vec),
            origin=vec.add(p_b, _matvec(g, R_b, offset)),
            twist=_matvec(g, R_b, linear) + _matvec(g, R_b, omega),
            local=_transposed_times(g, R, linear, vec) + _transposed_times(g, R, omega, vec),
            drift=_matvec(g, R_b, acceleration) + _matvec(g, R_b, domega),
        )


def frame_arrays(tree: TreeDynamics, robot: Robot, frames: Sequence[str], dq: Sequence[int]) -> dict:
    """The arrays of :data:`FRAME_ARRAYS` (nested lists of graph nodes) for the links ``frames``, in order.

    ``dq`` are the speed nodes (n). Raises :class:`~sls.errors.ModelError` naming a frame that is not a link.
    """
    g = tree.graph
    motion = TreeMotion(tree, robot, dq)
    result: dict = {key: [] for key in FRAME_ARRAYS}
    for name in frames:
        link = motion.link(name)
        rows = [link.rotation[i] + [link.origin[i]] for i in range(3)]
        result["frame_pose"].append(rows + [[g.zero, g.zero, g.zero, g.one]])
        result["frame_jacobian"].append(g.jacobian(link.twist, list(dq)))
        result["frame_jacobian_local"].append(g.jacobian(link.local, list(dq)))
        result["frame_jdot_v"].append(link.drift)
    com, com_velocity = centre_of_mass(tree, robot, motion.poses, motion.velocities)
    result["com"] = com
    result["com_jacobian"] = g.jacobian(com_velocity, list(dq))
    return result


def contact_terms(
    tree: TreeDynamics, robot: Robot, contacts: Sequence[tuple], x: Sequence[int], dq: Sequence[int], omega: float
) -> dict:
    """The constraint fields of :class:`~sls.derive.dynamics.Dynamics` for contacts ``(link, "point" | "6d")``.

    A point contact holds the link's origin at the parameters ``contact_<link>_x, _y, _z`` (world): ``c = p − p₀``
    (3 rows), ``A = ∂ṗ/∂v`` (the linear rows of the frame Jacobian), the bias ``g = −J̇v − 2ω ṗ − ω² c`` with the
    classical drift ``J̇v = p̈(v̇ = 0)`` (Pinocchio's ``CONTACT_3D``). A 6-D contact holds the origin and the
    orientation ``R₀ = Rz(yaw) Ry(pitch) Rx(roll)`` of the parameters ``contact_<link>_roll, _pitch, _yaw``: six rows,
    the three of the place then ``c = ½ vee(R R₀ᵀ − R₀ Rᵀ)`` (world axes; ``ċ = ω`` where ``R = R₀``) with
    ``A = ∂ω/∂v`` (the angular rows), so the multipliers are the ground's force and moment at the origin, world
    axes. Its linear bias uses the spatial drift ``p̈ − ω × ṗ`` (the origin's velocity held constant in the link's
    own axes: Pinocchio's ``CONTACT_6D`` in ``LOCAL_WORLD_ALIGNED``; the same as the classical one where ``ṗ = 0``).
    The Baumgarte rate is the run-time parameter ``constraint_stabilization`` (every constrained model has it, its
    default the model's ``stabilization``; ``omega``, that default, is not written into the code). ``A``'s and
    ``g``'s Jacobians with respect to ``x`` are :func:`~sls.derive.constraint_terms.constraint_jacobians_graph`'s,
    built only when a function returns them.
    """
    g = tree.graph
    motion = TreeMotion(tree, robot, dq)
    c: list = []
    A: list = []
    bias: list = []
    rate = g.symbol(symbol(STABILIZATION_PARAMETER))
    two_rate, rate2 = g.mul((g.number(2), rate)), g.mul((rate, rate))
    for name, kind in contacts:
        link = motion.link(name, "contacts")
        anchor = [g.symbol(symbol(contact_parameter(name, axis))) for axis in "xyz"]
        gap = [g.sub(p, p0) for p, p0 in zip(link.origin, anchor)]
        velocity, drift = link.twist[:3], link.drift[:3]
        if kind == "6d":
            omega_w = link.twist[3:]
            drift = [g.sub(a, b) for a, b in zip(drift, tree.vec.cross(omega_w, velocity))]
            gap += orientation_error(g, link.rotation, [contact_parameter(name, a) for a in ("roll", "pitch", "yaw")])
            velocity, drift = velocity + omega_w, drift + link.drift[3:]
        c += gap
        A += g.jacobian(velocity, list(dq))
        for i in range(len(gap)):
            terms = [g.neg(drift[i]), g.neg(g.mul((two_rate, velocity[i]))), g.neg(g.mul((rate2, gap[i])))]
            bias.append(g.add(terms))
    n, k = len(dq), len(c)
    A_flat = [e for row in A for e in row]
    return {"constraint": tuple(c), "constraint_jac": nest(A_flat, (k, n)), "constraint_bias": tuple(bias)}


def orientation_error(g: Graph, R: list, angles: Sequence[str]) -> list:
    """``½ vee(R R₀ᵀ − R₀ Rᵀ)`` (3 nodes, world axes) for ``R`` (3 × 3 nodes) and ``R₀ = Rz(yaw) Ry(pitch) Rx(roll)``
    of the parameters named ``angles`` (roll, pitch, yaw): zero where ``R = R₀``, its rate ``ω`` there."""
    import sympy

    roll, pitch, yaw = (symbol(a) for a in angles)
    R0 = sympy.rot_axis3(-yaw) * sympy.rot_axis2(-pitch) * sympy.rot_axis1(-roll)  # sympy's rot_axis turn frames
    R0_nodes = [[g.from_sympy(R0[i, j]) for j in range(3)] for i in range(3)]
    X = [[g.add([g.mul((R[i][k], R0_nodes[j][k])) for k in range(3)]) for j in range(3)] for i in range(3)]
    half = g.number(sympy.Rational(1, 2))
    return [g.mul((half, g.sub(X[i][j], X[j][i]))) for i, j in ((2, 1), (0, 2), (1, 0))]


def world_poses(tree: TreeDynamics) -> list:
    """``[(R_w, p_w), …]`` per body: its rotation (3 × 3 nodes, rows) and origin (3 nodes) in the world."""
    g, vec = tree.graph, tree.vec
    unit = ([g.one, g.zero, g.zero], [g.zero, g.one, g.zero], [g.zero, g.zero, g.one])
    poses: list = []
    for body, joint in zip(tree.bodies, tree.joints):
        columns = [joint.to_parent(list(e)) for e in unit]  # R_o R_q, column by column
        local = [[columns[j][i] for j in range(3)] for i in range(3)]
        if body.parent < 0:
            poses.append((local, list(joint.offset)))
            continue
        R_p, p_p = poses[body.parent]
        rotation = [[g.add([g.mul((R_p[i][k], local[k][j])) for k in range(3)]) for j in range(3)] for i in range(3)]
        poses.append((rotation, vec.add(p_p, _matvec(g, R_p, list(joint.offset)))))
    return poses


def centre_of_mass(tree: TreeDynamics, robot: Robot, poses: list, velocities: list) -> tuple:
    """``(c, ċ)``: the centre of mass of the moving links (3 nodes, world) and its velocity (3 nodes, world).

    Links fixed to the root are part of the world and left out, as Pinocchio's ``centerOfMass`` does."""
    g, vec = tree.graph, tree.vec
    total = sum(body.mass for body in tree.bodies)
    symbolic = isinstance(total, sympy.Basic) and bool(total.free_symbols)  # masses as parameters
    if not symbolic and total <= 0:
        raise ModelError("frames: the robot's moving links have no mass, so they have no centre of mass")
    weighted = [g.zero] * 3
    velocity = [g.zero] * 3
    for body, (R_w, p_w), (omega, v) in zip(tree.bodies, poses, velocities):
        if body.mass == 0 and not any(body.moment):
            continue
        moment = [vec.num(value) for value in body.moment]  # m c in the body's frame
        weighted = vec.add(weighted, vec.scale(vec.num(body.mass), p_w), _matvec(g, R_w, moment))
        momentum = vec.add(vec.scale(vec.num(body.mass), v), vec.cross(omega, moment))  # m (v + ω × c)
        velocity = vec.add(velocity, _matvec(g, R_w, momentum))
    inverse = g.from_sympy(1 / constant(total)) if symbolic else vec.num(1.0 / total)
    return vec.scale(inverse, weighted), vec.scale(inverse, velocity)


def _matvec(g: Graph, R: list, v: list) -> list:
    """``R v`` for a matrix of nodes (rows) and a vector of nodes."""
    return [g.add([g.mul((R[i][k], v[k])) for k in range(3)]) for i in range(3)]


def _transposed_times(g: Graph, constant: Sequence, v: list, vec: Any) -> list:
    """``Cᵀ v`` for a constant matrix ``C`` (numbers) and a vector of nodes."""
    return [g.add([g.mul((vec.num(constant[k][i]), v[k])) for k in range(3)]) for i in range(3)]


def _matmul_constant(g: Graph, R: list, constant: Sequence, vec: Any) -> list:
    """``R C`` for a matrix of nodes ``R`` and a constant matrix ``C`` (numbers)."""
    numbers = [[vec.num(value) for value in row] for row in constant]
    return [[g.add([g.mul((R[i][k], numbers[k][j])) for k in range(3)]) for j in range(3)] for i in range(3)]
