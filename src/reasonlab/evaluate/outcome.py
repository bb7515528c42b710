"""Scoring eval sets and labelling a run: inferential / symmetric / other / not-fitted (spec §5).

The thresholds live in ``ThresholdConfig`` (fit 0.9, majority 0.5, clean 0.9 by default); this module is the only
place that reads them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import Tensor, nn

from reasonlab.config import ThresholdConfig
from reasonlab.tasks.base import EvalSet

HIST_MIN, HIST_MAX = -20, 20


@dataclass
class SetScore:
    n: int
    correct: dict[str, int]
    histogram: list[int] | None  # bins: "<-20", -20..20, ">20"

    def acc(self, kind: str) -> float:
        return self.correct[kind] / self.n


def offset_histogram(delta: Tensor) -> list[int]:
    """Counts of prediction − reference in integer bins -20..20 plus an underflow and an overflow bin."""
    clipped = delta.clamp(HIST_MIN - 1, HIST_MAX + 1) - (HIST_MIN - 1)
    return torch.bincount(clipped, minlength=HIST_MAX - HIST_MIN + 3).tolist()


def histogram_bins() -> list[str]:
    return [f"<{HIST_MIN}", *(str(i) for i in range(HIST_MIN, HIST_MAX + 1)), f">{HIST_MAX}"]


@torch.no_grad()
def predict(model: nn.Module, inputs: Tensor, batch: int = 8192) -> Tensor:
    model.eval()
    out = [model(inputs[i : i + batch]).argmax(-1) for i in range(0, len(inputs), batch)]
    model.train()
    return torch.cat(out)


def score_sets(
    model: nn.Module, sets: dict[str, EvalSet], limit: int | None, device: torch.device
) -> dict[str, SetScore]:
    """Score every eval set on at most ``limit`` sequences (all when None), with one host sync per set."""
    scores = {}
    for name, es in sets.items():
        n = len(es) if limit is None else min(limit, len(es))
        pred = predict(model, es.inputs[:n].to(device)).cpu()
        hits = {k: pred == t[:n] for k, t in es.targets.items()}
        correct = {k: int(h.sum()) for k, h in hits.items()}
        if len(hits) > 1:  # targets may coincide on some keys: "other" is what matches none of them
            correct["any"] = int(torch.stack(list(hits.values())).any(0).sum())
        hist = offset_histogram(pred - es.targets[es.reference][:n]) if es.reference else None
        scores[name] = SetScore(n, correct, hist)
    return scores


def pooled(scores: dict[str, SetScore], prefix: str, kind: str = "designated") -> float | None:
    chosen = [s for name, s in scores.items() if name.startswith(prefix)]
    if not chosen:
        return None
    return sum(s.correct[kind] for s in chosen) / sum(s.n for s in chosen)


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
        out.modal_delta = int(bins[idx]) if bins[idx].lstrip("-").isdigit() else None
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
