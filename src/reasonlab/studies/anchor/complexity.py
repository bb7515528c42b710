"""The reading of ``reasonlab reproduce anchor-complexity``, the inferential-complexity experiment (anchor spec §7;
its arms in ``study.py``).

The first k unordered anchor pairs (k = 0..6) get symmetric non-inferential targets in both orders; all 16 pairs
are trained and nothing is held out. Readout per run: the first epoch whose training accuracy reaches 1.0
(censored when it never does) and the seen-pair accuracy on test keys at the end, against k, at a large and a
small initialization. The spec's hypothesis (unverified in the source): small initialization fits low-k data
fastest and slows as k grows; large initialization is less sensitive to k.
"""

from __future__ import annotations

from pathlib import Path
from statistics import mean

from reasonlab.config import RunConfig
from reasonlab.report.markdown import document, header, held_in
from reasonlab.report.markdown import table as table_lines
from reasonlab.store import Metrics
from reasonlab.studies.anchor.figures import plot_complexity
from reasonlab.sweep.runner import SweepReport


def epochs_to_fit(run_dir: Path, level: float = 1.0) -> int | None:
    """The first evaluated epoch whose pooled training accuracy reaches ``level``; None when none does."""
    return Metrics.read(run_dir / "metrics.parquet").first_epoch("pooled", "train_acc", level)


def fit_table(rows: list[dict], sweep_dir: Path) -> list[dict]:
    """Per finished run: k, γ, seed, epochs to fit (1.0 and 0.9, read from ``sweep_dir``'s metrics), final
    accuracies."""
    return [{"k": r["task.complexity_k"], "gamma": r["init.gamma"], "seed": r["seed"],
             "fit_epoch": epochs_to_fit(sweep_dir / r["run_id"]),
             "epoch_90": epochs_to_fit(sweep_dir / r["run_id"], 0.9), "train_acc": r["final.train_acc"],
             "test_keys": r["final.seen_test_acc"], "run": r["run_id"]} for r in rows]


def draw(configs: list[RunConfig], table: list[dict], figures: Path) -> list[Path]:
    """The complexity figure of the runs' epochs to fit (``fit_table``) into ``figures``; the figure's files."""
    epochs = configs[0].train.epochs
    return plot_complexity(_by_gamma(table, epochs), epochs, figures / "complexity", configs[0].profile)


def _by_gamma(table: list[dict], epochs: int) -> dict[float, dict[int, tuple[float, float]]]:
    """Per γ and k: mean epochs to fit (censored runs count as epochs + 1) and mean test-key accuracy."""
    out: dict[float, dict[int, tuple[float, float]]] = {}
    for g in sorted({t["gamma"] for t in table}):
        for k in sorted({t["k"] for t in table}):
            runs = [t for t in table if t["gamma"] == g and t["k"] == k]
            if runs:
                out.setdefault(g, {})[k] = (mean(t["fit_epoch"] or epochs + 1 for t in runs),
                                            mean(t["test_keys"] for t in runs))
    return out


def sensitivity(table: list[dict], epochs: int) -> dict[float, dict[int, tuple[float, bool, bool]]]:
    """Per γ and seed: the spread over k of the epochs to fit, how sensitive to k that initialization was in that
    seed, with whether some run never fitted (then the spread is a lower bound, counting it at ``epochs + 1``) and
    whether none did (then there is no spread to read)."""
    out: dict[float, dict[int, tuple[float, bool, bool]]] = {}
    for g in sorted({t["gamma"] for t in table}):
        for s in sorted({t["seed"] for t in table}):
            fits = [t["fit_epoch"] for t in table if t["gamma"] == g and t["seed"] == s]
            if fits:
                bounded = [epochs + 1 if f is None else f for f in fits]
                out.setdefault(g, {})[s] = (max(bounded) - min(bounded), None in fits, all(f is None for f in fits))
    return out


def more_sensitive(spread: dict[float, dict[int, tuple[float, bool, bool]]], g: float, ref: float
                   ) -> dict[int, bool | None]:
    """Per seed both γ ran: is γ ``g`` more sensitive to k than γ ``ref``? Decided only where censoring cannot
    change the answer (a spread with a run that never fitted is a lower bound); None where it can, or where either
    never fitted at all."""
    out: dict[int, bool | None] = {}
    for s in sorted(set(spread[g]) & set(spread[ref])):
        (mine, mine_low, mine_none), (theirs, theirs_low, theirs_none) = spread[g][s], spread[ref][s]
        if mine_none or theirs_none:
            out[s] = None
        elif mine > theirs:
            out[s] = True if not theirs_low else None
        else:
            out[s] = False if not mine_low else None
    return out


def _spread(value: tuple[float, bool, bool]) -> str:
    spread, low, none = value
    return "never fits" if none else f"≥ {spread:g}" if low else f"{spread:g}"


def summary_markdown(profile: str, label: str, table: list[dict], epochs: int, report: SweepReport) -> str:
    return document(header("anchor-complexity", profile, label, report.timing()),
                    ["![complexity](figures/complexity.png)", ""], report_lines(table, epochs))


def report_lines(table: list[dict], epochs: int, level: int = 2) -> list[str]:
    """What the sweep showed (summary.md's body and the docs' section, headings at ``level``): epochs to fit per γ
    and k, whether each smaller initialization was more sensitive to k than the largest, seed by seed, and every
    run."""
    h, per, spread = "#" * level, _by_gamma(table, epochs), sensitivity(table, epochs)
    lines = [f"Epochs to fit: the first epoch whose training accuracy is 1.0 (a subsample of each pair's training "
             f"sequences between the last evaluation and the end); a run that never fits counts as {epochs + 1}.", "",
             f"{h} The hypothesis (per γ; a larger γ is a smaller initialization)", ""]
    for g in sorted(per, reverse=True):
        runs = [t for t in table if t["gamma"] == g]
        ks = sorted(per[g])
        if all(t["fit_epoch"] is None for t in runs):
            lines.append(f"- γ {g:g} never reached training accuracy 1.0 in {epochs} epochs at any k (final "
                         f"training accuracy {min(t['train_acc'] for t in runs):.2f}–"
                         f"{max(t['train_acc'] for t in runs):.2f}): censored, the hypothesis cannot be read off it.")
        else:
            fits = [per[g][k][0] for k in ks]
            lines.append(f"- γ {g:g}: epochs to fit per k, mean over seeds, " + ", ".join(
                f"{k}: {f:.1f}" for k, f in zip(ks, fits, strict=True)) + f" (spread {max(fits) - min(fits):.1f}).")
    large = min(spread)
    for g in sorted(spread, reverse=True):
        if g == large:
            continue
        lines.append(f"- γ {g:g} more sensitive to k than γ {large:g} (a larger spread of epochs to fit over k; "
                     f"not testable in a seed where never fitting could change the answer): in "
                     f"{held_in(more_sensitive(spread, g, large))}; spreads per seed " + ", ".join(
                         f"{s}: {_spread(spread[g][s])} vs {_spread(spread[large][s])}"
                         for s in sorted(set(spread[g]) & set(spread[large]))) + ".")
    lines += ["", f"{h} Runs", "", *table_lines(
        ["k", "γ", "seed", "epochs to fit (1.0)", "epochs to 0.9", "final train acc", "test-key acc", "run"],
        [(t["k"], f"{t['gamma']:g}", t["seed"], *(t[k] if t[k] is not None else f"never (> {epochs})"
                                                  for k in ("fit_epoch", "epoch_90")),
          f"{t['train_acc']:.3f}", f"{t['test_keys']:.3f}", t["run"])
         for t in sorted(table, key=lambda t: (t["gamma"], t["k"], t["seed"]))])]
    return lines
