"""Summary of a reasoning/memory mixture run (reasoning-bias spec §2): accuracy and loss per source, and a label.

Label at an evaluation: ``not-fitted`` while the trained sources (memory, reasoning-train) are below the fit
threshold; then ``reasoning`` if the masked reasoning tuples are answered by the rule (accuracy > majority), else
``memorizing``. Which source is learned first is read from the curves (metrics.parquet), not from this label.
"""

from __future__ import annotations

from reasonlab.config import ThresholdConfig
from reasonlab.evaluate.scoring import SetScore, pooled
from reasonlab.tasks.base import EvalSet

SOURCES = {"memory": "memory", "reasoning_train": "reasoning/train", "reasoning_test": "reasoning/test"}


def _pooled_loss(scores: dict[str, SetScore], prefix: str) -> float | None:
    chosen = [s for name, s in scores.items() if name.startswith(prefix) and s.loss is not None]
    return sum(s.loss * s.n for s in chosen) / sum(s.n for s in chosen) if chosen else None


def mixture_label(figures: dict[str, float], th: ThresholdConfig) -> str:
    trained = [figures[k] for k in ("memory_acc", "reasoning_train_acc") if k in figures]
    if any(a < th.fit for a in trained):
        return "not-fitted"
    if "reasoning_test_acc" not in figures:
        return "fitted"
    return "reasoning" if figures["reasoning_test_acc"] > th.majority else "memorizing"


def mixture_summary(scores: dict[str, SetScore], sets: dict[str, EvalSet], th: ThresholdConfig) -> dict:
    figures: dict[str, float] = {}
    for short, prefix in SOURCES.items():
        if (acc := pooled(scores, prefix)) is not None:
            figures[f"{short}_acc"] = acc
            figures[f"{short}_loss"] = _pooled_loss(scores, prefix)
    label = mixture_label(figures, th)
    final = {**figures, **{f"{name}/acc": s.acc("designated") for name, s in scores.items() if "/group-" in name}}
    return {"pooled": figures, "figures": {k: v for k, v in figures.items() if k.endswith("_acc")}, "final": final,
            "label": label, "outcome": {"label": label}, "histograms": {}}
