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
from typing import Any

from sls.algebra.graph import Graph
from sls.derive.named_arrays import FRAME_ARRAYS
from sls.derive.rigid_body import TreeDynamics
from sls.derive.tree_bodies import placements
from sls.errors import ModelError
from sls.model.tree import Robot


def frame_arrays(tree: TreeDynamics, robot: Robot, frames: Sequence[str], dq: Sequence[int]) -> dict:
    """The arrays of :data:`FRAME_ARRAYS` (nested lists of graph nodes) for the links ``frames``, in order.

    ``dq`` are the speed nodes (n). Raises :class:`~sls.errors.ModelError` naming a frame that is not a link.
    """
    g, vec = tree.graph, tree.vec
    where = placements(robot)
    for name in frames:
        if name not in where:
            raise ModelError(f"frames: '{name}' is not a link of the robot")
    poses = world_poses(tree)
    velocities = tree.velocities(dq)
    accelerations = tree.accelerations(dq, [g.zero] * tree.n, g.zero)
    result: dict = {key: [] for key in FRAME_ARRAYS}
    for name in frames:
        body, R, t = where[name]
        offset = [vec.num(value) for value in t]
        if body < 0:
            rotation, origin = [[vec.num(value) for value in row] for row in R], offset
            twist, drift, local = [g.zero] * 6, [g.zero] * 6, [g.zero] * 6
        else:
            R_b, p_b = poses[body]
            omega, v = velocities[body]
            domega, dv = accelerations[body]
            rotation = _matmul_constant(g, R_b, R, vec)
            origin = vec.add(p_b, _matvec(g, R_b, offset))
            linear = vec.add(v, vec.cross(omega, offset))
            twist = _matvec(g, R_b, linear) + _matvec(g, R_b, omega)
            acceleration = vec.add(dv, vec.cross(domega, offset), vec.cross(omega, vec.cross(omega, offset)))
            drift = _matvec(g, R_b, acceleration) + _matvec(g, R_b, domega)
            local = _transposed_times(g, R, linear, vec) + _transposed_times(g, R, omega, vec)  # in the link's axes
        result["frame_pose"].append([rotation[i] + [origin[i]] for i in range(3)] + [[g.zero, g.zero, g.zero, g.one]])
        result["frame_jacobian"].append(g.jacobian(twist, list(dq)))
        result["frame_jacobian_local"].append(g.jacobian(local, list(dq)))
        result["frame_jdot_v"].append(drift)
    com, com_velocity = centre_of_mass(tree, robot, poses, velocities)
    result["com"] = com
    result["com_jacobian"] = g.jacobian(com_velocity, list(dq))
    return result


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
    if total <= 0:
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
    inverse = vec.num(1.0 / total)
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
