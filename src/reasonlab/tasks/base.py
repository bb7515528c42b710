"""What every task hands the trainer: a vocabulary, training tensors and named evaluation sets."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from torch import Tensor

IGNORE = -100  # a target the loss and the scores skip (cross_entropy's ignore_index)


def scored_columns(targets: Tensor) -> Tensor:
    """Per position (the last axis), whether any row scores it; leading axes are rows (or members and rows)."""
    return (targets != IGNORE).reshape(-1, targets.shape[-1]).any(0)


def scored_positions(targets: Tensor) -> Tensor | Literal["all"]:
    """The positions some row of (B, T) ``targets`` is scored at, or "all": a model asked for logits at these
    alone skips the rest of its final block (a modular sequence is scored at one position in three)."""
    read = scored_columns(targets)
    return "all" if bool(read.all()) else read.nonzero()[:, 0]


@dataclass
class EvalSet:
    """Sequences and how they are scored (``scoring``): ``labels``, the argmax of the last position against one or
    more named targets; ``tokens``, next-token accuracy and loss over the (B, T) ``designated`` targets not IGNORE;
    ``shots``, the same with the accuracy at each scored position too (the shots of an in-context sequence, the same
    positions in every row); ``sequences``, greedy decoding from each row's prompt, scored by exact match (the
    prompt lengths, categories and end token in ``info``).

    ``targets`` maps a target kind ("designated", "inferential", "symmetric", ...) to labels; ``reference`` names
    the kind whose offset histogram (prediction − reference) is worth keeping, if any. ``label_range`` is each
    sequence's (lowest, highest) possible label, for sets whose labels are drawn at random from a known range: the
    share of predictions inside it (the "in-range rate") shows a model learning the label law before the labels.
    """

    inputs: Tensor
    targets: dict[str, Tensor]
    reference: str | None = None
    scoring: Literal["labels", "tokens", "shots", "sequences"] = "labels"
    label_range: tuple[Tensor, Tensor] | None = None
    info: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.inputs)


@dataclass
class TaskData:
    vocab_size: int
    seq_len: int
    train_inputs: Tensor
    train_targets: Tensor
    eval_sets: dict[str, EvalSet]
    info: dict = field(default_factory=dict)
    artifacts: dict[str, str] = field(default_factory=dict)  # files the run keeps beside its config (e.g. a tokenizer)
    # Tasks whose batches are drawn per step (none fixed in advance): batch_fn(step, batch_size) -> (inputs,
    # targets), with ``steps_per_epoch`` steps to an epoch; train_inputs/targets then hold nothing.
    batch_fn: Callable[[int, int], tuple[Tensor, Tensor]] | None = None
    steps_per_epoch: int | None = None
    # Rows are right-padded with targets IGNORE after their last scored token: a batch's trailing columns that no
    # row scores can be cut before the forward pass (the model is causal, so no scored position reads them).
    right_padded: bool = False


def trim_padding(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """Drop the trailing columns that no row of the batch scores (right-padded rows of a causal model); the
    last axis is the position, any leading axes are rows (or ensemble members and rows)."""
    width = int(scored_columns(y).nonzero().max()) + 1
    return x[..., :width], y[..., :width]
