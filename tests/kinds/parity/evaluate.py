"""The parity run's read-outs: an evaluation's summary and label, the best held-out accuracy over the run, and
the progress line.

Layer: evaluate (by its file name).
"""

from __future__ import annotations

from reasonlab.config import ThresholdConfig
from reasonlab.evaluate.set_score import Evaluation, SetScore
from reasonlab.store import MetricRow
from reasonlab.tasks.base import EvalSet


def label(seen: float, held_out: float, th: ThresholdConfig) -> str:
    """Fitted the seen strings? Then did the rule carry over to the held-out ones?"""
    if seen < th.fit:
        return "not-fitted"
    return "rule" if held_out >= th.fit else "memorized" if held_out < th.majority else "partial"


def parity_summary(scores: dict[str, SetScore], sets: dict[str, EvalSet], th: ThresholdConfig) -> Evaluation:
    """One evaluation: the accuracy on the seen and on the held-out strings, and the label they give."""
    figures = {f"{name}_acc": s.acc("designated") for name, s in scores.items()}
    outcome = label(figures["seen_acc"], figures["held_out_acc"], th)
    return Evaluation(outcome, figures, figures, figures,
                      {"label": outcome, "gap": figures["seen_acc"] - figures["held_out_acc"]})


def best_of_run(rows: list[MetricRow], th: ThresholdConfig) -> dict:
    """The best held-out accuracy over the run's evaluations, and the first epoch that reached it."""
    held = [(r.value, -r.epoch) for r in rows if (r.split, r.metric) == ("pooled", "held_out_acc")]
    if not held:
        return {}
    value, epoch = max(held)
    return {"held_out_acc": value, "epoch": -epoch}


def progress(figures: dict[str, float]) -> list[str]:
    return [f"seen {figures['seen_acc']:.2f}", f"held-out {figures['held_out_acc']:.2f}"]
