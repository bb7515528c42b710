"""Evaluation: task-independent scoring (``scoring``, into ``set_score.SetScore``) and each task's summary of the
scores.

What is task-specific (the summary, the best-of-run rule, extra summary fields, the progress line, figures read
off the weights) is the task kind's own (``Kind`` methods, each with a generic default); nothing here names a kind.
"""

from __future__ import annotations

import json
from typing import Any

import torch
from torch import nn

from reasonlab.config import EXECUTION_FIELDS, ConfigError, RunConfig, ThresholdConfig
from reasonlab.evaluate.set_score import Evaluation, SetScore
from reasonlab.registry import task_kind
from reasonlab.store import MetricRow
from reasonlab.tasks.base import EvalSet, TaskData

DIVERGED = "diverged"  # the label of a run whose loss became NaN/inf


def summarize(kind: str, scores: dict[str, SetScore], sets: dict[str, EvalSet], th: ThresholdConfig) -> Evaluation:
    """The task's report of one evaluation."""
    return task_kind(kind).summarize(scores, sets, th)


def diverged_report(step: int) -> Evaluation:
    """The report of a run stopped because its loss became NaN or inf at ``step``: labelled ``diverged``, with no
    final figures (the weights are not finite; the evaluations before it stay in the metrics)."""
    return Evaluation(DIVERGED, {}, outcome={"label": DIVERGED, "step": step})


def best_of_run(kind: str, rows: list[MetricRow], th: ThresholdConfig) -> dict:
    """Figures read over a run's whole history, by the task's rule (e.g. early stopping for in-context modular
    arithmetic, steps to converge for the real benchmarks)."""
    return task_kind(kind).best_of_run(rows, th)


def summary_extras(cfg: RunConfig, rows: list[MetricRow]) -> dict:
    """Extra fields of the task's run summary, read over its history (fields of the kind's ``Report``)."""
    return task_kind(cfg.task.kind).extras(rows, cfg)


def progress_parts(kind: str, figures: dict[str, float]) -> list[str]:
    """The short parts of the progress line after an evaluation, each figure by its stored name (the name results,
    SQL and the card show it by: ``reasonlab.vocabulary``): the kind's ``progress``; none before a run's first
    evaluation, so no kind sees an empty report."""
    return task_kind(kind).progress(figures) if figures else []


@torch.no_grad()
def weight_norms(model: nn.Module) -> dict[str, float]:
    """L2 norm of all parameters (``norm``) and per part (``norm:embed``, ``norm:blocks.0`` ...): weight decay
    against the initialization scale is part of the story of every study."""
    squares: dict[str, float] = {}
    for name, p in model.named_parameters():
        parts = name.split(".")
        part = ".".join(parts[:2]) if parts[0] == "blocks" else parts[0]
        squares[part] = squares.get(part, 0.0) + float(p.detach().float().pow(2).sum())
    return {"norm": sum(squares.values()) ** 0.5, **{f"norm:{k}": v**0.5 for k, v in squares.items()}}


def weight_figures(kind: str, model: nn.Module, data: TaskData) -> dict[str, float]:
    """The kind's figures read off the weights, logged beside the weight norms."""
    return task_kind(kind).weights(model, data)


def check_single_setting(rows: list[dict[str, Any]], axes: set[str], reduced: set[str]) -> None:
    """Refuse a table in which a config field other than the axes, the ``reduced`` fields and execution-only
    fields takes several values (a phase diagram reads one setting)."""
    config_cols = [c for c in rows[0] if c.split(".")[0] in {"task", "model", "init", "train", "thresholds"}]
    for col in config_cols:
        if col in axes or col in reduced or col in EXECUTION_FIELDS:
            continue
        values = {json.dumps(r.get(col)) for r in rows}
        if len(values) > 1:
            raise ConfigError(f"phase diagram: {col} varies across runs ({', '.join(sorted(values)[:4])}); "
                              f"select one value (reasonlab phase --where {col}=VALUE) or plot it as an axis")
