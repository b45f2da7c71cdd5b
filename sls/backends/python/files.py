"""The Python target's files: one module per generated function, ``__init__`` and the runtime modules.

:func:`render_package` renders ``templates/python`` with the printed code
(:mod:`.code`) and copies the runtime sources (``runtime/_runtime.py``, and
``runtime/_constrained.py`` for a constrained model, ...) after the package's
header, the quaternion runtimes with their shared helpers spliced in
(:func:`spliced`); :func:`check_names` refuses user names the generated code
uses itself.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2

from sls import functions
from sls.backends import render
from sls.backends.python.code import Kernel, Output, SolverCode

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model


def _shape_text(shape: tuple) -> str:
    """A registry shape as a format string (``("n", "x")`` → ``"({n}, {nx})"``, see :func:`sls.functions.sizes`)."""
    items = [str(s) if isinstance(s, int) else "{" + {"2n": "n2", "x": "nx", "q": "nq"}.get(s, s) + "}" for s in shape]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


#: The array-valued functions of x rendered from ``function.py.j2``:
#: name → (summary, returned shape as text given n, m).
FUNCTIONS = {
    f.name: (f.summary, _shape_text(f.outputs[0][1])) for f in functions.FUNCTIONS if not f.solve and not f.uses
}
#: Modules with a solve, rendered from their own templates.
SOLVERS = tuple(f.name for f in functions.FUNCTIONS if f.solve)
#: Modules built on other generated modules (their own template, no kernel of their own).
WRAPPERS = tuple(f.name for f in functions.FUNCTIONS if f.uses)
#: Every module of a generated package (the full set), in the order of ``__init__``.
MODULES = functions.NAMES
#: A constrained model's extra kernel functions of x (k constraints, holonomic rows first).
CONSTRAINT_FUNCTIONS = {f.name: (f.summary, _shape_text(f.outputs[0][1])) for f in functions.CONSTRAINT_FUNCTIONS}
#: A model with generalized speeds' array functions (the kinematics and its Jacobian).
SPEED_FUNCTIONS = {f.name: (f.summary, _shape_text(f.outputs[0][1])) for f in functions.SPEED_FUNCTIONS}
FRAME_FUNCTIONS = {f.name: (f.summary, _shape_text(f.outputs[0][1])) for f in functions.FRAME_FUNCTIONS}
#: The regressor of a robot whose inertial parameters are parameters.
REGRESSOR = {functions.REGRESSOR.name: (functions.REGRESSOR.summary, _shape_text(functions.REGRESSOR.outputs[0][1]))}
#: The directional derivatives of a model whose Jacobian modules are written by directions.
DIRECTIONAL_FUNCTIONS = {f.name: (f.summary, _shape_text(f.outputs[0][1])) for f in functions.DIRECTIONAL_FUNCTIONS}
#: A constrained model's solves, rendered from ``constrained.py.j2`` on the runtime ``_constrained``.
CONSTRAINED_SOLVERS = tuple(f.name for f in functions.FUNCTIONS + (functions.MULTIPLIERS,) if f.solve or f.numeric)
#: The runtime modules: they hold no generated function (the name check skips them).
RUNTIME = ("_runtime.py", "_constrained.py", "_chart.py")


def modules(model: Model) -> tuple:
    """Every module of ``model``'s generated package, in the order of ``__init__``."""
    return functions.names(model)


#: The runtime source of the helpers shared by the quaternion runtimes (``_free_flyer.py``, ``_quaternions.py``),
#: spliced into them when they are copied (:func:`spliced`).
HELPERS = "_quaternion_math.py"
#: The start of a runtime source's line that stands for helpers of :data:`HELPERS`, followed by their names.
SPLICE_MARK = f"# spliced from {HELPERS} when copied: "


def helper_functions(path: Path) -> dict[str, str]:
    """The functions of the helpers' source ``path``: name → its lines from ``def`` to the end of its body."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    nodes = ast.parse("".join(lines), filename=str(path)).body
    return {
        node.name: "".join(lines[node.lineno - 1 : node.end_lineno])
        for node in nodes
        if isinstance(node, ast.FunctionDef)
    }


def spliced(code: str, helpers: dict[str, str]) -> str:
    """A runtime source's ``code`` made standalone: its import of the helpers' module dropped with the blank line
    before it, and each line ``# spliced from _quaternion_math.py when copied: a, b`` replaced by the functions
    ``a`` and ``b`` of ``helpers`` (:func:`helper_functions`), two blank lines apart, in that order."""
    lines = code.splitlines(keepends=True)
    for node in ast.parse(code).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module == Path(HELPERS).stem:
            start = node.lineno - 1
            start -= start > 0 and not lines[start - 1].strip()  # the blank line that set the import apart
            del lines[start : node.end_lineno]
            break
    for number, line in enumerate(lines):
        if line.startswith(SPLICE_MARK):
            names = line.removeprefix(SPLICE_MARK).split(",")
            lines[number] = "\n\n".join(helpers[name.strip()] for name in names)
    return "".join(lines)


def runtime_text(path: Path, values: dict) -> str:
    """A runtime source as copied into a package: its code (:func:`sls.backends.render.runtime_source`) with the
    helpers it takes from :data:`HELPERS` (next to it) spliced in (:func:`spliced`), and each line
    ``NAME ... # ..., set when copied`` replaced by ``NAME = values[NAME]``."""
    code = render.runtime_source(path)
    if SPLICE_MARK in code:
        code = spliced(code, helper_functions(path.parent / HELPERS))
    lines = []
    for line in code.splitlines(keepends=True):
        name = line.split("=")[0].split(":")[0].strip()
        if name in values and line.rstrip().endswith("set when copied"):
            line = f"{name} = {values[name]}\n"
        lines.append(line)
    return "".join(lines)


def quaternion_source(ctx: dict) -> str:
    """The runtime source copied as a package's ``_free_flyer.py``: ``_free_flyer.py`` for one free-flyer first,
    ``_quaternions.py`` for any other layout of quaternion joints (``ctx["quaternions"]``, its tables)."""
    return "_free_flyer.py" if ctx["quaternions"] is None else "_quaternions.py"


def names_tuple(names: list) -> str:
    """``("a", "b")`` / ``("a",)`` / ``()``: a tuple literal of names."""
    return "(" + ", ".join(f'"{n}"' for n in names) + ("," if len(names) == 1 else "") + ")"


@dataclass(frozen=True)
class Extra:
    """An argument besides ``x`` (``tau_fun``'s ``qddot``): its ``name``, ``size``, ``doc`` line, the
    ``symbols`` its entries bind and ``var``, the local holding it (``_extra``, then ``_extra1``, ...)."""

    name: str
    size: int
    doc: str
    symbols: list[str]
    var: str = "_extra"


@dataclass(frozen=True)
class PythonSpec:
    """What ``function.py.j2`` needs to know about one array function."""

    name: str
    summary: str
    args: str
    returns: str
    extra: Extra | None = None
    #: Every argument besides ``x`` (``extra`` first; ``constrained_residual_jac_fun`` has three).
    extras: tuple[Extra, ...] = ()


def function_spec(name: str, model: Model) -> PythonSpec:
    """What ``function.py.j2`` needs to know about the function ``name``."""
    summary, shape = {
        **FUNCTIONS,
        **CONSTRAINT_FUNCTIONS,
        **SPEED_FUNCTIONS,
        **FRAME_FUNCTIONS,
        **DIRECTIONAL_FUNCTIONS,
        **REGRESSOR,
    }[name]
    function = functions.BY_NAME[name]
    frames = len(model.frames)
    shape = shape.format(
        n=model.n,
        n2=2 * model.n,
        nx=len(model.state),
        nq=model.n_q,
        m=model.m,
        k=model.k,
        nk=model.n + model.k,
        f=frames,
        **({"p": functions.model_sizes(("p",), model)[0]} if name == functions.REGRESSOR.name else {}),
    )
    batch_shape = "(...)" if shape == "()" else "(..., " + shape[1:].rstrip(",)").rstrip(",") + ")"
    returns = (
        "float, or ndarray of shape (...) for a batch" if shape == "()" else f"ndarray, shape {shape} or {batch_shape}"
    )
    if len(function.arguments) == 1:
        return PythonSpec(name, summary, "x", returns)
    from sls.lowering.arguments import argument_names

    extras = tuple(
        Extra(
            argument.name,
            functions.model_sizes((argument.size,), model)[0],
            argument.doc,
            argument_names(model)[argument.name],
            "_extra" + (str(i) if i else ""),
        )
        for i, argument in enumerate(function.arguments[1:])  # tau_fun's qddot, a directional function's dx
    )
    args = ", ".join(a.name for a in function.arguments)
    return PythonSpec(name, summary, args, returns, extras[0], extras)


def render_package(
    env: jinja2.Environment,
    model: Model,
    kernels: dict,
    simplify: bool = False,
    method: str = "expanded",
    runtime: dict | None = None,
) -> dict[str, str]:
    """Render every file of the generated package: file name → source text (``runtime``: the runtime
    sources, name → path)."""
    ctx = render.context(model, simplify, method)
    files = _render_files(env, ctx, model, kernels, runtime or {})
    # The name check reads the templates' own code: kernel lines bind only names
    # starting with '_' (which user names never do), so a skeleton render with
    # empty kernels is checked instead of parsing the (possibly huge) real one.
    check_names(model, _render_files(env, ctx, model, _skeleton(kernels), {}))
    return files


@dataclass(frozen=True)
class Rendered:
    """A function's module rendered as soon as its code was built (see :func:`finisher`): its ``text`` and the
    ``skeleton`` of its code for :func:`check_names`."""

    text: str
    skeleton: Kernel | SolverCode


def finisher(env: jinja2.Environment, model: Model, simplify: bool, method: str) -> Callable[[str, object], object]:
    """Render each function's module as soon as its code is built and keep only the text (and a skeleton): a
    100-joint robot's printed Jacobians are then freed one module at a time instead of all held until render."""
    ctx = render.context(model, simplify, method)
    chosen = {function.name: function for function in functions.for_model(model)}

    def finish(name: str, code: object) -> object:
        if not isinstance(code, (Kernel, SolverCode)):
            return code
        text = render.tidy(_render_function(env, ctx, model, chosen[name], code))
        return Rendered(text, _skeleton_of(code))

    return finish


def _skeleton(kernels: dict) -> dict:
    """``kernels`` without their generated lines (and with one zero entry per output), for :func:`check_names`."""
    return {name: None if code is None else _skeleton_of(code) for name, code in kernels.items()}


def _skeleton_of(code: object) -> Kernel | SolverCode:
    """One function's code without its generated lines (and with one zero entry per output)."""
    if isinstance(code, Rendered):
        return code.skeleton
    if isinstance(code, SolverCode):
        return SolverCode(
            scalar_lines=["pass"],
            batch_lines=["return None"],
            unrolled=code.unrolled,
            uses_math=code.uses_math,
            raises=code.raises,
            packed=code.packed,
            constants=code.constants,
            symbolic=code.symbolic,
        )
    if not isinstance(code, Kernel):
        raise TypeError(f"the Python target has no code of type {type(code).__name__}")
    # one entry per output, the same number of axes: the names the code binds do not depend on the sizes, and
    # a 101 x 101 x 202 literal of zeros would cost gigabytes to parse
    outputs = {
        key: Output(name=key, shape=(1,) * len(out.shape), scalar=["0.0"], batch=["0.0"], zero=[True])
        for key, out in code.outputs.items()
    }
    return Kernel(
        scalar_lines=[], batch_lines=[], outputs=outputs, uses_math=code.uses_math, scalar_path=code.scalar_path
    )


def _render_function(
    env: jinja2.Environment, ctx: dict, model: Model, function: functions.Function, code: object
) -> str:
    """The module of one generated ``function`` (its code ``code``: a kernel, a solver's, or ``None``)."""
    name = function.name
    if function.numeric:
        return env.get_template("constrained.py.j2").render(ctx=ctx, name=name)
    if function.uses in functions.DIRECTIONAL_FUNCTION_NAMES:
        directions = functions.directions_used(function, model)
        rows, columns = functions.model_sizes(function.outputs[0][1][:2], model)
        return env.get_template("jacobian_by_directions.py.j2").render(
            ctx=ctx, fn=function, directions=directions, rows=rows, columns=columns
        )
    if function.uses:
        return env.get_template(f"{name}.py.j2").render(ctx=ctx)
    if function.solve:
        return env.get_template(f"{name}.py.j2").render(ctx=ctx, code=code)
    (out,) = code.outputs.values()  # type: ignore[attr-defined]
    return env.get_template("function.py.j2").render(ctx=ctx, fn=function_spec(name, model), kernel=code, out=out)


def _render_files(env: jinja2.Environment, ctx: dict, model: Model, kernels: dict, runtime: dict) -> dict[str, str]:
    """Render the templates with ``kernels`` (or the modules already :class:`Rendered`): file name → source text
    (the runtime modules only when ``runtime`` names their sources)."""
    files = {}
    chosen = functions.for_model(model)
    for function in chosen:
        code = kernels.get(function.name)
        if isinstance(code, Rendered):
            files[f"{function.name}.py"] = code.text
        else:
            files[f"{function.name}.py"] = _render_function(env, ctx, model, function, code)
    copies: dict[str, dict[str, object]] = {
        "_runtime.py": {"STATE_NAMES": names_tuple(ctx["state"]), "INPUT_NAMES": names_tuple(ctx["inputs"])}
    }
    if any(f.numeric for f in chosen):
        copies["_constrained.py"] = {
            "N": ctx["n"],
            "N_Q": ctx["n_q"],
            "K": ctx["k"],
            "M_INPUTS": ctx["m"],
            "SPEEDS": ctx["kinematics"],
            "CONTACTS": len(ctx["contacts"]),
        }
    if ctx["free_flyer"]:
        copies["_free_flyer.py"] = {"N_Q": ctx["n_q"], "N_V": ctx["n"], **(ctx["quaternions"] or {})}
    if ctx["chart_pitch"]:
        pitch = ", ".join(f'({p["index"]}, "{p["name"]}")' for p in ctx["chart_pitch"])
        copies["_chart.py"] = {"PITCH": f"({pitch},)", "MARGIN": ctx["chart_margin"]}
    for name, values in copies.items():
        source = quaternion_source(ctx) if name == "_free_flyer.py" else name
        text = runtime_text(runtime[source], values) if source in runtime else ""
        files[name] = env.get_template(f"{name}.j2").render(ctx=ctx, runtime=text)
    files["__init__.py"] = env.get_template("__init__.py.j2").render(ctx=ctx, modules=modules(model))
    return {name: render.tidy(text) for name, text in sorted(files.items())}


def check_names(model: Model, files: dict[str, str]) -> None:
    """Refuse a model whose state/input/parameter names the generated code also uses.

    The generated functions keep the user's names: states and inputs are
    unpacked into locals of those names and parameters are keyword arguments.
    A user name equal to one of the code's own locals or imports (``M``,
    ``rhs``, ``out``, ``as_state``, ...) would be shadowed and give wrong
    numbers, so it is refused here, before anything is written. The check
    reads the rendered code, so it follows the templates automatically.
    """
    user = {s.name for s in model.state} | {s.name for s in model.inputs} | set(model.params)
    for filename, text in files.items():
        if filename == "__init__.py" or filename in RUNTIME:
            continue
        tree = ast.parse(text, filename=filename)
        taken = _module_names(tree)
        public = Path(filename).stem
        for function in (node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == public):
            # Positional arguments are consumed before the state is unpacked, so
            # a state or input may reuse their names; only other locals clash.
            taken |= _local_names(function, user)
        clash = sorted(user & taken)
        if clash:
            from sls.errors import ModelError

            raise ModelError(
                f"the name '{clash[0]}' is also a variable of the generated code ({filename}); "
                f"rename that state, input or parameter (e.g. '{clash[0]}_')"
            )


def _module_names(tree: ast.Module) -> set:
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def _local_names(function: ast.FunctionDef, user: set) -> set:
    """Names a function binds itself, except the unpacking of states/inputs (all-user-name tuples)."""
    unpacked = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple):
            elements = node.targets[0].elts
            if all(isinstance(e, ast.Name) and (e.id in user or e.id.startswith("_")) for e in elements):
                unpacked |= {id(e) for e in elements}
    names = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in unpacked:
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and node is not function:
            names.add(node.name)
    return names
