"""``reasonlab reproduce modular-phase``: phase diagrams of in-context modular arithmetic over the number of
pre-training tasks × the fraction α of input pairs, per depth (modular-icl spec §5–§6, paper Fig. 1b/1c).

``paper`` is the reference recipe over the spec's 7 × 7 grid at depth 4 (~1.5e18 FLOPs per run: a GPU cluster).
``gpu`` is a one-GPU reduction (never run by the project: no GPU was lent; its cost is an estimate). ``cpu`` is
the reduced profile found by experiment on a 2-core machine; every figure and summary says it is reduced. The
summary checks the three claims the spec names: o.o.d. generalization appearing with the task count at depth 2,
depth 1 never generalizing o.o.d., and the o.o.d. shot curve rising with k (``report.py``).
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.studies.base import Arm, Records, Study
from reasonlab.studies.claims import Claim, Finding
from reasonlab.studies.modular import findings
from reasonlab.studies.modular.docs import ModularDocs
from reasonlab.studies.modular.report import Measured, draw, measure, summary_markdown
from reasonlab.studies.modular.route_r3 import RouteR3
from reasonlab.studies.sections import Repository, Sections

ARMS: dict[str, Arm] = {
    "cpu": Arm(profile="cpu", grid={"task.n_tasks": [8, 16, 32, 64], "task.alpha": [0.5, 0.7], "model.depth": [1, 2],
                                    "seed": [1, 2, 3]},
               cost="48 runs of 5,000 steps: 1.4 CPU-hours on an AMD EPYC, 1 thread a run"),
    "gpu": Arm(profile="gpu", grid={"task.n_tasks": [32, 64, 128, 256, 512], "task.alpha": [0.4, 0.6, 0.8],
                                    "model.depth": [1, 2], "seed": [1, 2]},
               cost="60 runs of 20,000 steps (1.2 million in all)"),
    "paper": Arm(profile="paper", grid={"task.n_tasks": [8, 16, 32, 64, 128, 256, 512],
                                        "task.alpha": [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8], "model.depth": [4],
                                        "seed": [1]},
                 cost="49 runs of 200,000 steps (9.8 million in all)"),
}


class ModularPhase(Study):
    """The four phases over tasks × data fraction: one phase figure per depth (final and early-stopped), the
    o.o.d. shot curves, and ``summary.md`` with a verdict per claim."""

    name = "modular-phase"
    kind = "modular"
    arms = ARMS
    what = "in-context modular arithmetic: the four phases over tasks × data fraction"
    figures = ("phase-L*", "shots")

    def draw(self, records: Records, out: Path) -> list[Path]:
        return draw(records.configs, records.rows, _measured(records), out)

    def summarize(self, records: Records) -> str:
        return summary_markdown(records.arm, records.configs[0].profile, records.rows, _measured(records),
                                records.report)

    def route_r3(self, repo: Repository) -> RouteR3:
        """Route R3 over the study's docs in ``repo``: one per reading, which its sections, claims and findings
        share (with what they have read)."""
        return repo.once(RouteR3, lambda: RouteR3(ModularDocs(repo, self)))

    def sections(self, repo: Repository) -> Sections:
        r3 = self.route_r3(repo)
        return [*r3.docs.sections(), *r3.sections()]

    def claims(self, repo: Repository) -> list[Claim]:
        r3 = self.route_r3(repo)
        return [findings.task_count_claim(r3), findings.depth_one_claim(r3), findings.grokking_claim(r3)]

    def findings(self, repo: Repository) -> list[Finding]:
        return findings.findings(self.route_r3(repo))

    def finding_inputs(self, repo: Repository) -> list[str]:
        return findings.inputs(self.route_r3(repo))


def _measured(records: Records) -> Measured:
    """``measure`` of the finished runs, read once: the figures and the summary both show it."""
    return records.once("measured", lambda: measure(records.rows, records.folder))


STUDY = ModularPhase()
