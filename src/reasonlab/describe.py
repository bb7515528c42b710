"""A run in one line, the same wherever a run is printed, and a config's value on a sweep's axis.

Layer: records (it reads the config schema and asks the registry for a kind's phase axes).
"""

from __future__ import annotations

from collections.abc import Sequence

from reasonlab.config import RunConfig
from reasonlab.registry import task_kind


def axis_value(cfg: RunConfig, key: str) -> object:
    """A field's value; for a linked axis (``a+b``) the values joined by "/"."""
    values = []
    for name in key.split("+"):
        node: object = cfg
        for part in name.split("."):
            node = getattr(node, part)
        values.append(node)
    return values[0] if len(values) == 1 else "/".join(map(str, values))


def _has(cfg: RunConfig, key: str) -> bool:
    """Whether the config has the dotted field (an Emb-MLP has no ``model.depth``)."""
    node: object = cfg
    for part in key.split("."):
        if not hasattr(node, part):
            return False
        node = getattr(node, part)
    return True


def describe_run(cfg: RunConfig, axes: Sequence[str] = (), label: str | None = None, steps: int | None = None) -> str:
    """A run in one line, the same wherever a run is printed (a sweep's plan, progress and finished lines, ``show``,
    the report's headers): its id, task kind and profile name (the label's first word: the full label is printed
    once, where a run or sweep is introduced); its key fields as ``field=value`` (the initialization, the model's
    depth or kind, the seed, its kind's phase-diagram axes, then any ``axes`` given: a sweep's); its length
    (the steps once known); and its label once finished::

        d8f6b940c81f · anchor · profile cpu · init.gamma=0.5 model.depth=2 seed=1 · 30 epochs / 1200 steps · inferential
    """
    gpt = cfg.init.scheme == "gpt"
    fields = dict.fromkeys([*(("init.scheme", "init.std") if gpt else ("init.gamma",)),
                            "model.depth" if hasattr(cfg.model, "depth") else "model.kind", "seed",
                            *(a for a in task_kind(cfg.task.kind).phase_axes
                              if _has(cfg, a) and not (gpt and a == "init.gamma")),
                            *axes])
    length = f"{cfg.train.epochs} epochs" + (f" / {steps} steps" if steps is not None else "")
    name = cfg.profile.split(maxsplit=1)[0] if cfg.profile and cfg.profile.strip() else cfg.profile
    parts = [cfg.run_id(), cfg.task.kind, f"profile {name}",
             " ".join(f"{a}={axis_value(cfg, a)}" for a in fields), length]
    return " · ".join(parts + ([label] if label is not None else []))
