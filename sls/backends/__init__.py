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

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

from sls.backends.base import Backend
from sls.errors import ModelError

#: Every target: name → ``"module:Class"`` of its :class:`Backend` (or a factory); the first is the default.
REGISTRY: dict = {
    "python": "sls.backends.python:PythonBackend",
    "c": "sls.backends.c:CBackend",
    "matlab": "sls.backends.matlab:MatlabBackend",
}

#: The targets sls ships (``sls generate --target`` accepts them).
TARGETS = tuple(REGISTRY)


def register(name: str, factory: str | Callable[[], Backend]) -> None:
    """Add (or replace) the target ``name``: ``factory`` is ``"module:Class"`` or a callable returning a
    :class:`Backend`."""
    REGISTRY[name] = factory


def unregister(name: str) -> None:
    """Remove the target ``name`` (one added by :func:`register`)."""
    REGISTRY.pop(name, None)


def targets() -> tuple:
    """Every registered target's name."""
    return tuple(REGISTRY)


def backend(target: str) -> Backend:
    """The backend of ``target`` (one of :func:`targets`); an unknown name is a :class:`~sls.errors.ModelError`."""
    if target not in REGISTRY:
        raise ModelError(f"target must be one of {', '.join(REGISTRY)}, got {target!r}")
    factory = REGISTRY[target]
    if isinstance(factory, str):
        module, _, name = factory.partition(":")
        factory = getattr(importlib.import_module(module), name)
    return factory()


def every_backend() -> list:
    """A backend of every registered target."""
    return [backend(name) for name in REGISTRY]


def owned(path: Path) -> bool:
    """True when some target generated the file ``path`` (its header, or a library it builds)."""
    return any(b.owns(path) for b in every_backend())


def written(name: str) -> bool:
    """True when some target writes files of the kind of ``name`` (suffix, or a library's name)."""
    return any(b.writes(name) for b in every_backend())


def placeholder(name: str) -> str | None:
    """What the file ``name`` holds while its package is being written (a Python package's ``__init__.py``
    that refuses to import), from the first target writing files of its kind that has one; else ``None``."""
    for b in every_backend():
        text = b.placeholder(name) if b.writes(name) else None
        if text is not None:
            return text
    return None


def folders() -> tuple:
    """The sub-folders of an output folder that targets write into."""
    return tuple(sorted({f for b in every_backend() for f in b.folders}))
