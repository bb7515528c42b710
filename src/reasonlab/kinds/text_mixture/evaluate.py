"""Read-outs of the PrOntoQA + TinyStories language-model runs (reasoning-bias spec §4, E2–E3): the summary of an
evaluation (per-source loss and accuracy, ΔL), ΔL̄ over a run and the embedding cosines of
the exclusive token sets.

ΔL̄ is the mean of ΔL over the evaluations between 5 % and 50 % of training (the window where the two sources
separate).

Layer: evaluate (by its file name).
"""

from __future__ import annotations

from torch import nn

from reasonlab.config import RunConfig, ThresholdConfig
from reasonlab.evaluate.cosine import mean_pairwise_cosine
from reasonlab.evaluate.set_score import Evaluation, SetScore
from reasonlab.store import MetricRow, Metrics
from reasonlab.tasks.base import EvalSet, TaskData

# The kind's vocabulary (``reasonlab.vocabulary``): each figure's one label, its source, split and measure
SOURCES = {"prontoqa": "PrOntoQA", "tinystories": "TinyStories"}
SPLITS = {"train": "training documents", "eval": "held-out documents"}
WORDS = {**{f"{source}_{split}_{measure}": f"{name}, {split_words}: {measure_words}"
            for source, name in SOURCES.items() for split, split_words in SPLITS.items()
            for measure, measure_words in (("loss", "loss"), ("acc", "token accuracy"))},
         **{f"delta_L_{split}": f"ΔL, {split_words}" for split, split_words in SPLITS.items()}}


def delta_l(tinystories_loss: float, prontoqa_loss: float) -> float:
    """ΔL = (L_TinyStories − L_PrOntoQA) / L_PrOntoQA: how far the reasoning text's loss has fallen below the
    story text's (spec §4)."""
    return (tinystories_loss - prontoqa_loss) / prontoqa_loss


def text_summary(scores: dict[str, SetScore], sets: dict[str, EvalSet], th: ThresholdConfig) -> Evaluation:
    """Per-source next-token loss and token accuracy on the training subsets and the eval splits, and ΔL."""
    figures: dict[str, float] = {}
    for name, s in scores.items():
        key = name.replace("/", "_")
        figures[f"{key}_loss"] = s.loss
        figures[f"{key}_acc"] = s.acc("designated")
    for split in ("train", "eval"):
        if f"prontoqa_{split}_loss" in figures and f"tinystories_{split}_loss" in figures:
            figures[f"delta_L_{split}"] = delta_l(figures[f"tinystories_{split}_loss"],
                                                  figures[f"prontoqa_{split}_loss"])
    shown = {k: v for k, v in figures.items() if k.endswith("train_loss") or k.startswith("delta_L")}
    return Evaluation("trained", figures, figures, shown)


def window_mean(rows: list[MetricRow], total_steps: int, metric: str,
                window: tuple[float, float] = (0.05, 0.5)) -> float | None:
    """Mean of the pooled ``metric`` over evaluations with window[0] ≤ step / total ≤ window[1] (None if none)."""
    lo, hi = window
    values = [v for step, v in Metrics(rows).series("pooled", metric, clock="step") if lo <= step / total_steps <= hi]
    return sum(values) / len(values) if values else None


def delta_l_window(rows: list[MetricRow], total_steps: int, split: str = "train",
                   window: tuple[float, float] = (0.05, 0.5)) -> float | None:
    """ΔL̄: the mean of the logged ``delta_L_<split>`` over the window (spec §4: 5–50 % of the steps)."""
    return window_mean(rows, total_steps, f"delta_L_{split}", window)


def delta_l_summary(rows: list[MetricRow], cfg: RunConfig) -> dict[str, dict[str, float | None]]:
    """The text mixture's extra summary field (registry): ΔL̄ on the training subsets and the eval split, so a
    sweep's results table ranks settings by it. The last evaluation is the run's last step (every run evaluates at
    its end)."""
    total = max((r.step for r in rows), default=0)
    return {"delta_L_window": {split: delta_l_window(rows, total, split) if total else None
                               for split in ("train", "eval")}}


def embedding_cosines(model: nn.Module, data: TaskData) -> dict[str, float]:
    """The kind's figures read off the weights (``Kind.weights``): the mean pairwise cosine of each source's
    exclusive tokens' input embeddings (spec §4, E3), logged every epoch and at every snapshot, so the cosine at
    any saved step needs no checkpoint."""
    w = model.embed.weight.detach()
    return {f"cosine:{source}": mean_pairwise_cosine(w[ids]) for source, ids in data.info["exclusive"].items()}
