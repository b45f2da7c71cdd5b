"""benchmarks.free_flyer's generation figures: the compiles' CPU seconds and their critical path on idle cores."""

import shutil
import sys

import pytest
from conftest import REPO


@pytest.fixture(scope="module")
def free_flyer():
    sys.path.insert(0, str(REPO))
    from benchmarks import free_flyer

    return free_flyer


def test_critical_path_schedules_the_longest_compiles_first(free_flyer):
    critical_path = free_flyer.critical_path
    # 4 and 3 + 3 on two cores, 2 on the first (6 and 6), then the link alone
    assert critical_path([[4.0, 3.0, 3.0, 2.0], [1.0]], cores=2) == 7.0
    assert critical_path([[5.0, 1.0]], cores=2) == 5.0
    assert critical_path([[2.0, 2.0]], cores=1) == 4.0


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_timed_compiler_records_each_commands_cpu(free_flyer, tmp_path):
    (tmp_path / "a.c").write_text("int f(int x) { return x + 1; }\n")
    (tmp_path / "b.c").write_text("int g(int x) { return x * 2; }\n")
    batches: list = []
    run = free_flyer.timed_compiler(batches)
    run([["cc", "-c", "a.c", "-o", "a.o"], ["cc", "-c", "b.c", "-o", "b.o"]], str(tmp_path))
    assert (tmp_path / "a.o").is_file() and (tmp_path / "b.o").is_file()
    assert len(batches) == 1 and len(batches[0]) == 2 and all(s >= 0.0 for s in batches[0])


def test_goals_count_the_idle_estimate(free_flyer):
    cell = {"status": "ok", "generate_s": 90.0, "cpu_s": 2.0, "children_cpu_s": 20.0, "load_average": 9.0}
    cell.update(vdot_ratio=0.4, linearized_ratio=0.45)
    report = {"rows": [{"robot": "G1", "quaternion_c": {**cell, "idle_s": 14.0, "compile_jobs_s": [[5.0, 4.0]]}}]}
    found = {g["what"].split(" (")[0]: g for g in free_flyer.goals(report)}
    assert not found["G1 generation, c target"]["met"]
    assert found["G1 generation, c target on 2 idle cores"]["met"]
    assert found["G1 generation, c target on 2 idle cores"]["measured"] == 14.0
