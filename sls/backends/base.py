"""The base of every backend: what a target owns, and the per-function loop run once for all of them.

A target subclasses :class:`Backend`, sets its class attributes (its name,
its files' header mark, its file kinds, its hint for unsupported math, ...)
and fills the hooks: :meth:`Backend.paths` (how it prints),
:meth:`Backend.kernel`, :meth:`Backend.solver` and :meth:`Backend.wrapper`
(one function's code from the lowered programs), :meth:`Backend.file_names`
and :meth:`Backend.render` (its files). :meth:`Backend.builders` walks the
registry of generated functions (:mod:`sls.functions`) once for every target.

This module and each backend package's ``__init__`` import nothing heavy
(no sympy, no jinja2): :mod:`sls.output.write` asks the backends which files are
theirs without loading the code generators.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sls import functions
from sls.errors import ModelError

if TYPE_CHECKING:  # a type only: no import at run time
    from sls.model import Model


class Backend:
    """One target: its files, its printers and its templates (see the module docstring)."""

    #: The target's name (``sls generate --target NAME``).
    name = ""
    #: Whether :meth:`compile` does something (a pipeline stage of its own).
    compiles = False
    #: First characters of every text file the target writes; sls overwrites only files starting so.
    header_mark = ""
    #: Suffixes of the files the target writes (an sls file of such a suffix no longer written is stale).
    suffixes: tuple = ()
    #: Sub-folders of the output folder the target writes into.
    folders: tuple = ()
    #: What provides the functions the generated code may call, for the message on unsupported math.
    provides = ""
    #: Whether the target generates constrained models (constraints, velocity constraints).
    constrained = True
    #: Whether the target writes models with generalized speeds (``model.kinematics``).
    speeds = False
    #: Whether the target writes models with fewer speeds than coordinates (a quaternion base).
    quaternions = False
    #: Whether it writes any layout of quaternion joints (several free joints, ball joints: ``_quaternions.py``),
    #: not only one free-flyer base first.
    quaternion_joints = False
    #: Whether the target writes ``M_jac_fun`` and ``C_jac_fun`` from directional derivatives for a model with too
    #: many entries in them (``Model.jacobians``, :func:`sls.functions.jacobians_by_directions`).
    jacobians_by_directions = False
    #: Largest n for which the solving functions unroll the factorization of M (``None``: always).
    unroll_max: int | None = None
    #: Template folders under ``templates/`` (first match wins); default: the target's name.
    templates: tuple = ()
    #: The targets this one builds on (their names): their template folders follow the target's own, and
    #: :meth:`base` hands out their backends (the C target's package reuses the Python target's API files).
    builds_on: tuple = ()
    #: The backends of :attr:`builds_on`, by name: set by the registry that made this one
    #: (:func:`sls.backends.registry.backend`), so a backend never looks the registry up itself.
    bases: dict = {}

    # -- refusing early ---------------------------------------------------

    def check_environment(self) -> None:
        """Raise :class:`~sls.errors.MissingDependencyError` when the target cannot be built here."""

    def check_model(self, model: Model) -> None:
        """Raise :class:`~sls.errors.ModelError` for a model the target cannot generate."""
        if not self.constrained and getattr(model, "constrained", False):
            raise ModelError(
                f"--target {self.name} does not support constrained models yet (constraints, velocity_constraints): "
                "generate them with the default --target python"
            )
        if not self.speeds and getattr(model, "kinematics", None) is not None:
            raise ModelError(
                f"--target {self.name} does not support generalized speeds yet (kinematics): "
                "generate the model with the default --target python"
            )
        if not self.quaternions and len(getattr(model, "q", ())) != len(getattr(model, "dq", ())):
            raise ModelError(
                f"--target {self.name} does not support quaternion bases yet (fewer speeds than coordinates): "
                "generate the model with the default --target python, or with --base-orientation euler"
            )
        tree = getattr(model, "tree", None)
        if not self.quaternion_joints and tree is not None and tree.quaternions and not tree.single_free:
            kinds = sorted({slot.kind for slot in tree.quaternions})
            what = "several free joints" if kinds == ["free"] else "ball joints"
            raise ModelError(
                f"--target {self.name} writes one free-flyer base only, not {what}: generate the model with "
                "--target python, c or matlab"
            )

    # -- files --------------------------------------------------------------

    def file_names(self, model: Model) -> list:
        """The files the target writes for ``model`` (paths relative to the output folder)."""
        raise NotImplementedError

    def owns(self, path: Path) -> bool:
        """True when ``path`` is a file this target generated (its first line starts with :attr:`header_mark`)."""
        if not self.header_mark:
            return False
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                return handle.readline().startswith(self.header_mark)
        except OSError:
            return False

    def writes(self, name: str) -> bool:
        """True when a file named ``name`` is of a kind the target writes (for removing stale files)."""
        return Path(name).suffix in self.suffixes

    def placeholder(self, name: str) -> str | None:
        """What the file ``name`` holds while the target's package is being written, or ``None`` (no stub).

        The writer (:mod:`sls.output.write`) puts it in place first and the real file last, so a run killed
        midway leaves a package that says so instead of a mix of two generations."""
        return None

    def runtime_folder(self) -> Path:
        """The folder of the target's runtime sources: ``runtime/`` next to the module defining the backend."""
        module = sys.modules[type(self).__module__]
        return Path(module.__file__ or ".").resolve().parent / "runtime"

    def runtime_files(self) -> dict:
        """The target's runtime sources (files that never change per model): name → path."""
        folder = self.runtime_folder()
        return {p.name: p for p in sorted(folder.iterdir()) if p.is_file()} if folder.is_dir() else {}

    def template_folders(self) -> list:
        """The folders of the target's templates, first match wins: ``templates/<t>`` for each of
        :attr:`templates` (default: the target's name), then those of the targets it builds on
        (:attr:`builds_on`)."""
        from sls.backends import render

        own = [render.template_folder(t) for t in self.templates or (self.name,)]
        return own + [folder for name in self.builds_on for folder in self.base(name).template_folders()]

    def base(self, name: str) -> Backend:
        """The backend of the target ``name`` this one builds on (declared in :attr:`builds_on`)."""
        if name not in self.builds_on:
            raise ValueError(f"--target {self.name} does not declare that it builds on --target {name}")
        if name not in self.bases:
            raise ValueError(f"--target {self.name} was made without its base {name}: use sls.backends.backend()")
        return self.bases[name]

    def environment(self) -> Any:
        """The Jinja2 environment of the target's templates (:func:`sls.backends.render.environment`)."""
        from sls.backends import render

        return render.environment(*self.template_folders())

    # -- code -----------------------------------------------------------------

    def paths(self, model: Model) -> list:
        """The :class:`~sls.lowering.Path`\\ s every function is printed on (the Python target has two)."""
        raise NotImplementedError

    def kernel(self, function: functions.Function, lowered: list, model: Model) -> Any:
        """The code of an array function from its :class:`~sls.lowering.Lowered` kernels, one per path."""
        raise NotImplementedError

    def solver(self, function: functions.Function, programs: list, model: Model) -> Any:
        """The code of a solving function from its :class:`~sls.lowering.SolveProgram`\\ s, one per path."""
        raise NotImplementedError

    def wrapper(self, function: functions.Function, model: Model) -> Callable[[], Any] | None:
        """How to build a wrapper's code (a function computed from another, ``function.uses``), or ``None``
        when the target's templates write it (no codegen step)."""
        return None

    def builders(self, dynamics: Any) -> dict:
        """Function name → zero-argument callable returning that function's code (``None`` for a function
        solved at run time), in the order of the registry; one entry per codegen step."""
        from sls import lowering

        model = dynamics.model
        lowerers = lowering.lowerers(dynamics, self.paths(model), self.unroll_max)
        result: dict = {}
        wrappers: dict = {}
        for function in functions.for_model(model):
            if function.uses:
                build = self.wrapper(function, model)
                if build is not None:
                    wrappers[function.name] = build
                continue
            lower = lowerers[function.name]
            if lower is None:
                result[function.name] = None
            elif function.solve:
                result[function.name] = lambda function=function, lower=lower: self.solver(function, lower(), model)
            else:
                result[function.name] = lambda function=function, lower=lower: self.kernel(function, lower(), model)
        return {**result, **wrappers}

    def finisher(self, model: Model, simplify: bool, method: str) -> Callable[[str, Any], Any]:
        """What codegen does with each function's code as soon as it is built: ``(name, code)`` → what
        :meth:`render` receives for it. The default keeps the code; a target whose files are one per function
        may render the file right away, so a big robot's printed code is freed function by function."""
        return lambda name, code: code

    def render(self, model: Model, code: dict, simplify: bool, method: str) -> dict:
        """The package's files: name → text (or bytes)."""
        raise NotImplementedError

    def compile(self, files: dict, on_step: Callable | None = None) -> dict:
        """Files built from ``files`` (name → bytes)."""
        return {}
