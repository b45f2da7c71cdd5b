"""The CasADi target's benchmark runs (quick mode) and reports what docs/casadi.md quotes."""

from __future__ import annotations

import sys

import pytest
from conftest import REPO

pytest.importorskip("casadi")


def test_casadi_benchmark_quick():
    sys.path.insert(0, str(REPO))
    from benchmarks import casadi_target

    lines: list = []
    result = casadi_target.run(quick=True, log=lines.append)
    assert result["qddot_instructions"] < result["casadi_solve_instructions"]
    assert result["linearized_instructions"] < result["jacobian_instructions"]
    assert result["generation_s"] > 0 and result["qddot_mapped_us"] > 0
    assert "| qddot_fun instructions (unrolled L D Lᵀ) |" in lines[0]
