"""Run configuration: pydantic models, YAML IO, dotted overrides and the run id.

Every number of an experiment lives here, validated once, so that a bad field fails before any file is
written and the resolved config fully describes (and hashes to) a run.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import typing
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator


class ConfigError(ValueError):
    """A bad config, override or path; its message is one line naming the field and the fix."""


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # no field means NaN or inf


Pair = tuple[int, int]

# A field's roles, declared once on the field; every list of fields is derived from them (``fields_with``).
# execution: how a run executes, not what it computes: not in the run id, not a "change" of its profile, free to
#            differ inside a phase-diagram cell (threads, checkpoint cadence, the profile's label; not the device,
#            whose kernels compute different numbers); member: may differ between the members of a stacked
#            ensemble (they share everything else).
Role = Literal["execution", "member"]


def roles(*names: Role) -> dict[str, Any]:
    return {"json_schema_extra": {"roles": list(names)}}


class AnchorTaskConfig(StrictModel):
    """The anchor-composition task (spec §2); paper values are the defaults."""

    kind: Literal["anchor"] = "anchor"
    anchors: list[int] = [1, 2, 3, 4]
    shifts: dict[int, int] = {1: 5, 2: 1, 3: -2, 4: -8}
    single_maps: dict[int, dict[int, int]] | None = Field(
        None, description="per-anchor lookup x -> g(x; a); replaces shifts for non-additive anchors"
    )
    held_out_pairs: list[Pair] = [(4, 3)]
    non_inferential: dict[str, int] = Field(
        {"3,4": -6}, description="'a1,a2' -> fixed offset y = x + offset replacing the composite"
    )
    complexity_k: int = Field(
        0, ge=0, description="give the first k unordered pairs of complexity_pairs symmetric non-inferential targets"
    )
    complexity_pairs: list[Pair] = [(1, 2), (1, 3), (1, 4), (2, 3), (2, 4), (3, 4)]
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
            return {",".join(str(int(x)) for x in k) if isinstance(k, list | tuple) else str(k): o
                    for k, o in v.items()}
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
                 "non_inferential": [_parse_pair(k) for k in self.non_inferential]}
        for field, pairs in named.items():
            for p in pairs:
                if p[0] not in anchors or p[1] not in anchors:
                    raise ValueError(f"{field}: pair {tuple(p)} is not an ordered pair of anchors {sorted(anchors)}")
        if len(self.complexity_offsets) != len(self.complexity_pairs):
            raise ValueError("complexity_offsets: needs one offset per complexity pair")
        if self.complexity_k > len(self.complexity_pairs):
            raise ValueError(f"complexity_k: must be <= {len(self.complexity_pairs)}")
        if any(p < 0 or p + 2 > self.seq_len - 1 for p in self.positions()):
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

    def modulus(self) -> int:
        return self.split_modulus if self.split_modulus is not None else self.seq_len - 2


def _parse_pair(key: str) -> Pair:
    try:
        a, b = (int(x) for x in key.split(","))
    except ValueError:
        raise ValueError(f"non_inferential key {key!r} must look like 'a1,a2'") from None
    return a, b


class InitConfig(StrictModel):
    """The γ rule (std = d_in^-γ); overrides map a group name or parameter-name glob to its own γ."""

    gamma: float = Field(0.5, ge=0.0, le=4.0)
    overrides: dict[str, float] = {}
    bias: Literal["default", "zero"] = Field("default", description="PyTorch's default bias law, or zeros")
    scheme: Literal["gamma", "gpt"] = Field(
        "gamma", description="the γ rule, or GPT-2's N(0, 0.02²) with the MLP output scaled by 1/√(2·depth)")

    @model_validator(mode="after")
    def _used(self) -> InitConfig:
        """The gpt scheme draws every weight at std 0.02: a γ or override given with it would be ignored, yet
        hashed into the run id (two ids, one run). So it is refused."""
        if self.scheme == "gpt" and (self.gamma != type(self).model_fields["gamma"].default or self.overrides):
            raise ValueError("gamma: init.scheme gpt does not use init.gamma or init.overrides; leave them out, "
                             "or use init.scheme=gamma")
        return self


class ModelConfig(StrictModel):
    """One configurable decoder transformer; defaults are the anchor study's model (spec §3)."""

    kind: Literal["transformer"] = "transformer"
    d_model: int = Field(400, ge=1)
    depth: int = Field(2, ge=1)
    n_heads: int = Field(1, ge=1)
    d_k: int = Field(200, ge=1)
    d_v: int = Field(200, ge=1)
    d_ff: int = Field(1200, ge=1)
    activation: Literal["relu", "gelu"] = "relu"
    norm: Literal["post", "pre", "none"] = "post"
    final_norm: bool = Field(False, description="LayerNorm before the head (usual for pre-LN)")
    positions: Literal["learned", "rope", "none"] = "learned"
    max_positions: int = Field(20, ge=1)
    block_bias: bool = False
    head_bias: bool = True
    tied_head: bool = False
    ln_eps: float = Field(1e-5, gt=0)

    @model_validator(mode="after")
    def _fits(self) -> ModelConfig:
        per_block = (self.d_model * self.n_heads * (2 * self.d_k + 2 * self.d_v) + 2 * self.d_model * self.d_ff
                     + 4 * self.d_model)
        check_memory(self.depth * per_block + self.max_positions * self.d_model, "d_model, d_ff or depth")
        return self


class EmbMLPConfig(StrictModel):
    """The reasoning-bias study's Emb-MLP: summed embeddings -> W1 -> tanh -> W2, no biases (spec §3)."""

    kind: Literal["emb_mlp"] = "emb_mlp"
    d_model: int = Field(400, ge=1)
    d_ff: int = Field(1200, ge=1)

    @model_validator(mode="after")
    def _fits(self) -> EmbMLPConfig:
        check_memory(self.d_model * self.d_ff, "d_model or d_ff")
        return self


def check_memory(n_params: int, knobs: str) -> None:
    """Refuse a model whose parameters (without the vocabulary-sized ones) with their gradients and AdamW
    moments, in fp32, exceed this machine's memory: it could only fail later with an allocator traceback."""
    import os

    need = 16 * n_params
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if need > ram:
        raise ValueError(f"the model needs at least {need / 2**30:,.0f} GiB for weights, "
                         f"gradients and AdamW state, more than this machine's {ram / 2**30:.0f} GiB; lower {knobs}")


class TrainConfig(StrictModel):
    """AdamW with per-batch linear warm-up then cosine (spec §4)."""

    epochs: int = Field(210, ge=1)
    batch_size: int = Field(2048, ge=1)
    base_lr: float = Field(1e-5, gt=0, **roles("member"))
    lr_multiplier: float = Field(25.0, gt=0, description="peak lr = multiplier x base_lr", **roles("member"))
    floor_lr: float | None = Field(None, ge=0, description="end of the cosine; default base_lr", **roles("member"))
    warmup_epochs: float = Field(10, ge=0)
    cosine_epochs: float | None = Field(None, description="default epochs - warmup_epochs")
    weight_decay: float = Field(0.01, ge=0, **roles("member"))
    weight_decay_on: Literal["all", "matrices"] = Field(
        "all", description="every parameter, or only those with 2+ dimensions (not LayerNorms or biases)")
    betas: tuple[Annotated[float, Field(ge=0, lt=1)], Annotated[float, Field(ge=0, lt=1)]] = (0.9, 0.999)
    eps: float = Field(1e-8, gt=0)
    grad_clip: float | None = Field(1.0, gt=0, **roles("member"))
    eval_every: int = Field(1, ge=1, description="evaluate every N epochs (and at the end)", **roles("member"))
    eval_max_per_set: int = Field(4096, ge=1, description="sequences per eval set between final evals",
                                  **roles("member"))
    checkpoint_every: int = Field(10, ge=1, description="epochs between checkpoints (and at the end)",
                                  **roles("execution", "member"))
    checkpoint_log: int = Field(8, ge=0, description="also this many log-spaced checkpoints from the end of "
                                "warm-up to the last epoch (for dynamics)", **roles("execution"))
    device: Literal["auto", "cpu", "cuda"] = "auto"
    precision: Literal["fp32", "bf16", "auto"] = Field(
        "fp32", description="bf16 autocast of forward and loss (fp32 master weights, no loss scaler); auto = bf16 "
        "on CUDA, fp32 on CPU")
    tf32: bool = False
    threads: int | None = Field(None, ge=1, description="torch intra-op threads; default all cores",
                                **roles("execution", "member"))
    loggers: list[Literal["tensorboard"]] = Field(
        [], description="also send the metrics to TensorBoard (RUN_DIR/tensorboard/; pip install "
        "'reasonlab[tensorboard]')", **roles("execution", "member"))


class ThresholdConfig(StrictModel):
    """Outcome-label thresholds (spec §5, the project's choice)."""

    fit: float = Field(0.9, ge=0, le=1)
    majority: float = Field(0.5, ge=0, le=1)
    clean: float = Field(0.9, ge=0, le=1)


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


class TextMixtureTaskConfig(StrictModel):
    """PrOntoQA-style reasoning text mixed with TinyStories for next-token training (reasoning-bias spec §4).

    One document per sequence (bos, tokens, eos; truncated to ``max_len`` tokens), the stories split
    ``1 − eval_fraction`` / ``eval_fraction``, PrOntoQA generated to the same counts with train and eval disjoint,
    a word tokenizer fitted on the training split.
    """

    kind: Literal["text_mixture"] = "text_mixture"
    n_per_source: int | None = Field(None, ge=2, description="documents per source; default all 2,316 stories")
    eval_fraction: float = Field(0.1, gt=0, lt=1)
    max_len: int = Field(512, ge=8)
    hops: tuple[int, int] = (1, 5)
    min_freq: int = Field(2, ge=1)
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
    p: int = Field(29, ge=3, description="a prime: one token per residue")
    n_shots: int = Field(32, ge=1)
    n_tasks: int = Field(512, ge=4, description="pre-training (i.d.) tasks")
    task_rule: Literal["rectangular", "random", "mixed"] = "rectangular"
    n_random: int = Field(0, ge=0, description="extra random tasks on top of the rectangular set (mixed rule)")
    alpha: float = Field(0.6, gt=0, lt=1, description="fraction of the p² input pairs used in training")
    n_ood_tasks: int = Field(256, ge=8)
    allow_zero_components: bool = True
    batch_mode: Literal["balanced_shared", "balanced_independent"] = "balanced_shared"
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


TaskConfig = Annotated[AnchorTaskConfig | MixtureTaskConfig | TextMixtureTaskConfig | ModularTaskConfig
                       | Seq2SeqTaskConfig,
                       Field(discriminator="kind")]


class RunConfig(StrictModel):
    """A fully resolved run: everything that decides its numbers, plus the name of the profile it came from."""

    @model_validator(mode="before")
    @classmethod
    def _default_kinds(cls, data: Any) -> Any:
        """``kind`` picks the task and the model; a config that names none is an anchor-study transformer."""
        if not isinstance(data, dict):
            return data
        for section, kind in (("task", "anchor"), ("model", "transformer")):
            if isinstance(data.get(section), dict) and "kind" not in data[section]:
                data = {**data, section: {"kind": kind, **data[section]}}
        return data

    seed: int = Field(1, ge=0, **roles("member"))
    task: TaskConfig = AnchorTaskConfig()
    model: Annotated[ModelConfig | EmbMLPConfig, Field(discriminator="kind")] = ModelConfig()
    init: InitConfig = Field(InitConfig(), **roles("member"))
    train: TrainConfig = TrainConfig()
    thresholds: ThresholdConfig = Field(ThresholdConfig(), **roles("member"))
    profile: str = Field("custom", description="name of the profile this run came from, e.g. 'cpu (reduced)'",
                         **roles("execution", "member"))

    def run_id(self) -> str:
        """Short hash of the resolved config: same numbers, same directory.

        Not hashed: the fields whose role is ``execution`` (the profile label, threads, the checkpoint cadence),
        so that any executor, with any split of cores, finds and resumes the same run.
        """
        data = self.model_dump(mode="json", exclude=_UNHASHED)
        for (section, name), default in LATE_FIELDS.items():
            if data.get(section, {}).get(name, default) == default:
                data.get(section, {}).pop(name, None)
        blob = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:12]


# Fields added after the run-id format was fixed, with the default that keeps the earlier behaviour. They enter
# the hash only when set to something else, so the runs of an existing store keep their ids.
LATE_FIELDS: dict[tuple[str, str], object] = {("train", "weight_decay_on"): "all", ("init", "scheme"): "gamma",
                                              ("train", "precision"): "fp32"}


_UNIONS = {"task": {"anchor", "mixture", "text_mixture", "modular", "seq2seq"}, "model": {"transformer", "emb_mlp"}}


def validation_message(err: ValidationError) -> str:
    e = err.errors()[0]
    parts = [str(x) for x in e["loc"] if not str(x).startswith("function-")]
    if len(parts) > 1 and parts[0] in _UNIONS and parts[1] in _UNIONS[parts[0]]:
        del parts[1]  # the union member's tag: "task.mixture.q" is the field task.q
    loc = ".".join(parts) or "config"
    msg = e["msg"].removeprefix("Value error, ")
    field, sep, rest = msg.partition(": ")
    if sep and field.isidentifier():  # a section-level check names its own field: task.held_out_pairs: ...
        loc, msg = f"{loc}.{field}" if loc != "config" else field, rest
    if e["type"] == "union_tag_invalid":
        ctx = e.get("ctx", {})
        return f"{loc}.kind: {ctx.get('tag')!r} is unknown; choose one of {ctx.get('expected_tags')}"
    if e["type"] == "extra_forbidden":
        close = difflib.get_close_matches(str(e["loc"][-1]), _sibling_fields(e["loc"]), n=1)
        hint = f"did you mean {loc.rsplit('.', 1)[0] + '.' if '.' in loc else ''}{close[0]}?" if close else \
            "check the spelling; see docs for the fields"
        return f"{loc}: unknown field ({hint})"
    return f"{loc}: {msg}"


def _sibling_fields(loc: tuple) -> list[str]:
    """The field names beside the last element of a validation error's location (for did-you-mean)."""
    model: Any = RunConfig
    for part in loc[:-1]:
        if isinstance(model, type) and issubclass(model, BaseModel) and part in model.model_fields:
            annotation = model.model_fields[part].annotation
            members = [a for a in typing.get_args(annotation) if isinstance(a, type)] or [annotation]
            model = members[0] if len(members) == 1 else {m.model_fields["kind"].default: m for m in members
                                                          if issubclass(m, BaseModel) and "kind" in m.model_fields}
        elif isinstance(model, dict):  # a union: the location names the member by its kind
            model = model.get(part)
        else:
            return []
    return list(model.model_fields) if isinstance(model, type) and issubclass(model, BaseModel) else []


class _Loader(yaml.SafeLoader):
    """Safe YAML without aliases: a config never needs them, and nested aliases expand exponentially."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed in configs",
                                              self.peek_event().start_mark)
        return super().compose_node(parent, index)


def _load(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass


MAX_OVERRIDE = 10_000  # characters in one --set item: far beyond any real value, far below a harmful one


def parse_value(text: str) -> Any:
    """Parse an override value as YAML so that '0.5', '[1,2]' and 'true' get their natural types."""
    try:
        return _load(text)
    except yaml.composer.ComposerError as e:
        raise ConfigError(f"override value {text[:40]!r}: {e.problem}") from None
    except (yaml.YAMLError, ValueError):  # ValueError: an integer of more than 4,300 digits
        return text


def set_dotted(data: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    if not all(parts):
        raise ConfigError(f"override {key!r}: empty field name; use e.g. model.depth=3")
    node = data
    for p in parts[:-1]:
        child = node.setdefault(p, {})
        if not isinstance(child, dict):
            raise ConfigError(f"override {key!r}: {p} is not a section")
        node = child
    node[parts[-1]] = value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply 'a.b=value' strings to a raw config dict (before validation)."""
    for item in overrides:
        if len(item) > MAX_OVERRIDE:
            raise ConfigError(f"override {item[:40]!r}...: longer than {MAX_OVERRIDE} characters; use a YAML file")
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"override {item!r}: expected key=value, e.g. init.gamma=0.8")
        set_dotted(data, key.strip(), parse_value(raw.strip()))
    return data


def load_yaml(path: Path) -> dict[str, Any]:
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as e:
        raise ConfigError(f"{path}: cannot read ({e.strerror}); pass an existing YAML file") from None
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start}); save it as UTF-8") from None
    try:
        data = _load(text)
    except ValueError as e:  # not a YAML error: an integer of more than 4,300 digits
        raise ConfigError(f"{path}: {str(e).split(';')[0]}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        problem = getattr(e, "problem", None) if isinstance(e, yaml.composer.ComposerError) else None
        raise ConfigError(f"{path}:{where} {problem or 'invalid YAML; fix the syntax'}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping of config sections")
    return data


def deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in top.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def fields_with(role: Role, model: type[BaseModel] | None = None, prefix: str = "") -> frozenset[str]:
    """The dotted names of the fields of a run config (or of ``model``) that declare ``role``; a section that
    declares it covers all its fields."""
    model = model or RunConfig
    out: set[str] = set()
    for name, info in model.model_fields.items():
        if role in ((info.json_schema_extra or {}).get("roles", []) if isinstance(info.json_schema_extra, dict)
                    else []):
            out.add(prefix + name)
        elif isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            out |= fields_with(role, info.annotation, f"{prefix}{name}.")
    return frozenset(out)


def nested_fields(dotted: frozenset[str]) -> dict[str, Any]:
    """Dotted names as a pydantic ``exclude`` (or ``include``) mapping."""
    out: dict[str, Any] = {}
    for name in dotted:
        section, _, field = name.partition(".")
        if field:
            out.setdefault(section, set()).add(field)
        else:
            out[section] = True
    return out


# Dotted fields that say how a run executes, not what it computes.
EXECUTION_FIELDS = fields_with("execution")
_UNHASHED = nested_fields(EXECUTION_FIELDS)  # run_id's exclusions, derived once (run ids are computed often)


def _leaves(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        out.update(_leaves(v, key + ".") if isinstance(v, dict) else {key: v})
    return out


def label_changes(profile_data: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the settings it changes from its built-in profile appended to the profile's label.

    A profile's label states its settings ("wd 0.01"); a run given ``--set train.weight_decay=0.28`` must not
    carry that label unqualified. Execution fields are left out: they do not change a run's numbers.
    """
    label = profile_data.get("profile")
    if not label or data.get("profile") != label:
        return data  # no built-in profile, or the user named the run's profile themselves
    before, after = _leaves(profile_data), _leaves(data)
    changed = [f"{k}={json.dumps(v)}" for k, v in after.items()
               if k not in EXECUTION_FIELDS and (k not in before or before[k] != v)]
    return {**data, "profile": f"{label}; changed: {', '.join(changed)}"} if changed else data


def unknown_name(what: str, name: str, choices: typing.Iterable[str]) -> ConfigError:
    """The one-line refusal of ``name`` (``what`` names it in the message: "--study 'anchr'"), which is none of
    ``choices``, suggesting the closest."""
    choices = list(choices)
    close = difflib.get_close_matches(name, choices, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    return ConfigError(f"{what}: unknown; {hint}choose one of {', '.join(choices)}")


def _profile_files() -> list[str]:
    folder = resources.files("reasonlab") / "profiles"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml"))


def studies() -> list[str]:
    """The studies with built-in profiles (``reasonlab/profiles/<study>-<profile>.yaml``; no dash in a study)."""
    return sorted({name.split("-", 1)[0] for name in _profile_files()})


def study_profiles(study: str) -> list[str]:
    """The built-in profiles of a study: ``reasonlab/profiles/<study>-<profile>.yaml``."""
    return [name[len(study) + 1 :] for name in _profile_files() if name.startswith(f"{study}-")]


def raw_config(config: Path | None, profile: str | None, overrides: list[str], study: str = "anchor") -> dict:
    """Profile, then the user's YAML over it, then ``--set`` overrides over both; not yet validated."""
    data: dict[str, Any] = {}
    if study not in studies():
        raise unknown_name(f"--study {study!r}", study, studies())
    if profile:
        names = study_profiles(study)
        if profile not in names:
            raise unknown_name(f"--profile {profile!r} of the {study} study", profile, names)
        data = load_yaml(Path(str(resources.files("reasonlab") / "profiles" / f"{study}-{profile}.yaml")))
    base = copy.deepcopy(data)
    if config is not None:
        data = deep_merge(data, load_yaml(config))
    return label_changes(base, apply_overrides(data, list(overrides)))


def resolve(data: dict[str, Any]) -> RunConfig:
    """Validate a raw dict into a RunConfig, turning pydantic's report into one line."""
    try:
        return RunConfig.model_validate(data)
    except ValidationError as e:
        raise ConfigError(validation_message(e)) from None


def to_yaml(cfg: RunConfig) -> str:
    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False)
