"""Evaluation: task-independent scoring (``scoring``, into ``set_score.SetScore``) and each task's summary of the
scores.

What is task-specific (the summary, the best-of-run rule, extra summary fields) is read from the task kind's
registry entry; nothing here names a task kind.
"""

from __future__ import annotations

from reasonlab.config import RunConfig, ThresholdConfig
from reasonlab.evaluate.set_score import SetScore
from reasonlab.registry import task_kind
from reasonlab.store import MetricRow
from reasonlab.tasks.base import EvalSet


def summarize(kind: str, scores: dict[str, SetScore], sets: dict[str, EvalSet], th: ThresholdConfig) -> dict:
    """The task's report of one evaluation: ``pooled`` figures (logged), ``figures`` (progress), ``final``,
    ``label``, ``outcome`` and ``histograms`` (the run summary)."""
    return task_kind(kind).get("summarize")(scores, sets, th)


def diverged_report(step: int) -> dict:
    """The report of a run stopped because its loss became NaN or inf at ``step``: labelled ``diverged``, with no
    final figures (the weights are not finite; the evaluations before it stay in the metrics)."""
    return {"label": "diverged", "outcome": {"label": "diverged", "step": step}, "final": {}, "histograms": {},
            "pooled": {}, "figures": {}}


def best_of_run(kind: str, rows: list[MetricRow], th: ThresholdConfig) -> dict:
    """Figures read over a run's whole history, by the task's rule (e.g. early stopping for in-context modular
    arithmetic, steps to converge for the real benchmarks; by default ``max_heldout``)."""
    return task_kind(kind).get("best_of_run")(rows, th)


def summary_extras(cfg: RunConfig, rows: list[MetricRow]) -> dict:
    """Extra fields of the task's run summary (the anchor task's escape points, the modular task's plateau
    exits, the language mixture's ΔL̄), if it has any."""
    extras = task_kind(cfg.task.kind).get("extras")
    return extras(rows, cfg) if extras is not None else {}


def max_heldout(rows: list[MetricRow], th: ThresholdConfig) -> dict[str, float]:
    """The max over evaluations of each held-out accuracy (the anchor follow-up code's choice; secondary)."""
    best: dict[str, float] = {}
    for r in rows:
        if r.split.startswith("heldout/"):
            key = f"{r.split}/{r.metric.removeprefix('acc_')}"
            best[key] = max(best.get(key, 0.0), r.value)
    return best
