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


#: A constrained model's solves (built from the package's kernels, see ``templates/casadi/constrained.py.j2``):
#: name → the functions their builders take.
CONSTRAINED = {
    "qddot_fun": ("M_fun", "constraint_jac_fun", "constraint_bias_fun", "input_matrix_fun", "tau_fun"),
    "multipliers_fun": ("M_fun", "constraint_jac_fun", "constraint_bias_fun", "input_matrix_fun", "tau_fun"),
    "linearized_model": ("qddot_fun",),
}


def render_package(
    env: jinja2.Environment, model: Model, code: dict, simplify: bool = False, method: str = "expanded"
) -> dict[str, str]:
    """Every file of the package: file name → source text (``code``: name → :class:`~.code.Body`, ``None`` for
    a wrapper)."""
    ctx = render.context(model, simplify, method)
    files = {}
    builders: list[tuple[str, tuple[str, ...]]] = []
    for function in functions.for_model(model):
        name = function.name
        if function.numeric:
            files[f"{name}.py"] = env.get_template("constrained.py.j2").render(
                ctx=ctx, fn=function, uses=CONSTRAINED[name]
            )
            builders.append((name, CONSTRAINED[name]))
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
