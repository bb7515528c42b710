"""Labelling an anchor run: inferential / symmetric / other / not-fitted (spec §5).

The thresholds live in ``ThresholdConfig`` (fit 0.9, majority 0.5, clean 0.9 by default); this module is the only
place that reads them.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from reasonlab.arguments import ascii_int
from reasonlab.config import RunConfig, ThresholdConfig
from reasonlab.evaluate.set_score import Evaluation, SetScore, histogram_bins, pooled
from reasonlab.kinds.anchor.config import HELDOUT, Pair
from reasonlab.store import MetricRow
from reasonlab.tasks.base import EvalSet


@dataclass
class PairOutcome:
    label: str  # inferential | symmetric | other | not-fitted
    clean: bool
    inferential: float
    symmetric: float | None
    other: float
    symmetric_target: str  # defined | undefined | indistinguishable
    modal_delta: int | None = None
    modal_mass: float | None = None


def classify(seen_test_acc: float, inf: float, sym: float | None, th: ThresholdConfig) -> tuple[str, bool]:
    """(label, clean) from the three accuracies; not-fitted (seen-pair test-key accuracy < fit) takes precedence.

    Used for single runs and for phase-diagram cells alike, so the two can never disagree on the rule.
    """
    if seen_test_acc < th.fit:
        return "not-fitted", False
    if inf > th.majority:
        return "inferential", inf >= th.clean
    if sym is not None and sym > th.majority:
        return "symmetric", sym >= th.clean
    return "other", False


def label_pair(seen_test_acc: float, score: SetScore, symmetric_target: str, th: ThresholdConfig) -> PairOutcome:
    """Label one held-out pair and keep the figures behind the label."""
    inf = score.acc("inferential")
    sym = score.acc("symmetric") if "symmetric" in score.correct else None
    other = 1.0 - (score.acc("any") if "any" in score.correct else inf + (sym or 0.0))
    label, clean = classify(seen_test_acc, inf, sym, th)
    out = PairOutcome(label, clean, inf, sym, other, symmetric_target)
    if label == "other" and score.histogram is not None:
        bins = histogram_bins()
        idx = max(range(len(score.histogram)), key=score.histogram.__getitem__)
        out.modal_delta = ascii_int(bins[idx], signed=True)  # None for the under- and overflow bins
        out.modal_mass = score.histogram[idx] / score.n
    return out


def run_label(seen_test_acc: float, pairs: dict[str, PairOutcome], th: ThresholdConfig) -> str:
    """One word for the run: the held-out pairs' common label, 'mixed' when they differ, 'fitted' with none."""
    if seen_test_acc < th.fit:
        return "not-fitted"
    labels = {p.label for p in pairs.values()}
    if not labels:
        return "fitted"
    return labels.pop() if len(labels) == 1 else "mixed"


def outcome_dict(seen_test_acc: float, pairs: dict[str, PairOutcome], th: ThresholdConfig) -> dict:
    return {"label": run_label(seen_test_acc, pairs, th), "pairs": {k: asdict(v) for k, v in pairs.items()}}


def anchor_summary(scores: dict[str, SetScore], sets: dict[str, EvalSet], th: ThresholdConfig) -> Evaluation:
    """What an anchor run reports at an evaluation: pooled accuracies, held-out figures, labels, histograms."""
    pooled_figs = {k: v for k, prefix in (("train_acc", "train/"), ("seen_test_acc", "test/"))
                   if (v := pooled(scores, prefix)) is not None}
    seen = pooled_figs.get("seen_test_acc", 1.0)
    final: dict[str, float | None] = {"train_acc": pooled_figs.get("train_acc"),
                                      "seen_test_acc": pooled_figs.get("seen_test_acc")}
    pairs, histograms = {}, {}
    for name, s in scores.items():
        if not name.startswith("heldout/"):
            continue
        final.update({f"{name}/{k}": s.acc(k) for k in s.correct})
        histograms[name] = s.histogram
        if (held := Pair.of_eval_set(name)) is not None and held[1] == "train_keys":  # primary key set (spec §5)
            pairs[held[0].key] = label_pair(seen, s, sets[name].info["symmetric"], th)
    outcome = outcome_dict(seen, pairs, th)
    figures = {**pooled_figs, **{k: v for k, v in final.items() if k.startswith("heldout/")}}
    return Evaluation(outcome["label"], final, pooled_figs, figures, outcome, histograms)


def escape_points(rows: list[MetricRow], th: ThresholdConfig) -> dict[str, dict | None]:
    """Where a run left its plateau: for seen-pair test-key accuracy first reaching ``th.majority`` (``at50``)
    and ``th.fit`` (``at90``), the evaluation's epoch, step, Σlr (the learning rate summed over the steps so
    far) and each held-out group's accuracies there. This is how a profile shows it is in the study's regime
    (spec §6b): small init escapes many times later in Σlr than large init, and composes while it escapes."""
    by_eval: dict[tuple[int, int], dict[tuple[str, str], float]] = {}
    lr_sum: dict[int, float] = {}
    for r in rows:
        if r.split == "train" and r.metric == "lr_sum":
            lr_sum[r.step] = r.value
        elif r.split == "pooled" or r.split.startswith("heldout/"):
            by_eval.setdefault((r.epoch, r.step), {})[r.split, r.metric] = r.value
    out: dict[str, dict | None] = {}
    for key, level in (("at50", th.majority), ("at90", th.fit)):
        hit = next((k for k in sorted(by_eval) if by_eval[k].get(("pooled", "seen_test_acc"), -1.0) >= level), None)
        if hit is None:
            out[key] = None
            continue
        figures = by_eval[hit]
        heldout = {f"{split.removeprefix('heldout/')}/{metric.removeprefix('acc_')}": v
                   for (split, metric), v in sorted(figures.items()) if split.startswith("heldout/")}
        out[key] = {"level": level, "epoch": hit[0], "step": hit[1], "lr_sum": lr_sum.get(hit[1]),
                    "seen_test_acc": figures["pooled", "seen_test_acc"], "heldout": heldout}
    return out


def escape_summary(rows: list[MetricRow], cfg: RunConfig) -> dict[str, dict]:
    """The anchor task's extra summary field (registry): its escape points."""
    return {"escape": escape_points(rows, cfg.thresholds)}


def max_heldout(rows: list[MetricRow], th: ThresholdConfig) -> dict[str, float]:
    """The max over evaluations of each held-out accuracy (the anchor follow-up code's choice; secondary)."""
    best: dict[str, float] = {}
    for r in rows:
        if r.split.startswith("heldout/"):
            key = f"{r.split}/{r.metric.removeprefix('acc_')}"
            best[key] = max(best.get(key, 0.0), r.value)
    return best


# The kind's vocabulary (``reasonlab.vocabulary``): each figure's one label, and the words of its set names' parts
WORDS = {"train_acc": "train accuracy", "seen_test_acc": "seen-pair test-key accuracy",
         HELDOUT.rstrip("/"): "held-out", "train_keys": "train keys", "test_keys": "test keys",
         "inferential": "inferential", "symmetric": "symmetric (the mirror pair's answer)", "any": "any defined target"}


def qualify(part: str) -> str | None:
    """A pair key (``4-3``) qualifies the part before it, as its caption: ``held-out (4,3)``."""
    return Pair.parse(part).caption if re.fullmatch(r"\d+-\d+", part) else None


def progress(figures: dict[str, float]) -> list[str]:
    """The progress line's parts, by stored name: train and seen-pair accuracy, and each held-out pair's
    inferential and symmetric accuracy on its train keys (the test keys' figures are on the card)."""
    shown = ("train_keys/inferential", "train_keys/symmetric")
    return [f"{key} {value:.2f}" for key, value in figures.items()
            if key in ("train_acc", "seen_test_acc") or key.endswith(shown)]
