"""The benchmark harness runs (quick mode: sls and sympy lambdify, n = 2, few repetitions)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_benchmarks_quick(tmp_path):
    out = tmp_path / "quick.json"
    result = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=360,  # a safety net, not a speed bound: the quick run takes about a minute alone
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(out.read_text())
    rows = report["per_model"][0]["rows"]
    methods = [row["method"] for row in rows]
    assert methods[0] == "sls" and "lambdify (cse)" in methods
    assert all(row["qddot_us"] > 0 for row in rows)
    assert not any(note.startswith("NOT TIMED") for note in report["per_model"][0]["notes"].values())
    assert "| sls |" in result.stdout


def test_child_peak_memory_is_the_childs_own():
    """The corpus reads a child's peak RSS from its own memory, not the forking process's (which Linux
    carries over the exec into ``ru_maxrss``): a small child of a large process reads small."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.robots import run_child

    ballast = bytearray(300 * 1024 * 1024)
    ballast[::4096] = b"x" * len(ballast[::4096])
    code = "a = bytearray(60 * 1024 * 1024); a[::4096] = b'x' * len(a[::4096]); import time; time.sleep(0.2)"
    run = run_child([sys.executable, "-c", code], timeout=60)
    assert run["returncode"] == 0, run["stderr"]
    assert 60 <= run["peak_rss_mb"] < 250, run["peak_rss_mb"]
    del ballast
