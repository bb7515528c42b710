"""``reasonlab reproduce prontoqa-tinystories``: the study's class — its arms (each a profile and its groups), how an
arm trains, draws and summarizes, its sections of the docs (``docs.py``) and its rows of the results tables
(``findings.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from reasonlab.describe import axis_value
from reasonlab.studies.base import Arm, Records, Study
from reasonlab.studies.claims import Claim, Finding
from reasonlab.studies.prontoqa_tinystories import AXES, COSTS, GRIDS, findings, study_configs
from reasonlab.studies.prontoqa_tinystories.docs import LmDocs
from reasonlab.studies.prontoqa_tinystories.figures import draw_figures
from reasonlab.studies.prontoqa_tinystories.measure import measure_sweep
from reasonlab.studies.prontoqa_tinystories.report import summary_markdown
from reasonlab.studies.sections import Repository, Sections
from reasonlab.sweep.runner import run_configs


class ProntoqaTinystories(Study):
    """PrOntoQA reasoning text mixed with TinyStories: each arm trains its groups (``GRIDS``: the main γ × seed
    grid and the single-seed groups beside it), then draws the ΔL and cosine figures and writes ``summary.md``."""

    name = "prontoqa-tinystories"
    kind = "mixture"
    arms = {arm: Arm(profile=f"lm-{arm}", grid=groups["main"], cost=COSTS[arm]) for arm, groups in GRIDS.items()}
    what = "PrOntoQA reasoning text mixed with TinyStories, next-token training"
    figures = ("delta-l", "cosine")
    takes_seeds = False

    def train(self, arm: str, out: Path, make_executor: Any, console: Console, overrides: list[str] = (),
              seeds: list[int] | None = None) -> Records:
        """Every group's runs, trained group by group and, within a group, seed by seed: the first seed of every γ
        (the pilot) finishes before the other seeds start, and the single-seed groups come after the main grid."""
        groups = study_configs(arm, overrides)
        ordered = [c for cs in groups.values() for c in sorted(cs, key=lambda c: c.seed)]
        every = list({c.run_id(): c for c in ordered}.values())
        axes = [a for a in AXES if len({axis_value(c, a) for c in every}) > 1]
        report, rows = run_configs(f"{self.name}-{arm}", every, axes, {"profile": arm}, out, make_executor, console)
        return Records(arm, every, rows, report.sweep_dir, report, tuple(overrides))

    def draw(self, records: Records, out: Path) -> list[Path]:
        return draw_figures(study_configs(records.arm, records.overrides)["main"], _measured(records), out)

    def summarize(self, records: Records) -> str:
        return summary_markdown(records.arm, study_configs(records.arm, records.overrides), _measured(records),
                                records.report.timing())

    def docs(self, repo: Repository) -> LmDocs:
        """The study's docs over ``repo``: one per reading, which its sections, claims and findings share."""
        return repo.once(LmDocs, lambda: LmDocs(repo))

    def sections(self, repo: Repository) -> Sections:
        return self.docs(repo).sections()

    def claims(self, repo: Repository) -> list[Claim]:
        docs = self.docs(repo)
        return [findings.delta_l_claim(docs), findings.cosines_claim(docs)]

    def findings(self, repo: Repository) -> list[Finding]:
        return [findings.finding(self.docs(repo))]

    def finding_inputs(self, repo: Repository) -> list[str]:
        return findings.inputs(self.docs(repo))


def _measured(records: Records) -> dict[str, dict]:
    return records.once("measured", lambda: measure_sweep(records.configs, records.folder))
