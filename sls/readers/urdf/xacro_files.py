"""ROS robot descriptions written as xacro macros (``robot.urdf.xacro``), expanded into URDF text by the ``xacro``
package (an optional extra): :func:`expand_xacro`.

``$(find PKG)`` (and ``package://PKG/...`` in ``<xacro:include filename>``) resolve through the folders given as
package paths (a folder named ``PKG``, or holding one), then through an installed ROS environment
(``ament_index_python``) when there is one. ``$(arg NAME)`` takes the values given as ``NAME:=VALUE``. Everything
else (``${...}`` expressions, macros, properties, YAML) is xacro's own, evaluated as xacro evaluates it in its
restricted namespace: a xacro file is trusted as ROS trusts it.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import re
import warnings
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from sls.errors import MissingDependencyError, ModelFileError
from sls.model import closest, did_you_mean
from sls.readers.common import ModelFileWarning

#: File name endings read as xacro.
XACRO_SUFFIXES = (".xacro",)
PACKAGE_URI = "package://"


def is_xacro(path: str | Path) -> bool:
    """Whether ``path`` names a xacro file (``robot.urdf.xacro``, ``robot.xacro``)."""
    return str(path).endswith(XACRO_SUFFIXES)


def parse_xacro_args(items: Sequence[str]) -> dict:
    """``["name:=value", ...]`` (``--xacro-arg``) as a dict; a malformed item is one line."""
    values = {}
    for item in items:
        name, sep, value = item.partition(":=")
        if not sep or not name.strip():
            raise ModelFileError(f"--xacro-arg {item!r}: write NAME:=VALUE (as xacro and roslaunch take it)")
        values[name.strip()] = value
    return values


def expand_xacro(path: str | Path, args: Mapping[str, str] | None = None, package_paths: Sequence[str] = ()) -> str:
    """The URDF text of the xacro file ``path`` with the arguments ``args``; ``package_paths`` resolve packages.

    Raises :class:`~sls.errors.MissingDependencyError` without the ``xacro`` package and
    :class:`~sls.errors.ModelFileError` (one line naming the file) for a package that is not found, an argument
    that is not given, an argument given that the file neither declares (``<xacro:arg>``) nor uses (with the
    closest declared name), or anything else xacro refuses. xacro's warnings (printed by xacro on several lines)
    become one :class:`XacroWarning` each.
    """
    path = Path(path)
    xacro = _import_xacro()
    substitution = importlib.import_module("xacro.substitution_args")
    folders = [Path(p) for p in package_paths]
    for folder in folders:
        if not folder.is_dir():
            raise ModelFileError(f"--package-path {folder}: not a folder")
    where = str(path)
    given = _AskedArguments(args or {})
    refused: list[ModelFileError] = []
    printed = io.StringIO()
    with _package_resolver(xacro, substitution, folders, where, refused), contextlib.redirect_stderr(printed):
        try:
            document = xacro.process_file(str(path), mappings=given)
        except ModelFileError:
            raise
        except substitution.ArgException as exc:
            raise ModelFileError(_not_given(where, str(exc), given)) from None
        except Exception as exc:  # xacro's own exceptions (XacroException and others): its message, one line
            if refused:  # sls's own refusal (a package not found), wrapped by xacro: said once, as raised
                raise refused[0] from None
            message = " ".join(str(exc).split()) or type(exc).__name__
            missing = re.search(r"Undefined substitution argument (\S+)", message)
            if missing:
                raise ModelFileError(_not_given(where, missing.group(1), given)) from None
            raise ModelFileError(f"{where}: xacro: {message}") from None
        finally:
            for warning in xacro_warnings(printed.getvalue()):
                warnings.warn(f"{where}: xacro: {warning}", XacroWarning, stacklevel=2)
    unknown = sorted(set(given) - given.asked)
    if unknown:
        declared = sorted(given.asked)
        raise ModelFileError(
            f"{where}: xacro: the file has no argument '{unknown[0]}' (given as {unknown[0]}:={given[unknown[0]]})"
            + (did_you_mean(unknown[0], declared) or f"; its arguments: {', '.join(declared) or 'none'}")
        )
    return document.toprettyxml(indent="  ")


class XacroWarning(ModelFileWarning):
    """A warning xacro gave about a file (a redefined symbol, an unknown attribute, ...); the file still expanded."""


class _AskedArguments(dict):
    """The ``--xacro-arg`` values as xacro reads them, recording every name xacro asks for: ``<xacro:arg>`` asks
    whether its name is given, ``$(arg NAME)`` reads it; a name never asked for is an argument the file does not
    have."""

    def __init__(self, values: Mapping[str, str]) -> None:
        super().__init__(values)
        self.asked: set[str] = set()

    def __contains__(self, name: object) -> bool:
        self.asked.add(str(name))
        return super().__contains__(name)

    def __getitem__(self, name: str) -> str:
        self.asked.add(name)
        return super().__getitem__(name)

    def get(self, name: str, default: object = None) -> object:
        self.asked.add(name)
        return super().get(name, default)


def _not_given(where: str, name: str, given: Mapping[str, str]) -> str:
    """The message for an argument the file needs and that is not given (a misspelt one named)."""
    close = closest(name, list(given))
    hint = f" (--xacro-arg {close}:=... is given: misspelt?)" if close is not None and close != name else ""
    return f"{where}: xacro: the argument '{name}' is not given; pass --xacro-arg {name}:=VALUE{hint}"


def xacro_warnings(printed: str) -> list:
    """xacro's warnings from what it printed on stderr, each on one line: a ``warning: ...`` line with the lines
    that follow it (``when processing file: ...``, the macro and include stack) joined by ``; ``; a line before any
    warning is a warning of its own."""
    result: list[list[str]] = []
    for line in printed.splitlines():
        text = line.strip()
        if not text:
            continue
        if text.startswith("warning: ") or not result:
            result.append([text.removeprefix("warning: ")])
        else:
            result[-1].append(text)
    return ["; ".join(parts) for parts in result]


def _import_xacro() -> Any:
    try:
        return importlib.import_module("xacro")
    except ImportError:
        raise MissingDependencyError('reading xacro files needs the xacro package: pip install "sls[xacro]"') from None


def find_package(name: str, folders: Sequence[Path], where: str) -> str:
    """The folder of package ``name``: ``folder/name`` or ``folder`` itself (named ``name``) among ``folders``,
    then an installed ROS environment's share folder; one line naming the package otherwise."""
    for folder in folders:
        if folder.name == name:
            return str(folder)
        if (folder / name).is_dir():
            return str(folder / name)
    try:
        from ament_index_python.packages import get_package_share_directory  # type: ignore[import-not-found]

        return str(get_package_share_directory(name))
    except Exception:  # no ROS environment, or the package is not in it
        pass
    raise ModelFileError(
        f"{where}: xacro: package '{name}' not found; pass --package-path DIR (a folder holding '{name}')"
    )


@contextlib.contextmanager
def _package_resolver(
    xacro: Any, substitution: Any, folders: Sequence[Path], where: str, refused: list
) -> Iterator[None]:
    """Within: ``$(find PKG)`` and ``package://PKG/`` includes resolve by :func:`find_package`; its refusals are
    appended to ``refused`` too (xacro wraps an exception raised in a substitution into its own)."""
    original_find, original_abs = substitution._eval_find, xacro.abs_filename_spec

    def found(name: str) -> str:
        try:
            return find_package(name, folders, where)
        except ModelFileError as exc:
            refused.append(exc)
            raise

    def eval_find(name: str) -> str:
        return found(name)

    def abs_filename_spec(spec: str) -> str:
        if spec.startswith(PACKAGE_URI):
            package, _, rest = spec[len(PACKAGE_URI) :].partition("/")
            return str(Path(found(package)) / rest)
        return str(original_abs(spec))

    substitution._eval_find, xacro.abs_filename_spec = eval_find, abs_filename_spec
    try:
        yield
    finally:
        substitution._eval_find, xacro.abs_filename_spec = original_find, original_abs
