"""Writes that lose nothing: atomic switch, no clobbering, other files kept, survives SIGKILL."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import import_package

import sls
from sls.backends.python import HEADER_MARK
from sls.output.write import write_package


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


def test_generate_refuses_bad_target_before_deriving(tmp_path):
    out = tmp_path / "pkg"
    out.mkdir()
    (out / "M_fun.py").write_text("print('mine')\n")
    with pytest.raises(sls.OutputError, match="M_fun.py"):
        sls.generate(sls.load_example("pendulum"), out)
    assert (out / "M_fun.py").read_text() == "print('mine')\n"


# --- in place: same folder, its mode and the user's files ------------------


def test_regenerate_in_place_keeps_the_folder_and_its_mode(tmp_path):
    out = tmp_path / "pkg"
    write_package(_files("old"), out)
    for mode in (0o750, 0o555):
        os.chmod(out, mode)
        inode = out.stat().st_ino
        write_package(_files("new"), out)
        assert out.stat().st_ino == inode  # the same folder: a shell or a kernel inside it stays valid
        assert out.stat().st_mode & 0o7777 == mode
    os.chmod(out, 0o755)


def test_out_is_the_current_folder(tmp_path, monkeypatch):
    (tmp_path / "notes.txt").write_text("mine")
    monkeypatch.chdir(tmp_path)
    write_package(_files("old"), ".")
    write_package(_files("new"), ".")
    assert (tmp_path / "a.py").read_text().endswith("'new'\n")
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["__init__.py", "a.py", "notes.txt"]


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_written_files_follow_the_umask(tmp_path, umask):
    from sls.output.write import replacing

    old = os.umask(umask)
    try:
        write_package(_files("new"), tmp_path / "pkg")
        with replacing(tmp_path / "design.json") as temporary:
            temporary.write_text("{}")
    finally:
        os.umask(old)
    for path in (tmp_path / "pkg" / "a.py", tmp_path / "pkg" / "__init__.py", tmp_path / "design.json"):
        assert path.stat().st_mode & 0o777 == 0o666 & ~umask, path
    assert (tmp_path / "pkg").stat().st_mode & 0o777 == 0o777 & ~umask


def test_stale_modules_and_temporaries_are_removed_user_files_kept(tmp_path):
    out = tmp_path / "pkg"
    write_package({**_files("old"), "c.py": f"{HEADER_MARK}test\nC = 'old'\n"}, out)
    (out / ".sls-tmp-a.py-dead").write_text("half")  # left by a killed run
    (out / "mine.py").write_text("print('mine')\n")
    write_package(_files("new"), out)
    assert sorted(p.name for p in out.iterdir()) == ["__init__.py", "a.py", "mine.py"]


def test_bytecode_of_a_same_sized_rewrite_is_not_reused(tmp_path):
    out = tmp_path / "pkg"
    script = f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import pkg; print(pkg.TAG)"
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    for tag in ("AAA", "BBB"):  # same size, within the same second
        write_package(_files(tag), out)
        result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env)
        assert result.stdout.strip() == tag
    assert (out / "__pycache__").is_dir()


def test_a_write_error_names_the_file_and_keeps_the_old_package(tmp_path):
    out = tmp_path / "pkg"
    write_package(_files("old"), out)
    (out / "b.py").mkdir()  # sls cannot rename a file over a folder
    with pytest.raises(sls.OutputError, match=r"b\.py"):
        write_package({**_files("new"), "b.py": f"{HEADER_MARK}test\n"}, out)


# --- killed at any moment: the old package, the new one, or a refusal -------

_PACKAGE_INIT = "from .a import A\nfrom .b import B\n"


def _package(tag: str, extra: bool = False) -> dict[str, str]:
    files = {
        "__init__.py": f"{HEADER_MARK}{tag}\n{_PACKAGE_INIT}TAG = {tag!r}\n",
        "a.py": f"{HEADER_MARK}{tag}\nA = {tag!r}\n",
        "b.py": f"{HEADER_MARK}{tag}\nB = {tag!r}\n",
    }
    if extra:
        files["c.py"] = f"{HEADER_MARK}{tag}\nC = {tag!r}\n"
    return files


def _state(out: Path) -> str:
    """'old', 'new' or 'refused'; fails on a package that imports as a mix."""
    try:
        package = import_package(out)
    except ImportError as error:
        assert "is incomplete" in str(error) and "run sls generate again" in str(error), error
        return "refused"
    tags = {path.read_text().splitlines()[0] for path in out.glob("*.py") if path.name != "mine.py"}
    assert len(tags) == 1, f"a mix of generations imports silently: {tags}"
    assert package.A == package.B == package.TAG
    return package.TAG


def test_sigkill_at_every_step_of_the_write_never_leaves_a_silent_mix(tmp_path):
    # Kill a process inside write_package before its k-th file-system call, for every k.
    out = tmp_path / "pkg"
    script = textwrap.dedent(
        f"""
        import os, signal, sys
        from pathlib import Path
        import sls.output.write as w
        step = int(sys.argv[1])
        calls = [0]
        def hook(original):
            def wrapped(*a, **k):
                calls[0] += 1
                if calls[0] == step:
                    os.kill(os.getpid(), signal.SIGKILL)
                return original(*a, **k)
            return wrapped
        for name in ("replace", "fsync", "unlink", "write"):
            setattr(w.os, name, hook(getattr(os, name)))
        w._drop_bytecode = hook(w._drop_bytecode)
        w.write_package({_package("new")!r}, Path({str(out)!r}))
        """
    )
    seen = []
    for step in range(1, 100):
        write_package(_package("old", extra=True), out)
        (out / "mine.py").write_text("MINE = 1\n")
        assert _state(out) == "old"
        result = subprocess.run([sys.executable, "-c", script, str(step)], capture_output=True)
        assert result.returncode in (0, -signal.SIGKILL), result.stderr
        seen.append(_state(out))
        assert (out / "mine.py").read_text() == "MINE = 1\n"
        if result.returncode == 0:
            assert seen[-1] == "new" and not (out / "c.py").exists()
            break
    else:
        pytest.fail("the write never completed")
    assert {"old", "refused", "new"} <= set(seen), seen
    assert seen.index("refused") < len(seen) - 1
    write_package(_package("final"), out)  # the next run repairs it and removes leftovers
    assert _state(out) == "final"
    assert sorted(p.name for p in out.iterdir() if p.name != "__pycache__") == [
        "__init__.py",
        "a.py",
        "b.py",
        "mine.py",
    ]


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
model = sls.model_from_strings(
    state=q + dq, T=" + ".join(T), V=" + ".join(V), fric=[f"0.1*{d}" for d in dq], params=params, name=f"chain{links}"
)
sls.generate(model, sys.argv[1])
"""


def _start(out: Path, links: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", SLOW_MODEL, str(out), str(links)], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def test_sigkill_during_generation_leaves_a_working_or_refusing_package(tmp_path):
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
        assert current["mine.txt"] == b"keep me"
        try:
            package = import_package(out)
        except ImportError as error:
            assert "run sls generate again" in str(error)
            outcomes.add("refused")
            continue
        if current == old:
            outcomes.add("old")
            assert package.N_DOF == 1 and package.qddot_fun([0.1, 0.0], [0.0]).shape == (1,)
        else:  # fully the new package: every generated module is the chain6 one
            assert all(b"chain6" in text for name, text in current.items() if name.endswith(".py"))
            assert package.N_DOF == 6
            outcomes.add("new")
            break
    assert "old" in outcomes
    # the next run removes what the killed runs left and just works
    sls.generate(sls.load_example("double_pendulum"), out)
    assert not [p for p in out.iterdir() if p.name.startswith(".sls-tmp-")]
    package = import_package(out)
    assert package.N_DOF == 2
    assert (out / "mine.txt").read_text() == "keep me"


def test_concurrent_runs_take_turns(tmp_path):
    out = tmp_path / "pkg"
    script = (
        "import sys; from sls.output.write import write_package; "
        f"[write_package({{k: v.replace('TAGX', sys.argv[1]) for k, v in {_package('TAGX')!r}.items()}}, {str(out)!r}) "
        "for _ in range(30)]"
    )
    processes = [subprocess.Popen([sys.executable, "-c", script, tag]) for tag in ("one", "two", "three")]
    assert all(p.wait(timeout=120) == 0 for p in processes)
    assert _state(out) in ("one", "two", "three")


def test_replacing_swaps_in_the_whole_file_or_nothing(tmp_path):
    from sls.output.write import replacing

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


def test_out_below_a_file_is_refused_before_deriving(tmp_path, monkeypatch):
    import sls.derive

    (tmp_path / "afile").write_text("data")
    monkeypatch.setattr(sls.derive, "derive", lambda *a, **k: pytest.fail("derived before checking --out"))
    with pytest.raises(sls.OutputError, match=r"afile/sub: cannot create it: .*afile is not a directory"):
        sls.generate(sls.load_example("pendulum"), tmp_path / "afile" / "sub")


def test_out_is_a_mount_point(tmp_path):
    """A mount point cannot be renamed or swapped; an in-place update does not need to (a private mount namespace)."""
    unshare = shutil.which("unshare")
    if unshare is None or subprocess.run([unshare, "-rm", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs unshare -rm (user and mount namespaces)")
    point = tmp_path / "mnt"
    point.mkdir()
    script = textwrap.dedent(
        f"""
        import os, sls
        from sls.output.write import write_package
        inode = os.stat({str(point)!r}).st_ino
        sls.generate(sls.load_example("pendulum"), {str(point)!r})
        sls.generate(sls.load_example("double_pendulum"), {str(point)!r})
        assert os.stat({str(point)!r}).st_ino == inode
        assert os.path.ismount({str(point)!r})
        print(open(os.path.join({str(point)!r}, "__init__.py")).read().count("N_DOF = 2"))
        """
    )
    result = subprocess.run(
        [unshare, "-rm", "sh", "-c", f'mount -t tmpfs none "{point}" && exec "{sys.executable}" -c "$0"', script],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if "mount:" in result.stderr and result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()}")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "1"
