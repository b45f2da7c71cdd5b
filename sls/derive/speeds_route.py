"""The derivation of a model with generalized speeds (``model.kinematics``: ``q̇ = S(q) v``), on the
expanded route: :func:`derive_with_speeds`.

The terms come from :func:`sls.derive.speeds.speed_dynamics` (Boltzmann–Hamel: ``M = ∂²T/∂v²``,
``C = C⁰ + G`` with ``Ṁ − 2C`` skew-symmetric, ``φ = Sᵀ ∂V/∂q``); their Jacobians with respect to the state
``x = [q; v]`` are taken entry by entry (the closed forms of the classic route, such as ``∂C_kj/∂q̇_l = c_ljk``,
do not hold once the speed basis turns). The kinematics themselves become two more fields:
``kinematics = S(q) v`` (n), the upper half of ``ẋ``, and ``kinematics_jac`` (n, 2n), the upper rows of the
linearization's ``A``.

Constraints: a holonomic ``c(q) = 0`` has ``A = (∂c/∂q) S``; a velocity constraint is written in the speeds,
``a(q) v = 0``; the bias ``g = −Ȧ v − 2ω A v − ω² c`` differentiates along ``q̇ = S v``.
"""

from __future__ import annotations

from collections.abc import Collection

import sympy

from sls.algebra.calculus import diff
from sls.derive.constraint_terms import constraint_terms, jacobian
from sls.derive.dynamics import Dynamics
from sls.derive.speeds import speed_dynamics
from sls.model import Model
from sls.model.free_flyer import free_flyer_kinematics, quaternion_kinematics
from sls.model.kinematics import Kinematics
from sls.model.kinematics import kinematics as checked_kinematics

ZERO = sympy.Integer(0)


def speed_kinematics(model: Model) -> Kinematics:
    """The :class:`~sls.model.kinematics.Kinematics` of a model with generalized speeds: a robot's quaternion
    free-flyer from its closed forms (:func:`~sls.model.free_flyer.free_flyer_kinematics`; several free joints
    and ball joints: :func:`~sls.model.free_flyer.quaternion_kinematics`), any other checked
    symbolically (:func:`sls.model.kinematics.kinematics`)."""
    assert model.kinematics is not None, "speed_kinematics needs a model with kinematics"
    if model.tree is not None and model.tree.single_free:
        return free_flyer_kinematics(model.q, model.dq)
    if model.tree is not None and model.tree.quaternions:  # several free joints, ball joints
        return quaternion_kinematics(model.q, model.dq, model.tree.slots)
    return checked_kinematics(model.kinematics, model.q, model.dq)


def derive_with_speeds(model: Model, simplify: bool = False, wanted: Collection[str] | None = None) -> Dynamics:
    """Every term of :class:`~sls.derive.dynamics.Dynamics` for a model with generalized speeds.

    Shapes as for the classic route with ``n = n_q = n_v``: the speeds take the place of the rates
    (``dq`` of the model), ``x = [q; v]``. ``wanted`` is accepted for the same signature as the other routes;
    every field is built (models with speeds are small: the expanded route).
    """
    x = model.state
    kin = speed_kinematics(model)
    terms = speed_dynamics(model.T, model.V, kin, simplify)
    M, C, h, phi = terms.mass_matrix, terms.coriolis, terms.coriolis_force, terms.potential_gradient
    M_jac = tuple(tuple(jacobian(row, x) for row in M))
    C_jac = tuple(tuple(jacobian(row, x) for row in C))
    B = tuple(tuple(diff(force, u) for u in model.inputs) for force in model.forces)
    return Dynamics(
        **constraint_terms(model, kin.rates, kin.S),
        model=model,
        mass_matrix=M,
        mass_matrix_jac=M_jac,
        christoffel=terms.christoffel,
        coriolis=C,
        coriolis_jac=C_jac,
        coriolis_force=h,
        coriolis_force_jac=jacobian(h, x),
        potential_gradient=phi,
        potential_gradient_jac=jacobian(phi, x),
        friction=model.fric,
        friction_jac=jacobian(model.fric, x),
        input_matrix=B,
        input_matrix_jac=tuple(tuple(tuple(diff(b, xl) if b != 0 else ZERO for xl in x) for b in row) for row in B),
        kinematics=kin.rates,
        kinematics_jac=jacobian(kin.rates, x),
    )
