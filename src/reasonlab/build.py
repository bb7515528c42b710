"""The two factories of a run: its task data and its initialized model, from its config.

The trainer, the analyses and the studies all build runs through here (never through the trainer), so nothing
above needs the trainer for them. ``build_task`` looks the task kind up in the registry, so a registered task is
built like a built-in one; ``build_model`` looks the model kind up the same way.

Layer: build, above ``models`` and ``tasks``; imports config, registry, init, tasks.base and seeds (the model
and task kinds come from the registry).
"""

from __future__ import annotations

from torch import Generator, nn

from reasonlab.config import RunConfig
from reasonlab.errors import ConfigError
from reasonlab.init import apply_init_rate
from reasonlab.registry import model_kind, task_kind
from reasonlab.seeds import subseed
from reasonlab.tasks.base import TaskData

BUILT_BY = "reasonlab_model_kind"  # an attribute of every model build_model returns: the model kind that built it


def make_task(cfg: RunConfig):
    """The task object of a run (its law: what probes read), built by its registered kind."""
    return task_kind(cfg.task.kind).task(cfg.task)


def build_task(cfg: RunConfig) -> TaskData:
    """The run's training data and named evaluation sets."""
    return make_task(cfg).build(cfg.seed)


def build_model(cfg: RunConfig, data: TaskData) -> nn.Module:
    """The run's model, initialized by its γ rule, marked with its model kind (``BUILT_BY``): what scores a model
    knows it takes a task's token sequences."""
    model = model_kind(cfg.model.kind).build(cfg.model, data.vocab_size, data.seq_len)
    gen = Generator().manual_seed(subseed(cfg.seed, "init"))
    try:
        gpt = cfg.init.scheme == "gpt"
        if gpt and cfg.model.kind != "transformer":
            raise ConfigError("init.scheme: gpt is defined for the transformer only; use init.scheme=gamma")
        apply_init_rate(model, cfg.init.gamma, cfg.init.overrides, generator=gen, bias=cfg.init.bias,
                        fixed_std=cfg.init.std if gpt else None,
                        std_scale={"blocks.*.mlp.W_out.weight": (2 * cfg.model.depth) ** -0.5} if gpt else None)
    except ValueError as e:
        raise ConfigError(str(e)) from None
    setattr(model, BUILT_BY, cfg.model.kind)
    return model


def built_kind(model: object) -> str | None:
    """The model kind that built ``model`` (``build_model``: a run's model, trained or not), or None for a module
    reasonlab did not build."""
    kind = getattr(model, BUILT_BY, None)
    return kind if isinstance(kind, str) else None
