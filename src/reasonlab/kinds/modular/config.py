"""In-context modular arithmetic's ``task:`` section (modular-icl spec §2).

Layer: config (by its file name); imports only ``config.base``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from reasonlab.config.base import Seed, StrictModel, TaskSize, roles


def curriculum_stages(start: int, n_tasks: int) -> int | None:
    """The doublings from ``start`` tasks to ``n_tasks``, or None when no power of two joins them."""
    stages = 0
    while start << stages < n_tasks:
        stages += 1
    return stages if start << stages == n_tasks else None


class ModularTaskConfig(StrictModel):
    """In-context modular arithmetic z = (a·x + b·y) mod p (modular-icl spec §2); paper values are the defaults.

    Training batches are drawn per step (balanced over the i.d. tasks), so an "epoch" here is ``steps_per_epoch``
    steps: the period of evaluations and checkpoints, and the unit of the schedule's epochs.
    """

    kind: Literal["modular"] = Field("modular", description="the task kind: in-context linear modular arithmetic, "
                                     "n_shots examples x y z of one task per sequence")
    p: int = Field(29, ge=3, le=1_000_000, description="a prime: one token per residue")
    n_shots: int = Field(32, ge=1, description="examples x y z per sequence (3·n_shots − 1 input tokens); the "
                         "last-shot accuracy is the prediction of the last z after n_shots − 1 examples")
    n_tasks: int = Field(512, ge=4, description="pre-training (i.d.) tasks")
    task_rule: Literal["rectangular", "random", "mixed"] = Field(
        "rectangular", description="how the i.d. tasks are drawn: rectangular = n_tasks/4 base tasks, each with the "
        "other three corners of a rectangle in the (a, b) plane (the reference's); random = uniform without "
        "replacement; mixed = rectangular plus n_random random ones")
    n_random: int = Field(0, ge=0, description="extra random tasks on top of the rectangular set (mixed rule)")
    alpha: float = Field(0.6, gt=0, lt=1, description="fraction of the p² input pairs used in training")
    n_ood_tasks: int = Field(256, ge=8, description="o.o.d. tasks (outside the i.d. set, never trained) scored "
                             "for o.o.d. generalization: at most this many, a multiple of 8")
    allow_zero_components: bool = Field(True, description="tasks may have a = 0 or b = 0 (the reference's draws); "
                                        "false: a, b in 1..p-1")
    batch_mode: Literal["balanced_shared", "balanced_independent"] = Field(
        "balanced_shared", description="each batch holds batch_size/n_tasks sequences of every i.d. task; shared: "
        "every task gets the same rows of input pairs, so its sequences differ only in z (the reference's); "
        "independent: rows of its own per task")
    pair_draw: Literal["stream", "iid"] = Field(
        "stream", description="training pair ids: shuffled passes over the train pairs (no repeat inside a "
        "sequence), or i.i.d. with replacement as the reference's sampler draws them (repeats that a copying "
        "head can use); evaluation sets are always drawn from passes", **roles("late"))
    eval_rows: Literal["shared", "independent"] = Field(
        "shared", description="evaluation batches: one row of pair ids shared by every task (as in training), or "
        "a row of its own per sequence, so that a set of n sequences holds about n distinct last-shot queries",
        **roles("late"))
    eval_iid: bool = Field(False, description="also score each set with i.i.d. pair draws (the reference's "
                           "figure, which a copier of repeated pairs inflates), as sets named SET:iid; for "
                           "comparison only, never the phase criterion", **roles("late"))
    task_seed: Seed = Field(1, description="seed of the i.d. and o.o.d. task draws: the same tasks whatever the "
                           "run's seed")
    split_seed: Seed = Field(0, description="seed of the α split of the p² input pairs into train and test pairs "
                            "(the reference's data seed 0)")
    split_draw: Literal["torch", "numpy"] = Field(
        "torch", description="the α split's permutation of the p² pairs: torch's generator, or NumPy's legacy "
        "RandomState(split_seed) as the reference draws it (the same split as the reference's data_seed)",
        **roles("late"))
    steps_per_epoch: int = Field(1000, ge=1, description="training steps per 'epoch' (batches are drawn per "
                                 "step): the unit of train.epochs, warm-up, evaluations and checkpoints")
    eval_batches: int = Field(16, ge=1, description="batches per evaluation set")
    eval_batch_size: int = Field(1024, ge=1, description="i.d. sequences per evaluation batch")
    vocab_size: int | None = Field(None, description="default p; 47 reproduces the reference's logits")
    curriculum_start: int | None = Field(
        None, ge=1, description="a task curriculum (a plateau aid): training batches hold only the first "
        "curriculum_start i.d. tasks at step 0, doubling in equal stages to all n_tasks at curriculum_steps",
        **roles("late"))
    curriculum_steps: int = Field(0, ge=0, description="the step from which batches hold every i.d. task",
        **roles("late"))

    @model_validator(mode="after")
    def _check(self) -> ModularTaskConfig:
        if any(self.p % d == 0 for d in range(2, int(self.p**0.5) + 1)):
            raise ValueError(f"p: {self.p} is not prime; the task needs the field Z_p")
        if self.split_draw == "numpy" and self.split_seed >= 2**32:
            raise ValueError(f"split_seed: {self.split_seed} is past NumPy's RandomState, which split_draw numpy uses "
                             "(seeds below 2**32)")
        if self.vocab_size is not None and self.vocab_size < self.p:
            raise ValueError(f"vocab_size: must be at least p={self.p}")
        if self.task_rule != "random" and self.n_tasks % 4:
            raise ValueError(f"n_tasks: {self.n_tasks} must be a multiple of 4 for the {self.task_rule} rule")
        if self.curriculum_start is not None:
            stages = curriculum_stages(self.curriculum_start, self.n_tasks)
            if stages is None:
                raise ValueError(f"curriculum_start: {self.curriculum_start} times a power of two must be n_tasks="
                                 f"{self.n_tasks} (the task count doubles stage by stage)")
            if stages and not self.curriculum_steps:
                raise ValueError("curriculum_steps: set the step by which batches hold every task (e.g. 5000)")
        return self

    def curriculum_tasks(self, step: int) -> int:
        """How many of the i.d. tasks (the first ones) training batches hold at ``step``."""
        if self.curriculum_start is None or step >= self.curriculum_steps:
            return self.n_tasks
        stages = curriculum_stages(self.curriculum_start, self.n_tasks) or 0
        return self.curriculum_start << min(stages, step * stages // self.curriculum_steps)

    def size(self) -> TaskSize:
        """Training batches are drawn per step; the evaluation sets (four, of ``eval_batches`` batches) are held."""
        vocab = ("task.vocab_size", self.vocab_size) if self.vocab_size is not None else ("task.p", self.p)
        return TaskSize(vocab[1], vocab[0], 3 * self.n_shots - 1, "task.n_shots",
                        4 * self.eval_batches * self.eval_batch_size, "task.eval_batch_size", self.steps_per_epoch)
