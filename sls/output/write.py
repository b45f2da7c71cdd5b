"""Stage 5: write the rendered package in place, atomically per file, without clobbering.

Guarantees
----------
* sls overwrites only files it generated itself (recognised by a target's
  header on their first line, or a library a target builds: each backend
  says which files are its own, :func:`sls.backends.owned`). A file of the
  same name without that header stops generation with an error naming it.
* The output folder is updated **in place**: it keeps its inode, its mode and
  every entry sls did not write (the user's scripts, notes, sub-folders), so
  ``--out .``, a mount point, a folder a shell or a Jupyter kernel sits in, or
  a writable folder under a read-only parent all work.
* Every file is written to a temporary file in the folder, flushed to disk and
  renamed over its target, so no file is ever half-written. Written files get
  the permissions the umask gives (like any new file).
* Never a silent mix of two generations: the first step replaces
  ``__init__.py`` by a stub that refuses to import ("interrupted, run sls
  generate again"; the target writing ``__init__.py`` provides it:
  :func:`sls.backends.placeholder`); the modules follow, and the real ``__init__.py`` is put
  back last. Killed at any moment, the folder holds the whole old package, a
  package that refuses to import with that message, or the whole new one.
  Concurrent runs on one folder take turns (an ``flock`` on the folder).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None  # type: ignore[assignment]

from sls import backends
from sls.errors import OutputError

#: Prefix of the temporary files sls writes before renaming them into place.
TEMPORARY_PREFIX = ".sls-tmp-"
_CACHE = "__pycache__"
_INIT = "__init__.py"


@contextlib.contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """Write a single output file atomically: yield a temporary path next to
    ``path``; on success it replaces ``path`` in one rename, on failure it is
    removed, so ``path`` never holds a half-written file. The file gets the
    permissions the umask gives; errors name ``path``, not the temporary."""
    path = Path(path)
    temporary = path.absolute().parent / f".{path.name}.{secrets.token_hex(4)}.tmp{path.suffix}"
    try:
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def check_output_file(path: str | Path, option: str) -> None:
    """Raise :class:`OutputError` unless a file can be written at ``path`` (before any work is done)."""
    path = Path(path)
    parent = path.parent  # as the user wrote it ('.' is the current folder)
    if path.is_dir():
        raise OutputError(f"{option} {path}: is a directory; give a file name")
    if not parent.is_dir():
        what = "is not a directory" if parent.exists() else "does not exist"
        raise OutputError(f"{option} {path}: the folder {parent} {what}; create it first")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"{option} {path}: the folder {parent} is not writable")


def is_generated(path: Path) -> bool:
    """True when ``path`` is a file some target generated (:func:`sls.backends.owned`: the target's header on
    its first line, or a library it built)."""
    return backends.owned(path)


def check_target(out_dir: Path, names: list[str]) -> None:
    """Raise :class:`OutputError` unless ``out_dir`` can take the files ``names``."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"{out_dir}: exists and is not a directory; choose another --out")
    if not out_dir.exists():
        ancestor = out_dir.absolute().parent
        while not ancestor.exists():
            ancestor = ancestor.parent
        if not ancestor.is_dir():
            raise OutputError(f"{out_dir}: cannot create it: {ancestor} is not a directory; choose another --out")
        if not os.access(ancestor, os.W_OK | os.X_OK):
            raise OutputError(f"{out_dir}: cannot create it: {ancestor} is not writable; choose another --out")
        return
    if not os.access(out_dir, os.W_OK | os.X_OK):
        raise OutputError(f"{out_dir}: the folder is not writable; choose another --out")
    for name in names:
        target = out_dir / name
        if target.parent != out_dir and (
            target.parent.is_symlink() or (target.parent.exists() and not target.parent.is_dir())
        ):
            raise OutputError(
                f"{target.parent}: is not a folder where sls writes one; move it away or choose another --out"
            )
        if target.is_dir() and not target.is_symlink():
            raise OutputError(f"{target}: is a directory where sls writes a file; move it away or choose another --out")
        if target.exists() or target.is_symlink():
            if target.is_symlink() or not is_generated(target):
                raise OutputError(
                    f"{target}: exists and was not written by sls (no sls header); "
                    "sls will not overwrite it: move it away or choose another --out"
                )


def write_package(files: dict[str, str], out_dir: str | Path) -> Path:
    """Write ``files`` (name → text; ``__init__.py`` last when there is one) into ``out_dir`` in place; return
    the directory."""
    out_dir = Path(out_dir)
    check_target(out_dir, list(files))
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        folder = out_dir.resolve()
        lock = _lock(folder)  # concurrent runs on this folder take turns
        try:
            check_target(folder, list(files))  # again: another run may have changed it meanwhile
            _write(files, folder)
        finally:
            if lock is not None:
                os.close(lock)
    except OSError as exc:
        where = exc.filename or out_dir
        raise OutputError(f"{where}: cannot write the package: {exc.strerror or exc}") from None
    return out_dir


def _write(files: dict[str, str], folder: Path) -> None:
    subfolders = backends.folders()  # the sub-folders targets write into
    for place in (
        folder,
        *(folder / sub for sub in subfolders),
    ):  # temporaries of a killed run (the lock says no run is active)
        for entry in os.listdir(place) if place.is_dir() and not place.is_symlink() else ():
            if entry.startswith(TEMPORARY_PREFIX):
                with contextlib.suppress(OSError):
                    os.unlink(place / entry)
    package = _INIT in files  # a Python package (a target may write plain files)
    placeholder = backends.placeholder(_INIT) if package else None  # the target's "being written" stub
    if placeholder is not None:
        _put(folder, _INIT, placeholder)  # from here on the package refuses to import ...
        _sync(folder)
    for name, text in files.items():
        if name != _INIT:
            _put(folder, name, text)
    stale = [entry for entry in sorted(os.listdir(folder)) if entry not in files and _is_stale_module(folder / entry)]
    for sub in subfolders:  # a target's sub-folder: its stale files go, the user's files stay
        sources = folder / sub
        if sources.is_dir() and not sources.is_symlink():
            stale += [
                f"{sub}/{e}"
                for e in sorted(os.listdir(sources))
                if f"{sub}/{e}" not in files and _is_stale_module(sources / e)
            ]
    for entry in stale:
        os.unlink(folder / entry)
    for sub in subfolders:
        sources = folder / sub
        if sources.is_dir() and not sources.is_symlink() and not os.listdir(sources):
            os.rmdir(sources)
    _drop_bytecode(folder, list(files) + stale)
    _sync(folder)
    if package:
        _put(folder, _INIT, files[_INIT])  # ... until every module is in place
        _drop_bytecode(folder, [_INIT])
        _sync(folder)


def _put(folder: Path, name: str, text: str | bytes) -> None:
    """Write ``folder/name`` atomically: a flushed temporary file renamed over it (``name`` may lie in ``c/``)."""
    target = folder / name
    target.parent.mkdir(exist_ok=True)
    temporary = target.parent / f"{TEMPORARY_PREFIX}{target.name}-{secrets.token_hex(4)}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # mode: 0666 minus the umask
    try:
        with open(fd, "wb") as handle:  # text as UTF-8, newlines as they are
            handle.write(text if isinstance(text, bytes) else text.encode("utf-8"))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _drop_bytecode(folder: Path, names: list[str]) -> None:
    """Remove cached bytecode of ``names``: a rewrite within the same second and of the same size would not
    invalidate it."""
    cache = folder / _CACHE
    if not cache.is_dir():
        return
    stems = {Path(name).stem for name in names}
    for entry in os.listdir(cache):
        if entry.split(".", 1)[0] in stems and entry.endswith((".pyc", ".pyo")):
            with contextlib.suppress(OSError):
                os.unlink(cache / entry)


def _is_stale_module(path: Path) -> bool:
    """An sls-generated file no longer produced (after an upgrade, or for another target or model name)."""
    return backends.written(path.name) and path.is_file() and not path.is_symlink() and is_generated(path)


def _sync(folder: Path) -> None:
    """Flush the folder's entries (the renames) to disk, so they reach it in order."""
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _lock(folder: Path) -> int | None:
    """Hold an exclusive ``flock`` on ``folder`` (waits for another run; released when the process ends, even
    by SIGKILL)."""
    if fcntl is None:
        return None
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError:
        os.close(fd)
        return None
    return fd
