"""The JAX target's files: one module per generated function, ``__init__`` and ``_runtime``.

:func:`render_package` renders ``templates/jax`` with the printed code (:mod:`.code`) and copies the runtime
sources ``runtime/*.py`` after the package's header (``_constrained.py`` for a constrained model, ``_free_flyer.py``
for a quaternion base, with the model's sizes); the user's names are checked against the generated
code's own as for the numpy target (:func:`sls.backends.python.files.check_names`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import jinja2

from sls import functions
from sls.backends import render
from sls.backends.jax.code import JaxKernel, JaxOutput, JaxSolver
from sls.backends.python.files import check_names, function_spec, runtime_text

if TYPE_CHECKING:  # a type only: no import at run time
    from pathlib import Path

    from sls.model import Model


def render_package(
    env: jinja2.Environment, model: Model, code: dict, simplify: bool, method: str, runtime: dict[str, Path]
) -> dict[str, str]:
    """Every file of the generated JAX package: file name → source text (``runtime``: name → path of the
    runtime sources)."""
    ctx = render.context(model, simplify, method)
    files = _render_files(env, ctx, model, code)
    terms = terms_kernel(model, code)
    if terms is not None:  # a constrained model: the fused terms its solves read (JaxBackend.builders)
        files["_terms.py"] = render.tidy(env.get_template("terms.py.j2").render(ctx=ctx, kernel=terms))
    check_names(model, _render_files(env, ctx, model, _skeleton(code)))  # the templates' names, not the kernels'
    for name, values in runtime_copies(ctx, model).items():
        text = runtime_text(runtime[name], values)
        files[name] = render.tidy(env.get_template("_runtime.py.j2").render(ctx=ctx, runtime=text, name=name))
    return dict(sorted(files.items()))


def terms_kernel(model: Model, code: dict) -> JaxKernel | None:
    """The fused terms of a constrained model's solves (:func:`sls.lowering.terms.lower_terms`), built with its first
    solved function's code (``JaxBackend.builders``), or ``None``."""
    numeric = [f.name for f in functions.for_model(model) if f.numeric]
    return code.get(numeric[0]) if numeric else None


def runtime_copies(ctx: dict, model: Model) -> dict[str, dict[str, object]]:
    """The runtime modules the package holds, each with the values its ``... set when copied`` lines take:
    ``_runtime.py`` always, ``_constrained.py`` for a constrained model, ``_free_flyer.py`` for a quaternion base."""
    copies: dict[str, dict[str, object]] = {"_runtime.py": {}}
    if any(f.numeric for f in functions.for_model(model)):
        copies["_constrained.py"] = {
            "N": ctx["n"],
            "N_Q": ctx["n_q"],
            "K": ctx["k"],
            "M_INPUTS": ctx["m"],
            "SPEEDS": ctx["kinematics"],
            "FREE_FLYER": ctx["free_flyer"],
            "CONTACT_ROWS": repr(tuple(tuple(ctx["k"] if i is None else i for i in r) for r in ctx["contact_rows"])),
        }
    if ctx["free_flyer"]:
        copies["_free_flyer.py"] = {"N_Q": ctx["n_q"], "N_V": ctx["n"]}
    return copies


def _render_files(env: jinja2.Environment, ctx: dict, model: Model, code: dict) -> dict[str, str]:
    """The function modules and ``__init__.py`` rendered with ``code`` (function name → its code)."""
    files = {}
    for function in functions.for_model(model):
        name = function.name
        if function.numeric:  # a constrained model's solves: the runtime's structured solve on the other bodies
            text = env.get_template("constrained.py.j2").render(ctx=ctx, fn=function)
        elif function.uses:
            text = env.get_template(f"{name}.py.j2").render(ctx=ctx)
        elif function.solve:
            text = env.get_template(f"{name}.py.j2").render(ctx=ctx, code=code[name])
        else:
            (out,) = code[name].outputs.values()
            text = env.get_template("function.py.j2").render(
                ctx=ctx, fn=function_spec(name, model), kernel=code[name], out=out
            )
        files[f"{name}.py"] = render.tidy(text)
    modules = functions.names(model)
    files["__init__.py"] = render.tidy(env.get_template("__init__.py.j2").render(ctx=ctx, modules=modules))
    return files


def _skeleton(code: dict) -> dict:
    """``code`` without its generated lines, for the name check."""
    result: dict = {}
    for name, item in code.items():
        if isinstance(item, JaxSolver):
            arrays, entries = dict.fromkeys(item.arrays, "_runtime.array([0.0])"), dict.fromkeys(item.entries, "[0.0]")
            result[name] = JaxSolver([], arrays, item.accelerations, entries=entries)
        elif isinstance(item, JaxKernel):
            outputs = {key: JaxOutput(key, out.shape, "0.0") for key, out in item.outputs.items()}
            result[name] = JaxKernel(lines=[], outputs=outputs)
        else:
            result[name] = item
    return result
