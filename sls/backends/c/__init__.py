"""The C target: standalone C99 for controllers, and a Python package backed by it.

``sls generate MODEL --target c --out DIR`` writes

* ``DIR/c/<name>.h`` and ``DIR/c/<name>.c`` — C99, libm only, no
  allocation, no mutable globals, re-entrant: one function
  ``<name>_<function>`` per generated function (:mod:`sls.functions`) and
  ``_batch`` loops for ``qddot_fun`` and ``linearized_model``;
* ``DIR/_native.c`` — a small CPython extension (stable ABI on Python ≥ 3.11)
  that parses arguments and calls the C functions, compiled at generation
  time with ``$CC`` (else ``cc``) into ``DIR/_native.<suffix>``;
* ``DIR/__init__.py``, ``DIR/_runtime.py`` (the Python target's argument
  checks and errors) and ``DIR/_dispatch.py`` (batches, broadcasting and
  errors, through the compiled batch loop): the Python target's API; for a
  robot with a quaternion base also the Python target's ``DIR/_free_flyer.py``
  (its ``linearized_model`` in the tangent space is C: :mod:`sls.backends.c.tangent`), for a
  yaw-pitch-roll base its ``DIR/_chart.py`` (the compiled calls refuse states near the chart's
  singularity as the Python target's do: :func:`chart_guarded`);
* for a constrained model ``DIR/c/<name>_constrained.c``: its solves in C
  (:mod:`sls.backends.c.constrained`, ``templates/c/constrained.c.j2``).

This module writes C: :meth:`CBackend.render` returns the files and, beside them, the library's translation units
(:class:`~sls.backends.c.build.RenderedFiles`); :mod:`sls.backends.c.build` compiles them (the compiler, its flags,
the parallel build of ``_native.<suffix>``).

Printing: the expanded route through :class:`~sls.backends.c.printer.CPrinter` (sympy's C99 printer
with exact float literals, no integer division, products for small powers),
the graph route through :class:`~sls.lowering.graph_print.GraphPrinter` with a C
:class:`~sls.lowering.graph_print.Style`. Every function binds the states, inputs and
parameters it uses to ``const double`` locals named as in the model; names
that C, libm or the generated code already use (``y0``, ``double``, ``x``,
…, :func:`~sls.backends.c.names.reserved`) get a trailing ``_``, listed in the files' headers.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from sls import functions
from sls.backends.base import Backend
from sls.backends.c import build
from sls.backends.c.build import LIBRARY_MARK, is_library_name, limited_api, native_file_name
from sls.backends.c.names import HEADER_MARK, NATIVE, c_identifier, renames
from sls.errors import ModelError

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model

#: The library's translation units and their optimization, compiled in parallel with the extension
#: (``-O3``: its lane kernels vectorize), each unit holding the functions :func:`unit_of` assigns it.
#: Measured on the 7-DOF iiwa (docs/c-target.md, "Compile time"): ``-O2`` makes the straight-line code
#: no faster than ``-O1`` at about 1.6 times its compile time; the Jacobians (``C_jac_fun`` alone is
#: half the code of a robot arm) compile at ``-O0``, 4 times faster than ``-O2``, and run about half as fast.
#: ``linearized_model`` has a unit of its own: with GCC on x86-64 its parts are also built for AVX2 and FMA
#: at ``-O2`` (``<PREFIX>_CLONES`` in ``templates/c/model.c.j2``), the longest compile of the library; so are
#: the parts of a long ``qddot_fun`` (a quarter faster on a humanoid, for a fifth more compile time).
UNITS = {
    "c/_linearize.c": "-O1",  # linearized_model and its batch loop
    "c/_solve.c": "-O1",  # the other solving functions (qddot_fun, xdot_fun) and their batch loops
    "c/_eval.c": "-O1",  # the other functions a controller calls at every step: M_fun, C_fun, tau_fun, phi_fun, ...
    "c/_jac.c": "-O0",  # the Jacobians (M_jac_fun, C_jac_fun, phi_jac_fun, ...): long, rarely called
}
#: A constrained model's two more units: its solves (``c/<name>_constrained.c``) and their fused kernel
#: (``<name>_constrained_terms``, one long function called at every step).
CONSTRAINED_UNITS = {"c/_constrained.c": "-O3", "c/_terms.c": "-O2"}
#: Parts of a long function (:data:`sls.backends.c.body.PART_LINES` statements each) a unit compiles: the
#: further parts go to units of their own (``c/_linearize_1.c``, ``c/_linearize_2.c``, …, same flags), which
#: the compilers build in parallel. G1's ``linearized_model`` (32 parts, about half a second each with its
#: clones) is 4 units, its ``qddot_fun`` 2.
UNIT_PARTS = 8


#: The functions other functions call at every step (a model with generalized speeds: ``xdot_fun`` calls
#: ``qdot_fun``, ``linearized_model`` calls ``qdot_jac_fun``): optimized, even the Jacobians.
CALLED = frozenset(name for names in functions.SPEED_CALLS.values() for name in names)


def unit_of(function: functions.Function) -> str:
    """The translation unit (a key of :data:`UNITS`) compiling a generated function."""
    if function.solve == functions.LINEARIZATION or function.name in functions.CONSTRAINED_DERIVATIVE_NEEDS:
        return "c/_linearize.c"  # a constrained model's linearization calls constrained_residual_jac_fun
    if function.solve or function.uses:
        return "c/_solve.c"
    return "c/_jac.c" if function.jacobian and function.name not in CALLED else "c/_eval.c"


class CBackend(Backend):
    """C99 sources, and a Python package backed by them (compiled here)."""

    name = "c"
    compiles = True
    header_mark = HEADER_MARK
    suffixes = (".c", ".h")
    folders = ("c",)
    provides = "C's libm provides"
    speeds = True
    quaternions = True
    quaternion_joints = True
    unroll_max = None
    #: The package's Python API (``__init__.py``, ``_runtime.py``) is the Python target's: its templates and
    #: runtime sources.
    builds_on = ("python",)

    # -- environment --------------------------------------------------

    def check_environment(self) -> None:
        build.check_compiler()

    def check_model(self, model: Model) -> None:
        super().check_model(model)
        if len(getattr(model, "q", ())) != len(getattr(model, "dq", ())) and not has_free_flyer(model):
            raise ModelError(
                "--target c writes fewer speeds than coordinates only for a quaternion base (a robot's free-flyer): "
                "generate this model with the default --target python"
            )
        tree = getattr(model, "tree", None)
        if tree is not None and tree.quaternions and not tree.single_free and getattr(model, "constrained", False):
            raise ModelError(
                "--target c writes constraints with quaternion joints only for one free-flyer base first: "
                "generate this model with the default --target python"
            )

    # -- files ----------------------------------------------------------

    def file_names(self, model: Model) -> list:
        name = c_identifier(model.name)
        return (
            [
                f"c/{name}.h",
                f"c/{name}.c",
                *([f"c/{name}_constrained.c"] if getattr(model, "constrained", False) else []),
                f"{NATIVE}.c",
                native_file_name(),
                "__init__.py",
                "_runtime.py",
                "_dispatch.py",
            ]
            + (["_free_flyer.py"] if has_free_flyer(model) else [])
            + (["_chart.py"] if chart_guarded(model) else [])
        )

    def owns(self, path: Path) -> bool:
        if is_library_name(path.name):
            try:
                return path.is_file() and LIBRARY_MARK in path.read_bytes()
            except OSError:
                return False
        return super().owns(path)

    def writes(self, name: str) -> bool:
        return super().writes(name) or is_library_name(Path(name).name)

    @staticmethod
    def _names(model: Model) -> tuple:
        prefix = c_identifier(model.name)
        user = [s.name for s in model.state] + [s.name for s in model.inputs] + list(model.params)
        return prefix, renames(user, prefix)

    # -- code -----------------------------------------------------------

    def paths(self, model: Model) -> list:
        from sls.backends.c.printer import c_path

        return [c_path(self._names(model)[1])]

    def kernel(self, function: functions.Function, lowered: list, model: Model) -> Any:
        from sls.backends.c.body import c_function, kernel_body

        return c_function(function.name, kernel_body(lowered[0]))

    def solver(self, function: functions.Function, programs: list, model: Model) -> Any:
        from sls.backends.c.body import c_function, solve_body
        from sls.backends.c.tangent import free_flyer

        prefix, names = self._names(model)
        failure = f"{prefix.upper()}_NOT_POSITIVE_DEFINITE"
        # a quaternion base: A and B in the tangent space, written out; another model with generalized speeds:
        # the upper rows of A from the kinematics' Jacobian (qdot_jac_fun)
        base = free_flyer(model, names)
        rates_jacobian = f"{prefix}_{function.calls[0]}" if function.calls and base is None else ""
        body = solve_body(function.solve, programs[0], model.n, model.m, prefix, rates_jacobian, base)
        return c_function(function.name, body, failure)

    def builders(self, dynamics: Any) -> dict:
        """The base's builders; a constrained model's first solved function (:attr:`~sls.functions.Function.numeric`)
        builds the fused kernel its C solves share (:func:`sls.backends.c.constrained.terms_function`)."""
        result = super().builders(dynamics)
        numeric = [f.name for f in functions.for_model(dynamics.model) if f.numeric]
        if numeric:
            from sls.backends.c.constrained import terms_function

            paths = self.paths(dynamics.model)
            result[numeric[0]] = lambda: terms_function(dynamics, paths)
        return result

    def wrapper(self, function: functions.Function, model: Model) -> Any:
        from sls.backends.c.body import c_function, xdot_body

        if function.uses is None or functions.BY_NAME[function.uses].solve != functions.ACCELERATIONS:
            return None  # only ẋ = [q̇; q̈] is built from another function here
        # a model with generalized speeds: q̇ = S(q) v from qdot_fun
        rates = function.calls[0] if function.calls else ""
        statements = xdot_body(self._names(model)[0], model.n, function.uses, rates, model.n_q)
        return lambda: c_function(function.name, statements)

    def render(self, model: Model, code: dict, simplify: bool, method: str) -> dict:
        from sls.backends import render
        from sls.backends.c.constrained import DEPENDENT, numeric_spec, solve_context, terms_model_function
        from sls.backends.c.lanes import LANES
        from sls.backends.c.spec import c_context, function_spec

        env = self.environment()
        ctx = render.context(model, simplify, method)
        prefix, names = self._names(model)
        ctx = {**ctx, **c_context(model, prefix, names)}
        chosen = functions.for_model(model)
        specs = [
            numeric_spec(f, model) if f.numeric else function_spec(f, model, prefix, names, code[f.name])
            for f in chosen
        ]
        library = [spec for f, spec in zip(chosen, specs) if not f.numeric]  # the functions of c/<name>.c
        solved = [spec for f, spec in zip(chosen, specs) if f.numeric]  # those of c/<name>_constrained.c
        units = {spec.name: unit_of(functions.BY_NAME[spec.name]) for spec in library}
        header = specs
        if solved:  # the fused kernel of the solves, built with the first of them (CBackend.builders)
            kernel = next(code[f.name] for f in chosen if f.numeric and code.get(f.name) is not None)
            terms = function_spec(terms_model_function(model), model, prefix, names, kernel)
            library, header, units[terms.name] = [*library, terms], [*specs, terms], "c/_terms.c"
        guarded = chart_guarded(model, chosen)
        # the Python API: functions of at most two arguments (the C kernel of constrained_residual_jac_fun, whose
        # (x, u, qddot, lam) only the constrained solves pass, is in the header alone)
        api = [spec for spec in specs if len(spec.arguments) <= 2]
        native = {
            "guarded": guarded,
            "native": NATIVE,
            "limited": limited_api(),
            "max_extra": max(model.n, model.m, 1),
            "lanes": LANES,
            "runtime": render.runtime_source(self.runtime_files()["native.c"]).removesuffix("\n"),
        }
        files = {
            f"c/{prefix}.h": env.get_template("model.h.j2").render(ctx=ctx, functions=header),
            f"c/{prefix}.c": env.get_template("model.c.j2").render(ctx=ctx, functions=library),
            f"{NATIVE}.c": env.get_template("native.c.j2").render(ctx=ctx, functions=api, **native),
            "__init__.py": env.get_template("__init__.py.j2").render(
                ctx=ctx, modules=[spec.name for spec in api], native=NATIVE
            ),
            "_dispatch.py": env.get_template("dispatch.py.j2").render(
                ctx=ctx, functions=api, dependent=DEPENDENT, guarded=guarded
            ),
            "_runtime.py": self._python_runtime(env, ctx),
        }
        if ctx["free_flyer"]:
            files["_free_flyer.py"] = self._free_flyer(env, ctx)
        if guarded:
            files["_chart.py"] = self._chart(env, ctx)
        # The library compiles the same functions in units (see UNITS), in parallel; empty units are left out.
        held = {unit: [f for f in library if units[f.name] == unit] for unit in {**UNITS, **CONSTRAINED_UNITS}}
        units, unit_flags = {}, {}
        flags = {**UNITS, **CONSTRAINED_UNITS}
        for unit, specs_of in held.items():
            if specs_of:
                sources = library_units(env, ctx, unit, specs_of)
                units.update(sources)
                unit_flags.update({name: flags[unit] for name in sources})
        if solved:
            text = render.tidy(
                env.get_template("constrained.c.j2").render(
                    ctx=ctx, functions=solved, solve=solve_context(model, chosen, kernel, _called_code(chosen, code))
                )
            )
            files[f"c/{prefix}_constrained.c"] = text
            units["c/_constrained.c"] = text
            unit_flags["c/_constrained.c"] = CONSTRAINED_UNITS["c/_constrained.c"]
        tidied = {name: render.tidy(text) for name, text in sorted(files.items())}
        return build.RenderedFiles(tidied, build.Library(units, unit_flags))

    def _python_runtime(self, env: Any, ctx: dict) -> str:
        """The Python target's ``_runtime.py`` (argument checks and errors of the package's API)."""
        from sls.backends.python.files import names_tuple, runtime_text

        values = {"STATE_NAMES": names_tuple(ctx["state"]), "INPUT_NAMES": names_tuple(ctx["inputs"])}
        text = runtime_text(self.base("python").runtime_files()["_runtime.py"], values)
        return env.get_template("_runtime.py.j2").render(ctx=ctx, runtime=text)

    def _free_flyer(self, env: Any, ctx: dict) -> str:
        """The Python target's ``_free_flyer.py`` (integrate, difference, normalize, the MuJoCo layout)."""
        from sls.backends.python.files import quaternion_source, runtime_text

        source = self.base("python").runtime_files()[quaternion_source(ctx)]
        text = runtime_text(source, {"N_Q": ctx["n_q"], "N_V": ctx["n"], **(ctx["quaternions"] or {})})
        return env.get_template("_free_flyer.py.j2").render(ctx=ctx, runtime=text)

    def compile(self, files: dict, on_step: object = None) -> dict:
        """The extension built from the library ``render`` wrote beside the files (:func:`build.compile_library`)."""
        if not isinstance(files, build.RenderedFiles):
            raise TypeError("CBackend.compile: expected the files of CBackend.render (they carry the library's units)")
        return build.compile_library(files, files.library)

    def _chart(self, env: Any, ctx: dict) -> str:
        """The Python target's ``_chart.py`` (the guard of a yaw-pitch-roll base's singularity)."""
        from sls.backends.python.files import runtime_text

        pitch = ", ".join(f'({p["index"]}, "{p["name"]}")' for p in ctx["chart_pitch"])
        values = {"PITCH": f"({pitch},)", "MARGIN": ctx["chart_margin"]}
        text = runtime_text(self.base("python").runtime_files()["_chart.py"], values)
        return env.get_template("_chart.py.j2").render(ctx=ctx, runtime=text)


def _called_code(chosen: tuple, code: dict) -> object:
    """The code of the function the solved functions call (:attr:`~sls.functions.Function.calls`: a model with
    generalized speeds' ``qdot_jac_fun``), or ``None``."""
    called = sorted({name for f in chosen if f.numeric for name in f.calls})
    return code.get(called[0]) if called else None


def library_units(env: Any, ctx: dict, unit: str, specs: list) -> dict:
    """The sources of one unit of the package's library (``{file name: text}``) holding the functions ``specs``:
    the unit itself, and when a function has more than :data:`UNIT_PARTS` parts, units of its earlier parts
    (``<unit stem>_<k>.c``, ``templates/c/parts.c.j2``; those parts are then not ``static``). The unit keeps a
    function's last parts (the last calls the unit's ``<prefix>_solve_rows``)."""
    first_here = {spec.name: len(spec.parts) - UNIT_PARTS for spec in specs if len(spec.parts) > UNIT_PARTS}
    sources = {unit: env.get_template("model.c.j2").render(ctx=ctx, functions=specs, first_parts_here=first_here)}
    chunks = [
        (spec, start, min(start + UNIT_PARTS, first_here[spec.name]))
        for spec in specs
        if spec.name in first_here
        for start in range(0, first_here[spec.name], UNIT_PARTS)
    ]
    template = env.get_template("parts.c.j2")
    for k, chunk in enumerate(chunks, start=1):
        sources[f"{unit.removesuffix('.c')}_{k}.c"] = template.render(ctx=ctx, held=[chunk])
    return sources


def has_free_flyer(model: Model) -> bool:
    """True for a robot with quaternion joints (a free-flyer base, ball joints; its package adds ``_free_flyer.py``)."""
    tree = getattr(model, "tree", None)
    return tree is not None and bool(tree.quaternions)


def chart_guarded(model: Model, chosen: tuple | None = None) -> dict:
    """The functions of ``model``'s package (``chosen``, default all) that refuse states near its yaw-pitch-roll
    base's singularity, as the Python target's do, and the name their error gives: the solving functions, and those
    computed from one (``xdot_fun``: its error names ``qddot_fun``); empty without such a base, and for a constrained
    model (whose solves have no such guard in the Python target)."""
    from sls.backends.render import chart_pitch

    if not chart_pitch(model) or getattr(model, "constrained", False):
        return {}
    chosen = functions.for_model(model) if chosen is None else chosen
    return {f.name: f.uses or f.name for f in chosen if f.solve or (f.uses and functions.BY_NAME[f.uses].solve)}
