"""Grids: a base config and axes over any dotted field; every point is a fully resolved run config.

A sweep file is YAML::

    name: gamma-depth          # the sweep's directory under the store root (default: the file's stem)
    profile: anchor-cpu        # optional built-in profile: a full name, or a bare one (cpu) of family:
    family: anchor             # optional profile family of a bare profile name (study: is its old name)
    config: {train: {epochs: 12}}   # optional fields over the profile
    set: ["train.lr_multiplier=20"] # optional overrides, as with --set
    grid:                      # the axes: every combination is one run
      init.gamma: [0.3, 0.5, 0.7]
      model.depth: [2, 3]
      seed: [1, 2]
      init.gamma+train.weight_decay: [[0.3, 0.01], [0.7, 0.1]]   # linked fields: one axis of pairs

On the command line ``--grid init.gamma=0.3,0.5`` adds (or replaces) an axis. A point's run id is the hash of
its resolved config, so points that resolve to the same config are one run, and re-running a sweep finds its
finished and unfinished runs by id.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from reasonlab.config import (
    ConfigError,
    RunConfig,
    StrictModel,
    apply_overrides,
    deep_merge,
    label_changes,
    load_yaml,
    parse_value,
    raw_config,
    validation_message,
)
from reasonlab.files import warn


class SweepSpec(StrictModel):
    name: str | None = None
    family: str | None = None
    profile: str | None = None
    config: dict[str, Any] = Field(default_factory=dict)
    set: list[str] = Field(default_factory=list)
    grid: dict[str, list[Any]] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _study(cls, data: Any) -> Any:
        """``study:`` is the old name of ``family:`` (a study is what ``reproduce`` runs), read for one release with
        a one-line notice."""
        if not isinstance(data, dict) or "study" not in data:
            return data
        if data.get("family", data["study"]) != data["study"]:
            raise ValueError("study: the old name of family; give family only")
        warn("warning: the sweep field study: is deprecated; name the profile family with family:")
        return {"family": data["study"], **{k: v for k, v in data.items() if k != "study"}}


MAX_RUNS = 10_000  # points of a grid (--max-runs raises it): counted before any is built, so 10^8 fails at once


def load_sweep(path: Path) -> SweepSpec:
    """Read a sweep file; a bad field is a one-line error naming the file and the field (a run config given
    instead is named as one)."""
    data = load_yaml(path)
    run_fields = sorted(set(data) & (set(RunConfig.model_fields) - set(SweepSpec.model_fields)))
    if run_fields:
        raise ConfigError(f"{path}: {run_fields[0]} is a field of a run config, not of a sweep file ("
                          f"{', '.join(SweepSpec.model_fields)}); train it with `reasonlab train {path}`, or sweep "
                          "over it from a sweep file that holds its fields under config:")
    try:
        spec = SweepSpec.model_validate(data)
    except ValidationError as e:
        raise ConfigError(f"{path}: {validation_message(e, SweepSpec)}") from None
    return spec if spec.name else spec.model_copy(update={"name": Path(path).stem})


def split_top_level(text: str) -> list[str]:
    """Split on commas outside brackets and braces, so ``[[4,3]],[[3,4]]`` is two values."""
    parts, depth, cur = [], 0, []
    for ch in text:
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts]


def parse_axis(text: str) -> tuple[str, list[Any]]:
    """``init.gamma=0.3,0.5,0.7`` -> ("init.gamma", [0.3, 0.5, 0.7])."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    values = split_top_level(raw) if sep else []
    if not key or not values or any(v == "" for v in values):
        raise ConfigError(f"--grid {text!r}: expected key=v1,v2,... e.g. init.gamma=0.3,0.5,0.7")
    return key, [parse_value(v) for v in values]


def linked(key: str, value: Any) -> list[tuple[str, Any]]:
    """The (field, value) pairs of one axis value: ``a+b`` axes take lists of one value per field."""
    fields = key.split("+")
    if len(fields) == 1:
        return [(key, value)]
    if not isinstance(value, list) or len(value) != len(fields):
        raise ConfigError(f"grid {key}: each value must list {len(fields)} values, one per field; got {value!r}")
    return list(zip(fields, value, strict=True))


def expand(base: dict[str, Any], axes: dict[str, list[Any]], max_runs: int = MAX_RUNS) -> list[RunConfig]:
    """Every combination of the axes over ``base``, validated; duplicates (same run id) kept once, in order. More
    than ``max_runs`` combinations are refused before any is built."""
    for key, values in axes.items():
        if not values:
            raise ConfigError(f"grid {key}: no values; give at least one")
    points = math.prod(len(v) for v in axes.values())
    if points > max_runs:
        sizes = " × ".join(f"{len(v):,} {k}" for k, v in axes.items())
        raise ConfigError(f"the grid has {points:,} points ({sizes}), more than the limit of {max_runs:,}; narrow "
                          f"an axis, or pass --max-runs {points} if you mean it")
    keys = list(axes)
    configs: dict[str, RunConfig] = {}
    for combo in itertools.product(*(axes[k] for k in keys)):
        overrides = [f"{f}={json.dumps(v)}" for k, value in zip(keys, combo, strict=True)
                     for f, v in linked(k, value)]  # JSON is YAML
        data = apply_overrides(copy.deepcopy(base), overrides)
        try:
            cfg = RunConfig.model_validate(data)
        except ConfigError as e:
            raise ConfigError(f"grid point ({', '.join(overrides)}): {e}") from None
        configs.setdefault(cfg.run_id(), cfg)
    return list(configs.values())


def sweep_configs(
    spec: SweepSpec, grid: list[str] = (), overrides: list[str] = (), max_runs: int = MAX_RUNS
) -> tuple[list[RunConfig], list[str]]:
    """The runs of a sweep and its axis names: profile < ``config`` < ``set`` < ``--set``; ``--grid`` axes
    are added to (or replace) the file's; at most ``max_runs`` points."""
    profile = raw_config(None, spec.profile, [], spec.family)
    base = apply_overrides(deep_merge(copy.deepcopy(profile), spec.config), [*spec.set, *overrides])
    base = label_changes(profile, base)
    axes = dict(spec.grid)
    for text in grid:
        key, values = parse_axis(text)
        axes[key] = values
    return expand(base, axes, max_runs), list(axes)
