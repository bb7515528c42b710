"""What every docs generator shares: the repository's paths, the generator records (figures and tables) and the
helpers that read committed run folders."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from reasonlab.config import RunConfig, load_yaml
from reasonlab.sweep.results import markdown_table, query
from reasonlab.terminal import counted

REPO = Path(__file__).resolve().parents[2]
FIGURES = "docs/figures"
DOCS = ("README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md")))
TABLE = re.compile(r"<!-- table: (?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /table -->", re.S)
IMAGE = re.compile(r"!\[[^\]]*\]\((?P<path>[^)\s]+\.(?:png|svg))\)")

TRAJECTORY = "results/anchor-trajectory"
TRAJECTORY_RUNS = ("eccb67ef6ca2", "4d2848961e74.partial", "seeds/8732ed9f6031.partial",
                   "seeds/b2d3e06830da.partial", "seeds/rerun-2026-12-02/8732ed9f6031.partial")
TRAJECTORY_REPLAYS = ("replay/g0.8-theirs-long-2026-12-03.json", "replay/g0.8-theirs-2threads-2026-12-03.json")
LM = "results/reasoning-bias/prontoqa-tinystories-cpu"
LM_REGIME = "results/reasoning-bias/prontoqa-tinystories-regime"
LM_SWEEPS = {"cpu": LM, "regime": LM_REGIME}
CHECKING = False  # set by main under --check, so that the check writes nothing into results/
REGIME_ANCHOR = "prontoqa--tinystories-in-the-papers-regime---profile-regime"
MIXTURE = "results/reasoning-bias"
MIXTURE_SWEEPS = ("mixture-transformer-full", "mixture-transformer-seeds")
ANCHOR_SEARCH = "results/anchor-search"
DL_SEARCH = "results/reasoning-bias/dl-search"
MODULAR = "results/modular"
CELL = "results/modular/cell"
DEMO = "results/demo"
RB_CPU = "results/reasoning-bias-cpu"  # the synthetic study's cpu profile, committed


@dataclass(frozen=True)
class Figures:
    """A generator of figures: ``outputs`` maps each file it makes (repo path) to the file ``draw`` leaves in its
    scratch folder; ``inputs`` are the committed paths it reads, and ``command`` what trains and packs them (what
    ``--check`` and ``--pending`` say when they are missing; empty where the docs give it beside the figure)."""
    inputs: Callable[[], list[str]]
    outputs: dict[str, str]
    draw: Callable[[Path], object]
    command: str = ""


@dataclass(frozen=True)
class Table:
    """A generated table in ``doc`` (between its markers, or the whole file when ``whole``), its inputs and the
    command that commits them (as for ``Figures``)."""
    doc: str
    inputs: Callable[[], list[str]]
    render: Callable[[], str]
    whole: bool = False
    command: str = ""


def under(root: str, *names: str) -> list[str]:
    return [f"{root}/{n}" for n in names]


def run_folders(root: str) -> list[Path]:
    """Every run folder (finished or a ``.partial`` snapshot) under ``root``: a folder holding ``config.yaml``."""
    return sorted(p.parent for p in (REPO / root).rglob("config.yaml"))


# ---- SQL tables over committed sweeps ---------------------------------------------------------------------------

def sql_of(root: str) -> str:
    return (REPO / root / "table.sql").read_text()


def sql_table(target: str, sql_root: str) -> str:
    return markdown_table(*query(REPO / target, sql_of(sql_root)))


# ---- committed runs counted, and the commands that commit them -------------------------------------------------------

def counts(roots: list[str]) -> str:
    """Committed runs and seeds under ``roots``, and how many of the runs are unfinished snapshots."""
    runs = [d for r in roots for d in run_folders(r)]
    seeds = sorted({load_yaml(d / "config.yaml")["seed"] for d in runs})
    partial = sum(d.name.endswith(".partial") for d in runs)
    where = ", ".join(f"`{r}/`" for r in roots)
    return (counted(len(runs), "run") + (f" ({partial} unfinished, as snapshots)" if partial
                                   else "")
            + f", seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}: {where}")


def train_pack(study: str, profile: str = "cpu", results: str = "results") -> str:
    """Train a study's arm in a store outside the work tree, then pack its records under ``results``."""
    return (f"reasonlab reproduce {study} --profile {profile} --out ~/reasonlab-runs && reasonlab pack "
            f"~/reasonlab-runs/{study}-{profile} {results}/{study}-{profile}")


def analyze_pack(study: str, runs: list[str], probes: str = "") -> str:
    """Train and pack, then analyze some runs (with ``probes``, or every probe of their kind) and pack again."""
    return (f"{train_pack(study)}, then " + ", ".join(f"reasonlab analyze ~/reasonlab-runs/{study}-cpu/{run}"
                                                      f"{' ' + probes if probes else ''}" for run in runs)
            + " and the same pack again (it adds the analysis files)")


def sweep_inputs(folder: str, configs: list[RunConfig]) -> list[str]:
    """Each run's record in a committed sweep (its results table is rebuilt from them: packs carry none)."""
    return [f"{folder}/{c.run_id()}/{f}" for c in configs for f in ("config.yaml", "summary.json", "metrics.parquet")]
