"""The README's verdict table can be read row by row: every cell is short, every verdict one of four words computed by
the stated rule, every row links its paper, the rows cross studies in the stated order; and the docs carry none of
the readings the committed runs do not support."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reasonlab.studies.claims import VERDICTS, verdict
from reasonlab.studies.tables import in_order

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
WORDS = {"reproduced", "partly", "not reproduced", "not testable at this scale"}
PAPERS = ("2405.05409", "2406.02550", "2502.04375")


def _verdict_rows() -> tuple[list[str], list[list[str]]]:
    """The header and the rows of the README's verdict table, each cell as written (an escaped ``\\|`` stays inside
    its cell)."""
    block = re.search(r"<!-- table: verdicts -->\n(.*?)<!-- /table -->", README, re.S).group(1)
    lines = [line for line in block.strip().splitlines() if not re.fullmatch(r"\|(---\|)+", line)]
    cells = [[c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]] for line in lines]
    return cells[0], cells[1:]


def test_every_cell_of_the_readme_verdict_table_is_at_most_200_characters():
    header, rows = _verdict_rows()
    assert header == ["study", "the paper's claim", "here", "verdict", "checked against the authors' code", "details"]
    assert len(rows) >= 10
    long = [(row[0], cell) for row in rows for cell in row if len(cell) > 200]
    assert not long, long


def test_each_verdict_is_one_of_four_words_and_each_row_links_its_paper():
    header, rows = _verdict_rows()
    at = header.index("verdict")
    assert {row[at] for row in rows} <= WORDS
    for row in rows:
        assert len(row) == len(header), row
        assert re.search(r"\(\[\d{4}\.\d{5}\]\(https://arxiv\.org/abs/\d{4}\.\d{5}\)\)", row[0]), row[0]
    assert all(any(p in row[0] for row in rows) for p in PAPERS)


@pytest.mark.parametrize(("units", "word"), [
    ([True, True, True], "reproduced"),
    ([True, False, True], "partly"),
    ([True, None], "partly"),
    ([False, None, False], "not reproduced"),
    ([None, None], "not testable at this scale"),
])
def test_the_verdict_rule(units, word):
    """No unit could test it → not testable; every unit held → reproduced; none held → not reproduced; else partly
    (held in some units, not held or not testable in others)."""
    assert set(VERDICTS) == WORDS
    assert verdict(units) == word


def test_rows_cross_studies_in_the_stated_order():
    """An entry names a study or some of its rows by key; rows no entry names follow as given (registration order);
    a row two studies share shows once."""
    rows = [("a/x", "ax"), ("b/e1/m", "be1"), ("c/y", "shared"), ("b/fig8", "b8"), ("d/y", "shared")]
    assert in_order(rows, ("c", "b/e1", "a")) == ["shared", "be1", "ax", "b8"]


def test_the_docs_hold_none_of_the_unsupported_readings():
    """Where no run generalized, depth 1 "never generalizing" is not a result; the step's speed against GPT-2 is
    stated per shape, not as one factor; a count of seeds beside a push always names its margins."""
    unsupported = [r"depth 1 never generaliz\w* o\.o\.d\.\W{0,8}held", r"twice as fast as (Hugging Face )?GPT-2",
                   r"larger weight decay (pushes[^.;|]*? )?in \d+ of \d+ seeds(?!( \([\d, ]+\))? \(largest − smallest)"]
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = " ".join(doc.read_text().split())
        for pattern in unsupported:
            assert not re.search(pattern, text, re.I), (doc.name, pattern)
