"""Generalized forces: the inputs' part of the declared forces (linear in the inputs, an input-free part
allowed) and the loads (``[[loads]]``: forces at points, torques on angles and angular velocities)."""

from __future__ import annotations

import sympy

from sls.algebra.calculus import diff
from sls.errors import ModelError, ModelTypeError, brief
from sls.model.energies import check_linear_in_velocities
from sls.model.entries import as_list, expression
from sls.model.kinematics import kinematic_matrix
from sls.model.names import closest, unknown_key


def check_forces(forces: tuple, inputs: tuple, actuated: bool) -> tuple[tuple, tuple]:
    """Split affine generalized forces into ``(input part, input-free part)``; refuse forces nonlinear in an input."""
    if actuated and not any(f.free_symbols & set(inputs) - {u} for f, u in zip(forces, inputs)) and forces == inputs:
        return forces, (sympy.Integer(0),) * len(forces)
    parts, rests = [], []
    zero = {u: sympy.Integer(0) for u in inputs}
    for k, force in enumerate(forces):
        for u in inputs:
            slope = diff_piecewise(force, u)
            if slope.free_symbols & set(inputs):
                raise ModelError(
                    f"forces[{k}]: generalized force must be linear in the inputs (an input-free part is allowed); "
                    f"{brief(force, 100)} is not linear in {u}"
                )
        if not force.free_symbols & set(inputs):
            parts.append(sympy.Integer(0))
            rests.append(force)
            continue
        rest = force.xreplace(zero)
        if rest.free_symbols & set(inputs) or _has_non_finite(rest):
            raise ModelError(f"forces[{k}]: generalized force must be linear in the inputs; {brief(force, 100)} is not")
        parts.append(sympy.Add(*(diff_piecewise(force, u) * u for u in inputs)) if rest != 0 else force)
        rests.append(rest)
    driving = set().union(*(force.free_symbols for force in parts))
    idle = [u.name for u in inputs if u not in driving]
    if idle and not actuated:
        raise ModelError(
            f"input '{idle[0]}' appears in no generalized force; every declared input must drive some coordinate"
        )
    return tuple(parts), tuple(rests)


def _has_non_finite(expr: sympy.Expr) -> bool:
    return expr.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo)


def diff_piecewise(expr: sympy.Expr, s: sympy.Symbol) -> sympy.Expr:
    """``∂expr/∂s`` as :func:`sls.algebra.calculus.diff` takes it (``Heaviside`` piece by piece)."""
    return diff(expr, s)


#: The kinds of load: the keys of a ``[[loads]]`` table.
LOAD_KINDS = (("point", "force"), ("angle", "torque"), ("angular_velocity", "torque"))


def load_forces(
    loads: list, q: tuple, dq: tuple, inputs: tuple, actuated: bool, kinematics: tuple | None = None
) -> tuple:
    """The generalized forces of ``loads`` (length n), summed.

    Each load is a dict: ``point`` (2 or 3 position expressions in q) with
    ``force`` (components in the same axes): ``(∂point/∂q)ᵀ force``;
    ``angle`` (planar, an expression in q) with ``torque`` (one expression):
    ``(∂angle/∂q)ᵀ torque``; or ``angular_velocity`` (3 expressions linear in
    q̇) with ``torque`` (3 components): ``(∂ω/∂q̇)ᵀ torque``. Force and torque
    components may use inputs, states and parameters.

    With generalized speeds (``kinematics``: ``q̇ = S(q) v``, ``dq`` the speeds) the forces are taken along the
    speeds: ``(∂point/∂q S)ᵀ force`` and ``(∂angle/∂q S)ᵀ torque``; ``angular_velocity`` is then written in
    the speeds.
    """
    S = kinematic_matrix(kinematics, q, dq) if kinematics is not None else None
    n = len(q)
    total = [sympy.Integer(0)] * n
    for i, load in enumerate(as_list(loads, "loads")):
        what = f"loads[{i}]"
        where, load_of = _load_kind(load, what)
        position, amount = _load_parts(load, what, where, load_of)
        _check_load_symbols(position, amount, what, where, load_of, inputs, dq, actuated)
        if where == "angular_velocity":
            jac = [
                [_velocity_coefficient(e, v, dq, f"{what}.angular_velocity[{j}]") for v in dq]
                for j, e in enumerate(position)
            ]
        else:
            jac = [[diff_piecewise(e, c) for c in q] for e in position]
            if S is not None:
                jac = [[sympy.Add(*(row[i] * S[i][k] for i in range(n))) for k in range(len(dq))] for row in jac]
        for k in range(n):
            term = sympy.Add(*(jac[j][k] * amount[j] for j in range(len(position))))
            if term != 0:
                total[k] = total[k] + term
    return tuple(total)


def _load_kind(load: object, what: str) -> tuple[str, str]:
    """``(where, what acts there)`` of a load table: ``("point", "force")``, ``("angle", "torque")`` or
    ``("angular_velocity", "torque")`` (:data:`LOAD_KINDS`); a one-line refusal of anything else."""
    if not isinstance(load, dict):
        raise ModelTypeError(
            f"{what}: expected a table (dict) with point and force, angle and torque, or angular_velocity and torque"
        )
    keys = set(load)
    kind = next((pair for pair in LOAD_KINDS if set(pair) == keys), None)
    if kind is None:
        known = [key for pair in LOAD_KINDS for key in pair]
        stray = next((key for key in sorted(map(str, keys)) if key not in known and closest(key, known)), None)
        if stray is not None:
            raise ModelError(f"{what}: {unknown_key(stray, known)}")
        raise ModelError(
            f"{what}: expected the keys point and force, angle and torque, or angular_velocity and torque; "
            f"got {', '.join(sorted(map(str, keys))) or 'none'}"
        )
    return kind


def _load_parts(load: dict, what: str, where: str, load_of: str) -> tuple[tuple, tuple]:
    """The load's position (point, angle or angular velocity components) and amount (force or torque components)
    as expressions, as many of each (2 or 3 for a point, 3 for an angular velocity, 1 for an angle)."""
    if where == "angle":
        return (expression(load["angle"], f"{what}.angle"),), (expression(load["torque"], f"{what}.torque"),)
    position = tuple(
        expression(e, f"{what}.{where}[{j}]") for j, e in enumerate(as_list(load[where], f"{what}.{where}"))
    )
    amount = tuple(
        expression(e, f"{what}.{load_of}[{j}]") for j, e in enumerate(as_list(load[load_of], f"{what}.{load_of}"))
    )
    sizes = (3,) if where == "angular_velocity" else (2, 3)
    if len(position) not in sizes:
        raise ModelError(f"{what}.{where}: expected {' or '.join(map(str, sizes))} components, got {len(position)}")
    if len(amount) != len(position):
        raise ModelError(
            f"{what}: {where} has {len(position)} components but {load_of} has {len(amount)}; give one per axis"
        )
    return position, amount


def _check_load_symbols(
    position: tuple, amount: tuple, what: str, where: str, load_of: str, inputs: tuple, dq: tuple, actuated: bool
) -> None:
    """Refuse a load position that uses an input (or, but for an angular velocity, a velocity), and an amount that
    uses an input in a model with an input map (``actuated``: inputs drive the model through it)."""
    for j, e in enumerate(position):
        label = f"{what}.{where}" + (f"[{j}]" if where != "angle" else "")
        if e.free_symbols & set(inputs):
            raise ModelError(
                f"{label}: depends on the input {sorted(s.name for s in e.free_symbols & set(inputs))[0]}; "
                f"only the {load_of} may"
            )
        if where != "angular_velocity" and e.free_symbols & set(dq):
            velocities = ", ".join(sorted(s.name for s in e.free_symbols & set(dq)))
            raise ModelError(f"{label}: a load {where} depends on the coordinates q only; it contains {velocities}")
    if actuated:
        for e in amount:
            if e.free_symbols & set(inputs):
                raise ModelError(
                    f"{what}.{load_of}: uses the input {sorted(s.name for s in e.free_symbols & set(inputs))[0]} "
                    "of a model without an input map; declare inputs and forces to drive a load"
                )


def _velocity_coefficient(expr: sympy.Expr, v: sympy.Symbol, dq: tuple, what: str) -> sympy.Expr:
    """``∂expr/∂v`` for ``expr`` linear in the velocities ``dq`` (refused otherwise, naming the term)."""
    if expr == 0:
        return sympy.Integer(0)
    check_linear_in_velocities(expr, dq, what)
    return sympy.diff(expr, v)
