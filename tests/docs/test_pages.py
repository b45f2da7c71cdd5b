"""The pages under docs/ are user documentation: the project's diary (issue numbers, rounds of measurements, work
sessions) stays in docs/archive/ and in the dated measurement page (docs/performance.md); the CasADi and JAX pages keep
their figures in a short *Performance* section that links the record."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: Pages that are records of measurements by date.
RECORDS = {"performance.md"}
DIARY = re.compile(
    r"\bissue \d+|\bissue \d+'s goals?|\b(?:earlier|this|second|later) rounds?\b|\bsecond session\b|"
    r"\bRe-measured\b|\bgoals?\b[^.\n]*\b(?:met|not met)\b",
    re.I,
)
PAGES = sorted(p for p in DOCS.glob("*.md") if p.name not in RECORDS)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_user_page_reads_as_documentation_not_a_diary(page):
    found = [m.group(0) for m in DIARY.finditer(page.read_text(encoding="utf-8"))]
    assert not found, f"docs/{page.name} reads as a diary ({', '.join(found[:5])}): move it to docs/archive/"


@pytest.mark.parametrize("name", ["casadi.md", "jax.md"])
def test_the_targets_keep_their_figures_in_a_short_performance_section(name):
    text = (DOCS / name).read_text(encoding="utf-8")
    assert "\n## Performance\n" in text
    section = text[text.index("\n## Performance\n") :]
    assert len(section.splitlines()) <= 45, "a short section: the history goes to docs/archive/"
    assert "(archive/casadi-jax-2026-11.md)" in section
    assert (DOCS / "archive" / "casadi-jax-2026-11.md").is_file()


def test_the_diary_detector_sees_the_old_wording():
    for text in ("Against issue 26's goals: met", "### Earlier rounds", "Before this round", "goal ≤ 5 s: met"):
        assert DIARY.search(text), text
