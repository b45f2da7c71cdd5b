"""Progress output: one line that fits the terminal (80 columns too), plain lines elsewhere, nothing for short jobs."""

from __future__ import annotations

import io
import os
import re
import select
import subprocess
import sys

import pytest
from conftest import sls_env

from sls.progress import Progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _segments(text: str) -> list[str]:
    return [part.replace("\x1b[K", "") for part in re.split(r"[\r\n]", text)]


@pytest.mark.parametrize("columns", [200, 80, 60, 40, 20])
def test_terminal_line_fits_the_width_and_is_redrawn_in_place(columns, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(columns))
    stream = Terminal()
    with Progress(21, "generating mobile_manipulator_with_a_long_name", stream=stream, delay=0) as progress:
        for k in range(21):
            progress.step(f"codegen input_matrix_jac_fun {k}")
    text = stream.getvalue()
    assert max(len(part) for part in _segments(text)) <= columns - 1
    assert "\n" not in text  # one line, redrawn: nothing piles up
    assert text.endswith("\r\x1b[K")  # and erased at the end
    assert "100%" in text


def test_plain_lines_when_not_a_terminal():
    stream = io.StringIO()
    with Progress(1000, "simulating", stream=stream, delay=60, plain_delay=0) as progress:
        for k in range(1001):
            progress.update(k, f"t = {k / 100:g} s")
    text = stream.getvalue()
    assert "\r" not in text and "\x1b" not in text
    lines = text.splitlines()
    assert lines[0] == "simulating: 0% t = 0 s" and lines[-1] == "simulating: 100% t = 10 s"
    assert len(lines) == 11  # one per tenth


def test_nothing_for_a_short_job():
    for stream in (Terminal(), io.StringIO()):
        with Progress(5, "generating quick", stream=stream, delay=60, plain_delay=60) as progress:
            for k in range(5):
                progress.step(f"step {k}")
        assert stream.getvalue() == ""


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_sls_generate_on_an_80_column_terminal(tmp_path):
    """The real command on a real (pseudo-)terminal 80 columns wide: no line wider, no wrapped lines."""
    import fcntl
    import struct
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {key: value for key, value in sls_env().items() if key not in ("COLUMNS", "LINES")}
    code = "import sys; from sls.cli.app import main; sys.argv[0] = 'sls'; main()"
    process = subprocess.Popen(
        [sys.executable, "-c", code, "generate", "nlink", "--n", "7", "--out", str(tmp_path / "out")],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        elif process.poll() is not None:
            break
    process.wait(timeout=120)
    os.close(master)
    text = b"".join(chunks).decode()
    assert process.returncode == 0, text
    assert "generating nlink" in text  # the bar was shown (generation takes more than a second)
    assert max(len(part) for part in _segments(text)) <= 79
    assert "\n" not in text and text.endswith("\r\x1b[K")  # redrawn in place, erased at the end: no lines left
