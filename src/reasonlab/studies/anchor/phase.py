"""The reading of ``reasonlab reproduce anchor-phase``, the γ × depth phase diagram (spec §4, paper Fig. 2a,b): its
cells, caption, transitions and reports. The arms (``study.py``):

The ``paper`` grid is the study's full protocol (γ 0.3..0.8 × depth 2..6 × 9 peak learning rates × 3 seeds =
810 runs, meant for GPUs). The ``cpu`` grid runs the reduced CPU profile at its single learning rate over 5 γ
values × depths 2–4 × 3 seeds; ``cpu-wide`` the study's own contrast (γ 0.5 against 0.8, depth 2) and the γ between
them (0.7, 0.75) at the paper's width with reduced data and steps, 3 seeds; ``cpu-wide-wd`` the contrast with weight
decay 0.28, which gives its schedule the ``paper`` profile's integrated decay (the sum of lr · wd over the steps);
``cpu-wide-cell`` that contrast under the paper's cell protocol: 5 peak learning rates spanning the paper's grid
(1e-4 … 3e-4) per (γ, seed), seeds outermost so that each finished seed is a whole cell; ``cpu-wide-long`` the
contrast at peak 3e-4 trained 42 epochs instead of 12, so that its runs end at Σlr 1.53, past the Σlr at which the
authors' own γ 0.8 run leaves its plateau (1.0–1.4), read as the cell protocol reads (best over evaluated epochs).
Every figure and summary it writes says that it is reduced.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.config import RunConfig
from reasonlab.kinds.anchor.cells import SEEN, Cell, phase_cells
from reasonlab.kinds.anchor.figures import plot_phase
from reasonlab.report.markdown import document, failed_runs, header, table
from reasonlab.schedule import lr_sums
from reasonlab.studies.anchor import STUDY_BAR
from reasonlab.sweep.runner import SweepReport

# the Σlr at which the authors' own γ 0.8 run leaves its plateau (their log: seen-pair accuracy passes 0.5 and 0.9
# between epochs 18 and 24; docs/anchor-composition.md)
AUTHORS_ESCAPE_LR_SUM = (1.0, 1.4)




def caption(configs: list[RunConfig], over_epochs: bool = False) -> str:
    """The phase figure's caption: the profile and the protocol its cells read."""
    pair = configs[0].task.held_out_pairs[0]
    epochs = "evaluated epochs and " if over_epochs else ""
    return (f"Profile: {configs[0].profile}. Protocol: per (γ, depth) cell and seed, the best {pair.caption} "
            f"accuracy over {epochs}"
            f"peak learning rates {sorted({c.train.base_lr * c.train.lr_multiplier for c in configs})}, "
            f"mean over seeds {sorted({c.seed for c in configs})}; hatched = seen-pair test-key accuracy < "
            f"{configs[0].thresholds.fit}. d_model {configs[0].model.d_model}, so std = "
            f"{configs[0].model.d_model}^-γ.")


def draw(configs: list[RunConfig], rows: list[dict], figures: Path, over_epochs: bool = False
         ) -> tuple[list[Cell], str, list[Path]]:
    """The phase cells of the finished rows, their caption, and the phase figure drawn into ``figures`` (a store's
    or a scratch folder); ``over_epochs``: each run's held-out answers are its best over evaluated epochs."""
    pair = configs[0].task.held_out_pairs[0]  # the profile's held-out pair (overrides may change it)
    cells = phase_cells(rows, pair, over_epochs=over_epochs)
    text = caption(configs, over_epochs)
    return cells, text, plot_phase(cells, figures / "phase", text, pair, fit=configs[0].thresholds.fit)


def describe_depth(cells: list[Cell], depth: float) -> str:
    """One sentence on which γ values gave which outcome at one depth, read off the cells."""
    row = sorted((c for c in cells if c.y == depth), key=lambda c: c.x)
    groups: dict[str, list[str]] = {}
    for c in row:
        groups.setdefault(c.label, []).append(f"{c.x:g}")
    return f"depth {depth:g}: " + "; ".join(f"{label} at γ {', '.join(gs)}" for label, gs in groups.items())


def transitions(rows: list[dict], bar: tuple[str, float] | None = None) -> dict[tuple[float, int], bool]:
    """Per (depth, seed): does the study's transition show along γ — every run labelled symmetric at a smaller γ
    than every run labelled inferential, at least one of each (large initialization memorizes, small initialization
    infers; an inferential run below a symmetric one is not that order)? With ``bar`` = (pair key, level), a
    labelled run counts only when its answers to that held-out pair reach the level on its label's target (the
    study's bar, ``STUDY_BAR``: a label is the modal answer, which can be a minority of the answers)."""
    lines: dict[tuple[float, int], dict[str, list[float]]] = {}
    for r in rows:
        by = lines.setdefault((r["model.depth"], r["seed"]), {})
        if r["label"] in ("symmetric", "inferential") and bar and r[f"outcome.{bar[0]}.{r['label']}"] < bar[1]:
            continue
        by.setdefault(r["label"], []).append(r["init.gamma"])
    return {k: bool(by.get("symmetric") and by.get("inferential") and max(by["symmetric"]) < min(by["inferential"]))
            for k, by in sorted(lines.items())}


def transition_line(rows: list[dict], pair_key: str, named: bool = True) -> str:
    """The transition counted per (depth, seed) line by label and at the study's bar: the phase report's sentence
    (naming the lines that show it) and, unnamed, the results table's."""
    def count(shown: dict[tuple[float, int], bool]) -> str:
        lines = ", ".join(f"depth {d:g} seed {s}" for (d, s), ok in shown.items() if ok)
        return (f"{sum(shown.values())} of {len(shown)} (depth, seed) lines"
                + (f" ({lines})" if named and lines else ""))
    return (f"the study's transition (symmetric at a smaller γ, inferential at a larger γ, same depth and seed) by "
            f"label in {count(transitions(rows))}; with each run ≥ {STUDY_BAR} on its target answer (the study's "
            f"bar) in {count(transitions(rows, (pair_key, STUDY_BAR)))}")


def report_lines(configs: list[RunConfig], rows: list[dict], level: int = 2, over_epochs: bool = False) -> list[str]:
    """What the diagram shows (summary.md's body and the docs' section, headings at ``level``): per depth the
    outcome along γ, the transition counted per (depth, seed), the cells and every run by seed (``over_epochs``: the
    cells read each run's best over its evaluated epochs, and the runs are left to ``cell_protocol_lines``)."""
    h, pair = "#" * level, configs[0].task.held_out_pairs[0]
    cells = phase_cells(rows, pair, over_epochs=over_epochs)
    lines = [f"{h} What the diagram shows", "",
             *(f"- {describe_depth(cells, d)}" for d in sorted({c.y for c in cells})),
             f"- {(line := transition_line(rows, pair.key))[0].upper()}{line[1:]}."]
    cell_rows = [[f"{c.x:g}", f"{c.y:g}", f"{c.inferential:.3f}", "—" if c.symmetric is None else f"{c.symmetric:.3f}",
                  f"{c.seen:.3f}", c.label + (" (clean)" if c.clean else "") + (" — shadow" if c.shadow else ""),
                  c.n_seeds, c.n_runs] for c in cells]
    cells_part = [*lines, "", f"{h} Cells", "", *table(
        ["γ", "depth", f"{pair.caption} inferential", f"{pair.caption} symmetric", "seen-pair test acc", "label",
         "seeds", "runs"], cell_rows)]
    if over_epochs:  # several learning rates per (γ, depth, seed): cell_protocol_lines lists every run
        return cells_part
    seeds = sorted({r["seed"] for r in rows})
    by = {(r["init.gamma"], r["model.depth"], r["seed"]): r for r in rows}
    run_rows = [[f"{g:g}", f"{d:g}", *(f"{r['label']} {r[f'outcome.{pair.key}.inferential']:.3f} / "
                                      f"{r[f'outcome.{pair.key}.symmetric']:.3f}, {r[SEEN]:.3f}"
                                      if (r := by.get((g, d, s))) else "—" for s in seeds)]
                for d in sorted({k[1] for k in by}) for g in sorted({k[0] for k in by})]
    return [*cells_part, "", f"{h} Runs", "",
            *table(["γ", "depth", *(f"seed {s}: label, {pair.caption} inf / sym, seen-pair acc" for s in seeds)],
                   run_rows)]


def lr_sum_at_end(cfg: RunConfig, steps: int) -> float:
    """Σlr over a run's ``steps`` optimizer steps (its schedule's learning rate summed)."""
    return lr_sums(cfg.train, steps // cfg.train.epochs, steps)[-1]


def cell_protocol_lines(configs: list[RunConfig], rows: list[dict], level: int = 2) -> list[str]:
    """The cell protocol's reading: per γ, how many (peak lr, seed) runs compose — by final label, at the study's
    bar at the end, at the bar at some evaluated epoch — and every run with the Σlr it ended at and escaped at,
    beside the Σlr the authors' γ 0.8 run escaped at."""
    h, pair = "#" * level, configs[0].task.held_out_pairs[0]
    by_id = {c.run_id(): c for c in configs}
    best = f"best.heldout.{pair.key}.train_keys.inferential"
    lines = [f"{h} Runs that compose, per γ (of the (peak lr, seed) runs)", ""]
    for g in sorted({r["init.gamma"] for r in rows}):
        rs = [r for r in rows if r["init.gamma"] == g]
        labelled = sum(r["label"] == "inferential" for r in rs)
        at_bar = sum(r["label"] == "inferential" and r[f"outcome.{pair.key}.inferential"] >= STUDY_BAR for r in rs)
        ever = sum(r[best] >= STUDY_BAR for r in rs)
        lines.append(f"- γ {g:g}: inferential by final label in {labelled} of {len(rs)}; at the study's bar "
                     f"(≥ {STUDY_BAR}) at the end in {at_bar}, at some evaluated epoch in {ever}.")
    end = {r["run_id"]: lr_sum_at_end(by_id[r["run_id"]], int(r["steps"])) for r in rows}
    lo, hi = AUTHORS_ESCAPE_LR_SUM
    lines += ["", f"Σlr: the runs end at Σlr {min(end.values()):.2f}–{max(end.values()):.2f}; the authors' own γ 0.8 "
              f"run left its plateau at Σlr {lo}–{hi}.", ""]

    def at(r: dict, level: str) -> str:
        value = r.get(f"escape.{level}.lr_sum")
        return "—" if value is None or value != value else f"{value:.3f}"

    run_rows = [[f"{r['init.gamma']:g}", r["seed"], f"{r['train.base_lr'] * r['train.lr_multiplier']:.2g}",
                 r["label"], f"{r[f'outcome.{pair.key}.inferential']:.3f} / {r[f'outcome.{pair.key}.symmetric']:.3f}",
                 f"{r[best]:.3f}", f"{r[SEEN]:.3f}", at(r, "at50"), at(r, "at90"), f"{end[r['run_id']]:.3f}"]
                for r in sorted(rows, key=lambda r: (r["init.gamma"], r["seed"], r["train.lr_multiplier"]))]
    return [*lines, *table(["γ", "seed", "peak lr", "label", f"{pair.caption} inf / sym (end)",
                            f"{pair.caption} inf (best epoch)", "seen-pair acc", "Σlr at seen ≥ 0.5",
                            "Σlr at seen ≥ 0.9", "Σlr at the end"], run_rows)]


def summary_markdown(profile: str, profile_label: str, configs: list[RunConfig], rows: list[dict],
                     report: SweepReport, caption: str, over_epochs: bool = False) -> str:
    body = report_lines(configs, rows, over_epochs=over_epochs) + (
        ["", *cell_protocol_lines(configs, rows)] if over_epochs else [])
    return document(header("anchor-phase", profile, f"{profile_label}", report.timing()),
                    ["![phase diagram](figures/phase.png)", "", caption, ""], body, failed_runs(report))
