"""The crash-consistency harness (tests/faults.py) at a few kill points per scenario: a training run and a sweep
(its runs one by one, as stacked pairs, and as Ray tasks) are SIGKILLed at random moments — a sweep's whole
process group or its own process alone — and halfway through random atomic writes, resumed, and checked against
an uninterrupted run (same final figures and metrics rows, one results row per run, every file parses, no worker
left running)."""

from __future__ import annotations

import pytest
from faults import harness, input_harness

pytestmark = pytest.mark.slow  # the harnesses: many runs killed and resumed, many CLI invocations


@pytest.mark.parametrize(("scenario", "kills", "seed"), [("run", 4, 1), ("sweep", 2, 2), ("ensemble", 2, 3),
                                                         ("ray", 1, 2)])
def test_killed_and_resumed_equals_uninterrupted(scenario, kills, seed, tmp_path):
    if scenario == "ray":
        pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")
    figures = harness(scenario, kills, seed, work=tmp_path)
    assert figures.kill_points >= kills and figures.timed_kills + figures.write_kills == figures.kill_points
    assert figures.problems == []
    assert figures.resumes_completed == figures.trials
    assert figures.mismatches == 0 and figures.rows_lost == 0 and figures.rows_duplicated == 0
    assert figures.unparseable_files == 0 and figures.temp_files_left == 0 and figures.orphans_left == 0


def test_random_bad_input_is_rejected_in_one_line_and_writes_nothing(tmp_path):
    figures = input_harness(150, seed=3, work=tmp_path)
    assert figures["inputs_tried"] == 150 and figures["rejected"] > 100
    assert figures["tracebacks"] == 0 and figures["multi_line_errors"] == 0 and figures["wrote_something"] == 0
    assert figures["problems"] == []


def test_damaged_copied_linked_and_hostile_store_files_never_give_a_traceback(tmp_path):
    """The store scenario: each class of store damage in turn (files of the wrong shape, copied run directories,
    links out of the store, foreign Parquet tables, names and texts not in UTF-8, markup and escapes in stored
    strings, unfinished runs), each followed by every command that reads the store."""
    from faults import STORE_DAMAGES, store_harness

    figures = store_harness(STORE_DAMAGES, seed=2, work=tmp_path)
    assert figures["cases_tried"] >= 9 * STORE_DAMAGES and figures["rejected"] > 0
    assert figures["tracebacks"] == 0 and figures["multi_line_errors"] == 0
    assert figures["unescaped_output"] == 0 and figures["read_outside"] == 0
    assert figures["problems"] == []
