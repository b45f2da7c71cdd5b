"""Progress output of the command line: one line that fits the terminal, or plain lines.

:class:`Progress` shows nothing until a job has run for a while (short jobs
stay quiet): on a terminal, after ``delay`` seconds, it redraws one line in
place (``label [bar] percent item``), never wider than the terminal, so no
wrapped lines pile up, also at 80 columns or fewer; on anything else (a log
file, a pipe, CI), after ``plain_delay`` seconds, it writes a plain line at
every tenth of the job.
"""

from __future__ import annotations

import shutil
import sys
import time
from typing import TextIO

__all__ = ["Progress"]

_ERASE = "\x1b[K"  # erase to the end of the line


class Progress:
    """Progress of a job of ``total`` steps, written to ``stream`` (default: stderr)."""

    def __init__(
        self, total: int, label: str, *, stream: TextIO | None = None, delay: float = 1.0, plain_delay: float = 5.0
    ) -> None:
        self.total = max(1, int(total))
        self.label = label
        self.stream = stream if stream is not None else sys.stderr
        self.start = time.perf_counter()
        self.done = 0
        self.item = ""
        self.terminal = _isatty(self.stream)
        self.delay = delay if self.terminal else plain_delay
        self.shown = ""  # the line on screen (terminal) or the last tenth written (plain)

    def step(self, item: str = "") -> None:
        """One more step done; ``item`` names what was just done."""
        self.update(self.done + 1, item)

    def update(self, done: int, item: str = "") -> None:
        """``done`` of ``total`` steps are done."""
        self.done = min(max(0, int(done)), self.total)
        self.item = item
        if time.perf_counter() - self.start < self.delay:
            return
        percent = 100 * self.done // self.total
        if self.terminal:
            line = self.line(percent, item, shutil.get_terminal_size((80, 24)).columns - 1)
            if line != self.shown:
                self._write("\r" + line + _ERASE)
                self.shown = line
        else:
            tenth = f"{percent // 10}"
            if tenth != self.shown:
                self._write(f"{self.label}: {percent}%{' ' + item if item else ''}\n")
                self.shown = tenth

    def line(self, percent: int, item: str, width: int) -> str:
        """The terminal line, at most ``width`` characters: the bar shrinks first, then the item and the label
        are cut."""
        width = max(1, width)
        share = f" {percent:3d}%"
        item = f" {item}" if item else ""
        bar = max(10, min(30, width - len(self.label) - 3 - len(share) - len(item)))
        room = width - bar - 3 - len(share)  # what is left for the label and the item
        label = self.label[: max(0, room)]
        item = item[: max(0, room - len(label))]
        filled = bar * percent // 100
        return f"{label} [{'#' * filled}{'-' * (bar - filled)}]{share}{item}"[:width]

    def close(self) -> None:
        """Remove the line from the terminal (plain lines stay)."""
        if self.terminal and self.shown:
            self._write("\r" + _ERASE)
            self.shown = ""

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed or broken stderr: progress is not worth failing for
            pass

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
