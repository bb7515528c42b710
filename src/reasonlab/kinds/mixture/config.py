"""The reasoning-bias mixture's ``task:`` section (reasoning-bias spec §2).

Layer: config (by its file name); imports only ``config.base``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from reasonlab.config.base import Seed, StrictModel, TaskSize


class MemoryGroup(StrictModel):
    """Memory anchors whose tuples share one label law (reasoning-bias spec §2, Fig. 8 variants).

    ``keys``: a label drawn once per key–tuple from the key range; ``range``: from ``lo..hi``; ``near_key``: from
    z − Σa .. z + Σa.
    """

    anchors: list[int] = Field(description="the group's memory anchors; its tuples are formed within them")
    labels: Literal["keys", "range", "near_key"] = Field("keys", description="where each key–tuple's label is "
                                                         "drawn from: the key range, lo..hi, or z − Σa .. z + Σa")
    lo: int | None = Field(None, description="lowest label of a 'range' group")
    hi: int | None = Field(None, description="highest label of a 'range' group")


class MixtureTaskConfig(StrictModel):
    """Reasoning and memory anchors in one training set (reasoning-bias spec §2); paper values are the defaults.

    Reasoning tuples are labelled z + Σ anchors; memory tuples by a table drawn once from ``table_seed``. Tuples are
    formed within the reasoning anchors and within each memory group; ``masked_tuples`` are never trained.
    """

    kind: Literal["mixture"] = Field("mixture", description="the task kind: reasoning and memory anchor tuples in "
                                     "one training set")
    key_min: int = Field(21, description="the smallest key z (keys are key_min..key_max; noise tokens and 'keys' "
                         "memory labels come from the same range)")
    key_max: int = Field(120, description="the largest key z; below vocab_size")
    rsn_anchors: list[int] = Field(list(range(11, 21)), description="the reasoning anchors: a tuple of them is "
                                   "labelled by the rule z + Σ anchors, which a model can infer for unseen tuples")
    memory_groups: list[MemoryGroup] = Field(
        [MemoryGroup(anchors=list(range(1, 11)))], description="the memory anchors, in groups (anchors, labels: "
        "keys | range | near_key, lo, hi): a tuple within a group is labelled by a table drawn once, which can only "
        "be memorized")
    q: int = Field(2, ge=1, description="anchors per tuple, right after the key in each sequence")
    seq_len: int = Field(9, ge=2, description="input tokens per sequence (key position uniform, the rest noise); "
                         "at least q + 1; ignored by emb_mlp_form")
    n_samples: int = Field(200_000, ge=1, description="sequences in all, masked ones included, split equally over "
                           "every tuple")
    masked_tuples: list[list[int]] = Field([[11, 13], [13, 11]], description="reasoning tuples never trained: "
                                           "accuracy on them is the reasoning test (does the model infer the rule?)")
    key_stratify: bool = Field(True, description="each key equally often within a tuple; false: keys drawn i.i.d. "
                               "uniform")
    memory_keying: Literal["ordered", "unordered"] = Field(
        "ordered", description="the memory table's key: (z, tuple) in order, or (z, sorted tuple), which the "
        "order-blind Emb-MLP can fit")
    emb_mlp_form: bool = Field(False, description="input is exactly [key, a1..aq]: no noise, key at position 0")
    table_seed: Seed = Field(1, description="seed of the memory label table: the same table whatever the run's seed")
    vocab_size: int = Field(201, ge=2, description="tokens 0..vocab_size-1 (0 the pad): above every key, anchor and "
                            "label")

    @model_validator(mode="after")
    def _check(self) -> MixtureTaskConfig:
        keys = set(range(self.key_min, self.key_max + 1))
        if self.key_min < 1 or self.key_min > self.key_max:
            raise ValueError("key_min: must be >= 1 and <= key_max")
        mem = [a for g in self.memory_groups for a in g.anchors]
        every = mem + list(self.rsn_anchors)
        if len(set(every)) != len(every):
            raise ValueError("memory_groups: anchors must be distinct across groups and from rsn_anchors")
        if not every:
            raise ValueError("rsn_anchors: give reasoning anchors or memory groups (or both)")
        if 0 in every or set(every) & keys:
            raise ValueError("rsn_anchors: anchors must be non-zero and disjoint from key_min..key_max")
        for g in self.memory_groups:
            if g.labels == "range" and (g.lo is None or g.hi is None or g.lo > g.hi):
                raise ValueError("memory_groups: a 'range' group needs lo <= hi")
        for t in self.masked_tuples:
            if len(t) != self.q or any(a not in self.rsn_anchors for a in t):
                raise ValueError(f"masked_tuples: {t} is not a tuple of {self.q} reasoning anchors")
        if not self.emb_mlp_form and self.seq_len < self.q + 1:
            raise ValueError(f"seq_len: must be >= q + 1 = {self.q + 1}")
        return self

    @property
    def length(self) -> int:
        return self.q + 1 if self.emb_mlp_form else self.seq_len

    def size(self) -> TaskSize:
        return TaskSize(self.vocab_size, "task.vocab_size", self.length, "task.seq_len", self.n_samples,
                        "task.n_samples")
