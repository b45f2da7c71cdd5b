"""The registry of targets: name → the :class:`~sls.backends.base.Backend` that writes it.

:func:`backend` picks one; :func:`register` adds a target at run time; the other helpers ask every registered
target about a file (:func:`owned`, :func:`written`, :func:`placeholder`, :func:`folders`).
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
    "casadi": "sls.backends.casadi:CasadiBackend",
    "jax": "sls.backends.jax:JaxBackend",
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
    made = factory()
    made.bases = {base: backend(base) for base in made.builds_on}  # the targets it builds on, made here too
    return made


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
