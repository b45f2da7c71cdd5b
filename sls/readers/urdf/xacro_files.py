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
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from sls.errors import MissingDependencyError, ModelFileError

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
    that is not given, or anything else xacro refuses.
    """
    path = Path(path)
    xacro = _import_xacro()
    substitution = importlib.import_module("xacro.substitution_args")
    folders = [Path(p) for p in package_paths]
    for folder in folders:
        if not folder.is_dir():
            raise ModelFileError(f"--package-path {folder}: not a folder")
    where = str(path)
    with _package_resolver(xacro, substitution, folders, where):
        try:
            document = xacro.process_file(str(path), mappings=dict(args or {}))
        except ModelFileError:
            raise
        except substitution.ArgException as exc:
            raise ModelFileError(
                f"{where}: xacro: the argument '{exc}' is not given; pass --xacro-arg {exc}:=VALUE"
            ) from None
        except Exception as exc:  # xacro's own exceptions (XacroException and others): its message, one line
            message = " ".join(str(exc).split()) or type(exc).__name__
            missing = re.search(r"Undefined substitution argument (\S+)", message)
            if missing:
                name = missing.group(1)
                raise ModelFileError(
                    f"{where}: xacro: the argument '{name}' is not given; pass --xacro-arg {name}:=VALUE"
                ) from None
            raise ModelFileError(f"{where}: xacro: {message}") from None
    return document.toprettyxml(indent="  ")


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
def _package_resolver(xacro: Any, substitution: Any, folders: Sequence[Path], where: str) -> Iterator[None]:
    """Within: ``$(find PKG)`` and ``package://PKG/`` includes resolve by :func:`find_package`."""
    original_find, original_abs = substitution._eval_find, xacro.abs_filename_spec

    def eval_find(name: str) -> str:
        return find_package(name, folders, where)

    def abs_filename_spec(spec: str) -> str:
        if spec.startswith(PACKAGE_URI):
            package, _, rest = spec[len(PACKAGE_URI) :].partition("/")
            return str(Path(find_package(package, folders, where)) / rest)
        return str(original_abs(spec))

    substitution._eval_find, xacro.abs_filename_spec = eval_find, abs_filename_spec
    try:
        yield
    finally:
        substitution._eval_find, xacro.abs_filename_spec = original_find, original_abs
