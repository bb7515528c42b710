"""The shipped SCAN and COGS files: counts, round trips and clear errors on malformed lines."""

from __future__ import annotations

from collections import Counter
from importlib import resources

import pytest

from reasonlab.config import ConfigError
from reasonlab.tasks.text import cogs, scan, shipped_lines


def test_scan_files_load_with_upstream_counts():
    assert len(scan.load()) == 20_910
    counts = {"simple": (16_728, 4_182), "length": (16_990, 3_920), "addprim_jump": (14_670, 7_706),
              "addprim_turn_left": (21_890, 1_208), "template_around_right": (15_225, 4_476)}
    for split, (n_train, n_test) in counts.items():
        train, test = scan.load_split(split)
        assert (len(train), len(test)) == (n_train, n_test), split
    train, test = scan.load_split("addprim_jump")
    assert sum(e.command == ("jump",) for e in train) == 1_467  # upstream repeats the primitive's own example
    assert all("jump" in e.command for e in test)
    with pytest.raises(ConfigError, match="not a SCAN split"):
        scan.load_split("jumpy")


def test_scan_round_trip_and_an_example():
    lines = shipped_lines("scan", "tasks.txt")
    examples = scan.load()
    assert [f"IN: {' '.join(e.command)} OUT: {' '.join(e.actions)}" for e in examples] == lines
    assert scan.parse_line("IN: jump thrice and look OUT: I_JUMP I_JUMP I_JUMP I_LOOK", "x").actions == (
        "I_JUMP", "I_JUMP", "I_JUMP", "I_LOOK")


@pytest.mark.parametrize("line", ["jump OUT: I_JUMP", "IN: jump", "IN: jump OUT: I_FLY", "IN:  OUT: I_JUMP"])
def test_scan_malformed_lines_name_file_and_line(line):
    with pytest.raises(ConfigError, match=r"^scan/tasks.txt:7: "):
        scan.parse_line(line, "scan/tasks.txt:7")


def test_cogs_parts_and_categories():
    train = cogs.load("train")
    assert len(train) == 24_155
    assert Counter(e.category for e in train)["in_distribution"] == 24_000
    assert sum(e.category == "primitive" for e in train) == 143
    assert sum(e.category.startswith("exposure_example_") for e in train) == 12
    assert len(cogs.load("dev")) == len(cogs.load("test")) == 3_000
    gen = Counter(e.category for e in cogs.load("gen"))
    assert len(gen) == 21 and set(gen.values()) == {1_000}
    assert set(cogs.STRUCTURAL) <= set(gen) and set(gen) <= set(cogs.paper_sections())
    e = train[0]
    assert e.sentence[-1] == "." and e.logical_form and e.category == "in_distribution"
    with pytest.raises(ConfigError, match="not a COGS part"):
        cogs.load("valid")


def test_cogs_round_trip_and_malformed_lines():
    lines = shipped_lines("cogs", "dev.tsv")
    assert ["\t".join((" ".join(e.sentence), " ".join(e.logical_form), e.category)) for e in cogs.load("dev")] == lines
    for bad in ("A boy .\tboy ( x _ 1 )", "A boy .\t\tin_distribution", "one\ttwo\tthree\tfour"):
        with pytest.raises(ConfigError, match=r"^cogs/train.tsv:9: expected 3 non-empty"):
            cogs.parse_line(bad, "cogs/train.tsv:9")


@pytest.mark.parametrize("dataset", ["scan", "cogs"])
def test_licence_and_notice_ship_with_the_data(dataset):
    folder = resources.files("reasonlab") / "data" / dataset
    assert (folder / "LICENSE").is_file() and "License" in (folder / "LICENSE").read_text()
    assert "License" in (folder / "NOTICE.md").read_text() or "license" in (folder / "NOTICE.md").read_text()
