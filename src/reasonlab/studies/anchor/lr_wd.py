"""The reading of ``reasonlab reproduce anchor-lr-wd``, learning rate × weight decay (anchor spec §7, paper App. E;
its arms in ``study.py``).

Depth 3, one head, γ 0.5; both (3,4) and (4,3) held out, so no symmetric answer exists and the x−6 pair is
gone; the other 14 pairs are inferential. The metric is the mean (4,3) inferential accuracy over seeds per
(peak lr, weight decay) cell; the paper reports that larger learning rates and weight decays push the model
towards the inferential solution.
"""

from __future__ import annotations

from pathlib import Path
from statistics import mean

from reasonlab.config import RunConfig
from reasonlab.kinds.anchor.config import Pair
from reasonlab.report.markdown import document, header, held_in, table
from reasonlab.studies.anchor.figures import plot_lr_wd
from reasonlab.sweep.runner import SweepReport

PAIRS = (Pair(4, 3), Pair(3, 4))  # both held out (study.LR_WD_CONFIG): the figure and tables show (4,3) first




def cell_means(rows: list[dict], pair: Pair) -> dict[tuple[float, float], float]:
    """Mean inferential accuracy of ``pair`` over seeds per (lr multiplier, weight decay)."""
    cells: dict[tuple[float, float], list[float]] = {}
    for r in rows:
        cells.setdefault((r["train.lr_multiplier"], r["train.weight_decay"]), []).append(
            r[f"outcome.{pair.key}.inferential"])
    return {k: mean(v) for k, v in cells.items()}


def trend(cells: dict[tuple[float, float], float], axis: int) -> list[tuple[float, float]]:
    """Mean over the other axis, per value of ``axis`` (0: lr multiplier, 1: weight decay), in order."""
    values = sorted({k[axis] for k in cells})
    return [(v, mean(a for k, a in cells.items() if k[axis] == v)) for v in values]


def rises(rows: list[dict], pair: Pair, axis: int) -> dict[int, float]:
    """Per seed: the inferential ``pair`` accuracy at the largest value of ``axis`` minus at the smallest (each the
    mean over the other axis): the trend seed by seed, with its size."""
    out = {}
    for seed in sorted({r["seed"] for r in rows}):
        means = trend(cell_means([r for r in rows if r["seed"] == seed], pair), axis)
        out[seed] = means[-1][1] - means[0][1]
    return out


def pushes(rows: list[dict], pair: Pair, axis: int) -> dict[int, bool]:
    """Per seed: does the inferential ``pair`` accuracy (mean over the other axis) rise at every step along ``axis``?
    A dip between the ends is no push; the trend is counted seed by seed, so that a claim names its seeds."""
    out = {}
    for seed in sorted({r["seed"] for r in rows}):
        means = [a for _, a in trend(cell_means([r for r in rows if r["seed"] == seed], pair), axis)]
        out[seed] = all(a < b for a, b in zip(means, means[1:], strict=False))
    return out


def pushes_text(rows: list[dict], pair: Pair, axis: int) -> str:
    """In how many seeds the axis pushes towards the inferential answer (a rise at every step), and by how much in
    each (largest value minus smallest), so a count never hides a margin within noise."""
    by = rises(rows, pair, axis)
    return f"{held_in(pushes(rows, pair, axis))} (largest − smallest, per seed: " + ", ".join(
        f"{rise:+.3f}" for _, rise in sorted(by.items())) + ")"


def draw(configs: list[RunConfig], rows: list[dict], figures: Path) -> list[Path]:
    """The learning rate × weight decay maps of the finished rows into ``figures`` (a store's or a scratch folder)."""
    return plot_lr_wd([(f"{p.caption} inferential accuracy (mean over seeds)", cell_means(rows, p)) for p in PAIRS],
               configs[0].train.base_lr, figures / "lr-wd", configs[0].profile)


def summary_markdown(profile: str, label: str, rows: list[dict], base_lr: float, report: SweepReport) -> str:
    return document(header("anchor-lr-wd", profile, label, report.timing()), ["![lr x wd](figures/lr-wd.png)", ""],
                    report_lines(rows, base_lr))


def report_lines(rows: list[dict], base_lr: float, level: int = 2) -> list[str]:
    """What the sweep showed (its summary's body and the docs' section, headings at ``level``): each cell's mean
    over seeds, the trend along each axis with the seeds it held in, and every run."""
    h, lr = "#" * level, (lambda m: f"{m * base_lr:.1e}")
    cells = {p: cell_means(rows, p) for p in PAIRS}
    lrs, wds = sorted({k[0] for k in cells[PAIRS[0]]}), sorted({k[1] for k in cells[PAIRS[0]]})
    n = len({r["seed"] for r in rows})
    lines = [f"{h} Cells", "", *table(["peak lr \\ weight decay", *(f"{wd:g}" for wd in wds)],
                                      [(lr(m), *(" / ".join(f"{cells[p][(m, wd)]:.2f}" for p in PAIRS)
                                                 if (m, wd) in cells[PAIRS[0]] else "—" for wd in wds)) for m in lrs]),
             "", f"({' / '.join(p.caption for p in PAIRS)} inferential accuracy on train keys, mean over {n} "
             f"seed{'s' if n > 1 else ''}.)", "", f"{h} Trends", ""]
    for pair in PAIRS:
        for axis, what, show in ((0, "peak lr", lr), (1, "weight decay", "{:g}".format)):
            means = trend(cells[pair], axis)
            lines.append(f"- {pair.caption} inferential accuracy per {what} (mean over the other axis and the seeds): "
                         + ", ".join(f"{show(v)}: {a:.3f}" for v, a in means)
                         + f" — a larger {what} pushes towards the inferential solution in "
                         f"{pushes_text(rows, pair, axis)}.")
    lines += ["", f"{h} Runs", "", *table(
        ["peak lr", "weight decay", "seed", *(f"{p.caption} inferential" for p in PAIRS), "label", "run"],
        [(lr(r["train.lr_multiplier"]), f"{r['train.weight_decay']:g}", r["seed"],
          *(f"{r[f'outcome.{p.key}.inferential']:.3f}" for p in PAIRS), r["label"], r["run_id"])
         for r in sorted(rows, key=lambda r: (r["train.lr_multiplier"], r["train.weight_decay"], r["seed"]))])]
    return lines
