"""Summary of an in-context modular arithmetic run (modular-icl spec §5): all-shot and last-shot accuracy on the
four evaluation sets, the phase label, and early stopping.

Phases, on last-shot accuracy (the project's thresholds, not the paper's: the reference logs only accuracies):
``unfit`` while i.d.-train < ``fit`` (0.9); then the first that holds of ood-test ≥ ``good`` (0.8) →
``ood-generalization``, ood-train ≥ good → ``ood-memorization``, id-test ≥ good → ``id-generalization``, else
``id-memorization``. A run is ``atypical`` when its four ✓/✗ marks differ from its phase's row of the table.
Early stopping picks the evaluation with the best o.o.d.-test last-shot accuracy (t*, whose weights the trainer
keeps as ``checkpoints/best.safetensors``); o.o.d. generalization is
*transient* when that peak reaches ``good`` and the final value is at least 0.10 below it.
"""

from __future__ import annotations

from reasonlab.config import ThresholdConfig
from reasonlab.evaluate.scoring import SetScore
from reasonlab.tasks.base import EvalSet

GOOD = 0.8  # τ_good of spec §5
TRANSIENT_DROP = 0.10
SETS = {"id_train": "id/train", "id_test": "id/test", "ood_train": "ood/train", "ood_test": "ood/test"}
SIGNATURES = {"id-memorization": (True, False, False, False), "id-generalization": (True, True, False, False),
              "ood-memorization": (True, False, True, False), "ood-generalization": (True, True, True, True)}


def phase_label(last_shot: dict[str, float], fit: float = 0.9, good: float = GOOD) -> str:
    if last_shot["id_train"] < fit:
        return "unfit"
    if last_shot["ood_test"] >= good:
        return "ood-generalization"
    if last_shot["ood_train"] >= good:
        return "ood-memorization"
    return "id-generalization" if last_shot["id_test"] >= good else "id-memorization"


def is_atypical(label: str, last_shot: dict[str, float], good: float = GOOD) -> bool:
    marks = tuple(last_shot[k] >= good for k in SETS)
    return label in SIGNATURES and marks != SIGNATURES[label]


def modular_summary(scores: dict[str, SetScore], sets: dict[str, EvalSet], th: ThresholdConfig) -> dict:
    figures: dict[str, float] = {}
    for short, name in SETS.items():
        s = scores[name]
        last = max(int(k.removeprefix("pos_")) for k in s.correct if k.startswith("pos_"))
        figures[f"{short}_all_shot"] = s.acc("designated")
        figures[f"{short}_last_shot"] = s.acc(f"pos_{last}")
        figures[f"{short}_loss"] = s.loss
    last_shot = {short: figures[f"{short}_last_shot"] for short in SETS}
    label = phase_label(last_shot, th.fit)
    outcome = {"label": label, "atypical": is_atypical(label, last_shot)}
    shown = {k: v for k, v in figures.items() if k.endswith("_last_shot")}
    return {"pooled": figures, "figures": shown, "final": figures, "label": label, "outcome": outcome,
            "histograms": {}, "select": figures["ood_test_last_shot"]}


def early_stopping(rows: list[tuple], fit: float = 0.9) -> dict[str, object]:
    """t* = the evaluation with the best o.o.d.-test last-shot accuracy; the phase there; the transient flag."""
    by_epoch: dict[int, dict[str, float]] = {}
    for epoch, _, split, metric, value in rows:
        if split == "pooled" and metric.endswith("_last_shot"):
            by_epoch.setdefault(epoch, {})[metric.removesuffix("_last_shot")] = value
    evals = {e: v for e, v in by_epoch.items() if len(v) == len(SETS)}
    if not evals:
        return {}
    t_star = max(sorted(evals), key=lambda e: evals[e]["ood_test"])  # the earliest of equal peaks
    final = evals[max(evals)]
    peak = evals[t_star]["ood_test"]
    return {"t_star_epoch": t_star, "ood_test_peak": peak, "ood_test_final": final["ood_test"],
            "id_test_at_t_star": evals[t_star]["id_test"], "id_test_final": final["id_test"],
            "label_at_t_star": phase_label(evals[t_star], fit),
            "transient": peak >= GOOD and final["ood_test"] <= peak - TRANSIENT_DROP}
