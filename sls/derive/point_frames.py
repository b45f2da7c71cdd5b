"""Frame kinematics of a model given by its energies (``model.frame_points``): poses, Jacobians and ``J̇v`` of named
points, in the conventions of a robot's frames (:mod:`sls.derive.tree_frames`, Pinocchio's ``LOCAL_WORLD_ALIGNED``).

A frame is a position ``p(q)`` (world) and a rotation ``R(q)`` (world axes; the identity when none is given). With
``q̇ = S(q) v`` (the rates themselves without generalized speeds): ``ṗ = (∂p/∂q) q̇``, ``[ω]× = Ṙ Rᵀ`` (``ω = 0``
without a rotation), the twist ``[ṗ; ω]`` (world axes), ``J = ∂[ṗ; ω]/∂v`` (6 × n, linear rows first), the same
twist in the frame's axes ``[Rᵀ ṗ; Rᵀ ω]`` (``LOCAL``), and the drift ``J̇v = ∂[ṗ; ω]/∂q q̇`` at ``v̇ = 0`` (the
classical acceleration of the point and the angular acceleration).
"""

from __future__ import annotations

import sympy

from sls.model import Model

#: The frame arrays of a model given by its energies (a robot's :data:`~sls.derive.named_arrays.FRAME_ARRAYS`
#: without the centre of mass, which needs the bodies' masses).
POINT_FRAME_ARRAYS = ("frame_pose", "frame_jacobian", "frame_jacobian_local", "frame_jdot_v")


def point_frame_arrays(model: Model) -> dict:
    """The arrays of :data:`POINT_FRAME_ARRAYS` (nested tuples of sympy expressions) for ``model.frame_points``:
    ``frame_pose`` (k, 4, 4), ``frame_jacobian`` and ``frame_jacobian_local`` (k, 6, n), ``frame_jdot_v`` (k, 6)."""
    q, v, qdot = list(model.q), list(model.dq), list(model.qdot)
    identity = ((1, 0, 0), (0, 1, 0), (0, 0, 1))

    def rate(e: sympy.Expr) -> sympy.Expr:
        return rate_at_fixed_speeds(e, q, qdot)

    result: dict = {key: [] for key in POINT_FRAME_ARRAYS}
    for position, rotation in model.frame_points:
        R = sympy.Matrix(rotation if rotation is not None else identity)
        p = sympy.Matrix(position)
        velocity = p.applyfunc(rate)
        if rotation is None:
            omega = sympy.zeros(3, 1)
        else:
            spin = R.applyfunc(rate) * R.T  # [ω]× = Ṙ Rᵀ
            omega = sympy.Matrix([spin[2, 1], spin[0, 2], spin[1, 0]])
        twist = list(velocity) + list(omega)
        local = list(R.T * velocity) + list(R.T * omega)
        pose = [[R[i, j] for j in range(3)] + [p[i]] for i in range(3)] + [[0, 0, 0, 1]]
        result["frame_pose"].append(_numbers(pose))
        result["frame_jacobian"].append(_numbers([[sympy.diff(t, vj) for vj in v] for t in twist]))
        result["frame_jacobian_local"].append(_numbers([[sympy.diff(t, vj) for vj in v] for t in local]))
        result["frame_jdot_v"].append(_numbers([rate_at_fixed_speeds(t, q, qdot) for t in twist]))
    return {key: tuple(value) for key, value in result.items()}


def rate_at_fixed_speeds(e: sympy.Expr, q: list, qdot: list) -> sympy.Expr:
    """``(∂e/∂q) q̇``: the rate of ``e(q, v)`` along the motion at constant speeds ``v``."""
    return sympy.Add(*(sympy.diff(e, qi) * rate for qi, rate in zip(q, qdot)))


def _numbers(rows: list) -> tuple:
    """Nested lists as nested tuples of sympy expressions (integers as sympy numbers)."""
    if isinstance(rows, (list, tuple)):
        return tuple(_numbers(item) for item in rows)
    return sympy.sympify(rows)
