"""In-context modular arithmetic's ``task:`` section (modular-icl spec §2).

Layer: config (by its file name); imports only ``config.base``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from reasonlab.config.base import StrictModel, TaskSize


class ModularTaskConfig(StrictModel):
    """In-context modular arithmetic z = (a·x + b·y) mod p (modular-icl spec §2); paper values are the defaults.

    Training batches are drawn per step (balanced over the i.d. tasks), so an "epoch" here is ``steps_per_epoch``
    steps: the period of evaluations and checkpoints, and the unit of the schedule's epochs.
    """

    kind: Literal["modular"] = "modular"
    p: int = Field(29, ge=3, le=1_000_000, description="a prime: one token per residue")
    n_shots: int = Field(32, ge=1)
    n_tasks: int = Field(512, ge=4, description="pre-training (i.d.) tasks")
    task_rule: Literal["rectangular", "random", "mixed"] = "rectangular"
    n_random: int = Field(0, ge=0, description="extra random tasks on top of the rectangular set (mixed rule)")
    alpha: float = Field(0.6, gt=0, lt=1, description="fraction of the p² input pairs used in training")
    n_ood_tasks: int = Field(256, ge=8)
    allow_zero_components: bool = True
    batch_mode: Literal["balanced_shared", "balanced_independent"] = "balanced_shared"
    pair_draw: Literal["stream", "iid"] = Field(
        "stream", description="training pair ids: shuffled passes over the train pairs (no repeat inside a "
        "sequence), or i.i.d. with replacement as the reference's sampler draws them (repeats that a copying "
        "head can use); evaluation sets are always drawn from passes")
    eval_rows: Literal["shared", "independent"] = Field(
        "shared", description="evaluation batches: one row of pair ids shared by every task (as in training), or "
        "a row of its own per sequence, so that a set of n sequences holds about n distinct last-shot queries")
    eval_iid: bool = Field(False, description="also score each set with i.i.d. pair draws (the reference's "
                           "figure, which a copier of repeated pairs inflates), as sets named SET:iid; for "
                           "comparison only, never the phase criterion")
    task_seed: int = 1
    split_seed: int = 0
    steps_per_epoch: int = Field(1000, ge=1)
    eval_batches: int = Field(16, ge=1, description="batches per evaluation set")
    eval_batch_size: int = Field(1024, ge=1, description="i.d. sequences per evaluation batch")
    vocab_size: int | None = Field(None, description="default p; 47 reproduces the reference's logits")

    @model_validator(mode="after")
    def _check(self) -> ModularTaskConfig:
        if any(self.p % d == 0 for d in range(2, int(self.p**0.5) + 1)):
            raise ValueError(f"p: {self.p} is not prime; the task needs the field Z_p")
        if self.vocab_size is not None and self.vocab_size < self.p:
            raise ValueError(f"vocab_size: must be at least p={self.p}")
        if self.task_rule != "random" and self.n_tasks % 4:
            raise ValueError(f"n_tasks: {self.n_tasks} must be a multiple of 4 for the {self.task_rule} rule")
        return self

    def size(self) -> TaskSize:
        """Training batches are drawn per step; the evaluation sets (four, of ``eval_batches`` batches) are held."""
        vocab = ("task.vocab_size", self.vocab_size) if self.vocab_size is not None else ("task.p", self.p)
        return TaskSize(vocab[1], vocab[0], 3 * self.n_shots - 1, "task.n_shots",
                        4 * self.eval_batches * self.eval_batch_size, "task.eval_batch_size", self.steps_per_epoch)
