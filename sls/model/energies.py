"""How a model's expressions may depend on the velocities q̇: the kinetic energy ``T`` as a homogeneous
quadratic form, the potential energy ``V`` not at all, velocity constraints and angular velocities linearly."""

from __future__ import annotations

import sympy

from sls.errors import ModelError, brief
from sls.model.entries import symbols_in


def quadratic_terms(T: sympy.Expr, dq: tuple) -> list[tuple[sympy.Expr, int, int]]:
    """Split ``T`` into ``(coefficient, i, j)`` with ``T = Σ coefficient·q̇_i·q̇_j``, ``i <= j``.

    Raises :class:`ModelError` naming a term that is not of this form.
    """
    dq_set = set(dq)
    index = {s: i for i, s in enumerate(dq)}
    _check_expandable(T, dq_set)
    expanded = sympy.expand(T, power_base=False, power_exp=False, log=False)
    terms = []
    for term in sympy.Add.make_args(expanded):
        coefficient, velocity_part = term.as_independent(*dq, as_Add=False)
        powers = velocity_part.as_powers_dict() if velocity_part != 1 else {}
        velocities: list[int] = []
        monomial = True  # a product of positive integer powers of velocities
        for base, exponent in powers.items():
            if base not in dq_set or not exponent.is_Integer or exponent < 1:
                monomial = False
                break
            velocities += [index[base]] * int(exponent)
        if not monomial or len(velocities) != 2 or coefficient.free_symbols & dq_set:
            raise ModelError(
                "kinetic energy T must be quadratic in the velocities (T = 1/2 dq' M(q) dq); "
                f"offending term: {brief(term)}"
            )
        i, j = sorted(velocities)
        terms.append((coefficient, i, j))
    return terms


def _check_expandable(T: sympy.Expr, dq_set: set) -> None:
    """Refuse powers that could only be quadratic in q̇ by cancellation, before expanding them.

    ``(q1 + dq1 + dq2)**100`` would take ages to expand; a power of a sum that
    contains a velocity is quadratic only with exponent 2 (or 1).
    """
    for node in sympy.preorder_traversal(T):
        if (
            isinstance(node, sympy.Pow)
            and node.base.is_Add
            and node.base.free_symbols & dq_set
            and not (node.exp.is_Integer and 1 <= int(node.exp) <= 2)
        ):
            raise ModelError(
                "kinetic energy T must be quadratic in the velocities (T = 1/2 dq' M(q) dq); "
                f"offending term: {brief(node)}"
            )


def check_kinetic_energy(T: sympy.Expr, dq: tuple) -> None:
    """Refuse a ``T`` that is not a homogeneous quadratic form in ``dq``.

    Proven on the expression graph where possible (every term of degree
    exactly 2, without expanding ``T``, which is costly for large models);
    otherwise decided by expanding ``T`` (which also names the offending term).
    """
    if T == 0:
        raise ModelError("kinetic energy T is zero; the mass matrix would be singular")
    from sls.algebra.graph import Graph, Unsupported

    graph = Graph()
    try:
        node = graph.from_sympy(T)
        if graph.degree(node, {graph.symbol(s) for s in dq}) == (2, 2):
            return
    except Unsupported:
        pass
    quadratic_terms(T, dq)


def check_potential_energy(V: sympy.Expr, dq: tuple) -> None:
    velocities = sorted(s.name for s in symbols_in(V) & set(dq))
    if velocities:
        raise ModelError(f"potential energy V must not depend on the velocities; it contains {', '.join(velocities)}")


def check_linear_in_velocities(expr: sympy.Expr, dq: tuple, what: str) -> None:
    """Refuse ``expr`` unless it is ``Σ a_j(q) q̇_j``, naming the first offending term."""
    dq_set = set(dq)
    slopes_free = all(not (sympy.diff(expr, v).free_symbols & dq_set) for v in dq)
    rest = expr.xreplace({v: sympy.Integer(0) for v in dq})
    if slopes_free and rest == 0 and expr.free_symbols & dq_set:
        return
    if not expr.free_symbols & dq_set:
        raise ModelError(
            f"{what}: must be linear in the velocities (a(q) qdot), "
            f"but contains none of {', '.join(v.name for v in dq)}"
        )
    for term in sympy.Add.make_args(sympy.expand(expr)):
        _, velocity_part = term.as_independent(*dq, as_Add=False)
        if velocity_part not in dq_set:
            raise ModelError(f"{what}: must be linear in the velocities (a(q) qdot); offending term: {brief(term, 80)}")
    raise ModelError(f"{what}: must be linear in the velocities (a(q) qdot): {brief(expr, 80)}")


def order_hint(T: sympy.Expr, V: sympy.Expr, q: tuple, dq: tuple) -> str:
    """A hint when another order of the same state names would make ``T`` and ``V`` valid (e.g. ``[x, v, th, w]``)."""
    state, n = q + dq, len(q)
    candidates = [state[0::2] + state[1::2]] if n > 1 else []
    candidates.append(dq + q)
    for order in candidates:
        try:
            check_kinetic_energy(T, order[n:])
            check_potential_energy(V, order[n:])
        except ModelError:
            continue
        return (
            f". The state is read as the n coordinates first, then their n rates in the same order "
            f"(here q = [{', '.join(s.name for s in q)}], rates [{', '.join(s.name for s in dq)}]); "
            f"did you mean the state [{', '.join(s.name for s in order)}]?"
        )
    return ""
