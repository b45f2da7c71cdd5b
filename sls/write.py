"""Stage 5: write the rendered package atomically, without clobbering.

Guarantees
----------
* sls overwrites only files it generated itself (recognised by the header
  :data:`~sls.render.HEADER_MARK` on their first line). A file of the same
  name without that header stops generation with an error naming it.
* Every other entry of the output directory (the user's scripts, notes,
  sub-folders) is kept.
* The switch from the old package to the new one is atomic: the new
  directory is assembled next to the target (the new files, plus hard links
  to the user's entries) and exchanged with the target by one
  ``renameat2(RENAME_EXCHANGE)`` system call. Killed at any moment, ``--out``
  holds either the whole old package or the whole new one. Where the
  exchange call is unavailable (not Linux, or a file system without it) two
  renames are used instead, which leaves a window of microseconds in which
  the directory is absent, never a mix.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import shutil
import tempfile
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None

from .errors import OutputError
from .render import C_HEADER_MARK, HEADER_MARK, LIBRARY_MARK

_STAGING_PREFIX = ".sls-staging-"
_CACHE = "__pycache__"
#: The C target's folder of standalone sources.
_C_FOLDER = "c"


@contextlib.contextmanager
def replacing(path: str | Path):
    """Write a single output file atomically: yield a temporary path next to
    ``path``; on success it replaces ``path`` in one rename, on failure it is
    removed, so ``path`` never holds a half-written file."""
    path = Path(path)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.absolute().parent)
    os.close(handle)
    try:
        yield Path(temporary)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def is_generated(path: Path) -> bool:
    """True when ``path`` is a file whose first line is the sls header (``#`` or C comment),
    or a compiled library sls built (named ``_native.*``, holding :data:`~sls.render.LIBRARY_MARK`)."""
    try:
        if _is_library_name(path.name):
            return path.is_file() and LIBRARY_MARK in path.read_bytes()
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.readline().startswith((HEADER_MARK, C_HEADER_MARK))
    except OSError:
        return False


def _is_library_name(name: str) -> bool:
    return name.startswith("_native.") and name.endswith((".so", ".pyd", ".dylib"))


def check_target(out_dir: Path, names: list[str]) -> None:
    """Raise :class:`OutputError` unless ``out_dir`` can take the files ``names``."""
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"{out_dir}: exists and is not a directory; choose another --out")
    if not out_dir.exists():
        return
    for name in names:
        target = out_dir / name
        if target.parent != out_dir and (target.parent.is_symlink() or (target.parent.exists() and not target.parent.is_dir())):
            raise OutputError(f"{target.parent}: is not a folder where sls writes one; move it away or choose another --out")
        if target.is_dir() and not target.is_symlink():
            raise OutputError(f"{target}: is a directory where sls writes a file; move it away or choose another --out")
        if target.exists() or target.is_symlink():
            if target.is_symlink() or not is_generated(target):
                raise OutputError(
                    f"{target}: exists and was not written by sls (no sls header); "
                    "sls will not overwrite it: move it away or choose another --out"
                )


def write_package(files: dict[str, str], out_dir: str | Path) -> Path:
    """Write ``files`` (name → text) into ``out_dir`` atomically; return the directory."""
    out_dir = Path(out_dir)
    check_target(out_dir, list(files))
    if out_dir.is_symlink() and out_dir.is_dir():
        out_dir = out_dir.resolve()  # replace the folder the link points to, keep the link
    try:
        return _write(files, out_dir)
    except OSError as exc:
        where = exc.filename or out_dir
        raise OutputError(f"{where}: cannot write the package: {exc.strerror or exc}") from None


def _write(files: dict[str, str], out_dir: Path) -> Path:
    parent = out_dir.absolute().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"{parent}: cannot create the output's parent directory: {exc.strerror}") from None
    _remove_stale_staging(parent, out_dir.name)
    try:
        staging = Path(tempfile.mkdtemp(prefix=f"{_STAGING_PREFIX}{out_dir.name}-", dir=parent))
    except OSError as exc:
        raise OutputError(f"{parent}: cannot write here: {exc.strerror}") from None
    lock = _lock(staging)  # marks the staging folder as in use until this process ends
    try:
        for name, text in files.items():
            (staging / name).parent.mkdir(exist_ok=True)
            binary = isinstance(text, bytes)
            with open(staging / name, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": "\n"})) as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            if binary:
                os.chmod(staging / name, 0o755 & ~_umask())
        os.chmod(staging, 0o777 & ~_umask())
        if not out_dir.exists():
            os.rename(staging, out_dir)
            return out_dir
        generated = set(files)
        folders = {name.split("/")[0] for name in files if "/" in name} | {_C_FOLDER}
        for entry in sorted(os.listdir(out_dir)):
            if entry in generated or entry == _CACHE or _is_stale_module(out_dir / entry):
                continue
            if entry in folders and (out_dir / entry).is_dir() and not (out_dir / entry).is_symlink():
                for child in sorted(os.listdir(out_dir / entry)):  # a folder sls writes into: keep the user's files in it
                    if f"{entry}/{child}" not in generated and not _is_stale_module(out_dir / entry / child):
                        (staging / entry).mkdir(exist_ok=True)
                        _mirror(out_dir / entry / child, staging / entry / child)
                continue
            _mirror(out_dir / entry, staging / entry)
        _exchange(staging, out_dir)
        # ``staging`` now holds the old contents; keep anything created meanwhile.
        for entry in os.listdir(staging):
            if not (out_dir / entry).exists() and entry not in generated and entry != _CACHE and not _is_stale_module(staging / entry):
                os.rename(staging / entry, out_dir / entry)
        shutil.rmtree(staging, ignore_errors=True)
        return out_dir
    except BaseException:
        if staging.exists() and staging != out_dir:
            shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        if lock is not None:
            os.close(lock)


def _is_stale_module(path: Path) -> bool:
    """An sls-generated file no longer produced (e.g. after an upgrade, or another target or model name)."""
    if path.is_symlink():
        return False
    if path.is_dir():  # a folder holding nothing but generated files (the C target's c/)
        return path.name == _C_FOLDER and all(_is_stale_module(path / entry) for entry in os.listdir(path))
    return (path.suffix in (".py", ".c", ".h") or _is_library_name(path.name)) and path.is_file() and is_generated(path)


def _mirror(source: Path, target: Path) -> None:
    """Recreate ``source`` at ``target`` without copying data (hard links)."""
    if source.is_symlink():
        os.symlink(os.readlink(source), target)
    elif source.is_dir():
        target.mkdir()
        for entry in os.listdir(source):
            _mirror(source / entry, target / entry)
        shutil.copystat(source, target)  # after filling it, so its mtime is the original's
    else:
        try:
            os.link(source, target)
        except OSError:
            shutil.copy2(source, target)


def _remove_stale_staging(parent: Path, name: str) -> None:
    """Remove staging folders an interrupted earlier run left behind.

    A folder still locked by a running sls (see :func:`_lock`) is left alone.
    """
    for entry in parent.glob(f"{_STAGING_PREFIX}{name}-*"):
        if entry.is_dir() and not entry.is_symlink():
            try:
                fd = os.open(entry, os.O_RDONLY)
            except OSError:
                continue
            try:
                if fcntl is not None:
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except OSError:
                        continue  # another sls is writing it right now
                shutil.rmtree(entry, ignore_errors=True)
            finally:
                os.close(fd)


def _lock(folder: Path) -> int | None:
    """Hold an exclusive ``flock`` on ``folder`` (released when the process ends, even by SIGKILL)."""
    if fcntl is None:
        return None
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(first: Path, second: Path) -> None:
    """Atomically swap two directories (Linux ``renameat2``), else two renames."""
    libc_name = ctypes.util.find_library("c")
    renameat2 = None
    if libc_name:
        try:
            renameat2 = ctypes.CDLL(libc_name, use_errno=True).renameat2
        except (OSError, AttributeError):
            renameat2 = None
    if renameat2 is not None:
        result = renameat2(_AT_FDCWD, os.fsencode(first), _AT_FDCWD, os.fsencode(second), _RENAME_EXCHANGE)
        if result == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise OSError(code, os.strerror(code), str(second))
    backup = first.with_name(first.name + "-old")
    os.rename(second, backup)
    os.rename(first, second)
    os.rename(backup, first)
