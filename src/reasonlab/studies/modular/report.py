"""What the modular grid shows: its cells per depth (final and early-stopped) and shot curves (``measure``), the
phase and shot figures (``draw``), the three claims the spec names, each with its verdict, and the report's
lines."""

from __future__ import annotations

from pathlib import Path
from statistics import mean

import numpy as np

from reasonlab.analysis.geometry import spearman
from reasonlab.config import RunConfig
from reasonlab.kinds.modular.evaluate import GOOD, ModularCell, modular_cells
from reasonlab.kinds.modular.figures import plot_modular_phase, plot_shot_curves
from reasonlab.report.markdown import document, failed_runs, header
from reasonlab.store import Metrics
from reasonlab.sweep.runner import SweepReport
from reasonlab.terminal import counted

SENSITIVITY = (0.6, 0.9)  # τ_good re-classifications (spec §5)
RISING_GAIN = 0.5  # the shot curve "rises": its last third at least this far above its 0-shot accuracy


Measured = tuple[dict[tuple[int, str], list[ModularCell]], dict[str, np.ndarray], dict[str, np.ndarray]]


def measure(rows: list[dict], sweep_dir: Path) -> Measured:
    """The cells per depth (final and early-stopped) and the shot curves (o.o.d.-test, i.d.-train) of the finished
    rows, read from ``sweep_dir`` (a store or a committed sweep)."""
    cells = {(depth, at): modular_cells([r for r in rows if r["model.depth"] == depth], at=at)
             for depth in sorted({r["model.depth"] for r in rows}) for at in ("final", "t_star")}
    return cells, shot_curves(rows, sweep_dir), shot_curves(rows, sweep_dir, "id/train")


def draw(configs: list[RunConfig], rows: list[dict], measured: Measured, figures: Path) -> list[Path]:
    """One phase figure per depth (final and early-stopped) and the shot curves of the finished rows (as ``measure``
    read them), drawn into ``figures`` (a store's or a scratch folder); the files drawn."""
    label = configs[0].profile
    cells, curves, identification = measured
    drawn: list[Path] = []
    for (depth, at), depth_cells in cells.items():
        when = "last evaluation" if at == "final" else "early-stopped (t*)"
        seeds = sorted({r["seed"] for r in rows if r["model.depth"] == depth})
        caption = (f"Profile: {label}. Depth {depth}; {when}; cells average seeds {seeds}; thresholds: fitted = "
                   f"i.d.-train last-shot ≥ {configs[0].thresholds.fit}, ✓ = last-shot ≥ {GOOD}.")
        drawn += plot_modular_phase(depth_cells, figures / f"phase-L{depth}-{at}", caption)
    if curves:
        drawn += plot_shot_curves({**curves, **identification}, {}, figures / "shots",
                         f"{label}: accuracy per shot of the best run per depth on o.o.d.-test and on i.d.-train "
                         "(final evaluation)")
    return drawn


def final_shot_curve(run_dir: Path, split: str = "ood/test") -> np.ndarray:
    """Per-shot accuracy of one evaluation set at a run's last evaluation."""
    metrics = Metrics.read(run_dir / "metrics.parquet")
    at_last = metrics.at_epoch(metrics.last_epoch(split), split)
    acc = {int(m.removeprefix("acc_pos_")): v for m, v in at_last.items() if m.startswith("acc_pos_")}
    return np.array([acc[k] for k in sorted(acc)])


def shot_curves(rows: list[dict], sweep_dir: Path, split: str = "ood/test") -> dict[str, np.ndarray]:
    """The shot curve of ``split`` of each depth's best run on that set (final last-shot accuracy)."""
    out = {}
    column = f"final.{split.replace('/', '_')}_last_shot"
    for depth in sorted({r["model.depth"] for r in rows}):
        best = max((r for r in rows if r["model.depth"] == depth), key=lambda r: r[column])
        out[f"L={depth} n_tasks={best['task.n_tasks']} α={best['task.alpha']} seed {best['seed']} {split}"] = \
            final_shot_curve(sweep_dir / best["run_id"], split)
    return out


# ---- claims ----------------------------------------------------------------------------------------------------
def task_count_claim(rows: list[dict], depth: int = 2, min_alpha: float = 0.5) -> tuple[bool | None, list[str]]:
    """At ``depth`` and every α ≥ ``min_alpha``: per seed, the largest task count reaches τ_good on o.o.d.-test
    (last shot) and the smallest stays below it; held when that is so in at least 2 seeds for every such α."""
    lines, verdicts = [], []
    for alpha in sorted({r["task.alpha"] for r in rows if r["model.depth"] == depth and r["task.alpha"] >= min_alpha}):
        at = [r for r in rows if r["model.depth"] == depth and r["task.alpha"] == alpha]
        lo, hi = min(r["task.n_tasks"] for r in at), max(r["task.n_tasks"] for r in at)
        good_seeds = []
        for seed in sorted({r["seed"] for r in at}):
            acc = {r["task.n_tasks"]: r["final.ood_test_last_shot"] for r in at if r["seed"] == seed}
            if lo in acc and hi in acc and acc[hi] >= GOOD > acc[lo]:
                good_seeds.append(seed)
            lines.append(f"α {alpha:g}, seed {seed}: o.o.d.-test last-shot " + ", ".join(
                f"{n} tasks {acc[n]:.3f}" for n in sorted(acc)))
        seeds = {r["seed"] for r in at}
        verdicts.append(len(good_seeds) >= 2 if len(seeds) >= 2 else None)  # one seed cannot decide it
        lines.append(f"α {alpha:g}: rises from below {GOOD} at {lo} tasks to ≥ {GOOD} at {hi} tasks in seeds "
                     f"{good_seeds or 'none'}")
    if not verdicts or None in verdicts:
        return None, lines
    return all(verdicts), lines


def depth_one_claim(rows: list[dict]) -> tuple[bool | None, str]:
    """Depth 1 never generalizes o.o.d.: every depth-1 run's o.o.d.-test last-shot stays below τ_good, at the end
    and at its peak, while some deeper run of the grid reaches it; not testable (None) when no deeper run does, since
    then the grid cannot tell depth 1 from the rest."""
    def peak(runs: list[dict]) -> float:
        return max(max(r["final.ood_test_last_shot"], r.get("best.ood_test_peak") or 0.0) for r in runs)

    one, deeper = [r for r in rows if r["model.depth"] == 1], [r for r in rows if r["model.depth"] > 1]
    if not one:
        return None, "no depth-1 runs"
    detail = f"highest o.o.d.-test last-shot of {counted(len(one), 'depth-1 run')} (final or peak): {peak(one):.3f}"
    if peak(one) >= GOOD:
        return False, detail
    if not deeper or peak(deeper) < GOOD:
        return None, detail + (f"; no deeper run reached {GOOD} either (highest {peak(deeper):.3f})" if deeper
                               else "; no deeper run in the grid")
    return True, detail


def rising_claim(curve: np.ndarray) -> tuple[bool, str]:
    """Whether accuracy rises with the number of shots: the mean over the last third of the shots at least
    ``RISING_GAIN`` above the 0-shot accuracy (the prior, before any example); a curve that saturates early
    still rises."""
    third = max(1, len(curve) // 3)
    gain = float(curve[-third:].mean() - curve[0])
    rho = spearman(np.arange(len(curve), dtype=float), curve)
    return gain >= RISING_GAIN, (f"last third of the shots − 0 shots {gain:+.3f}, needs ≥ {RISING_GAIN:+}; "
                                 f"Spearman(k, accuracy) {rho:.2f}")


def verdict(held: bool | None) -> str:
    """A claim's verdict as every report of this study words it."""
    return "not testable in this grid" if held is None else ("**held**" if held else "**did not hold**")


def _short(label: str) -> str:
    return "unfit" if label == "unfit" else "".join(w[0].upper() for w in label.split("-"))


def summary_markdown(profile: str, label: str, rows: list[dict], measured: Measured, report: SweepReport) -> str:
    return document(header("modular-phase", profile, label, report.timing()),
                    ["Reduced profiles are not a reproduction of the paper's Fig. 1b; they test whether the same "
                     "trends appear at this scale.", ""], report_lines(rows, measured), failed_runs(report),
                    ["", f"Mean wall time per run: {mean(r['wall_time_s'] for r in rows) if rows else 0.0:.0f} s."])


def report_lines(rows: list[dict], measured: Measured, level: int = 2, figures: bool = True) -> list[str]:
    """The claims with their verdicts, the cells per depth, the shot curves and every run: summary.md's body and
    the docs' section (headings at ``level``; ``figures`` False leaves out the sweep's own figure links)."""
    h, (cells, curves, identification) = "#" * level, measured
    lines = [f"{h} Claims", ""]
    held, detail = task_count_claim(rows)
    lines += [f"- **O.o.d. generalization appears with the task count** (depth 2, α ≥ 0.5, ≥ 2 seeds): "
              f"{verdict(held)}.", *[f"  - {d}" for d in detail]]
    held, detail = depth_one_claim(rows)
    lines.append(f"- **Depth 1 never generalizes o.o.d.**: {verdict(held)} ({detail}).")
    og = {name: c for name, c in curves.items() if c[-1] >= GOOD}
    for name, curve in curves.items():
        ok, detail = rising_claim(curve)
        lines.append(f"- **Shot curve rises with k** ({name}{'' if name in og else ', not an o.o.d. generalizer'}): "
                     f"{verdict(ok)} ({detail}); per shot: {', '.join(f'{v:.2f}' for v in curve)}.")
    for name, curve in identification.items():
        ok, detail = rising_claim(curve)
        lines.append(f"- In-context identification of the pre-training tasks ({name}): the i.d.-train shot curve "
                     f"{'rises' if ok else 'does not rise'} with k ({detail}); per shot: "
                     f"{', '.join(f'{v:.2f}' for v in curve)}.")
    transient = [r for r in rows if r.get("best.transient")]
    lines += [f"- Transient o.o.d. generalization (peak ≥ {GOOD}, final ≥ 0.10 below it): {len(transient)} of "
              f"{counted(len(rows), 'run')}" + (": " + ", ".join(f"L={r['model.depth']} n={r['task.n_tasks']} "
                                                                f"α={r['task.alpha']} seed {r['seed']}"
                                                                for r in transient) if transient else "") + ".", ""]
    for (depth, at), cs in sorted(cells.items()):
        lines += [f"{h} Depth {depth}, {'last evaluation' if at == 'final' else 'early-stopped at t*'}", "",
                  *([f"![phase](figures/phase-L{depth}-{at}.png)", ""] if figures else []),
                  "| n_tasks | α | id-train | id-test | ood-train | ood-test | phase | τ 0.6 | τ 0.9 | runs |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for c in cs:
            alt = [_short(modular_cells([r for r in rows if r["model.depth"] == depth and r["task.n_tasks"] == c.x
                                         and r["task.alpha"] == c.y], at=at, good=g)[0].label) for g in SENSITIVITY]
            s = c.last_shot
            lines.append(f"| {c.x:g} | {c.y:g} | {s['id_train']:.3f} | {s['id_test']:.3f} | {s['ood_train']:.3f} | "
                         f"{s['ood_test']:.3f} | {c.label}{' (atypical)' if c.atypical else ''} | {alt[0]} | "
                         f"{alt[1]} | {c.n_runs} |")
        lines.append("")
    if curves and figures:
        lines += [f"{h} Shot curves", "", "![shots](figures/shots.png)", ""]
    lines += [f"{h} Runs", "", "| run | depth | n_tasks | α | seed | ood-test last (final) | peak | t* epoch | "
              "label | wall s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["model.depth"], r["task.alpha"], r["task.n_tasks"], r["seed"])):
        lines.append(f"| {r['run_id']} | {r['model.depth']} | {r['task.n_tasks']} | {r['task.alpha']:g} | "
                     f"{r['seed']} | {r['final.ood_test_last_shot']:.3f} | {r.get('best.ood_test_peak') or 0:.3f} | "
                     f"{r.get('best.t_star_epoch')} | {r['label']} | {r['wall_time_s']:.0f} |")
    return lines
