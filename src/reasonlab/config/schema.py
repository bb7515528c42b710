"""The run config's schema: the model, init, training and threshold sections and ``RunConfig`` itself.

Every number of an experiment lives here, validated once, so that a bad field fails before any file is
written and the resolved config fully describes (and hashes to) a run. The ``task:`` section is validated by the
config class its ``kind`` names in the task registry, so a task registered from outside reasonlab parses too; a
config names its task kind (there is no default task). The ``model:`` section is looked up the same way among the
model kinds (``transformer`` when a section names none: ``ModelConfig`` and ``EmbMLPConfig`` live here because
their memory footprints check a config before any model is built).

Layer: config; imports ``config.base``, ``config.identity``, ``config.messages`` and the ``registry`` (no task
kind).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, SerializeAsAny, ValidationError, field_validator, model_validator

from reasonlab import registry
from reasonlab.config import identity
from reasonlab.config.base import Seed, StrictModel, roles
from reasonlab.config.messages import validation_message
from reasonlab.errors import ConfigError

MAX_EPOCHS = 1_000_000  # the longest profile trains 1,000; the schedule is laid out per step before training
MAX_THREADS = 1024  # beyond any CPU's cores; torch's thread pool fails without a message far past it


class InitConfig(StrictModel):
    """The γ rule (std = d_in^-γ); overrides map a group name or parameter-name glob to its own γ."""

    gamma: float = Field(0.5, ge=0.0, le=4.0, description="initialization rate γ (0 to 4): every weight is drawn "
                         "from N(0, std²) with std = d_in^-γ, d_in its input width (d_model for embeddings); larger "
                         "γ = smaller initialization, which decides whether a model reasons or memorizes (0.5 ≈ "
                         "LeCun scale)")
    overrides: dict[str, float] = Field(
        {}, description="a γ of their own for some weights: a group (embedding, qk, vo, mlp, head, other; attention "
        "= qk and vo) or a parameter-name glob (blocks.0.*) mapped to its γ, a glob winning over a group; e.g. "
        "{embedding: 0.8} for an ablation; the rest keep init.gamma")
    bias: Literal["default", "zero"] = Field("default", description="PyTorch's default bias law, or zeros")
    scheme: Literal["gamma", "gpt"] = Field(
        "gamma", description="the γ rule, or GPT-2's N(0, std²) with the MLP output scaled by 1/√(2·depth)",
        **roles("late"))
    std: float = Field(0.02, gt=0, description="the gpt scheme's std (GPT-2's 0.02; a narrower model scales it up)",
        **roles("late"))

    @model_validator(mode="after")
    def _used(self) -> InitConfig:
        """The gpt scheme draws every weight at std 0.02: a γ or override given with it would be ignored, yet
        hashed into the run id (two ids, one run). So it is refused."""
        if self.scheme == "gpt" and (self.gamma != type(self).model_fields["gamma"].default or self.overrides):
            raise ValueError("gamma: init.scheme gpt does not use init.gamma or init.overrides; leave them out, "
                             "or use init.scheme=gamma")
        if self.scheme == "gamma" and self.std != type(self).model_fields["std"].default:
            raise ValueError("std: init.std is the gpt scheme's; the γ rule sets std = d_in^-γ (use init.gamma), "
                             "or set init.scheme=gpt")
        return self


class ModelConfig(StrictModel):
    """One configurable decoder transformer; defaults are the anchor study's model (spec §3)."""

    kind: Literal["transformer"] = Field("transformer", description="the model kind: a decoder-only transformer "
                                         "(the default when a model: section names no kind)")
    d_model: int = Field(400, ge=1, description="width of the residual stream and of the token and position "
                         "embeddings: the d_in of the embeddings, W_Q, W_K, W_V, the MLP's first layer and the head "
                         "(std d_model^-γ)")
    depth: int = Field(2, ge=1, description="number of blocks (attention then MLP), L in the papers: a phase-diagram "
                       "axis beside γ")
    n_heads: int = Field(1, ge=1, description="attention heads per block (the anchor paper's model has 1)")
    d_k: int = Field(200, ge=1, description="query and key width per head (scores scaled by 1/√d_k; even for rope "
                     "positions)")
    d_v: int = Field(200, ge=1, description="value width per head; the attention output W_O reads n_heads·d_v, its "
                     "d_in for the γ rule")
    d_ff: int = Field(1200, ge=1, description="hidden width of each block's MLP; the d_in of its second layer "
                      "(std d_ff^-γ)")
    activation: Literal["relu", "gelu"] = Field("relu", description="the MLP's nonlinearity")
    norm: Literal["post", "pre", "none"] = Field(
        "post", description="LayerNorm placement: post = LN(x + sublayer(x)) after each residual add (the anchor "
        "paper's); pre = x + sublayer(LN x) (GPT-2, the modular reference); none = no LayerNorm")
    final_norm: bool = Field(False, description="LayerNorm before the head (usual for pre-LN)")
    positions: Literal["learned", "rope", "none"] = Field(
        "learned", description="position information: a learned embedding table added to the tokens' (anchor "
        "paper), rotary embeddings on queries and keys (RoPE, base 10000; modular reference), or none")
    max_positions: int = Field(20, ge=1, description="longest sequence the model takes (rows of the learned "
                               "position table, length of the RoPE tables); at least the task's sequence length")
    block_bias: bool = Field(False, description="biases on the attention and MLP linears (the papers' blocks have "
                             "none)")
    head_bias: bool = Field(True, description="a bias on the output head (the anchor paper's head has one)")
    tied_head: bool = Field(False, description="the head reuses the token embedding (logits = h·Eᵀ), as the "
                            "modular reference does")
    ln_eps: float = Field(1e-5, gt=0, description="LayerNorm's ε, added to the variance (PyTorch's default 1e-5)")

    @model_validator(mode="after")
    def _fits(self) -> ModelConfig:
        check_memory(self.footprint(), "the model")
        return self

    def footprint(self, vocab: int = 0, vocab_field: str = "") -> dict[str, int]:
        """Bytes of weights, gradients and AdamW moments (fp32) by the field that sets them."""
        per_block = (self.d_model * self.n_heads * (2 * self.d_k + 2 * self.d_v) + 2 * self.d_model * self.d_ff
                     + 4 * self.d_model)
        heads = 1 if self.tied_head else 2  # embedding and head rows
        return {"d_model, d_ff or depth": 16 * self.depth * per_block,
                "max_positions": 16 * self.max_positions * self.d_model * (self.positions == "learned"),
                vocab_field: 16 * heads * vocab * self.d_model}


class EmbMLPConfig(StrictModel):
    """The reasoning-bias study's Emb-MLP: summed embeddings -> W1 -> tanh -> W2, no biases (spec §3)."""

    kind: Literal["emb_mlp"] = Field("emb_mlp", description="the model kind: summed token embeddings, one tanh "
                                     "layer, no attention or positions (order-blind)")
    d_model: int = Field(400, ge=1, description="embedding width (d_m): the d_in of the embedding and of W1, whose "
                         "std is d_model^-γ")
    d_ff: int = Field(1200, ge=1, description="hidden width of the tanh layer (d_f): the d_in of the output "
                      "layer W2, whose std is d_ff^-γ")

    @model_validator(mode="after")
    def _fits(self) -> EmbMLPConfig:
        check_memory(self.footprint(), "the model")
        return self

    def footprint(self, vocab: int = 0, vocab_field: str = "") -> dict[str, int]:
        """Bytes of weights, gradients and AdamW moments (fp32) by the field that sets them."""
        return {"d_model or d_ff": 16 * self.d_model * self.d_ff, vocab_field: 16 * vocab * (self.d_model + self.d_ff)}


def check_memory(parts: dict[str, int], what: str) -> None:
    """Refuse what needs more than this machine's memory, naming the field of its largest part: it could only
    fail later, with an allocator error or a MemoryError, hours into a sweep. ``parts``: bytes by field."""
    import os

    need = sum(parts.values())
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    if need > ram:
        field, most = max(parts.items(), key=lambda kv: kv[1])
        raise ValueError(f"{field}: {what} needs at least {need / 2**30:,.0f} GiB ({most / 2**30:,.0f} GiB of it "
                         f"set by {field}), more than this machine's {ram / 2**30:.0f} GiB; lower it")


class DecaySwitch(StrictModel):
    """Weight decay raised once, when the training loss has fallen below a bar: a grokking schedule keeps the decay
    weak while the model leaves its plateau and strengthens it after (the modular `grok` profile)."""

    loss_below: float = Field(gt=0, description="epoch-mean training loss under which the decay switches")
    weight_decay: float = Field(ge=0, description="the decay from then on (on the parameters train.weight_decay_on "
                                "names)")


class TrainConfig(StrictModel):
    """AdamW with per-batch linear warm-up then cosine (spec §4)."""

    epochs: int = Field(210, ge=1, le=MAX_EPOCHS, description="training epochs (of task.steps_per_epoch steps "
                        "where the task draws its batches per step)")
    batch_size: int = Field(2048, ge=1, description="sequences per optimizer step")
    base_lr: float = Field(1e-5, gt=0, description="the learning rate the warm-up starts from (and the cosine ends "
                           "at, unless floor_lr); the peak is base_lr × lr_multiplier", **roles("member"))
    lr_multiplier: float = Field(25.0, gt=0, description="the peak learning rate is base_lr × lr_multiplier",
                                 **roles("member"))
    floor_lr: float | None = Field(None, ge=0, description="end of the cosine; default base_lr", **roles("member"))
    warmup_epochs: float = Field(10, ge=0, description="linear warm-up from base_lr to the peak over this many "
                                 "epochs (a fraction allowed)")
    cosine_epochs: float | None = Field(None, description="default epochs - warmup_epochs")
    cosine_lag_steps: int = Field(
        0, ge=0, description="hold the peak this many steps past the warm-up before the cosine starts (1: the "
        "anchor authors' scheduler, GradualWarmupScheduler over CosineAnnealingLR, whose cosine runs one step late)",
        **roles("late"))
    weight_decay: float = Field(0.01, ge=0, description="AdamW's decoupled weight decay, on the parameters "
                                "weight_decay_on names", **roles("member"))
    weight_decay_switch: DecaySwitch | None = Field(
        None, description="switch to another weight decay, once, at the end of the first epoch whose mean training "
        "loss is below loss_below (logged as train/weight_decay; resumes with the optimizer's state)", **roles("late"))
    weight_decay_on: Literal["all", "matrices"] = Field(
        "all", description="every parameter, or only those with 2+ dimensions (not LayerNorms or biases)",
        **roles("late"))
    loss_mean: Literal["targets", "nonzero"] = Field(
        "targets", description="the loss is the mean over every scored target, or over the targets whose loss is "
        "not exactly 0 in float (the modular reference's `losses[losses > 0].mean()`, which drops targets fitted "
        "to the last bit and so weighs the rest more once many are)", **roles("late"))
    betas: tuple[Annotated[float, Field(ge=0, lt=1)], Annotated[float, Field(ge=0, lt=1)]] = Field(
        (0.9, 0.999), description="AdamW's (β1, β2)")
    eps: float = Field(1e-8, gt=0, description="AdamW's ε")
    grad_clip: float | None = Field(1.0, gt=0, description="clip the gradients' global norm to this; null: no "
                                    "clipping", **roles("member"))
    eval_every: int = Field(1, ge=1, description="evaluate every N epochs (and at the end)", **roles("member"))
    eval_max_per_set: int = Field(4096, ge=1, description="sequences per eval set between final evals",
                                  **roles("member"))
    checkpoint_every: int = Field(10, ge=1, description="epochs between checkpoints (and at the end)",
                                  **roles("execution", "member"))
    checkpoint_minutes: float = Field(
        5.0, gt=0, description="also a resume checkpoint after this much wall time (minutes), mid-epoch if need be, "
        "so a kill loses at most that; the next checkpoint replaces it", **roles("execution"))
    checkpoint_log: int = Field(8, ge=0, description="also this many log-spaced checkpoints from the end of "
                                "warm-up to the last epoch (for dynamics)", **roles("execution"))
    snapshot_fractions: list[Annotated[float, Field(gt=0, le=1)]] = Field(
        [], description="also save the weights (no optimizer state) at these fractions of training, mid-epoch if "
        "need be: checkpoints/snapshot-STEP (e.g. [0.05] for the early point of an embedding statistic); they "
        "never serve to resume", **roles("execution"))
    snapshot_steps: list[Annotated[int, Field(ge=1)]] = Field(
        [], description="also save the weights at these absolute steps (those past the end are skipped), as "
        "snapshot_fractions does: statistics read at the same step whatever the run's length", **roles("execution"))
    device: Literal["auto", "cpu", "cuda"] = Field(
        "auto", description="where the run trains: auto = the GPU when CUDA sees one, else the CPU; cuda = the GPU "
        "(refused when none is visible); cpu")
    precision: Literal["fp32", "bf16", "auto"] = Field(
        "fp32", description="bf16 autocast of forward and loss (fp32 master weights, no loss scaler); auto = bf16 "
        "on CUDA, fp32 on CPU", **roles("late"))
    tf32: bool = Field(False, description="on CUDA, matmuls in TF32 (a 10-bit mantissa: faster, less exact); no "
                       "effect on a CPU")
    threads: int | None = Field(None, ge=1, le=MAX_THREADS, description="torch intra-op threads; default all cores",
                                **roles("execution", "member"))
    loggers: list[Literal["tensorboard", "wandb"]] = Field(
        [], description="also send the metrics to TensorBoard (RUN_DIR/tensorboard/; pip install "
        "'reasonlab[tensorboard]') or to an offline W&B run (RUN_DIR/wandb/, uploaded later by wandb sync; pip "
        "install 'reasonlab[wandb]')", **roles("execution", "member"))

    @field_validator("loggers")
    @classmethod
    def _each_logger_once(cls, value: list[str]) -> list[str]:
        """A logger named twice would send every scalar twice."""
        if len(set(value)) != len(value):
            raise ValueError(f"{value} names a logger twice; name each once")
        return value

    def snapshot_plan(self, total: int) -> dict[int, float]:
        """Step -> fraction of training of the snapshots a run of ``total`` steps saves (``snapshot_fractions``,
        then ``snapshot_steps`` up to the end): the trainer saves them, the studies find them by it."""
        plan = {max(1, round(f * total)): f for f in self.snapshot_fractions}
        return plan | {s: s / total for s in self.snapshot_steps if s <= total}


class ThresholdConfig(StrictModel):
    """Outcome-label thresholds (spec §5, the project's choice)."""

    fit: float = Field(0.9, ge=0, le=1, description="accuracy (0 to 1) a run must reach on what it trained on to "
                       "count as fitted, else it is labelled not-fitted whatever else it does (the anchor study's "
                       "shadow: seen-pair test-key accuracy; each kind names its measure); also the level of "
                       "steps-to-fit")
    majority: float = Field(0.5, ge=0, le=1, description="accuracy (0 to 1) on unseen data above which a fitted "
                            "run is labelled by that answer (the anchor held-out pair's inferential or symmetric "
                            "target, the mixture's reasoning); at 0.5 two answers cannot both win")
    clean: float = Field(0.9, ge=0, le=1, description="accuracy (0 to 1) at which the winning answer is called "
                         "clean, not merely a majority (the anchor label's clean flag)")



def missing_kind(section: str, kinds: dict[str, Any]) -> str:
    """The message for a ``task:`` or ``model:`` section that names no kind (``kinds``: the registered ones)."""
    example = next(iter(kinds), "...")
    profile = ", or start from a built-in profile (--profile; `reasonlab train --help` lists them)" \
        if section == "task" else ""
    return (f"{section}.kind: missing; name the {section} kind ({', '.join(kinds)}), e.g. --set "
            f"{section}.kind={example}{profile}")


def validate_section(value: Any, section: str, kinds: dict[str, Any]) -> StrictModel:
    """A ``task:`` or ``model:`` section validated by the config class of its ``kind`` (``kinds``: the registered
    entries). A bad field is located as with a discriminated union (``task.<kind>.<field>``), so messages name it
    the same way."""
    kind = value.get("kind") if isinstance(value, dict) else getattr(value, "kind", None)
    if not isinstance(value, dict | BaseModel):
        raise ValueError("Input should be a valid dictionary or object to extract fields from")
    if kind is None:
        raise ValueError(missing_kind(section, kinds).removeprefix(f"{section}."))
    if not isinstance(kind, str) or kind not in kinds:
        raise ValueError(f"kind: {kind!r} is unknown; choose one of {', '.join(map(repr, kinds))}")
    cls = kinds[kind].config
    if isinstance(value, cls):
        return value
    try:
        return cls.model_validate(value.model_dump() if isinstance(value, BaseModel) else value)
    except ValidationError as e:
        details = [{"type": x["type"], "loc": (kind, *x["loc"]), "input": x["input"],
                    **({"ctx": x["ctx"]} if "ctx" in x else {})} for x in e.errors()]
        try:
            error = ValidationError.from_exception_data(e.title, details)
        except (KeyError, TypeError):  # an error type of a plug-in's own making: located without the kind
            raise e from None
        raise error from None


def validate_task(value: Any) -> StrictModel:
    """The ``task:`` section validated by the config class of its registered kind."""
    return validate_section(value, "task", registry.task_kinds())


@contextmanager
def _one_line() -> Iterator[None]:
    """A failed validation of a run config as the one-line ConfigError naming its first field, wherever it is
    validated: ``resolve``, the Python API's ``RunConfig(...)`` and ``RunConfig.model_validate(...)``."""
    try:
        yield
    except ValidationError as e:
        raise ConfigError(validation_message(e, RunConfig, run=True)) from None


class RunConfig(StrictModel):
    """A fully resolved run: everything that decides its numbers, plus the name of the profile it came from. A
    bad field, however it is validated, is a one-line ``ConfigError``."""

    def __init__(self, /, **data: Any) -> None:
        with _one_line():
            super().__init__(**data)

    @classmethod
    def model_validate(cls, obj: Any, **kwargs: Any) -> RunConfig:
        with _one_line():
            return super().model_validate(obj, **kwargs)

    @classmethod
    def model_validate_json(cls, json_data: str | bytes | bytearray, **kwargs: Any) -> RunConfig:
        with _one_line():
            return super().model_validate_json(json_data, **kwargs)

    @model_validator(mode="before")
    @classmethod
    def _default_model(cls, data: Any) -> Any:
        """A ``model:`` section that names no kind is the transformer, the generic model; the task has no such
        default: a config names its task kind (or starts from a profile that does)."""
        if not isinstance(data, dict):
            return data
        if "task" not in data:
            raise ValueError(missing_kind("task", registry.task_kinds()))
        if isinstance(data.get("model", {}), dict) and "kind" not in data.get("model", {}):
            data = {**data, "model": {"kind": "transformer", **data.get("model", {})}}
        return data

    seed: Seed = Field(1, description="the run's random draws: initial weights, batch order, and the task's "
                      "draws its own seeds do not fix", **roles("member"))
    task: SerializeAsAny[StrictModel] = Field(description="the data and how it is scored: its kind names a "
                                              "registered task kind, whose fields the rest of the section sets")
    model: SerializeAsAny[StrictModel] = Field(ModelConfig(), description="the network: its kind names a registered "
                                               "model kind (transformer when none), whose fields the rest sets")
    init: InitConfig = Field(InitConfig(), description="how the weights are drawn (the γ rule)", **roles("member"))
    train: TrainConfig = Field(TrainConfig(), description="the optimizer, schedule, evaluation and checkpoints")
    thresholds: ThresholdConfig = Field(ThresholdConfig(), description="the bars that turn accuracies into a run's "
                                        "label", **roles("member"))
    profile: str = Field("custom", description="name of the profile this run came from, e.g. 'cpu (reduced)'",
                         **roles("execution", "member"))

    @field_validator("task", mode="wrap")
    @classmethod
    def _task(cls, value: Any, handler: Any) -> Any:
        return validate_task(value)

    @field_validator("model", mode="wrap")
    @classmethod
    def _model(cls, value: Any, handler: Any) -> Any:
        return validate_section(value, "model", registry.model_kinds())

    @model_validator(mode="after")
    def _fits(self) -> RunConfig:
        """The whole run in memory: the model with its vocabulary, the task's sequences (int64), and one
        training batch's attention scores (fp32, one layer: a lower bound)."""
        size = getattr(self.task, "size", None)
        if size is None:
            return self
        t = size()
        parts = {(k if "." in k or "," in k else f"model.{k}"): v
                 for k, v in self.model.footprint(t.vocab, t.vocab_field).items()}
        data = 8 * t.sequences * t.seq_len
        parts[t.seq_field if t.seq_len > t.sequences else t.data_field] = data
        if isinstance(self.model, ModelConfig):
            scores = 4 * min(self.train.batch_size, t.sequences) * self.model.n_heads * t.seq_len ** 2
            parts[t.seq_field] = parts.get(t.seq_field, 0) + scores
        check_memory(parts, "the run")
        return self

    def work(self) -> float | None:
        """Parameters × tokens trained: how much the run computes (about a sixth of its FLOPs), to tell a
        paper-scale run from a reduced one; None when the task does not state its size."""
        size = getattr(self.task, "size", None)
        if size is None:
            return None
        t = size()
        params = sum(self.model.footprint(t.vocab, t.vocab_field).values()) / 16
        per_epoch = t.epoch_steps * self.train.batch_size if t.epoch_steps else t.sequences
        return params * per_epoch * t.seq_len * self.train.epochs

    def run_id(self) -> str:
        """Short hash of the resolved config (``config.identity.run_id``)."""
        return identity.run_id(self)
