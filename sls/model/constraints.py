"""Constraints: holonomic ``c(q) = 0`` and velocity (rolling) constraints ``a(q) q̇ = 0``."""

from __future__ import annotations

from sls.errors import ModelError, brief
from sls.model.energies import check_linear_in_velocities
from sls.model.entries import as_list, expression


def check_constraints(
    constraints: object | None, velocity_constraints: object | None, q: tuple, dq: tuple, inputs: tuple
) -> tuple:
    """The holonomic and velocity constraints as tuples of expressions, checked."""
    n = len(q)
    holonomic = (
        tuple(expression(e, f"constraints[{i}]") for i, e in enumerate(as_list(constraints, "constraints")))
        if constraints is not None
        else ()
    )
    rolling = (
        tuple(
            expression(e, f"velocity_constraints[{i}]")
            for i, e in enumerate(as_list(velocity_constraints, "velocity_constraints"))
        )
        if velocity_constraints is not None
        else ()
    )
    for label, group in (("constraints", holonomic), ("velocity_constraints", rolling)):
        for i, e in enumerate(group):
            used = e.free_symbols & set(inputs)
            if used:
                raise ModelError(
                    f"{label}[{i}]: a constraint cannot depend on the input {sorted(s.name for s in used)[0]}"
                )
    for i, e in enumerate(holonomic):
        velocities = sorted(s.name for s in e.free_symbols & set(dq))
        if velocities:
            raise ModelError(
                f"constraints[{i}]: a holonomic constraint depends on the coordinates q only; {brief(e, 60)} contains "
                f"{', '.join(velocities)} (give constraints on velocities as velocity_constraints, linear in qdot)"
            )
        if not e.free_symbols & set(q):
            raise ModelError(f"constraints[{i}]: {brief(e, 60)} depends on no coordinate, so it constrains nothing")
    for i, e in enumerate(rolling):
        check_linear_in_velocities(e, dq, f"velocity_constraints[{i}]")
    k = len(holonomic) + len(rolling)
    if k >= n and k:
        raise ModelError(
            f"{k} constraint{'s' if k > 1 else ''} on {n} coordinate{'s' if n > 1 else ''} "
            f"{'is more than there are coordinates' if k > n else 'leave no degree of freedom'}; "
            f"a constrained model has at most n - 1 = {n - 1} independent constraints"
        )
    return holonomic, rolling
