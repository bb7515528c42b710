"""The real benchmarks' ``task:`` section (anchor spec §8).

Layer: config (by its file name); imports only ``config.base``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from reasonlab.config.base import Seed, StrictModel

SCAN_SPLITS = ("simple", "length", "addprim_jump", "addprim_turn_left", "template_around_right")


class Seq2SeqTaskConfig(StrictModel):
    """A real benchmark as decoder-only sequence to sequence (anchor spec §8): ``<bos> source <sep> target <eos>``,
    loss on the target tokens (or on every token: next-token training), exact match of the greedy decoding.

    Training subsets are nested: the first ``n_train`` rows of one permutation of the benchmark's training pool,
    drawn from ``subset_seed`` (not the run seed), so a smaller set is a subset of every larger one.
    """

    kind: Literal["seq2seq"] = Field("seq2seq", description="the task kind: a real benchmark as decoder-only "
                                     "sequence to sequence, scored by exact match of the greedy decoding")
    benchmark: Literal["scan", "cogs", "addition", "prontoqa"] = Field(
        "scan", description="scan: commands to actions (split names the generalization test); cogs: sentences to "
        "logical forms; addition: a + b = c, tested on a held-out operand box; prontoqa: generated deductions "
        "(hops), answered true or false")
    split: str = Field("addprim_turn_left", description="SCAN split")
    n_train: int | None = Field(None, ge=1, description="training rows (a nested subset); default the whole pool")
    subset_seed: Seed = Field(0, description="seed of the nested training subset, the evaluation rows and "
                             "PrOntoQA's generated examples: the same data whatever the run's seed")
    eval_n: int | None = Field(None, ge=1, description="rows per evaluation set (per category for COGS gen); "
                               "default all")
    loss_on: Literal["target", "all"] = Field("target", description="target tokens, or every token (next-token)")
    # addition: a + b = c, operands 0..max_operand, test = both operands in the held-out box
    max_operand: int = Field(999, ge=10, description="addition: operands are 0..max_operand, written with its "
                             "number of digits")
    held_out: tuple[int, int] = Field((400, 600), description="addition: the box (lo, hi): a pair with both "
                                      "operands in lo..hi is never trained and forms the o.o.d. test")
    reverse_answer: bool = Field(False, description="answer digits least significant first")
    # prontoqa: generated examples (the reasoning-bias generator)
    hops: tuple[int, int] = Field((1, 5), description="prontoqa: the range (low, high) of deduction steps per "
                                  "example, drawn uniformly")
    n_test: int = Field(500, ge=1, description="PrOntoQA test examples (disjoint from training)")
    cot: bool = Field(True, description="PrOntoQA target holds the chain of thought before the answer")

    @model_validator(mode="after")
    def _check(self) -> Seq2SeqTaskConfig:
        if self.benchmark == "scan" and self.split not in SCAN_SPLITS:
            raise ValueError(f"split: {self.split!r} is not a SCAN split; choose one of {', '.join(SCAN_SPLITS)}")
        lo, hi = self.held_out
        if not 0 <= lo <= hi <= self.max_operand or (lo, hi) == (0, self.max_operand):
            raise ValueError(f"held_out: must be a box lo..hi inside 0..max_operand={self.max_operand}, not all of it")
        if not 1 <= self.hops[0] <= self.hops[1]:
            raise ValueError("hops: must be (low, high) with 1 <= low <= high")
        return self
