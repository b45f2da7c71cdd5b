"""The Python target (the default): numpy modules, one per generated function.

Printers and code text live in :mod:`sls.codegen` (a float path and an array
path per function), the templates (``templates/*.py.j2``) are rendered by
:mod:`sls.render`, which also checks the user's names against the generated
code's own; files are marked by :data:`sls.render.HEADER_MARK`.
"""

from __future__ import annotations

from .. import codegen, render
from . import Backend


class PythonBackend(Backend):
    name = "python"

    def file_names(self, model: object) -> list:
        return [f"{name}.py" for name in render.modules(model)] + ["__init__.py", "_runtime.py"]

    def builders(self, dynamics: object) -> dict:
        return codegen.kernel_builders(dynamics)

    def render(self, model: object, code: dict, simplify: bool, method: str) -> dict:
        return render.render_package(model, code, simplify, method)
