"""Phase-diagram cells from a results table, with the study's protocol (spec §4).

For each cell (e.g. γ × depth) and each seed, take the best accuracy over learning rates — separately for the
inferential target, the symmetric target and the seen-pair test-key accuracy — then average over seeds (the
paper's protocol, §6b). Each run's accuracies are its final epoch's, or (an option) their max over evaluated
epochs; cells keep the range over seeds. A cell
is *shadowed* (not fitted) when that averaged seen-pair accuracy is below the fit threshold, and its label
follows the same rule as a single run's (``classify``). Diverged runs (loss NaN/inf) are left out and counted;
a cell whose every run diverged is labelled ``diverged``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from statistics import mean
from typing import Any

from reasonlab.config import ConfigError, ThresholdConfig
from reasonlab.evaluate import DIVERGED, check_single_setting
from reasonlab.kinds.anchor.config import Pair
from reasonlab.kinds.anchor.evaluate import classify

SEEN = "final.seen_test_acc"
# What the anchor protocol reduces inside a cell: the max over learning rates, the mean over seeds.
_REDUCED = {"train.lr_multiplier", "train.base_lr", "seed"}


@dataclass(frozen=True)
class Cell:
    x: float
    y: float
    inferential: float
    symmetric: float | None
    seen: float
    label: str
    clean: bool
    shadow: bool
    n_seeds: int
    n_runs: int
    n_diverged: int = 0  # runs of the cell whose loss became NaN/inf (left out of its maxima and means)
    inferential_range: tuple[float, float] | None = None  # (min, max) over seeds of the per-seed figure
    symmetric_range: tuple[float, float] | None = None


def protocol_text(over_epochs: bool) -> str:
    """The protocol in words, for a figure's caption."""
    when = "max over evaluated epochs" if over_epochs else "final epoch"
    return (f"Per seed: {when}, best over learning rates; then mean over seeds (range over seeds in brackets); "
            "hatched = not fitted (final seen-pair accuracy).")


def peak_lr(row: dict[str, Any]) -> float:
    return row["train.base_lr"] * row["train.lr_multiplier"]


def held_out_pair(rows: list[dict[str, Any]]) -> Pair:
    """The pair a phase diagram reads by default: the first held-out pair of the runs' config (one for all)."""
    firsts = {Pair.parse(pairs[0]) for r in rows if (pairs := json.loads(r.get("task.held_out_pairs") or "[]"))}
    if len(firsts) != 1:
        held = ", ".join(p.key for p in sorted(firsts)) or "none"
        raise ConfigError(f"phase diagram: the runs' first held-out pairs are {held}; name one with --pair a1-a2")
    return firsts.pop()


def phase_cells(rows: list[dict[str, Any]], pair: Pair | str | None = None, x: str = "init.gamma",
                y: str = "model.depth", th: ThresholdConfig | None = None, over_epochs: bool = False) -> list[Cell]:
    """Aggregate finished runs into cells over (x, y); any other config field that varies inside a cell is an
    error, so the protocol never silently takes a max over something it should not. ``over_epochs`` reads each
    run's held-out accuracies as their max over evaluated epochs (the authors' plotting code) instead of the
    final epoch's; the shadow test stays on the final seen-pair accuracy."""
    th = th or ThresholdConfig()
    key = (held_out_pair(rows) if pair is None else Pair.parse(pair)).key
    inf_col, sym_col = (f"best.heldout.{key}.train_keys.inferential", f"best.heldout.{key}.train_keys.symmetric"
                        ) if over_epochs else (f"outcome.{key}.inferential", f"outcome.{key}.symmetric")
    rows = [r for r in rows if r.get("status", "finished") == "finished"]
    if not rows:
        raise ConfigError("phase diagram: no finished runs in the table")
    for col in (x, y, inf_col, SEEN):
        if col not in rows[0]:
            raise ConfigError(f"phase diagram: column {col!r} is not in the results table; check the pair and axes")
    check_single_setting(rows, {x, y}, _REDUCED)
    per_seed: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        per_seed[(r[x], r[y], r["seed"])].append(r)
    per_cell: dict[tuple, list[tuple[float, float | None, float, int]]] = defaultdict(list)
    diverged: dict[tuple, int] = defaultdict(int)
    for (cx, cy, _), runs in per_seed.items():
        diverged[(cx, cy)] += sum(r.get("label") == DIVERGED for r in runs)
        runs = [r for r in runs if r.get("label") != DIVERGED]
        if not runs:
            per_cell.setdefault((cx, cy), [])
            continue
        syms = [r[sym_col] for r in runs if r.get(sym_col) is not None]
        per_cell[(cx, cy)].append((max(r[inf_col] for r in runs), max(syms) if syms else None,
                                   max(r[SEEN] for r in runs), len(runs)))
    cells = []
    for (cx, cy), seeds in sorted(per_cell.items()):
        n_div = diverged[(cx, cy)]
        if not seeds:  # every run of the cell diverged
            cells.append(Cell(cx, cy, float("nan"), None, float("nan"), DIVERGED, False, False, 0, n_div, n_div))
            continue
        inf_values = [s[0] for s in seeds]
        sym_values = [s[1] for s in seeds if s[1] is not None]
        sym = mean(sym_values) if sym_values else None
        seen = mean(s[2] for s in seeds)
        label, clean = classify(seen, mean(inf_values), sym, th)
        cells.append(Cell(cx, cy, mean(inf_values), sym, seen, label, clean, seen < th.fit, len(seeds),
                          sum(s[3] for s in seeds) + n_div, n_div, (min(inf_values), max(inf_values)),
                          (min(sym_values), max(sym_values)) if sym_values else None))
    return cells
