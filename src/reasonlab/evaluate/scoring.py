"""Scoring evaluation sets: accuracy per target kind, loss, and offset histograms; task-independent."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from reasonlab.evaluate.sequence import score_sequences
from reasonlab.evaluate.set_score import HIST_MAX, HIST_MIN, SetScore
from reasonlab.tasks.base import IGNORE, EvalSet, scored_positions


def offset_histogram(delta: Tensor) -> list[int]:
    """Counts of prediction − reference in integer bins -20..20 plus an underflow and an overflow bin."""
    clipped = delta.clamp(HIST_MIN - 1, HIST_MAX + 1) - (HIST_MIN - 1)
    return torch.bincount(clipped, minlength=HIST_MAX - HIST_MIN + 3).tolist()


@torch.no_grad()
def _predict(model: nn.Module, inputs: Tensor, target: Tensor | None, batch: int = 8192) -> tuple[Tensor, float | None]:
    """Argmax of the last position, and the summed cross-entropy against ``target`` when given."""
    model.eval()
    preds, loss = [], 0.0
    for i in range(0, len(inputs), batch):
        logits = model(inputs[i : i + batch])
        preds.append(logits.argmax(-1))
        if target is not None:
            loss += float(F.cross_entropy(logits, target[i : i + batch], reduction="sum"))
    model.train()
    return torch.cat(preds), (loss if target is not None else None)


@torch.no_grad()
def _score_tokens(model: nn.Module, inputs: Tensor, targets: Tensor, per_position: bool,
                  batch: int = 64) -> SetScore:
    """Next-token scoring of (B, T) targets: token accuracy and mean cross-entropy over the positions not IGNORE;
    with ``per_position``, also the accuracy at each scored position (kinds ``pos_0``, ``pos_1``, ...: the
    shots of an in-context sequence), for sets whose scored positions are the same in every row. Only positions
    some row is scored at are computed."""
    model.eval()
    hits, loss, n = 0, 0.0, 0
    columns = scored_positions(targets)
    if not isinstance(columns, str):
        targets = targets[:, columns]
    per_pos = torch.zeros(targets.shape[1], dtype=torch.long)
    for i in range(0, len(inputs), batch):
        logits = model(inputs[i : i + batch], columns)
        y = targets[i : i + batch]
        keep = y != IGNORE
        loss += float(F.cross_entropy(logits[keep], y[keep], reduction="sum"))
        right = (logits.argmax(-1) == y) & keep
        hits += int(right.sum())
        n += int(keep.sum())
        if per_position:
            per_pos += right.sum(0).cpu()
    model.train()
    if not per_position:
        return SetScore(n, {"designated": hits}, None, loss / max(n, 1))
    kinds = {f"pos_{k}": int(v) for k, v in enumerate(per_pos)}
    return SetScore(n, {"designated": hits, **kinds}, None, loss / max(n, 1),
                    counts=dict.fromkeys(kinds, len(inputs)))


def score_sets(
    model: nn.Module, sets: dict[str, EvalSet], limit: int | None, device: torch.device
) -> dict[str, SetScore]:
    """Score every eval set on its first ``limit`` sequences (all when None): accuracy per target kind, the loss
    against the designated target, the offset histogram against the reference target, the in-range count when the
    set has label ranges; each set as its ``scoring`` says."""
    scores = {}
    for name, es in sets.items():
        n = len(es) if limit is None else min(limit, len(es))
        if es.scoring == "sequences":
            scores[name] = score_sequences(model, es, n, device)
            continue
        designated = es.targets.get("designated")
        if es.scoring in ("tokens", "shots"):
            scores[name] = _score_tokens(model, es.inputs[:n].to(device), designated[:n].to(device),
                                         es.scoring == "shots")
            continue
        pred, loss = _predict(model, es.inputs[:n].to(device),
                              None if designated is None else designated[:n].to(device))
        pred = pred.cpu()
        hits = {k: pred == t[:n] for k, t in es.targets.items()}
        correct = {k: int(h.sum()) for k, h in hits.items()}
        if len(hits) > 1:  # targets may coincide on some keys: "other" is what matches none of them
            correct["any"] = int(torch.stack(list(hits.values())).any(0).sum())
        if es.label_range is not None:
            lo, hi = es.label_range
            correct["in_range"] = int(((pred >= lo[:n]) & (pred <= hi[:n])).sum())
        hist = offset_histogram(pred - es.targets[es.reference][:n]) if es.reference else None
        scores[name] = SetScore(n, correct, hist, None if loss is None else loss / n)
    return scores
