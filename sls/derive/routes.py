"""Choosing a derivation route and running it: :data:`METHODS`, :func:`choose_method`, :func:`derive`.

The routes: :mod:`sls.derive.expanded` (flat sympy expressions), :mod:`sls.derive.graph_route` (derivatives
on a shared expression graph) and :mod:`sls.derive.tree_route` (a robot's recursive dynamics on the graph).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

import sympy

from sls.algebra.graph import Graph, Unsupported
from sls.derive.dynamics import Dynamics
from sls.derive.expanded import derive_expanded
from sls.derive.graph_route import derive_on_graph
from sls.derive.named_arrays import (
    ARRAY_NAMES,
    KKT_JAC_NEEDS,
    SPEED_ARRAYS,
    check_wanted,
    frame_array_names,
    function_arrays,
    regressor_array_names,
)
from sls.derive.speeds_route import derive_with_speeds
from sls.derive.tree_route import derive_on_tree
from sls.errors import ModelError
from sls.model import Model

#: Derivation routes: ``auto`` picks ``tree`` for robot models, else ``expanded`` or ``graph`` by model size.
METHODS = ("auto", "expanded", "graph", "tree")

#: ``auto`` takes the graph route when expanding T would give more terms than this.
EXPANSION_LIMIT = 1000


def choose_method(model: Model, simplify: bool = False) -> str:
    """``"tree"`` for robot models, ``"expanded"`` for models whose T expands to few terms (or with
    ``simplify``), else ``"graph"``.

    A robot model (``model.tree`` set, e.g. from a URDF file) takes the tree
    route (:func:`~sls.derive.tree_route.derive_on_tree`): its recursions stay small where the
    energies of 3-D arms do not.
    The expanded route writes every entry as one flat expression: the most
    readable code, and for small models the fastest. Its cost grows with the
    number of terms of the expanded ``T`` (n⁵ on a relative-angle chain), so
    beyond :data:`EXPANSION_LIMIT` terms (estimated on the graph without
    expanding: a product multiplies term counts, a sum adds them) the graph
    route is taken. Models that the graph cannot hold (e.g. ``Piecewise``)
    stay on the expanded route.
    """
    if getattr(model, "tree", None) is not None and not simplify:
        return "tree"
    if simplify or getattr(model, "kinematics", None) is not None:
        return "expanded"
    graph = Graph()
    try:
        T = graph.from_sympy(model.T)
    except Unsupported:
        return "expanded"
    return "graph" if graph.term_estimate(T) > EXPANSION_LIMIT else "expanded"


def derive(
    model: Model, simplify: bool = False, method: str = "auto", wanted: Collection[str] | None = None
) -> Dynamics:
    """Derive the terms of :class:`Dynamics` for ``model``.

    ``method`` picks the route (:data:`METHODS`): ``"expanded"`` (entries as
    flat expressions, the readable form for small models), ``"graph"``
    (derivatives on a shared expression graph, :func:`~sls.derive.graph_route.derive_on_graph`, for
    large models), ``"tree"`` (a robot model's recursive dynamics on the
    graph, :func:`~sls.derive.tree_route.derive_on_tree`; needs ``model.tree``) or ``"auto"``
    (:func:`choose_method`). ``simplify`` applies ``sympy.trigsimp`` to ``M``
    and ``φ`` before anything is differentiated further (off by default: it
    is exact but can be slow for large models); it implies the expanded route.

    ``wanted`` names the arrays of :func:`~sls.derive.named_arrays.function_arrays` to build (``None``:
    all); only they and what they need are derived (e.g. ``{"M", "rhs",
    "residual_jac", "B_u", "tau"}`` never builds the Christoffel symbols or
    ``∂C/∂x``). ``arrays`` of the result holds exactly those names; fields of
    :class:`Dynamics` not built are ``None`` (``mass_matrix`` is always built:
    validation checks it).
    """
    if method not in METHODS:
        raise ValueError(f"derivation method must be one of {', '.join(METHODS)}, got {method!r}")
    wanted = check_wanted(wanted)
    if method == "auto":
        method = choose_method(model, simplify)
    if getattr(model, "frames", ()) and method != "tree" and not getattr(model, "frame_points", ()):
        raise ModelError(f"frames are generated on the tree route of a robot (a URDF file); got method={method!r}")
    frames = frame_array_names(model) if method != "tree" else ()
    if getattr(model, "kinematics", None) is not None and method != "tree":
        if method != "expanded":
            raise ModelError(
                "a model with generalized speeds (kinematics) is derived on the expanded route (or the tree route, "
                f"for a robot); got method={method!r}"
            )
        speeds = with_point_frames(derive_with_speeds(model, simplify, flat_needs(wanted)), frames, wanted)
        known = ARRAY_NAMES + SPEED_ARRAYS + frames + regressor_array_names(model)
        names = None if wanted is None else [k for k in known if k in wanted]
        return replace(speeds, arrays=function_arrays(speeds, names))
    if method == "tree":
        if getattr(model, "tree", None) is None:
            raise ValueError("the tree route needs a robot model (model.tree, e.g. from a URDF file)")
        return derive_on_tree(model, wanted)
    if method == "graph":
        try:
            return derive_on_graph(model, wanted)
        except Unsupported as exc:
            pieces = [model.T, model.V, *model.fric, *model.forces, *model.constraints, *model.velocity_constraints]
            what = "Piecewise" if any(e.has(sympy.Piecewise) for e in pieces) else str(exc)
            raise ModelError(
                f"the graph route cannot hold {what} (given through the Python API); "
                "derive this model with method='expanded' (or 'auto')"
            ) from None
    dynamics = with_point_frames(derive_expanded(model, simplify, flat_needs(wanted)), frames, wanted)
    names = None if wanted is None else [k for k in ARRAY_NAMES + frames + regressor_array_names(model) if k in wanted]
    return replace(dynamics, arrays=function_arrays(dynamics, names))


def flat_needs(wanted: set[str] | None) -> set[str] | None:
    """``wanted`` with what the flat routes combine ``kkt_jac`` from (:data:`KKT_JAC_NEEDS`) when it is wanted."""
    if wanted is not None and "regressor" in wanted:  # ∂τ/∂π: from τ
        wanted = wanted | {"tau"}
    if wanted is None or "kkt_jac" not in wanted:
        return wanted
    return wanted | set(KKT_JAC_NEEDS)


def with_point_frames(dynamics: Dynamics, frames: tuple, wanted: Collection[str] | None) -> Dynamics:
    """``dynamics`` of a flat route (sympy expressions) with the frame arrays of a model given by its energies
    (:func:`~sls.derive.point_frames.point_frame_arrays`) when it names frames and they are ``wanted``."""
    if not frames or (wanted is not None and not set(frames) & set(wanted)):
        return dynamics
    from sls.derive.point_frames import point_frame_arrays

    return replace(dynamics, frame_arrays=point_frame_arrays(dynamics.model))
