"""MuJoCo's actuators as the model's inputs (:func:`actuator_forces`), one per actuator in MuJoCo's order.

Actuator ``i`` with control ``u`` pulls on its transmission (a joint, or a fixed tendon ``Σ c_k q_k``) of length
``L = gear · q`` (tendon: ``gear · Σ c_k q_k``) with the force ``F = gain · u + bias``, ``gain = g0 (+ g1 L + g2 L̇)``
(``gaintype`` fixed or affine) and ``bias = b0 + b1 L + b2 L̇`` (``biastype`` affine; none: 0), from
``actuator_gainprm``/``actuator_biasprm``; the generalized force on coordinate ``k`` is ``∂L/∂q_k · F``
(``gear``, or ``gear · c_k``). That covers ``motor``, ``position``, ``velocity`` and ``general`` actuators without
activation dynamics. The input-free part ``bias`` goes to the friction side as the model builder does for any
affine force.
"""

from __future__ import annotations

from typing import Any

import sympy

from sls.algebra.expressions import symbol
from sls.readers.mjcf.structure import element_name
from sls.readers.urdf.naming import usable_name

#: MuJoCo's enumerations used here (``mjtTrn``, ``mjtDyn``, ``mjtGain``, ``mjtBias``, ``mjtWrap``).
TRN_JOINT, TRN_JOINTINPARENT, TRN_TENDON = 0, 1, 3
DYN_NONE = 0
GAIN_FIXED, GAIN_AFFINE = 0, 1
BIAS_NONE, BIAS_AFFINE = 0, 1
WRAP_JOINT = 1
#: Prefix of an input whose actuator name is not usable as it is (``act<k>`` names an unnamed one).
INPUT_RENAME_PREFIX = "u_"


def number(value: float) -> sympy.Expr:
    """A float as a sympy number: integral values exact (so zeros and ones fold)."""
    nearest = round(value)
    if abs(value - nearest) <= 1e-14 and abs(nearest) < 2**53:
        return sympy.Integer(nearest)
    return sympy.Float(value)


def input_names(m: Any, taken: set) -> list:
    """The inputs' names: each actuator's name made an sls name (``act<k>`` for an unnamed one), with the prefix
    ``u_`` when it is also a name in ``taken`` (the states and parameters: MJCF files often name an actuator
    after its joint)."""
    names = []
    for i in range(m.nu):
        name = usable_name(element_name(m, "actuator", i, "act"), INPUT_RENAME_PREFIX)
        names.append(INPUT_RENAME_PREFIX + name if name in taken else name)
    return names


def fixed_tendon(m: Any, t: int) -> dict | None:
    """``{joint id: coefficient}`` of tendon ``t`` when it is fixed (every wrap a joint), else ``None``."""
    start = int(m.tendon_adr[t])
    wraps = range(start, start + int(m.tendon_num[t]))
    if not all(int(m.wrap_type[w]) == WRAP_JOINT for w in wraps):
        return None
    coefficients: dict[int, float] = {}
    for w in wraps:
        joint = int(m.wrap_objid[w])
        coefficients[joint] = coefficients.get(joint, 0.0) + float(m.wrap_prm[w])
    return coefficients


def actuator_forces(m: Any, joints: dict, n: int, taken: set) -> tuple:
    """``(inputs, forces)``: the input names and the ``n`` generalized forces (one per speed), affine in the inputs.

    ``joints`` maps a MuJoCo joint id (hinge or slide) to ``(q, q̇, k)``: its coordinate's and rate's names and
    the index of its speed; ``taken`` holds the state and parameter names (an input is named apart from them,
    see :func:`input_names`). The caller has refused what is not modelled
    (:func:`sls.readers.mjcf.checks.refuse_unsupported`).
    """
    inputs = input_names(m, set(taken) | {"g"})
    forces: list[list[sympy.Expr]] = [[] for _ in range(n)]
    for i, name in enumerate(inputs):
        gear = float(m.actuator_gear[i][0])
        target = int(m.actuator_trnid[i][0])
        if int(m.actuator_trntype[i]) == TRN_TENDON:
            coefficients = fixed_tendon(m, target) or {}
        else:
            coefficients = {target: 1.0}
        moment = {j: number(gear * c) for j, c in coefficients.items() if gear * c != 0}
        length = sympy.Add(*(arm * symbol(joints[j][0]) for j, arm in moment.items()))
        velocity = sympy.Add(*(arm * symbol(joints[j][1]) for j, arm in moment.items()))
        gain_prm = [number(float(v)) for v in m.actuator_gainprm[i][:3]]
        gain = gain_prm[0]
        if int(m.actuator_gaintype[i]) == GAIN_AFFINE:
            gain = gain + gain_prm[1] * length + gain_prm[2] * velocity
        bias: sympy.Expr = sympy.Integer(0)
        if int(m.actuator_biastype[i]) == BIAS_AFFINE:
            bias_prm = [number(float(v)) for v in m.actuator_biasprm[i][:3]]
            bias = bias_prm[0] + bias_prm[1] * length + bias_prm[2] * velocity
        force = gain * symbol(name) + bias
        for j, arm in moment.items():
            forces[joints[j][2]].append(arm * force)
    return inputs, [sympy.Add(*f) for f in forces]
