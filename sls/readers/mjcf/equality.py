"""MuJoCo's joint and fixed-tendon equality constraints as holonomic constraints ``c(q) = 0``.

MuJoCo couples two joints (``<equality><joint joint1="y" joint2="x" polycoef="a0 a1 a2 a3 a4"/>``) or two fixed
tendons (``<tendon tendon1=... tendon2=...>``, a fixed tendon's length ``L = Σ c_k q_k``) by a quartic:

    y − y0 = a0 + a1 (x − x0) + a2 (x − x0)² + a3 (x − x0)³ + a4 (x − x0)⁴,

``y0``, ``x0`` the reference positions (``qpos0``) or lengths (``tendon_length0``); without ``joint2`` (``tendon2``)
the first is held at ``y0 + a0``. MuJoCo enforces it softly (``solref``, ``solimp``); sls holds it exactly, through
the multipliers of every constrained model (with the model's Baumgarte stabilization, 0 by default). The other kinds
(``connect``, ``weld``, ``flex``) are refused by
:func:`sls.readers.mjcf.checks.refuse_unsupported`.
"""

from __future__ import annotations

from typing import Any

import sympy

from sls.readers.mjcf.actuators import fixed_tendon, number

#: ``mjtEq``: the kinds read here.
EQ_JOINT, EQ_TENDON = 2, 3


def equality_constraints(m: Any, coordinate: dict) -> tuple:
    """The holonomic constraints of ``m``'s active joint and tendon equalities, in MuJoCo's order: each
    ``(y − y0) − Σ_k a_k (x − x0)^k`` in the coordinates (``coordinate``: MuJoCo joint id → its sls symbol)."""
    result = []
    for e in range(m.neq):
        if not m.eq_active0[e]:
            continue
        kind = int(m.eq_type[e])
        if kind not in (EQ_JOINT, EQ_TENDON):
            continue  # refused before reading (checks.py)
        measure = _joint_position if kind == EQ_JOINT else _tendon_length
        first, second = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        y, y0 = measure(m, first, coordinate)
        polynomial = [number(float(a)) for a in m.eq_data[e][:5]]
        if second < 0:
            offset: sympy.Expr = polynomial[0]
        else:
            x, x0 = measure(m, second, coordinate)
            shift = x - x0
            offset = sympy.Add(*(a * shift**k for k, a in enumerate(polynomial) if a != 0))
        result.append(y - y0 - offset)
    return tuple(result)


def _joint_position(m: Any, joint: int, coordinate: dict) -> tuple:
    """``(q, q0)``: a hinge or slide joint's coordinate and its reference position ``qpos0``."""
    return coordinate[joint], number(float(m.qpos0[m.jnt_qposadr[joint]]))


def _tendon_length(m: Any, tendon: int, coordinate: dict) -> tuple:
    """``(L, L0)``: a fixed tendon's length ``Σ c_k q_k`` and its reference length ``tendon_length0``."""
    coefficients = fixed_tendon(m, tendon) or {}
    length = sympy.Add(*(number(c) * coordinate[j] for j, c in coefficients.items()))
    return length, number(float(m.tendon_length0[tendon]))
