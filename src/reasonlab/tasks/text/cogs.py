"""COGS (Kim & Linzen 2020): English sentences to logical forms, with a generalization set of 21 categories.
Shipped in ``reasonlab/data/cogs`` (see its NOTICE.md and LICENSE)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources

from reasonlab.config import ConfigError
from reasonlab.tasks.text import shipped_lines

PARTS = ("train", "dev", "test", "gen")
STRUCTURAL = ("cp_recursion", "pp_recursion", "obj_pp_to_subj_pp")  # upstream: the rest of gen is lexical


@dataclass(frozen=True)
class Example:
    sentence: tuple[str, ...]
    logical_form: tuple[str, ...]
    category: str


def parse_line(line: str, where: str) -> Example:
    """``sentence <TAB> logical form <TAB> category``; anything else is an error naming ``where`` (file:line)."""
    cols = line.split("\t")
    if len(cols) != 3 or not all(c.strip() for c in cols):
        raise ConfigError(f"{where}: expected 3 non-empty tab-separated columns (sentence, logical form, "
                          f"category), found {len(cols)}: {line[:60]!r}")
    return Example(tuple(cols[0].split()), tuple(cols[1].split()), cols[2].strip())


def load(part: str) -> list[Example]:
    """One shipped part: train (24,155 rows), dev, test (3,000 each) or gen (21 categories × 1,000)."""
    if part not in PARTS:
        raise ConfigError(f"task.part: {part!r} is not a COGS part; choose one of {', '.join(PARTS)}")
    name = f"{part}.tsv"
    return [parse_line(line, f"cogs/{name}:{i}") for i, line in enumerate(shipped_lines("cogs", name), 1)
            if line.strip()]


def paper_sections() -> dict[str, str]:
    """Category → the paper section that describes it (upstream's gen_cases_to_paper_sections.json)."""
    path = resources.files("reasonlab") / "data" / "cogs" / "gen_cases_to_paper_sections.json"
    return json.loads(path.read_text())
