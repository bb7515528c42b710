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

import math
from collections import defaultdict
from dataclasses import dataclass
from statistics import mean
from typing import Any

from reasonlab.config import ConfigError, RunConfig, ThresholdConfig
from reasonlab.evaluate import DIVERGED, check_single_setting
from reasonlab.evaluate.set_score import Evaluation, SetScore
from reasonlab.store import MetricRow
from reasonlab.tasks.base import EvalSet

GOOD = 0.8  # τ_good of spec §5
# Plateau exits: the training loss first at or below these fractions of chance (ln p, every residue equally likely)
PLATEAU_LEVELS = {"left": 0.9, "half": 0.5}
TRANSIENT_DROP = 0.10
SETS = {"id_train": "id/train", "id_test": "id/test", "ood_train": "ood/train", "ood_test": "ood/test"}
# The kind's vocabulary (``reasonlab.vocabulary``): each figure's one label, its set's name and its measure
MEASURES = {"last_shot": "last-shot accuracy", "all_shot": "all-shot accuracy", "loss": "loss"}
WORDS = {f"{short}_{measure}": f"{name}: {words}" for short, name in SETS.items()
         for measure, words in MEASURES.items()}
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


def modular_summary(scores: dict[str, SetScore], sets: dict[str, EvalSet], th: ThresholdConfig) -> Evaluation:
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
    return Evaluation(label, figures, figures, shown, outcome, select=figures["ood_test_last_shot"])


def plateau_exits(rows: list[MetricRow], chance_loss: float) -> dict[str, dict | None]:
    """Where a run left its loss plateau at chance (``chance_loss`` = ln p): for the mean training loss of an
    epoch first at or below 0.9 and 0.5 of it (``left``, ``half``), the epoch, step, Σlr, that loss and the four
    sets' last-shot accuracies at that epoch's evaluation. Runs with many tasks can sit on the plateau for most of
    their steps, so this is what a search over settings is steered by (docs/modular-icl.md)."""
    losses: dict[int, tuple[int, float]] = {}
    lr_sum: dict[int, float] = {}
    last_shot: dict[int, dict[str, float]] = {}
    for r in rows:
        if r.split == "train" and r.metric == "loss":
            losses[r.epoch] = (r.step, r.value)
        elif r.split == "train" and r.metric == "lr_sum":
            lr_sum[r.step] = r.value
        elif r.split == "pooled" and r.metric.endswith("_last_shot"):
            last_shot.setdefault(r.epoch, {})[r.metric.removesuffix("_last_shot")] = r.value
    out: dict[str, dict | None] = {}
    for key, fraction in PLATEAU_LEVELS.items():
        hit = next((e for e in sorted(losses) if losses[e][1] <= fraction * chance_loss), None)
        out[key] = None if hit is None else {
            "fraction": fraction, "epoch": hit, "step": losses[hit][0], "lr_sum": lr_sum.get(losses[hit][0]),
            "loss": losses[hit][1], "last_shot": last_shot.get(hit, {})}
    return out


def plateau_summary(rows: list[MetricRow], cfg: RunConfig) -> dict[str, dict]:
    """The modular task's extra summary field (registry): its plateau exits."""
    return {"plateau": plateau_exits(rows, math.log(cfg.task.p))}


def early_stopping(rows: list[MetricRow], fit: float = 0.9) -> dict[str, object]:
    """t* = the evaluation with the best o.o.d.-test last-shot accuracy; the phase there; the transient flag."""
    by_epoch: dict[int, dict[str, float]] = {}
    for r in rows:
        if r.split == "pooled" and r.metric.endswith("_last_shot"):
            by_epoch.setdefault(r.epoch, {})[r.metric.removesuffix("_last_shot")] = r.value
    evals = {e: v for e, v in by_epoch.items() if len(v) == len(SETS)}
    if not evals:
        return {}
    t_star = max(sorted(evals), key=lambda e: evals[e]["ood_test"])  # the earliest of equal peaks
    final = evals[max(evals)]
    peak = evals[t_star]["ood_test"]
    return {"t_star_epoch": t_star, "at_t_star": evals[t_star], "ood_test_peak": peak,
            "ood_test_final": final["ood_test"],
            "id_test_at_t_star": evals[t_star]["id_test"], "id_test_final": final["id_test"],
            "label_at_t_star": phase_label(evals[t_star], fit),
            "transient": peak >= GOOD and final["ood_test"] <= peak - TRANSIENT_DROP}


@dataclass(frozen=True)
class ModularCell:
    x: float
    y: float
    last_shot: dict[str, float]  # mean over the cell's runs (seeds), per evaluation set
    label: str
    atypical: bool
    n_runs: int
    n_diverged: int = 0


def modular_cells(rows: list[dict[str, Any]], x: str = "task.n_tasks", y: str = "task.alpha", at: str = "final",
                  th: ThresholdConfig | None = None, good: float = GOOD) -> list[ModularCell]:
    """Phase cells over (x, y) from a results table: the four last-shot accuracies averaged over the cell's runs
    (seeds) at the last evaluation (``at="final"``) or at each run's early-stopping point (``"t_star"``), then
    classified. Any other config field that varies inside a cell is an error."""
    th = th or ThresholdConfig()
    rows = [r for r in rows if r.get("status", "finished") == "finished"]
    if not rows:
        raise ConfigError("phase diagram: no finished runs in the table")
    if at not in ("final", "t_star"):
        raise ConfigError(f"--at {at!r}: choose final or t_star")
    cols = {k: f"final.{k}_last_shot" if at == "final" else f"best.at_t_star.{k}" for k in SETS}
    for col in (x, y, *cols.values()):
        if col not in rows[0]:
            raise ConfigError(f"phase diagram: column {col!r} is not in the results table; is this a modular sweep?")
    check_single_setting(rows, {x, y}, reduced={"seed"})
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        groups[(r[x], r[y])].append(r)
    cells = []
    for (cx, cy), runs in sorted(groups.items()):
        ok = [r for r in runs if r.get("label") != DIVERGED]
        n_div = len(runs) - len(ok)
        if not ok:  # every run of the cell diverged
            cells.append(ModularCell(cx, cy, dict.fromkeys(cols, float("nan")), DIVERGED, False, n_div, n_div))
            continue
        last = {k: mean(r[c] for r in ok) for k, c in cols.items()}
        label = phase_label(last, th.fit, good)
        cells.append(ModularCell(cx, cy, last, label, is_atypical(label, last, good), len(runs), n_div))
    return cells


def best_of_run(rows: list[MetricRow], th: ThresholdConfig) -> dict[str, object]:
    """The task's best-of-run rule (registry): early stopping at the best o.o.d.-test last-shot accuracy."""
    return early_stopping(rows, th.fit)
