"""Writes that lose nothing: atomic switch, no clobbering, other files kept, survives SIGKILL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import sls
from conftest import import_package
from sls.render import HEADER_MARK
from sls.write import write_package


def _files(tag: str) -> dict[str, str]:
    return {
        "__init__.py": f"{HEADER_MARK}test\nTAG = {tag!r}\n",
        "a.py": f"{HEADER_MARK}test\nA = {tag!r}\n",
    }


def _snapshot(path: Path) -> tuple:
    info = path.lstat()
    return info.st_ino, info.st_mtime_ns, path.read_bytes() if path.is_file() else None


def test_fresh_write_and_regenerate(tmp_path):
    out = tmp_path / "pkg"
    write_package(_files("old"), out)
    assert (out / "a.py").read_text().endswith("'old'\n")
    write_package(_files("new"), out)
    assert (out / "a.py").read_text().endswith("'new'\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pkg"]  # no staging leftovers


def test_user_files_are_kept_untouched(tmp_path):
    out = tmp_path / "pkg"
    write_package(_files("old"), out)
    (out / "notes.txt").write_text("mine")
    (out / "sub").mkdir()
    (out / "sub" / "data.csv").write_text("1,2")
    os.utime(out / "sub", ns=(1_000_000_000, 1_000_000_000))
    (out / "link").symlink_to("notes.txt")
    before = {name: _snapshot(out / name) for name in ("notes.txt", "sub/data.csv")}
    write_package(_files("new"), out)
    assert {name: _snapshot(out / name) for name in before} == before  # same inode, mtime and content
    assert (out / "sub").stat().st_mtime_ns == 1_000_000_000
    assert os.readlink(out / "link") == "notes.txt"
    assert (out / "a.py").read_text().endswith("'new'\n")


def test_same_named_file_without_header_is_refused(tmp_path):
    out = tmp_path / "pkg"
    out.mkdir()
    (out / "a.py").write_text("# my own code\n")
    (out / "other.txt").write_text("x")
    before = {p.name: _snapshot(p) for p in out.iterdir()}
    with pytest.raises(sls.OutputError) as info:
        write_package(_files("new"), out)
    assert str(out / "a.py") in str(info.value) and "not written by sls" in str(info.value)
    assert {p.name: _snapshot(p) for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pkg"]


def test_out_is_an_existing_file(tmp_path):
    target = tmp_path / "file"
    target.write_text("data")
    with pytest.raises(sls.OutputError, match="is not a directory"):
        write_package(_files("new"), target)
    assert target.read_text() == "data"


def test_out_through_a_symlink_keeps_the_link(tmp_path):
    real = tmp_path / "real"
    write_package(_files("old"), real)
    (tmp_path / "link").symlink_to("real")
    write_package(_files("new"), tmp_path / "link")
    assert (tmp_path / "link").is_symlink()
    assert (real / "a.py").read_text().endswith("'new'\n")


def test_stale_staging_is_cleaned_but_a_live_one_is_not(tmp_path):
    import fcntl

    out = tmp_path / "pkg"
    stale = tmp_path / ".sls-staging-pkg-dead"
    stale.mkdir()
    (stale / "a.py").write_text("half")
    live = tmp_path / ".sls-staging-pkg-live"
    live.mkdir()
    fd = os.open(live, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        write_package(_files("new"), out)
        assert not stale.exists()
        assert live.exists()  # another sls is writing it
    finally:
        os.close(fd)


def test_generate_refuses_bad_target_before_deriving(tmp_path):
    out = tmp_path / "pkg"
    out.mkdir()
    (out / "M_fun.py").write_text("print('mine')\n")
    with pytest.raises(sls.OutputError, match="M_fun.py"):
        sls.generate(sls.load_example("pendulum"), out)
    assert (out / "M_fun.py").read_text() == "print('mine')\n"


# --- killed at any moment: the old package or the new one ------------------

SLOW_MODEL = """
import sys
import sls

links = int(sys.argv[2])
q = [f"q{i}" for i in range(1, links + 1)]
dq = [f"dq{i}" for i in range(1, links + 1)]
vx, vy, T, V = [], [], [], []
for i in range(links):
    vx.append(" + ".join(f"l{j}*cos(q{j})*dq{j}" for j in range(1, i + 2)))
    vy.append(" + ".join(f"l{j}*sin(q{j})*dq{j}" for j in range(1, i + 2)))
    T.append(f"1/2*m{i + 1}*(({vx[-1]})^2 + ({vy[-1]})^2)")
    V.append(f"-m{i + 1}*g*(" + " + ".join(f"l{j}*cos(q{j})" for j in range(1, i + 2)) + ")")
params = {f"m{i}": 1.0 for i in range(1, links + 1)} | {f"l{i}": 0.5 for i in range(1, links + 1)} | {"g": 9.81}
model = sls.model_from_strings(state=q + dq, T=" + ".join(T), V=" + ".join(V), fric=[f"0.1*{d}" for d in dq], params=params, name=f"chain{links}")
sls.generate(model, sys.argv[1])
"""


def _start(out: Path, links: int) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", SLOW_MODEL, str(out), str(links)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def test_sigkill_during_generation_leaves_the_old_package(tmp_path):
    out = tmp_path / "pkg"
    sls.generate(sls.load_example("pendulum"), out)
    (out / "mine.txt").write_text("keep me")
    old = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    # A 6-link chain takes seconds; kill it early (importing, deriving) and late.
    outcomes = set()
    for delay in (0.3, 1.2, 2.2):
        process = _start(out, 6)
        time.sleep(delay)
        process.send_signal(signal.SIGKILL)
        process.wait()
        current = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
        if current == old:
            outcomes.add("old")
        else:
            # fully the new package: every generated module is the chain6 one
            assert current["mine.txt"] == b"keep me"
            assert all(b"chain6" in text for name, text in current.items() if name.endswith(".py"))
            outcomes.add("new")
            break
        package = import_package(out)
        assert package.N_DOF == 1
        assert package.qddot_fun([0.1, 0.0], [0.0]).shape == (1,)
    assert "old" in outcomes
    # the next run cleans any staging folder the killed runs left and just works
    sls.generate(sls.load_example("double_pendulum"), out)
    assert not list(tmp_path.glob(".sls-staging-*"))
    package = import_package(out)
    assert package.N_DOF == 2
    assert (out / "mine.txt").read_text() == "keep me"


def test_sigkill_in_the_write_stage_leaves_old_or_new(tmp_path, monkeypatch):
    # Kill a process inside write_package at each step, deterministically.
    out = tmp_path / "pkg"
    write_package(_files("old"), out)
    (out / "mine.txt").write_text("keep me")
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        from pathlib import Path
        import sls.write as w
        step = int(sys.argv[1])
        calls = [0]
        def hook(name):
            original = getattr(w, name) if hasattr(w, name) else getattr(os, name)
            def wrapped(*a, **k):
                calls[0] += 1
                if calls[0] == step:
                    os.kill(os.getpid(), signal.SIGKILL)
                return original(*a, **k)
            return wrapped
        w._mirror = hook("_mirror")
        w._exchange = hook("_exchange")
        w.os.fsync = hook("fsync")
        w.shutil.rmtree = (lambda real: (lambda *a, **k: (hook("getpid")(), real(*a, **k))[1]))(w.shutil.rmtree)
        w.write_package({_files("new")!r}, Path({str(out)!r}))
        """
    )
    seen = set()
    for step in range(1, 7):
        result = subprocess.run([sys.executable, "-c", script, str(step)], capture_output=True)
        assert result.returncode in (0, -signal.SIGKILL), result.stderr
        text = (out / "a.py").read_text()
        seen.add((result.returncode, text.rsplit("=", 1)[1].strip()))
        assert text.endswith("'old'\n") or text.endswith("'new'\n")
        tag = text.rsplit("=", 1)[1]
        assert (out / "__init__.py").read_text().endswith(f"TAG ={tag}")
        assert (out / "mine.txt").read_text() == "keep me"
    assert (-signal.SIGKILL, "'old'") in seen and (-signal.SIGKILL, "'new'") in seen, seen
    write_package(_files("final"), out)
    assert not list(tmp_path.glob(".sls-staging-*"))
    assert (out / "a.py").read_text().endswith("'final'\n")


def test_replacing_swaps_in_the_whole_file_or_nothing(tmp_path):
    from sls.write import replacing

    target = tmp_path / "design.json"
    target.write_text("old")
    with replacing(target) as temporary:
        temporary.write_text("new")
        assert target.read_text() == "old"  # nothing visible until the end
    assert target.read_text() == "new"
    with pytest.raises(RuntimeError):
        with replacing(target) as temporary:
            temporary.write_text("half")
            raise RuntimeError("killed while writing")
    assert target.read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["design.json"]  # no temporary left behind
