"""The CasADi target's files: one module per generated function (its ``build()``), ``_runtime`` and ``__init__``.

:func:`render_package` renders ``templates/casadi`` with the functions' :class:`~.code.Body`\\ s; a wrapper
(``xdot_fun``) is built from the function it uses (``build(qddot_fun)``), so ``__init__`` lists each function with
the functions its builder takes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import jinja2

from sls import functions
from sls.backends import render

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model


def identifier(name: str) -> str:
    """``name`` as a Python/C identifier (the helpers' default model name: acados names its C code after it)."""
    text = "".join(char if char.isalnum() or char == "_" else "_" for char in name) or "model"
    return f"model_{text}" if text[0].isdigit() else text


#: What a constrained model's structured solve reads (``templates/casadi/constrained.py.j2``, in this order): the arrays
#: M, A (constraint Jacobian), bias (g), B_u and tau, each from the package's function returning it.
KKT_ARRAYS = ("M", "A", "bias", "B_u", "tau")
#: What its derivatives read besides (``linearized_model``, ``contact_forces_jac_fun``: the numpy target's formula,
#: ``_runtime.constrained_derivatives``): the constrained residual's Jacobian.
JACOBIAN_ARRAYS = ("kkt_jac",)


def constrained_uses(function: functions.Function, chosen: tuple) -> tuple:
    """The functions the builder of a constrained model's run-time solve takes: those returning the arrays of
    :data:`KKT_ARRAYS` (and, for the derivatives, of :data:`JACOBIAN_ARRAYS`, then ``qdot_jac_fun`` for a model
    with generalized speeds: ``function.calls``)."""
    returning = {f.outputs[0][0]: f.name for f in chosen if not f.numeric and not f.uses}
    if functions.differentiates(function):
        return tuple(returning[array] for array in KKT_ARRAYS + JACOBIAN_ARRAYS) + tuple(function.calls)
    return tuple(returning[array] for array in KKT_ARRAYS)


def render_package(
    env: jinja2.Environment, model: Model, code: dict, simplify: bool = False, method: str = "expanded"
) -> dict[str, str]:
    """Every file of the package: file name → source text (``code``: name → :class:`~.code.Body`, ``None`` for
    a wrapper)."""
    ctx = render.context(model, simplify, method)
    files = {}
    builders: list[tuple[str, tuple[str, ...]]] = []
    chosen = functions.for_model(model)
    for function in chosen:
        name = function.name
        if function.numeric:
            uses = constrained_uses(function, chosen)
            files[f"{name}.py"] = env.get_template("constrained.py.j2").render(ctx=ctx, fn=function, uses=uses)
            builders.append((name, uses))
            continue
        if function.uses:
            files[f"{name}.py"] = env.get_template(f"{name}.py.j2").render(ctx=ctx)
            builders.append((name, (function.uses, *function.calls)))
            continue
        files[f"{name}.py"] = env.get_template("function.py.j2").render(ctx=ctx, fn=function, body=code[name])
        builders.append((name, tuple(code[name].uses)))
    files["_runtime.py"] = env.get_template("_runtime.py.j2").render(ctx=ctx, name=identifier(model.name))
    files["__init__.py"] = env.get_template("__init__.py.j2").render(
        ctx=ctx, modules=[name for name, _ in builders], builders=builders
    )
    return {name: render.tidy(text) for name, text in sorted(files.items())}
