"""``reasonlab reproduce reasoning-bias``: the study's class — its arms, how an arm trains (both models' profiles
over γ and seeds, and Fig. 8's runs), draws and summarizes, its sections of the docs (``docs.py``), its rows of
the results tables (``findings.py``) and its ``demo`` arm, which is ``reasonlab demo`` (``demo.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from reasonlab.studies.base import Records, Study
from reasonlab.studies.claims import Claim, Finding
from reasonlab.studies.reasoning_bias import ARMS, demo, draw, findings, measure, study_configs, summary_markdown
from reasonlab.studies.reasoning_bias.docs import RbDocs
from reasonlab.studies.sections import Repository, Sections
from reasonlab.sweep.runner import run_configs


class ReasoningBias(Study):
    """Reasoning and memory anchors in one training set, transformer and Emb-MLP at a large and a small
    initialization, and Fig. 8's label-distribution runs: the study's figures and its criteria in ``summary.md``."""

    name = "reasoning-bias"
    kind = "mixture"
    arms = {**ARMS, "demo": demo.ARM}
    what = "reasoning vs memory anchors in one training set, transformer and Emb-MLP"
    figures = ("label-distribution", "curves", "cosine-*", "pca-*", "profile-*")

    def run_demo(self, arm: str, out: Path, seed: int, make_executor: Any, console: Console,
                 overrides: list[str] = ()) -> list[Path]:
        return demo.demo(out, seed, make_executor, console, overrides)

    def next_step(self, arm: str, paths: list[Path]) -> str:
        return "reasonlab demo trajectory (the anchor study at paper scale, drawn without training)"

    def train(self, arm: str, out: Path, make_executor: Any, console: Console, overrides: list[str] = (),
              seeds: list[int] | None = None) -> Records:
        """Both models' profiles over γ and the seeds, and Fig. 8's runs (``study_configs``), as one sweep."""
        cfgs = study_configs(arm, overrides, seeds)
        report, rows = run_configs(f"{self.name}-{arm}", cfgs, ["model.kind", "init.gamma", "seed"], {"profile": arm},
                                   out, make_executor, console)
        if report.failed:
            console.print(f"{len(report.failed)} runs failed; the summary covers the finished ones")
        return Records(arm, cfgs, rows, report.sweep_dir, report, tuple(overrides))

    def draw(self, records: Records, out: Path) -> list[Path]:
        draw(_measured(records), records.configs, out)
        return []

    def summarize(self, records: Records) -> str:
        return summary_markdown(records.arm, records.configs, _measured(records), records.report.timing())

    def docs(self, repo: Repository) -> RbDocs:
        """The study's docs over ``repo``: one per reading, which its sections, claims and findings share."""
        return repo.once(RbDocs, lambda: RbDocs(repo))

    def sections(self, repo: Repository) -> Sections:
        return self.docs(repo).sections()

    def claims(self, repo: Repository) -> list[Claim]:
        docs = self.docs(repo)
        return [*(findings.e1_claim(docs, model) for model in findings.E1_MODELS), findings.spec_lr_claim(docs),
                findings.fig8_claim(docs)]

    def findings(self, repo: Repository) -> list[Finding]:
        return findings.findings(self.docs(repo))

    def finding_inputs(self, repo: Repository) -> list[str]:
        return findings.inputs(self.docs(repo))


def _measured(records: Records) -> dict:
    return records.once("measured", lambda: measure(records.configs, records.folder))
