"""GNU Octave for the tests of the MATLAB target: where it is, a skip marker without it, and running a script.

``.ci/run`` installs the Debian package ``octave``; elsewhere the tests that need it are skipped with a reason."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pytest

OCTAVE = shutil.which("octave-cli") or shutil.which("octave")
needs_octave = pytest.mark.skipif(
    OCTAVE is None, reason="GNU Octave is not installed (Debian package 'octave'; .ci/run installs it)"
)


def run_octave(script: str, cwd: Path) -> str:
    """Run ``script`` in one Octave process in ``cwd``; its standard output (a failure shows Octave's error)."""
    assert OCTAVE is not None
    result = subprocess.run(
        [OCTAVE, "--no-init-file", "--no-window-system", "--quiet", "--eval", script],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, f"Octave failed:\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
    return result.stdout


def octave_matrices(script: str, cwd: Path) -> list:
    """The matrices ``script`` prints with ``disp(mat2str(..., 17))``, in order (``format long`` set first)."""
    matrices = []
    for line in run_octave("format long; " + script, cwd).splitlines():
        if line.startswith("["):
            rows = line.strip().strip("[]").split(";")
            matrices.append(np.array([[float(value) for value in row.split()] for row in rows]))
    return matrices


def matlab_vector(values: Iterable[float]) -> str:
    """A row vector literal ``[v1 v2 ...]`` with every digit of each float."""
    return "[" + " ".join(repr(float(v)) for v in values) + "]"
