"""Backends: each turns the lowered programs (:mod:`sls.lowering`) into one target's files.

A backend owns its printers, its templates, its reserved names, the header
that marks its files as sls's, and its runtime files. The pipeline
(:func:`sls.generate.generate`) only talks to this interface:

* :meth:`Backend.check_environment` — refuse early (one line) when a tool
  the target needs is missing (the C target's compiler, Python's headers);
  :meth:`Backend.check_model` — the same for a model it cannot generate;
* :meth:`Backend.file_names` — the files it will write, for the
  non-clobbering check before anything is derived;
* :meth:`Backend.builders` — how to build each function's code from the
  derived terms (one builder per function, for progress reporting);
* :meth:`Backend.render` — the package's files (name → text);
* :meth:`Backend.compile` — files built from the rendered ones (the C
  target's shared library), or nothing.

:data:`TARGETS` lists the targets; :func:`backend` picks one.
"""

from __future__ import annotations

from typing import Callable

#: The targets ``sls generate --target`` accepts; the first is the default.
TARGETS = ("python", "c", "matlab")


class Backend:
    """The interface every target implements (see the module docstring)."""

    name = ""
    #: Whether :meth:`compile` does something (a pipeline stage of its own).
    compiles = False

    def check_environment(self) -> None:
        """Raise :class:`~sls.errors.MissingDependencyError` when the target cannot be built here."""

    def check_model(self, model: object) -> None:
        """Raise :class:`~sls.errors.ModelError` for a model the target cannot generate."""

    def file_names(self, model: object) -> list:
        raise NotImplementedError

    def builders(self, dynamics: object) -> dict:
        """Function name → zero-argument callable returning that function's code."""
        raise NotImplementedError

    def render(self, model: object, code: dict, simplify: bool, method: str) -> dict:
        raise NotImplementedError

    def compile(self, files: dict, on_step: Callable | None = None) -> dict:
        """Files built from ``files`` (name → bytes)."""
        return {}


def backend(target: str) -> Backend:
    """The backend of ``target`` (one of :data:`TARGETS`)."""
    if target == "python":
        from .python import PythonBackend

        return PythonBackend()
    if target == "c":
        from .c import CBackend

        return CBackend()
    if target == "matlab":
        from .matlab import MatlabBackend

        return MatlabBackend()
    raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {target!r}")


