"""The anchor studies' classes: each study's arms, how an arm's sweep is specified, drawn and summarized (the
reading in ``phase.py``, ``trajectory.py``, ``complexity.py`` and ``lr_wd.py``), and its sections of the docs
(``docs.py``, ``demo_docs.py``, ``trajectory_docs.py``) and rows of the results tables (``findings.py``)."""

from __future__ import annotations

from pathlib import Path

from reasonlab.config import raw_config
from reasonlab.studies.anchor import complexity, findings, lr_wd, phase, trajectory
from reasonlab.studies.anchor.demo_docs import demo_sections
from reasonlab.studies.anchor.docs import complexity_sweep, lr_wd_sweep, phase_sections
from reasonlab.studies.anchor.figures import plot_trajectory
from reasonlab.studies.anchor.trajectory_docs import trajectory_sections
from reasonlab.studies.base import Arm, Records, Study
from reasonlab.studies.claims import Claim, Finding
from reasonlab.studies.sections import Repository, Sections, sweep_sections
from reasonlab.sweep.grid import SweepSpec

PHASE_ARMS: dict[str, Arm] = {
    "cpu": Arm(profile="cpu", grid={"init.gamma": [0.3, 0.5, 0.7, 0.9, 1.1], "model.depth": [2, 3, 4],
                                    "seed": [1, 2, 3]}),
    "cpu-wide": Arm(profile="cpu-wide", grid={"init.gamma": [0.5, 0.7, 0.75, 0.8], "model.depth": [2],
                                              "seed": [1, 2, 3]}),
    "cpu-wide-wd": Arm(profile="cpu-wide", changes=("train.weight_decay=0.28",),
                       grid={"init.gamma": [0.5, 0.8], "model.depth": [2], "seed": [1, 2, 3]}),
    "cpu-wide-cell": Arm(profile="cpu-wide", changes=("train.weight_decay=0.28",),
                         grid={"seed": [1, 2, 3], "init.gamma": [0.5, 0.8], "model.depth": [2],
                               "train.lr_multiplier": [10, 15, 20, 25, 30]}),
    "cpu-wide-long": Arm(profile="cpu-wide", changes=("train.weight_decay=0.28", "train.lr_multiplier=30",
                                                      "train.epochs=42"),
                         grid={"seed": [1, 2, 3], "init.gamma": [0.8, 0.5], "model.depth": [2]}),
    "paper": Arm(profile="paper", grid={"init.gamma": [0.3, 0.4, 0.5, 0.6, 0.7, 0.8], "model.depth": [2, 3, 4, 5, 6],
                                        "train.lr_multiplier": [10, 12.5, 15, 17.5, 20, 22.5, 25, 27.5, 30],
                                        "seed": [1, 2, 3]}),
}
# arms whose cells take the paper's statistic in full: per seed the max over peak learning rates AND evaluated epochs
# of the held-out answers, then the mean over seeds (the other arms read each run's final epoch)
OVER_EPOCHS = {"cpu-wide-cell", "cpu-wide-long"}


class AnchorPhase(Study):
    """The γ × depth phase diagram (``phase.py``): each arm writes the phase figure and ``summary.md`` beside its
    results table."""

    name = "anchor-phase"
    kind = "anchor"
    arms = PHASE_ARMS
    what = "γ × depth phase diagram of the anchor task (paper Fig. 2a,b)"
    figures = ("phase",)

    def draw(self, records: Records, out: Path) -> list[Path]:
        return phase.draw(records.configs, records.rows, out, records.arm in OVER_EPOCHS)[2]

    def summarize(self, records: Records) -> str:
        over_epochs = records.arm in OVER_EPOCHS
        return phase.summary_markdown(records.arm, records.configs[0].profile, records.configs, records.rows,
                                      records.report, phase.caption(records.configs, over_epochs), over_epochs)

    def sections(self, repo: Repository) -> Sections:
        return [*phase_sections(repo, self), *demo_sections(repo)]

    def claims(self, repo: Repository) -> list[Claim]:
        return [findings.phase_claim(repo, self)]

    def findings(self, repo: Repository) -> list[Finding]:
        return findings.phase_findings(repo, self)

    def finding_inputs(self, repo: Repository) -> list[str]:
        return findings.phase_inputs(repo, self)


TRAJECTORY_ARMS: dict[str, Arm] = {
    "paper": Arm(profile="trajectory", grid={"init.gamma+train.epochs": [[0.5, 9], [0.8, 27]]}),
    "seeds": Arm(profile="trajectory", grid={"init.gamma+train.epochs+seed": [[0.5, 9, 1], [0.8, 27, 1],
                                                                             [0.8, 27, 2], [0.8, 27, 3]]}),
}


class AnchorTrajectory(Study):
    """Paper-scale anchor runs retraced on a CPU (``trajectory.py``): every evaluation beside the authors' logged
    points, in a figure and in ``summary.md``. Both arms train into one store (``anchor-trajectory``), so that they
    share runs."""

    name = "anchor-trajectory"
    kind = "anchor"
    arms = TRAJECTORY_ARMS
    what = "two paper-scale anchor runs beside the authors' logged trajectory"
    figures = ("trajectory",)
    runs_on_cpu = True

    def spec(self, arm: str) -> SweepSpec:
        return SweepSpec(name=self.name, family=self.kind, profile=self.arms[arm].profile, grid=self.arms[arm].grid)

    def draw(self, records: Records, out: Path) -> list[Path]:
        return plot_trajectory(_ours(records), trajectory.authors_log(), out / "trajectory",
                               records.configs[0].profile, "")

    def summarize(self, records: Records) -> str:
        return trajectory.summary_markdown(_ours(records), trajectory.authors_log(), records.configs[0].profile)

    def sections(self, repo: Repository) -> Sections:
        return trajectory_sections(repo.root)

    def claims(self, repo: Repository) -> list[Claim]:
        return [findings.paper_scale_claim(repo.root)]

    def findings(self, repo: Repository) -> list[Finding]:
        return [findings.trajectory_finding(repo.root)]

    def finding_inputs(self, repo: Repository) -> list[str]:
        return findings.trajectory_inputs(repo.root)


def _ours(records: Records) -> dict[str, dict[str, dict]]:
    done = {r["run_id"] for r in records.rows}
    return trajectory.trajectories([records.folder / c.run_id() for c in records.configs if c.run_id() in done])


# All 16 pairs trained, nothing held out, no extra non-inferential pair: only the first k complexity pairs break
# the composition rule.
COMPLEXITY_TASK = {"held_out_pairs": [], "non_inferential": {}}
COMPLEXITY_ARMS: dict[str, Arm] = {
    "cpu": Arm(profile="cpu", grid={"task.complexity_k": [0, 1, 2, 3, 4, 5, 6], "init.gamma": [0.3, 0.6, 0.8],
                                    "seed": [2, 3, 4]}),
    "paper": Arm(profile="paper", grid={"task.complexity_k": [0, 1, 2, 3, 4, 5, 6], "init.gamma": [0.3, 0.8],
                                        "seed": list(range(2, 10))}),
}
# The code setting of the source (spec §7): 100k sequences, batch 300, 21 epochs, multiplier 10, depth 2.
COMPLEXITY_SETTINGS = {
    "cpu": {"train": {"epochs": 10, "eval_every": 1, "checkpoint_every": 10},
            "label": "10 epochs, evaluated every epoch"},
    "paper": {"task": {"n_train_per_pair": 6250}, "model": {"depth": 2},
              "train": {"epochs": 21, "batch_size": 300, "lr_multiplier": 10, "eval_every": 1},
              "label": "the source's code setting: 100k sequences, batch 300, 21 epochs, multiplier 10"},
}


class AnchorComplexity(Study):
    """Anchor outcomes as more pairs break the composition rule (``complexity.py``): the complexity figure and
    ``summary.md``."""

    name = "anchor-complexity"
    kind = "anchor"
    arms = COMPLEXITY_ARMS
    what = "anchor outcomes as more pairs get symmetric non-inferential targets"
    figures = ("complexity",)

    def spec(self, arm: str) -> SweepSpec:
        """The arm's sweep with every pair trained and the arm's training setting (``COMPLEXITY_SETTINGS``) in its
        label."""
        settings = {k: v for k, v in COMPLEXITY_SETTINGS[arm].items() if k != "label"}
        label = f"{raw_config(None, arm, [], 'anchor')['profile']}; anchor-complexity: all 16 pairs trained, " \
                f"{COMPLEXITY_SETTINGS[arm]['label']}"
        config = {**settings, "task": {**COMPLEXITY_TASK, **settings.get("task", {})}, "profile": label}
        return SweepSpec(name=f"anchor-complexity-{arm}", family="anchor", profile=self.arms[arm].profile,
                         config=config, grid=self.arms[arm].grid)

    def draw(self, records: Records, out: Path) -> list[Path]:
        return complexity.draw(records.configs, records.rows, records.folder, out)[2]

    def summarize(self, records: Records) -> str:
        table, epochs = complexity.fit_table(records.rows, records.folder), records.configs[0].train.epochs
        return complexity.summary_markdown(records.arm, records.configs[0].profile, table, epochs, records.report)

    def sections(self, repo: Repository) -> Sections:
        return sweep_sections([complexity_sweep(repo, self)])

    def findings(self, repo: Repository) -> list[Finding]:
        return [findings.complexity_finding(repo, self)]

    def finding_inputs(self, repo: Repository) -> list[str]:
        return complexity_sweep(repo, self).inputs()


# both pairs of lr_wd.PAIRS held out, depth 3, one head, γ 0.5
LR_WD_CONFIG = {"task": {"held_out_pairs": [[3, 4], [4, 3]], "non_inferential": {}},
                "model": {"depth": 3, "n_heads": 1}, "init": {"gamma": 0.5}}
LR_WD_ARMS: dict[str, Arm] = {
    "cpu": Arm(profile="cpu", grid={"train.lr_multiplier": [25, 50, 100], "train.weight_decay": [0.01, 0.1, 1.0],
                                    "seed": [1, 2, 3]}),
    "paper": Arm(profile="paper", grid={"train.lr_multiplier": [5, 10, 20, 40, 60],
                                        "train.weight_decay": [0.003, 0.01, 0.03, 0.1, 0.3],
                                        "seed": list(range(1, 10))}),
}


class AnchorLrWd(Study):
    """Anchor outcomes over peak learning rate × weight decay (``lr_wd.py``): the two maps and ``summary.md``."""

    name = "anchor-lr-wd"
    kind = "anchor"
    arms = LR_WD_ARMS
    what = "anchor outcomes over learning rate × weight decay"
    figures = ("lr-wd",)

    def spec(self, arm: str) -> SweepSpec:
        """The arm's sweep with both pairs held out (``LR_WD_CONFIG``), named in its label."""
        label = f"{raw_config(None, arm, [], 'anchor')['profile']}; anchor-lr-wd: depth 3, γ 0.5, " \
                f"{' and '.join(p.caption for p in reversed(lr_wd.PAIRS))} held out"
        return SweepSpec(name=f"anchor-lr-wd-{arm}", family="anchor", profile=self.arms[arm].profile,
                         config={**LR_WD_CONFIG, "profile": label}, grid=self.arms[arm].grid)

    def draw(self, records: Records, out: Path) -> list[Path]:
        return lr_wd.draw(records.configs, records.rows, out)

    def summarize(self, records: Records) -> str:
        return lr_wd.summary_markdown(records.arm, records.configs[0].profile, records.rows,
                                      records.configs[0].train.base_lr, records.report)

    def sections(self, repo: Repository) -> Sections:
        return sweep_sections([lr_wd_sweep(repo, self)])

    def claims(self, repo: Repository) -> list[Claim]:
        return [findings.lr_wd_claim(repo, self, axis) for axis in (0, 1)]

    def findings(self, repo: Repository) -> list[Finding]:
        return [findings.lr_wd_finding(repo, self)]

    def finding_inputs(self, repo: Repository) -> list[str]:
        return [*lr_wd_sweep(repo, self).inputs(), *findings.REFERENCE.inputs()]


PHASE, TRAJECTORY, COMPLEXITY, LR_WD = AnchorPhase(), AnchorTrajectory(), AnchorComplexity(), AnchorLrWd()
