"""An MJCF file compiled by MuJoCo (:func:`compile_mjcf`): the ``mujoco`` package, imported only here and only when
an MJCF file is read, resolves includes, defaults, ``fromto``, ``inertiafromgeom`` and meshes; sls reads the
compiled ``mjModel``, never the XML."""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sls.errors import MissingDependencyError, ModelFileError
from sls.readers.common import ModelFileWarning
from sls.readers.mjcf.numbers import check_compiled, scan_xml

#: What to install when the ``mujoco`` package is missing.
INSTALL_HINT = 'reading MJCF needs the mujoco package: pip install "sls[mujoco]"'
#: A URDF file's first element (after the XML declaration and comments).
_URDF_ROOT = re.compile(r"\A\s*(<\?xml[^>]*\?>\s*)?(<!--.*?-->\s*)*<robot[\s>/]", re.DOTALL)


class MujocoWarning(ModelFileWarning):
    """A warning MuJoCo's compiler gave about an MJCF file (a deprecated attribute, ...); the file still compiled."""


def mujoco_module() -> Any:
    """The ``mujoco`` package, or :class:`~sls.errors.MissingDependencyError` in one line."""
    try:
        import mujoco
    except ImportError:
        raise MissingDependencyError(INSTALL_HINT) from None
    return mujoco


def compile_mjcf(path: Path, text: str | None = None, actuators: bool = True) -> Any:
    """The compiled ``mujoco.MjModel`` of the MJCF file ``path`` (or of ``text``: then includes and meshes are
    looked up relative to the working folder); without ``actuators``, the model without its ``<actuator>``
    elements (deleted from MuJoCo's ``MjSpec`` of the file before compiling). A file MuJoCo cannot compile, or a
    URDF file, is one line naming the file; so is a number that is not finite or absurd
    (:mod:`sls.readers.mjcf.numbers`)."""
    mujoco = mujoco_module()
    filename = str(path)
    if text is None:
        if not path.exists():
            raise ModelFileError(f"{filename}: no such model file")
        if path.is_dir():
            raise ModelFileError(f"{filename}: is a directory, not a model file")
        try:
            whole = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            raise ModelFileError(f"{filename}: cannot read the model file: {exc}") from None
    else:
        whole = text
    if _URDF_ROOT.match(whole[:4096]):
        raise ModelFileError(f"{filename}: a URDF file (its root element is <robot>), not MJCF; name it NAME.urdf")
    scan_xml(whole, filename)
    with _warnings_as_python(mujoco) as said:
        try:
            m = _compiled(mujoco, filename, text, actuators)
        except Exception as exc:  # MuJoCo's compiler: ValueError with its message (XML or model errors)
            message = " ".join(str(exc).split()) or type(exc).__name__
            raise ModelFileError(f"{filename}: MuJoCo cannot compile it: {message}") from None
    check_compiled(m, filename)
    for message in said:
        warnings.warn(f"{filename}: MuJoCo: {' '.join(message.split())}", MujocoWarning, stacklevel=3)
    return m


def _compiled(mujoco: Any, filename: str, text: str | None, actuators: bool) -> Any:
    """MuJoCo's model of the file (or of ``text``), its actuators deleted unless ``actuators``."""
    if actuators:
        return mujoco.MjModel.from_xml_path(filename) if text is None else mujoco.MjModel.from_xml_string(text)
    spec = mujoco.MjSpec.from_file(filename) if text is None else mujoco.MjSpec.from_string(text)
    for actuator in list(spec.actuators):
        spec.delete(actuator)
    return spec.compile()


@contextmanager
def _warnings_as_python(mujoco: Any) -> Iterator[list]:
    """MuJoCo's warnings while compiling collected in a list (instead of printed and appended to a
    ``MUJOCO_LOG.TXT`` in the working folder); its previous handler restored after."""
    said: list[str] = []
    previous = mujoco.get_mju_user_warning()
    mujoco.set_mju_user_warning(said.append)
    try:
        yield said
    finally:
        mujoco.set_mju_user_warning(previous)
