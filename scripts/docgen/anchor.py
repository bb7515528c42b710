"""The anchor study's generators: the paper-scale trajectory, the mechanism pair, the search's headlines."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path

import numpy as np
from trajectory_figure import committed

from docgen.common import (
    ANCHOR_PINS,
    ANCHOR_SEARCH,
    FIGURES,
    REPO,
    TRAJECTORY,
    TRAJECTORY_REPLAYS,
    TRAJECTORY_RUNS,
    Figures,
    Table,
    analyze_pack,
    run_folders,
    sql_table,
    under,
)
from docgen.sweeps import PHASE
from reasonlab.config import load_yaml
from reasonlab.kinds.anchor import probes as anchor_probes
from reasonlab.store import read_json, read_metrics
from reasonlab.studies import anchor, anchor_phase
from reasonlab.studies.anchor import STUDY_BAR
from reasonlab.studies.anchor_trajectory import (
    FITTED,
    authors_log,
    draw,
    shows_logged_outcome,
    summary_markdown,
)
from reasonlab.sweep.grid import sweep_configs
from reasonlab.sweep.results import markdown_table
from reasonlab.terminal import counted

# ---- the anchor trajectory: the figure and its summary.md -------------------------------------------------------

def trajectory() -> tuple[dict, str, str]:
    return committed([REPO / TRAJECTORY / r for r in TRAJECTORY_RUNS],
                     [REPO / TRAJECTORY / r for r in TRAJECTORY_REPLAYS])


def _trajectory_inputs() -> list[str]:
    return ([f"{TRAJECTORY}/{r}/{f}" for r in TRAJECTORY_RUNS for f in ("config.yaml", "metrics.parquet")]
            + under(TRAJECTORY, *TRAJECTORY_REPLAYS) + [ANCHOR_PINS])


def _draw_trajectory(scratch: Path) -> None:
    ours, profile, note = trajectory()
    draw(ours, scratch, profile, note)


def _trajectory_summary() -> str:
    ours, profile, _ = trajectory()
    return summary_markdown(ours, authors_log(), profile)


# ---- the anchor mechanism pair: flow and representations of two cpu-phase runs, from their committed analyses --

ANCHOR_PROBED: dict[str, str] = load_yaml(REPO / ANCHOR_PINS)["probed"]  # the docs' pair, by run id


def _probed(which: str) -> str:
    return f"results/{anchor_phase.spec_for('cpu').name}/{ANCHOR_PROBED[which]}/analysis/final"


def _draw_probed(which: str, scratch: Path) -> None:
    folder = REPO / _probed(which)
    with np.load(folder / "flow.npz") as arrays:
        anchor_probes.draw_flow(read_json(folder / "flow.json", "flow"), arrays["pattern"],
                                scratch / f"anchor-flow-{which}")
    with np.load(folder / "representations.npz") as arrays:
        anchor_probes.draw_representations(read_json(folder / "representations.json", "representations"),
                                           dict(arrays), scratch / f"anchor-representations-{which}")


MECHANISM_PROBES = ("flow", "representations", "condensation", "embedding", "fused")


def _probe_command(*which: str) -> str:
    return analyze_pack("anchor-phase", [ANCHOR_PROBED[w] for w in which],
                        " ".join(f"--probe {p}" for p in MECHANISM_PROBES))


def _probed_figures() -> dict[str, Figures]:
    return {which: Figures(lambda w=which: [f"{_probed(w)}/{name}.{ext}" for name in ("flow", "representations")
                                            for ext in ("json", "npz")],
                           {f"{FIGURES}/anchor-{probe}-{which}.png": f"anchor-{probe}-{which}.png"
                            for probe in ("flow", "representations")}, partial(_draw_probed, which),
                           _probe_command(which))
            for which in ANCHOR_PROBED}


def _mechanism_inputs() -> list[str]:
    return [f"{_probed(w)}/{probe}.json" for w in ANCHOR_PROBED for probe in MECHANISM_PROBES] + [
        f"{PHASE.folder}/{run}/summary.json" for run in ANCHOR_PROBED.values()]


def _mechanism_table() -> str:
    """The pair's analyses side by side, every number read from their committed JSON."""
    configs, rows, _ = PHASE.finished()
    pair = configs[0].task.held_out_pairs[0]
    by_id = {r["run_id"]: r for r in rows}
    cols = {w: {probe: read_json(REPO / _probed(w) / f"{probe}.json", probe) for probe in MECHANISM_PROBES}
            for w in ANCHOR_PROBED}

    def per_layer(w: str, edge: str) -> str:
        return ", ".join(f"{v:.2f}" for v in cols[w]["flow"]["mean_flow"][edge])

    def row(name: str, cell: Callable[[str], str]) -> list[str]:
        return [name, *(cell(w) for w in ANCHOR_PROBED)]

    head = [""] + [f"γ {by_id[run]['init.gamma']:g}, {by_id[run]['label']} (`{run}`)"
                   for run in ANCHOR_PROBED.values()]
    fused = [f"({p[0]},{p[1]}) vs ({p[-2]},{p[-1]})" for p in cols["symmetric"]["fused"]["pairs"]]  # "33-vs-22"
    return markdown_table(head, [
        row(f"{pair.caption} inferential / symmetric accuracy", lambda w: " / ".join(
            f"{by_id[ANCHOR_PROBED[w]][f'outcome.{pair.key}.{t}']:.3f}" for t in ("inferential", "symmetric"))),
        *(row(f"mean attention {edge.replace('->', ' → ')}, layer by layer",
              partial(per_layer, edge=edge)) for edge in ("last->a1", "last->a2", "a2->key")),
        row("mirror merge (0: mirror pairs coincide)",
            lambda w: f"{cols[w]['representations']['mirror_merge']:.2f}"),
        row("first-layer W_Q condensation: groups, largest group's share", lambda w: (
            f"{(c := cols[w]['condensation']['W_Q layer 1'])['groups']}, {c['largest_group_share']:.0%}")),
        row("embedding: |Spearman(value, PC1)|", lambda w: f"{cols[w]['embedding']['pc1_spearman']:.2f}"),
        row(f"fused vectors: boxed − other cosine ({' / '.join(fused)})", lambda w: " / ".join(
            f"{v['boxed_contrast']:.2f}" for v in cols[w]["fused"]["pairs"].values())),
    ])


# ---- the results tables' headlines: the anchor demo and the paper-scale trajectory -----------------------------------

DEMO_ANCHOR = "results/demo-anchor"  # `reasonlab demo anchor --seed 2` and `--seed 3`
DEMO_SEEDS = (1, 2, 3)  # seed 1's runs are the search's search-s3 / -s3-g03 (run 89 and its partner: the same ids)
DEMO_COMMAND = ("reasonlab demo anchor --seed 2 --out ~/reasonlab-runs, the same with --seed 3, then reasonlab pack "
                f"~/reasonlab-runs/demo-anchor {DEMO_ANCHOR}")
HELD = "heldout/4-3/train_keys"


@dataclass(frozen=True)
class DemoRun:
    """One committed demo run: its end, the seen-pair accuracy that marks its escape (its config's
    ``thresholds.majority``, as its own ``escape.at50``), and per evaluation (Σlr, seen-pair test acc, (4,3)
    inferential)."""
    run_id: str
    label: str
    seen: float
    inf: float
    sym: float
    wall: float
    level: float
    evals: list[tuple[float, float, float]]

    def escape(self) -> tuple[float, float | None]:
        """Where seen-pair accuracy crossed ``level``, as evaluations bracket it: the Σlr of the last one below (0
        when none) and of the first at or above (None when it never did)."""
        below = [lr for lr, seen, _ in self.evals if seen < self.level]
        after = next((lr for lr, seen, _ in self.evals if seen >= self.level), None)
        before = max((lr for lr in below if after is None or lr < after), default=0.0)
        return before, after

    def lean(self) -> tuple[float, float]:
        """The largest (4,3) inferential share up to the escape's evaluation (all of them if it never escaped), and
        the seen-pair accuracy there: how far its answers leaned to the composite one on the way out."""
        after = self.escape()[1]
        way_out = [(inf, seen) for lr, seen, inf in self.evals if after is None or lr <= after]
        return max(way_out)


def _demo_folders() -> dict[tuple[int, float], str]:
    """Each demo run's committed folder by (seed, γ), pinned by the run id the demo's config gives (a folder
    elsewhere, or another run in the same folder, is not read); a run not committed maps to where it would be."""
    committed = {p.name: str(p.relative_to(REPO)) for root in (ANCHOR_SEARCH, DEMO_ANCHOR) for p in run_folders(root)}
    return {(seed, c.init.gamma): committed.get(c.run_id(), f"{DEMO_ANCHOR}/{c.run_id()}")
            for seed in DEMO_SEEDS for c in sweep_configs(anchor.demo_spec(seed))[0]}


def _demo_inputs() -> list[str]:
    return [f"{folder}/{f}" for folder in _demo_folders().values()
            for f in ("config.yaml", "summary.json", "metrics.parquet")]


def _demo_run(folder: str) -> DemoRun:
    summary = read_json(REPO / folder / "summary.json", "run summary")
    lr_sum, by_eval = {}, {}
    for r in read_metrics(REPO / folder / "metrics.parquet"):
        if (r.split, r.metric) == ("train", "lr_sum"):
            lr_sum[r.step] = r.value
        elif (r.split, r.metric) in (("pooled", "seen_test_acc"), (HELD, "acc_inferential")):
            by_eval.setdefault(r.step, {})[r.metric] = r.value
    final = summary["final"]
    return DemoRun(Path(folder).name, summary["label"], final["seen_test_acc"], final[f"{HELD}/inferential"],
                   final[f"{HELD}/symmetric"], summary["wall_time_s"], summary["config"]["thresholds"]["majority"],
                   [(lr_sum[step], e["seen_test_acc"], e["acc_inferential"]) for step, e in sorted(by_eval.items())])


@cache
def _demo_pairs() -> list[tuple[int, DemoRun, DemoRun]]:
    """(seed, small init, large init) per seed: the larger of the demo's γ values is the small initialization (read
    once per invocation: the docs table and the results row both use them)."""
    folders = _demo_folders()
    large, small = anchor.DEMO_GAMMAS
    return [(seed, _demo_run(folders[seed, small]), _demo_run(folders[seed, large])) for seed in DEMO_SEEDS]


def _later_by(small: DemoRun, large: DemoRun) -> tuple[float, float | None] | None:
    """How many times later in Σlr the small initialization escaped, as the evaluations bracket it: (at least, at
    most; None when the evaluations give no upper bound: the small one never escaped, or the large one had by the
    first evaluation), or None when the large one never escaped."""
    (s_lo, s_hi), (l_lo, l_hi) = small.escape(), large.escape()
    if l_hi is None:
        return None
    return s_lo / l_hi, (None if s_hi is None or not l_lo else s_hi / l_lo)


def _span(later: tuple[float, float | None] | None) -> str:
    if later is None:
        return "—"
    lo, hi = later
    return f"{lo:.1f}–{hi:.1f}×" if hi is not None else f"≥ {lo:.1f}× (no upper bound from the evaluations)"


def _demo_table() -> str:
    large_g, small_g = anchor.DEMO_GAMMAS

    def esc(run: DemoRun) -> str:
        lo, hi = run.escape()
        return f"{lo:.2f}–{hi:.2f}" if hi is not None else f"> {lo:.2f} (not by the end)"

    rows = [(seed, f"{small.run_id} / {large.run_id}", esc(small), esc(large), _span(_later_by(small, large)),
             "{:.2f} at {:.2f}".format(*small.lean()),
             f"{small.label} {small.inf:.3f} / {small.sym:.3f}, {small.seen:.3f}",
             f"{large.label} {large.inf:.3f} / {large.sym:.3f}, {large.seen:.3f}",
             f"{small.wall:,.0f} / {large.wall:,.0f}") for seed, small, large in _demo_pairs()]
    return markdown_table(
        ["seed", f"runs (γ {small_g:g} / γ {large_g:g})", f"escape in Σlr, γ {small_g:g} (between evaluations)",
         f"the same, γ {large_g:g}", "later by", f"largest (4,3) inferential on the way out, γ {small_g:g}, at "
         "seen-pair acc", f"γ {small_g:g} at the end: label, (4,3) inf / sym, seen-pair acc",
         f"γ {large_g:g} at the end: the same", f"train time s (γ {small_g:g} / γ {large_g:g})"], rows)


def anchor_demo_headline() -> str:
    """What the demo's seeds show, counted over them: the escape ordering (as the evaluations bracket it), the
    lean to the composite answer on the way out, the contrast's labels and the study's bar."""
    pairs = _demo_pairs()
    n = len(pairs)
    large_g, small_g = anchor.DEMO_GAMMAS
    spans = [_later_by(small, large) for _, small, large in pairs]
    later = sum(s is not None and s[0] >= 1 for s in spans)
    leaned = sum(small.lean()[0] >= small.level for _, small, _ in pairs)
    labels = sum(small.label == "inferential" and large.label == "symmetric" for _, small, large in pairs)
    bar = sum(small.inf >= STUDY_BAR and large.sym >= STUDY_BAR for _, small, large in pairs)
    return (f"γ {small_g:g} leaves its plateau later in Σlr than γ {large_g:g} in {later} of {n} seeds as the "
            "per-epoch evaluations bracket the crossings (" + ", ".join(map(_span, spans)) + "); the inferential "
            f"answer the majority of its (4,3) answers (≥ {pairs[0][1].level}) at an evaluation on the way out in "
            f"{leaned} of {n} (largest "
            + ", ".join(f"{small.lean()[0]:.2f}" for _, small, _ in pairs) + f"); the contrast's labels (γ "
            f"{small_g:g} inferential, γ {large_g:g} symmetric) at the end in {labels} of {n}, with each at the "
            f"study's {STUDY_BAR} bar in {bar} of {n}")


def _replay_agreement(path: Path) -> str:
    """How one replay's epoch losses stand against the authors' log: to the log's 4 decimals through epoch 2, then
    the largest ratio either way (and where it is)."""
    epochs = read_json(path, "replay file")["epochs"]
    early = max(abs(e["loss"] - e["log_loss"]) for e in epochs if e["epoch"] <= 2)
    later = [(max(e["loss"] / e["log_loss"], e["log_loss"] / e["loss"]), e) for e in epochs if e["epoch"] > 2]
    text = f"{path.stem}: {len(epochs)} epochs, within {early:.1e} of the log through epoch 2"
    if later:
        ratio, e = max(later, key=lambda t: t[0])
        text += (f", later up to {ratio:.2f}× apart (epoch {e['epoch']}: {e['loss']:.3f} vs the log's "
                 f"{e['log_loss']:.3f})")
    return text


def trajectory_headline() -> str:
    ours, _, _ = trajectory()
    logged = {e["epoch"]: e for e in authors_log()["runs"]["0.8"]["evaluations"]}
    keys = ("seen_test_acc", "heldout_inferential", "heldout_symmetric")
    parts = []
    for gamma, lines in sorted(ours.items(), key=lambda kv: float(kv[0])):
        for name, run in sorted(lines.items()):
            e = run["evaluations"][-1]
            log = logged.get(e["epoch"]) if gamma == "0.8" else None
            parts.append(f"γ {gamma} {name}: epoch {e['epoch']}, " + "{:.3f}, {:.3f} / {:.3f}".format(
                *(e[k] for k in keys)) + ("" if log is None else " (log {:.3f}, {:.3f} / {:.3f})".format(
                    *(log[k] for k in keys))))
    replays = "; ".join(_replay_agreement(REPO / TRAJECTORY / r) for r in TRAJECTORY_REPLAYS)
    a, b = ({e["epoch"]: e["loss"] for e in read_json(REPO / TRAJECTORY / r, "replay file")["epochs"]}
            for r in TRAJECTORY_REPLAYS)
    both = sorted(set(a) & set(b))
    apart = max(max(a[e] / b[e], b[e] / a[e]) for e in both)
    return ("at each line's last committed evaluation, seen-pair test acc, (4,3) inferential / symmetric: "
            + "; ".join(parts) + ". Our step on the authors' draws, epoch losses against their log: " + replays
            + f"; the two replays (1 and 2 threads) are themselves up to {apart:.2f}× apart through epoch "
            f"{both[-1]}, so float rounding plausibly explains the gap. Seeds other than the log's are other "
            f"draws; {own_draws_g08(ours.get('0.8', {}))}")


def own_draws_composed(lines: dict[str, dict]) -> dict[str, bool | None]:
    """Each γ 0.8 run from our own draws (``lines``: the committed γ 0.8 lines, as ``trajectory`` reads them):
    whether it met the log's outcome at some evaluation, None when it was not followed until it fitted (a run
    stopped before it fitted says nothing of what its fit lands on)."""
    return {n: any(shows_logged_outcome("0.8", e) for e in r["evaluations"])
            if any(e.get("seen_test_acc", 0.0) >= FITTED for e in r["evaluations"]) else None
            for n, r in lines.items() if "authors' draws" not in n}


def own_draws_g08(lines: dict[str, dict]) -> str:
    """What γ 0.8 landed on from our own draws, counted over the runs followed until they fitted, and whether one
    draw trained twice (a rerun on another machine) landed on two answers: then not the draw alone decides."""
    composed = {n: c for n, c in own_draws_composed(lines).items() if c is not None}
    by_seed: dict[str, set[bool]] = {}
    for n, c in composed.items():
        by_seed.setdefault(n.split(" (")[0], set()).add(c)
    split = [s for s, outcomes in by_seed.items() if len(outcomes) > 1]
    text = (f"on our own draws γ 0.8 composed in {sum(composed.values())} of the {counted(len(composed), 'run')} "
            f"followed until they fitted ({len(by_seed)} seeds)")
    if split:
        text += (f"; {', '.join(split)} composed in one run and not in its rerun on another machine, so at γ 0.8 "
                 "the landing depends on the draw and, beyond it, on float rounding")
    return text


# ---- what this module registers ----------------------------------------------------------------------------------

FIGURE_GENERATORS: dict[str, Figures] = {
    "anchor-trajectory": Figures(_trajectory_inputs, {f"{TRAJECTORY}/figures/trajectory.png": "figures/trajectory.png"},
                                 _draw_trajectory),
    **{f"anchor-mechanism-{which}": figures for which, figures in _probed_figures().items()},
}
TABLES: dict[str, Table] = {
    "anchor-trajectory-summary": Table(f"{TRAJECTORY}/summary.md", _trajectory_inputs, _trajectory_summary, True),
    "anchor-search": Table("docs/anchor-composition.md", lambda: [ANCHOR_SEARCH, f"{ANCHOR_SEARCH}/table.sql"],
                           lambda: sql_table(ANCHOR_SEARCH, ANCHOR_SEARCH)),
    "anchor-demo-seeds": Table("docs/anchor-composition.md", _demo_inputs, _demo_table, command=DEMO_COMMAND),
    "anchor-mechanism-cpu": Table("docs/anchor-composition.md", _mechanism_inputs, _mechanism_table,
                                  command=_probe_command(*ANCHOR_PROBED)),
}
