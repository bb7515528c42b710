"""What every docs generator shares: the repository's paths, and the generator records (figures and tables) and
helpers of ``reasonlab.studies.sections`` bound to this repository."""

from __future__ import annotations

import re
from pathlib import Path

from reasonlab.config import load_yaml
from reasonlab.studies import sections
from reasonlab.studies.prontoqa_tinystories.docs import DL_SEARCH, LM, LM_REGIME  # noqa: F401 - shared here
from reasonlab.studies.reasoning_bias.docs import DEMO, MIXTURE, MIXTURE_SWEEPS, RB_CPU  # noqa: F401 - shared here
from reasonlab.studies.sections import (  # noqa: F401 - shared by the generators
    FIGURES,
    Figures,
    Table,
    analyze_pack,
    sweep_inputs,
    train_pack,
)
from reasonlab.sweep.results import markdown_table, query

REPO = Path(__file__).resolve().parents[2]
DOCS = ("README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md")))
TABLE = re.compile(r"<!-- table: (?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /table -->", re.S)
IMAGE = re.compile(r"!\[[^\]]*\]\((?P<path>[^)\s]+\.(?:png|svg))\)")

TRAJECTORY = "results/anchor-trajectory"
ANCHOR_PINS = "results/anchor/pins.yaml"  # the run ids the anchor study's docs cite
TRAJECTORY_RUNS = tuple(load_yaml(REPO / ANCHOR_PINS)["trajectory_runs"])
TRAJECTORY_REPLAYS = tuple(load_yaml(REPO / ANCHOR_PINS)["trajectory_replays"])
REGIME_ANCHOR = "prontoqa--tinystories-in-the-papers-regime---profile-regime"
ANCHOR_SEARCH = "results/anchor-search"
MODULAR = "results/modular"
CELL = "results/modular/cell"


def under(root: str, *names: str) -> list[str]:
    return [f"{root}/{n}" for n in names]


def counts(folders: list[str]) -> str:
    """``sections.counts`` of folders in this repository."""
    return sections.counts(REPO, folders)


def run_folders(folder: str) -> list[Path]:
    """``sections.run_folders`` of a folder in this repository."""
    return sections.run_folders(REPO, folder)


# ---- SQL tables over committed sweeps ---------------------------------------------------------------------------

def sql_of(root: str) -> str:
    return (REPO / root / "table.sql").read_text()


def sql_table(target: str, sql_root: str) -> str:
    return markdown_table(*query(REPO / target, sql_of(sql_root)))
