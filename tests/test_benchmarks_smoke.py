"""The benchmark harness runs (quick mode: sls and sympy lambdify, n = 2, few repetitions)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_benchmarks_quick(tmp_path):
    out = tmp_path / "quick.json"
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    rows = report["per_model"][0]["rows"]
    methods = [row["method"] for row in rows]
    assert methods[0] == "sls" and "lambdify (cse)" in methods
    assert all(row["qddot_us"] > 0 for row in rows)
    assert not any(note.startswith("NOT TIMED") for note in report["per_model"][0]["notes"].values())
    assert "| sls |" in result.stdout
