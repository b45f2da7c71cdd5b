"""Backends: each turns the lowered programs (:mod:`sls.lowering`) into one target's files.

A target is one folder: ``sls/backends/<name>/`` (its :class:`Backend`
subclass, printers and runtime sources) and ``templates/<name>/`` (its
Jinja2 templates), plus one line in :data:`REGISTRY`. The pipeline
(:func:`sls.generate.generate`) and the writer (:mod:`sls.output.write`) only talk
to the :class:`Backend` interface (:mod:`sls.backends.base`):

* :meth:`Backend.check_environment`, :meth:`Backend.check_model` — refuse
  early (one line) when a tool is missing or the model is not supported;
* :meth:`Backend.file_names` — the files it will write, for the
  non-clobbering check before anything is derived;
* :meth:`Backend.builders` — how to build each function's code (one builder
  per function, for progress reporting), through the target's hooks;
* :meth:`Backend.render` — the package's files (name → text);
* :meth:`Backend.compile` — files built from the rendered ones (the C
  target's shared library), or nothing;
* :meth:`Backend.owns`, :meth:`Backend.writes`, :attr:`Backend.folders` —
  which files in an output folder are the target's;
* :meth:`Backend.placeholder` — what a file holds while the package is being
  written (the Python target's ``__init__.py`` that refuses to import).

:func:`backend` picks one; :func:`register` adds a target at run time.
"""

from sls.backends.base import Backend
from sls.backends.registry import (
    REGISTRY,
    TARGETS,
    backend,
    every_backend,
    folders,
    owned,
    placeholder,
    register,
    targets,
    unregister,
    written,
)

__all__ = [
    "REGISTRY",
    "TARGETS",
    "Backend",
    "backend",
    "every_backend",
    "folders",
    "owned",
    "placeholder",
    "register",
    "targets",
    "unregister",
    "written",
]
