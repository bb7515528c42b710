"""The anchor studies' classes: each study's arms with their stated costs, how an arm's sweep is specified, drawn
and summarized (the reading in ``phase.py``, ``trajectory.py``, ``complexity.py`` and ``lr_wd.py``), the two demo
arms (``demo.py``: ``reasonlab demo anchor`` and ``reasonlab demo trajectory``), and each study's sections of the
docs (``docs.py``, ``demo_docs.py``, ``trajectory_docs.py``) and rows of the results tables (``findings.py``).

An arm's cost is measured where its runs are committed (``results/anchor-*``: their wall times summed, each run on
one thread), else counted in steps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.console import Console

from reasonlab.config import raw_config
from reasonlab.studies.anchor import complexity, demo, findings, lr_wd, phase, trajectory
from reasonlab.studies.anchor.demo_docs import demo_sections
from reasonlab.studies.anchor.docs import complexity_sweep, lr_wd_sweep, phase_sections
from reasonlab.studies.anchor.figures import plot_trajectory
from reasonlab.studies.anchor.trajectory_docs import trajectory_sections
from reasonlab.studies.base import CPU_HOURS, Arm, Demo, Records, Study
from reasonlab.studies.claims import Claim, Finding
from reasonlab.studies.sections import Repository, Sections, sweep_sections
from reasonlab.sweep.grid import SweepSpec

PHASE_ARMS: dict[str, Arm] = {
    "cpu": Arm(profile="cpu", grid={"init.gamma": [0.3, 0.5, 0.7, 0.9, 1.1], "model.depth": [2, 3, 4],
                                    "seed": [1, 2, 3]},
               cost=f"45 runs of 1,638 steps: 1.6 {CPU_HOURS}"),
    "cpu-wide": Arm(profile="cpu-wide", grid={"init.gamma": [0.5, 0.7, 0.75, 0.8], "model.depth": [2],
                                              "seed": [1, 2, 3]},
                    cost=f"12 runs of 2,808 steps: 3.5 {CPU_HOURS}"),
    "cpu-wide-wd": Arm(profile="cpu-wide", changes=("train.weight_decay=0.28",),
                       grid={"init.gamma": [0.5, 0.8], "model.depth": [2], "seed": [1, 2, 3]},
                       cost=f"6 runs of 2,808 steps: 1.5 {CPU_HOURS}"),
    "cpu-wide-cell": Arm(profile="cpu-wide", changes=("train.weight_decay=0.28",),
                         grid={"seed": [1, 2, 3], "init.gamma": [0.5, 0.8], "model.depth": [2],
                               "train.lr_multiplier": [10, 15, 20, 25, 30]},
                         cost=f"30 runs of 2,808 steps (84,240 in all); the first 16 committed: 6.8 {CPU_HOURS}, "
                              "about 0.4 each"),
    "cpu-wide-long": Arm(profile="cpu-wide", changes=("train.weight_decay=0.28", "train.lr_multiplier=30",
                                                      "train.epochs=42"),
                         grid={"seed": [1, 2, 3], "init.gamma": [0.8, 0.5], "model.depth": [2]},
                         cost="6 runs of 9,828 steps (58,968 in all)"),
    "paper": Arm(profile="paper", grid={"init.gamma": [0.3, 0.4, 0.5, 0.6, 0.7, 0.8], "model.depth": [2, 3, 4, 5, 6],
                                        "train.lr_multiplier": [10, 12.5, 15, 17.5, 20, 22.5, 25, 27.5, 30],
                                        "seed": [1, 2, 3]},
                 cost="810 runs of 77,700 steps (62.9 million in all)"),
}
# arms whose cells take the paper's statistic in full: per seed the max over peak learning rates AND evaluated epochs
# of the held-out answers, then the mean over seeds (the other arms read each run's final epoch)
OVER_EPOCHS = {"cpu-wide-cell", "cpu-wide-long"}


class AnchorPhase(Study):
    """The γ × depth phase diagram (``phase.py``): each arm writes the phase figure and ``summary.md`` beside its
    results table; its ``demo`` arm is ``reasonlab demo anchor``, the study in small."""

    name = "anchor-phase"
    kind = "anchor"
    arms = {**PHASE_ARMS, "demo": demo.ARM}
    what = "γ × depth phase diagram of the anchor task (paper Fig. 2a,b)"
    figures = ("phase",)

    def run_demo(self, arm: str, out: Path, seed: int, make_executor: Any, console: Console,
                 overrides: list[str] = ()) -> list[Path]:
        return demo.demo(out, seed, make_executor, console, overrides)

    def next_step(self, arm: str, paths: list[Path]) -> str:
        return f"reasonlab analyze {paths[0]} --probe flow"

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


# the one finished run (γ 0.5, seed 1) recorded no CPU; the others are committed as snapshots of unfinished runs
TRAJECTORY_ONE_FINISHED = "the one finished: 3.8 CPU-hours, 1 thread, CPU not recorded"
TRAJECTORY_ARMS: dict[str, Arm] = {
    "paper": Arm(profile="trajectory", grid={"init.gamma+train.epochs": [[0.5, 9], [0.8, 27]]},
                 cost=f"2 runs of 3,330–9,990 steps (13,320 in all); {TRAJECTORY_ONE_FINISHED}"),
    "seeds": Arm(profile="trajectory", grid={"init.gamma+train.epochs+seed": [[0.5, 9, 1], [0.8, 27, 1],
                                                                             [0.8, 27, 2], [0.8, 27, 3]]},
                 cost=f"4 runs of 3,330–9,990 steps (33,300 in all); {TRAJECTORY_ONE_FINISHED}"),
}
# ``reasonlab demo trajectory``: the `seeds` arm's runs as shipped with the package, drawn without training
TRAJECTORY_DEMO = Arm(profile="trajectory", grid=TRAJECTORY_ARMS["seeds"].grid,
                      demo=Demo("trajectory", "the anchor study's paper-scale runs, drawn from shipped data in "
                                              "seconds"),
                      cost="no runs trained; draws the shipped paper-scale runs in seconds")


class AnchorTrajectory(Study):
    """Paper-scale anchor runs retraced on a CPU (``trajectory.py``): every evaluation beside the authors' logged
    points, in a figure and in ``summary.md``. Both arms train into one store (``anchor-trajectory``), so that they
    share runs; its ``demo`` arm is ``reasonlab demo trajectory``, which draws the shipped runs and trains none."""

    name = "anchor-trajectory"
    kind = "anchor"
    arms = {**TRAJECTORY_ARMS, "demo": TRAJECTORY_DEMO}
    what = "two paper-scale anchor runs beside the authors' logged trajectory"
    figures = ("trajectory",)
    runs_on_cpu = True

    def spec(self, arm: str) -> SweepSpec:
        return SweepSpec(name=self.name, family=self.kind, profile=self.arms[arm].profile, grid=self.arms[arm].grid)

    def run_demo(self, arm: str, out: Path, seed: int, make_executor: Any, console: Console,
                 overrides: list[str] = ()) -> list[Path]:
        return demo.trajectory(out, console)

    def next_step(self, arm: str, paths: list[Path]) -> str:
        return "reasonlab reproduce anchor-trajectory --dry-run  ·  docs/anchor-composition.md"

    def draw(self, records: Records, out: Path) -> list[Path]:
        return plot_trajectory(_ours(records), trajectory.authors_log(), out / "trajectory",
                               records.configs[0].profile, "")

    def summarize(self, records: Records) -> str:
        return trajectory.summary_markdown(_ours(records), trajectory.authors_log(), records.configs[0].profile)

    def sections(self, repo: Repository) -> Sections:
        return trajectory_sections(repo)

    def claims(self, repo: Repository) -> list[Claim]:
        return [findings.paper_scale_claim(repo)]

    def findings(self, repo: Repository) -> list[Finding]:
        return [findings.trajectory_finding(repo)]

    def finding_inputs(self, repo: Repository) -> list[str]:
        return findings.trajectory_inputs(repo)


def _ours(records: Records) -> dict[str, dict[str, dict]]:
    """The finished runs' trajectories, read once: the figure and the summary both show them."""
    done = {r["run_id"] for r in records.rows}
    return records.once("trajectories", lambda: trajectory.trajectories(
        [records.folder / c.run_id() for c in records.configs if c.run_id() in done]))


# All 16 pairs trained, nothing held out, no extra non-inferential pair: only the first k complexity pairs break
# the composition rule.
COMPLEXITY_TASK = {"held_out_pairs": [], "non_inferential": {}}
COMPLEXITY_ARMS: dict[str, Arm] = {
    "cpu": Arm(profile="cpu", grid={"task.complexity_k": [0, 1, 2, 3, 4, 5, 6], "init.gamma": [0.3, 0.6, 0.8],
                                    "seed": [2, 3, 4]},
               cost=f"63 runs of 2,500 steps: 1.9 {CPU_HOURS}"),
    "paper": Arm(profile="paper", grid={"task.complexity_k": [0, 1, 2, 3, 4, 5, 6], "init.gamma": [0.3, 0.8],
                                        "seed": list(range(2, 10))},
                 cost="112 runs of 6,993 steps (783,216 in all)"),
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
        return complexity.draw(records.configs, _fit_table(records), out)

    def summarize(self, records: Records) -> str:
        return complexity.summary_markdown(records.arm, records.configs[0].profile, _fit_table(records),
                                           records.configs[0].train.epochs, records.report)

    def sections(self, repo: Repository) -> Sections:
        return sweep_sections([complexity_sweep(repo, self)])

    def findings(self, repo: Repository) -> list[Finding]:
        return [findings.complexity_finding(repo, self)]

    def finding_inputs(self, repo: Repository) -> list[str]:
        return complexity_sweep(repo, self).inputs()


def _fit_table(records: Records) -> list[dict]:
    """``complexity.fit_table`` of the finished runs, read once: the figure and the summary both show it."""
    return records.once("fit_table", lambda: complexity.fit_table(records.rows, records.folder))


# both pairs of lr_wd.PAIRS held out, depth 3, one head, γ 0.5
LR_WD_CONFIG = {"task": {"held_out_pairs": [[3, 4], [4, 3]], "non_inferential": {}},
                "model": {"depth": 3, "n_heads": 1}, "init": {"gamma": 0.5}}
LR_WD_ARMS: dict[str, Arm] = {
    "cpu": Arm(profile="cpu", grid={"train.lr_multiplier": [25, 50, 100], "train.weight_decay": [0.01, 0.1, 1.0],
                                    "seed": [1, 2, 3]},
               cost=f"27 runs of 1,526 steps: 1.1 {CPU_HOURS}"),
    "paper": Arm(profile="paper", grid={"train.lr_multiplier": [5, 10, 20, 40, 60],
                                        "train.weight_decay": [0.003, 0.01, 0.03, 0.1, 0.3],
                                        "seed": list(range(1, 10))},
                 cost="225 runs of 72,660 steps (16.3 million in all)"),
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
