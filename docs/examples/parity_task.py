"""A task of your own, in one file, with no edit inside reasonlab: parity of a few bits.

Import this module (or name it in an entry point, see docs/extending.md) and the kind ``parity`` is a task like
the built-in ones: ``reasonlab train --set task.kind=parity``, sweeps, results tables, ``reasonlab phase`` and
``reasonlab report`` all work, and ``reasonlab reproduce parity-gamma`` runs its study.

A sequence is ``n_bits`` tokens (1 = bit 0, 2 = bit 1) and an ``=`` token (3); the target at the last position is
the parity token (1 or 2). Some bit strings are held out of training: answering them right needs the rule, not
a memorized table.
"""

from __future__ import annotations

import itertools
from typing import Literal

import torch
from pydantic import Field

import reasonlab
from reasonlab.config import StrictModel, ThresholdConfig
from reasonlab.evaluate.set_score import Evaluation, SetScore
from reasonlab.seeds import subseed
from reasonlab.studies.base import Arm
from reasonlab.tasks.base import EvalSet, TaskData


class ParityConfig(StrictModel):
    """The ``task:`` section of a parity run; ``kind`` names the task (and must default to its name)."""

    kind: Literal["parity"] = "parity"
    n_bits: int = Field(6, ge=2, le=16)
    held_out: float = Field(0.25, gt=0, lt=1, description="fraction of bit strings never trained on")
    repeats: int = Field(8, ge=1, description="copies of each training string per epoch")


class ParityTask:
    """``ParityTask(config).build(seed)`` gives the run's data; the split of strings is drawn from the seed."""

    def __init__(self, cfg: ParityConfig):
        self.cfg = cfg

    def build(self, seed: int) -> TaskData:
        n = self.cfg.n_bits
        bits = torch.tensor(list(itertools.product([0, 1], repeat=n)))
        inputs = torch.cat([bits + 1, torch.full((len(bits), 1), 3)], dim=1)
        targets = bits.sum(1) % 2 + 1
        order = torch.randperm(len(bits), generator=torch.Generator().manual_seed(subseed(seed, "split")))
        n_test = max(1, round(self.cfg.held_out * len(bits)))
        test, train = order[:n_test], order[n_test:]
        reps = train.repeat(self.cfg.repeats)
        return TaskData(vocab_size=4, seq_len=n + 1, train_inputs=inputs[reps], train_targets=targets[reps],
                        eval_sets={"train": EvalSet(inputs[train], {"designated": targets[train]}),
                                   "test": EvalSet(inputs[test], {"designated": targets[test]})},
                        info={"n_train_strings": len(train), "n_test_strings": n_test})


class Parity(reasonlab.Kind):
    """The kind: its name, its config and task, and its summary; every other method (best-of-run rule, run figure,
    card, phase diagram, ...) keeps the generic default. Override one to change it."""

    name = "parity"
    config = ParityConfig
    task = ParityTask

    def summarize(self, scores: dict[str, SetScore], sets: dict[str, EvalSet], th: ThresholdConfig) -> Evaluation:
        """One evaluation's report: figures, and a label (fitted the training strings? then did the rule carry
        over?)."""
        figures = {f"{name}_acc": s.acc("designated") for name, s in scores.items()}
        if figures["train_acc"] < th.fit:
            label = "not-fitted"
        else:
            label = "rule" if figures["test_acc"] >= th.fit else "memorized" if figures["test_acc"] < th.majority \
                else "partial"
        return Evaluation(label, final=figures, pooled=figures, figures=figures, outcome={"label": label})


reasonlab.register_task(Parity, replace=True)

# ---- its study: a γ × depth grid, run with `reasonlab reproduce parity-gamma` ----------------------------------
BASE = ("task.kind=parity", "model.d_model=32", "model.n_heads=2", "model.d_k=16", "model.d_v=16",
        "model.d_ff=64", "model.max_positions=16", "train.epochs=3", "train.batch_size=32", "train.warmup_epochs=1",
        "train.lr_multiplier=100", "train.checkpoint_log=0", "profile=parity (tiny, cpu)")


class ParityGamma(reasonlab.Study):
    """Its one arm trains the grid; ``run`` then draws the phase diagram and writes summary.md with the shared
    helpers."""

    name = "parity-gamma"
    kind = "parity"
    arms = {"cpu": Arm(profile="cpu", changes=BASE,
                       grid={"init.gamma": [0.3, 0.8], "model.depth": [1, 2], "seed": [1]})}
    what = "parity: γ × depth (docs example)"
    figures = ("phase",)

    def spec(self, arm):  # no built-in profile: the arm's changes say everything
        from reasonlab.sweep.grid import SweepSpec

        return SweepSpec(name=f"parity-gamma-{arm}", set=list(self.arms[arm].changes), grid=self.arms[arm].grid)

    def draw(self, records, out):
        from reasonlab.report.phase import label_phase

        return label_phase(records.rows, out / "phase", "init.gamma", "model.depth", {"value": "final.test_acc"},
                           "")[0]

    def summarize(self, records):
        from reasonlab.report.markdown import document, failed_runs, header, table

        cells = [[f"{r['init.gamma']:g}", str(r["model.depth"]), f"{r['final.test_acc']:.3f}", r["label"]]
                 for r in records.rows]
        return document(header("parity-gamma", records.arm, records.configs[0].profile, records.report.timing()),
                        ["![phase](figures/phase.png)", ""],
                        table(["γ", "depth", "test accuracy", "label"], cells), failed_runs(records.report))


reasonlab.register_study(ParityGamma, replace=True)
