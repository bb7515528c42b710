"""Regenerate the docs' figures and tables of numbers from the committed ``results/``, without training.

    python scripts/regenerate_docs.py            # draw every figure, rewrite every generated table in place
    python scripts/regenerate_docs.py --tables   # rewrite the tables only, drawing nothing (seconds)
    python scripts/regenerate_docs.py --check    # exit 1 on any drift (below); draws nothing unless --draw
    python scripts/regenerate_docs.py --pending  # the figures whose runs are not committed, with their commands

A figure is a file under ``docs/figures/`` or an image a doc or the README shows; each has a generator here, which
draws it with the package's own study and plot functions from files under ``results/``. A table is the text
between ``<!-- table: NAME -->`` and ``<!-- /table -->`` in a markdown file (or a whole generated file, such as
``results/anchor-trajectory/summary.md``), rebuilt from ``results/`` by the generator of that name. ``--check``
fails when a figure has no generator, a generator's inputs are missing, an image a doc shows does not exist, a
marker names no generator (or a generator's marker is gone), or a regenerated table differs from the committed
text; with ``--draw`` it also draws every figure into a scratch folder. ``PENDING`` lists the figures the docs
showed from runs that are not committed: the command that trains them and its cost on this 2-core CPU.

Over 400 lines: every figure and table generator of the docs is registered here, so that ``--check`` sees the whole
coverage (a figure without a generator, a generator without inputs) in one place.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from statistics import mean, median

import numpy as np
from trajectory_figure import committed

from reasonlab.config import RunConfig, load_yaml
from reasonlab.errors import UserError
from reasonlab.kinds.anchor import probes as anchor_probes
from reasonlab.kinds.mixture.evaluate import reasoning_bias_criteria
from reasonlab.kinds.modular import figures as modular_figures
from reasonlab.kinds.modular import probes as modular_probes
from reasonlab.kinds.modular.evaluate import GOOD, SETS, phase_label
from reasonlab.kinds.modular.probes import PROBES, TITLES
from reasonlab.plots import save_figure
from reasonlab.report.markdown import epoch_cell, held_in
from reasonlab.store import read_json, read_metrics
from reasonlab.studies import (
    anchor_complexity,
    anchor_lr_wd,
    anchor_phase,
    benchmarks,
    demo,
    modular_phase,
    reasoning_bias,
)
from reasonlab.studies import prontoqa_tinystories as lm
from reasonlab.studies.anchor_trajectory import (
    FITTED,
    authors_log,
    draw,
    shows_logged_outcome,
    summary_markdown,
)
from reasonlab.sweep.grid import sweep_configs
from reasonlab.sweep.results import markdown_table, query
from reasonlab.sweep.runner import finished_rows

REPO = Path(__file__).resolve().parents[1]
FIGURES = "docs/figures"
DOCS = ("README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md")))
TABLE = re.compile(r"<!-- table: (?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /table -->", re.S)
IMAGE = re.compile(r"!\[[^\]]*\]\((?P<path>[^)\s]+\.(?:png|svg))\)")

TRAJECTORY = "results/anchor-trajectory"
TRAJECTORY_RUNS = ("eccb67ef6ca2", "4d2848961e74.partial", "seeds/8732ed9f6031.partial",
                   "seeds/b2d3e06830da.partial", "seeds/rerun-2026-12-02/8732ed9f6031.partial")
TRAJECTORY_REPLAYS = ("replay/g0.8-theirs-long-2026-12-03.json", "replay/g0.8-theirs-2threads-2026-12-03.json")
LM = "results/reasoning-bias/prontoqa-tinystories-cpu"
LM_REGIME = "results/reasoning-bias/prontoqa-tinystories-regime"
LM_SWEEPS = {"cpu": LM, "regime": LM_REGIME}
CHECKING = False  # set by main under --check, so that the check writes nothing into results/
REGIME_ANCHOR = "prontoqa--tinystories-in-the-papers-regime---profile-regime"
MIXTURE = "results/reasoning-bias"
MIXTURE_SWEEPS = ("mixture-transformer-full", "mixture-transformer-seeds")
ANCHOR_SEARCH = "results/anchor-search"
DL_SEARCH = "results/reasoning-bias/dl-search"
MODULAR = "results/modular"
CELL = "results/modular/cell"
DEMO = "results/demo"
RB_CPU = "results/reasoning-bias-cpu"  # the synthetic study's cpu profile, committed


@dataclass(frozen=True)
class Figures:
    """A generator of figures: ``outputs`` maps each file it makes (repo path) to the file ``draw`` leaves in its
    scratch folder; ``inputs`` are the committed paths it reads."""
    inputs: Callable[[], list[str]]
    outputs: dict[str, str]
    draw: Callable[[Path], object]


@dataclass(frozen=True)
class Table:
    """A generated table in ``doc`` (between its markers, or the whole file when ``whole``) and its inputs."""
    doc: str
    inputs: Callable[[], list[str]]
    render: Callable[[], str]
    whole: bool = False


@dataclass(frozen=True)
class Pending:
    """A figure the docs showed from runs that are not committed: what trains them and what it costs here."""
    command: str
    cost: str
    section: str


def _under(root: str, *names: str) -> list[str]:
    return [f"{root}/{n}" for n in names]


def _runs(root: str) -> list[Path]:
    """Every run folder (finished or a ``.partial`` snapshot) under ``root``: a folder holding ``config.yaml``."""
    return sorted(p.parent for p in (REPO / root).rglob("config.yaml"))


# ---- the anchor trajectory: the figure and its summary.md -------------------------------------------------------

def _trajectory() -> tuple[dict, str, str]:
    return committed([REPO / TRAJECTORY / r for r in TRAJECTORY_RUNS],
                     [REPO / TRAJECTORY / r for r in TRAJECTORY_REPLAYS])


def _trajectory_inputs() -> list[str]:
    return ([f"{TRAJECTORY}/{r}/{f}" for r in TRAJECTORY_RUNS for f in ("config.yaml", "metrics.parquet")]
            + _under(TRAJECTORY, *TRAJECTORY_REPLAYS))


def _draw_trajectory(scratch: Path) -> None:
    ours, profile, note = _trajectory()
    draw(ours, scratch, profile, note)


def _trajectory_summary() -> str:
    ours, profile, _ = _trajectory()
    return summary_markdown(ours, authors_log(), profile)


# ---- the demo: its figure (seed 1) and the 3-seed table of benchmarks/demo_seeds.py ------------------------------

def _demo_seeds() -> dict[int, dict[float, dict]]:
    return {int(d.name.removeprefix("seed-")): demo.read_demo_runs(d) for d in sorted((REPO / DEMO).glob("seed-*"))}


def _demo_inputs() -> list[str]:
    """The benchmark's JSON and, per seed it names, the two runs' records it found."""
    index = REPO / DEMO / "demo-seeds.json"
    if not index.is_file():
        return [f"{DEMO}/demo-seeds.json"]
    return [f"{DEMO}/demo-seeds.json", *(f"{DEMO}/seed-{seed}/{run['run_id']}/{f}"
                                        for seed, result in read_json(index, "demo benchmark")["seeds"].items()
                                        for run in result["runs"].values()
                                        for f in ("config.yaml", "summary.json", "metrics.parquet"))]


def _draw_demo(scratch: Path) -> None:
    runs = _demo_seeds()[1]
    demo.draw_demo(runs, next(iter(runs.values()))["cfg"].profile, 1, scratch / "demo")


def _demo_cell(r: dict) -> str:
    return f"{r['label']}, {r['reasoning_test_acc']:.2f}, {r['t50_memory']} / {r['t50_reasoning_train']}"


def _demo_walls() -> dict[str, float]:
    """Seed → the demo's wall time as the benchmark measured it (seconds)."""
    return {s: v["wall_s"] for s, v in read_json(REPO / DEMO / "demo-seeds.json", "demo benchmark")["seeds"].items()}


def _demo_seeds_table() -> str:
    walls = _demo_walls()
    large, small = demo.DEMO_GAMMAS
    rows = []
    for seed, runs in _demo_seeds().items():
        criteria = reasoning_bias_criteria(runs[small], runs[large])
        rows.append((str(seed), f"{walls[str(seed)]:.0f} s", _demo_cell(runs[large]),
                     _demo_cell(runs[small]), f"{sum(criteria[k] for k in demo.CRITERIA)} of {len(demo.CRITERIA)}",
                     "shows" if all(criteria[k] for k in demo.CONTRAST) else "does not show"))
    return markdown_table(["seed", "demo wall time", f"γ {large}: label, masked tuples, t50 memory / rule",
                           f"γ {small}: label, masked tuples, t50 memory / rule", "E1 criteria held", "contrast"],
                          rows)


def _demo_sample() -> str:
    """The README's sample of what the demo prints: its closing table and verdict for the committed seed 1, rendered
    by the demo's own code at a fixed width (so every number in it is the committed run's)."""
    from io import StringIO
    from textwrap import fill

    from rich.console import Console
    runs = _demo_seeds()[1]
    console = Console(file=StringIO(), width=100, color_system=None, legacy_windows=False)
    console.print(demo.demo_table(runs, "runs/demo"))
    lines = ["demo: 2 runs (init.gamma) with 2 workers × 1 threads; store runs/demo",
             "…   (a live table of both runs from the first seconds: step, steps/s, ETA, loss, accuracies)",
             *(line.rstrip() for line in console.file.getvalue().splitlines()), "figure: runs/demo/figures/demo.png",
             fill(demo.demo_verdict(runs), 116)]
    walls = list(_demo_walls().values())
    return (f"It takes {min(walls):.0f}–{max(walls):.0f} s (about {round(max(walls) / 60)} minutes) over "
            f"{len(walls)} seeds on 2 quiet cores (`benchmarks/demo_seeds.py`, committed in `results/demo/`) and "
            "prints a live table from the first seconds, then (seed 1):\n\n```text\n" + "\n".join(lines)
            + "\n```\n")


def _demo_main_headline() -> str:
    large, small = demo.DEMO_GAMMAS
    seeds = _demo_seeds()
    shows = [all(reasoning_bias_criteria(r[small], r[large])[k] for k in demo.CONTRAST) for r in seeds.values()]
    unseen = {g: [r[g]["reasoning_test_acc"] for r in seeds.values()] for g in (large, small)}
    walls = list(_demo_walls().values())
    return (f"the contrast shows in {sum(shows)} of {len(shows)} seeds: γ {small} learns the rule first and answers "
            f"the masked tuples ({min(unseen[small]):.2f}–{max(unseen[small]):.2f}), γ {large} learns rule and "
            f"table together ({min(unseen[large]):.2f}–{max(unseen[large]):.2f}); {min(walls):.0f}–{max(walls):.0f} s "
            "per demo on 2 cores")


# ---- prontoqa-tinystories: the regime sweep (the spec's optimizer) and the earlier cpu sweep (peak lr 1e-3) ---------

@cache
def _lm(profile: str) -> tuple[dict[str, list[RunConfig]], dict[str, dict]]:
    """The study's groups for a profile and its committed finished runs as ``measure_sweep`` gives them (a
    ``.partial`` snapshot is no finished run), measured once per invocation: every table, figure and row reads
    them, and a run whose cosines cannot be had is named once. Under ``--check`` a run's cosines file is not
    written into ``results/`` (the check changes nothing): a run packed without one is measured each time."""
    groups = lm.study_configs(profile)
    return groups, lm.measure_sweep([c for cs in groups.values() for c in cs], REPO / LM_SWEEPS[profile],
                                    keep=not CHECKING)


def _lm_per_gamma(profile: str, group: str = "main") -> dict[float, list[dict]]:
    groups, measured = _lm(profile)
    return lm.per_gamma(groups[group], measured)


def _lm_window(profile: str, group: str = "main") -> dict[float, list[float]]:
    """γ → ΔL̄ on the training subsets over a group's finished seeds."""
    return {g: [v for m in ms if (v := m["delta_L_train_window"]) is not None]
            for g, ms in _lm_per_gamma(profile, group).items()}


def _lm_order(profile: str) -> tuple[list[float], str]:
    """The main group's γ in the order of their seed-mean ΔL̄, and the study's verdict on the paper's rising order
    over its own γ (0.3 < 0.5 < 0.8)."""
    window = {g: v for g, v in _lm_window(profile).items() if v}
    order = sorted(window, key=lambda g: mean(window[g]))
    return order, lm.ordering_verdict({g: v for g, v in window.items() if g in lm.GAMMAS})


def _chain(gammas: list[float]) -> str:
    return " < ".join(map(str, gammas))


def _lm_finished(profile: str) -> str:
    """How many of the study's runs have finished in the committed sweep, and their seeds."""
    measured = _lm(profile)[1]
    seeds = sorted({m["seed"] for m in measured.values()})
    return f"{len(measured)} finished runs, seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"


def _lm_minutes(profile: str) -> str:
    """The finished runs' wall times, as committed in their summaries: range and median in minutes."""
    walls = sorted(read_json(REPO / LM_SWEEPS[profile] / r / "summary.json", "run summary")["wall_time_s"] / 60
                   for r in _lm(profile)[1])
    return f"{walls[0]:.0f}–{walls[-1]:.0f} min per run, median {median(walls):.0f}"


def _lm_figures(profile: str) -> dict[str, str]:
    return {f"{FIGURES}/prontoqa-tinystories-{profile}-{name}": name for name in ("delta-l.png", "cosine.png")}


def _draw_lm(profile: str, scratch: Path) -> None:
    groups, measured = _lm(profile)
    lm.draw_figures(groups["main"], measured, scratch)


def _lm_inputs() -> list[str]:
    """The cpu sweep is complete: every main run with its cosines."""
    return [f"{LM}/{c.run_id()}/{f}" for c in _lm("cpu")[0]["main"]
            for f in ("config.yaml", "summary.json", "metrics.parquet", "analysis/embedding-cosine.json")]


def _regime_inputs() -> list[str]:
    """The regime sweep grows: it, and what is measured of each run of the grid that has finished (a
    ``summary.json``), its cosines file being optional."""
    ids = dict.fromkeys(c.run_id() for cs in lm.study_configs("regime").values() for c in cs)
    return [LM_REGIME, *(f"{LM_REGIME}/{r}/{f}" for r in ids if (REPO / LM_REGIME / r / "summary.json").is_file()
                         for f in ("config.yaml", "summary.json", "metrics.parquet"))]


def _lm_seeds_table() -> str:
    per = _lm_per_gamma("cpu")
    rows = []
    for g, ms in per.items():
        window = [m["delta_L_train_window"] for m in ms]
        rows.append((str(g), " / ".join(f"{v:.3f}" for v in window), lm.spread(window),
                     lm.spread([m["delta_L_train_final"] for m in ms])))
    seeds = " / ".join(str(m["seed"]) for m in next(iter(per.values())))
    return markdown_table(["γ", f"ΔL̄ train (5–50 %), seeds {seeds}", "mean [min, max]",
                           "final ΔL train, mean [min, max]"], rows)


def _regime_report() -> str:
    """The regime sweep's report as ``summary.md`` has it below its header, its headings under the doc's section
    (two levels down) and its figures at the docs' copies."""
    text = "\n".join(lm.report_sections(*_lm("regime"))) + "\n"
    for target, made in _lm_figures("regime").items():
        text = text.replace(f"](figures/{made})", f"]({Path(target).relative_to('docs')})")
    return re.sub(r"^#", "###", text, flags=re.M)


def _regime_cosines() -> str:
    """Early cosines per γ over the runs that have them, PrOntoQA-only vs TinyStories-only, and at how many γ the
    paper's direction (PrOntoQA-only below) shows in the seed means."""
    groups, measured = _lm("regime")
    per = lm.per_gamma(groups["main"], lm.with_cosines(measured))
    early = {g: [lm.stage_cosine(m, "early") for m in ms] for g, ms in per.items()}
    below = sum(mean(e["prontoqa"] for e in es) < mean(e["tinystories"] for e in es) for es in early.values())
    cells = "; ".join(f"γ {g} ({len(es)} seed{'s' if len(es) > 1 else ''}): {lm.spread([e['prontoqa'] for e in es])} "
                      f"vs {lm.spread([e['tinystories'] for e in es])}" for g, es in early.items())
    return (f"{cells}; PrOntoQA-only below TinyStories-only at {below} of {len(early)} γ, where the paper has "
            f"{lm.PAPER_COSINE['prontoqa']} vs {lm.PAPER_COSINE['tinystories']} at small initialization")


def _regime_reading() -> str:
    """What the committed regime runs show, in plain words from the study's own verdicts: what has finished, the
    order of ΔL̄ over γ, the early cosines beside the paper's, and each arm."""
    groups, measured = _lm("regime")
    per = _lm_per_gamma("regime")
    runs = "; ".join(f"γ {g}: seed{'s' if len(ms) > 1 else ''} {', '.join(str(m['seed']) for m in ms)}"
                     for g, ms in per.items())
    lines = [f"- **Committed**: {sum(map(len, per.values()))} finished runs of the main grid's "
             f"{len(groups['main'])} ({runs}), trained one thread each beside other work in "
             f"{_lm_minutes('regime')}; unfinished snapshots (`*.partial`) are not counted."]
    if lost := [c for cs in groups.values() for c in cs if (m := measured.get(c.run_id())) and m["cosine"] is None]:
        lines.append("- **Without embedding cosines**: " + ", ".join(f"`{c.run_id()}` (γ {c.init.gamma}, seed "
                     f"{c.seed})" for c in lost) + ": their cosines cannot be had from the committed files (the "
                     "generator prints why; such a run is retrained to get them), so their ΔL counts in every table "
                     "and in the ΔL figure and their cosines read —.")
    order, verdict = _lm_order("regime")
    lines += [f"- **ΔL̄ over γ** (ΔL = (L_TinyStories − L_PrOntoQA) / L_PrOntoQA on the training subsets, averaged "
              "over 5–50 % of the steps: how far below the stories' loss the reasoning text's is): the paper's rising "
              f"order 0.3 < 0.5 < 0.8 {verdict}; the seed means order {_chain(order)}, the largest at "
              f"γ {order[-1]}.",
              f"- **Early embedding cosines** (5 % of training), PrOntoQA-only vs TinyStories-only tokens: "
              f"{_regime_cosines()}."]
    for group in groups:
        if group != "main":
            window = _lm_window("regime", group)
            values = ", ".join(f"γ {g}: {lm.spread(v)}" for g, v in window.items())
            lines.append(f"- **arm `{group}`** ({lm.TITLES[group]}): " + (
                f"ΔL̄ {values}; rising with γ: {lm.ordering_verdict(window)}" if window else "no finished run yet")
                + ".")
    return "\n".join(lines) + "\n"


# ---- the modular routes (R1, R2: the paper's cell; R3: the p 11 grokking line): four sets over steps, as packed ----

ROUTES = {"modular-cell": (CELL, "route R1"), "modular-cell-r2": (f"{MODULAR}/cell-r2", "route R2"),
          "modular-grok": (f"{MODULAR}/grok", "route R3")}


def _seeds(folder: str) -> dict[int, Path]:
    """Seed → run folder of a route's committed runs (finished or packed), one per seed."""
    runs: dict[int, Path] = {}
    for run in _runs(folder):
        seed = load_yaml(run / "config.yaml")["seed"]
        if seed in runs:
            raise UserError(f"{folder}: two runs of seed {seed} ({runs[seed].name}, {run.name}) where a route has one")
        runs[seed] = run
    return runs


def _route_run(figure: str) -> Path:
    """The route's first seed: the run its figure draws."""
    folder, route = ROUTES[figure]
    runs = _seeds(folder)
    if not runs:
        raise UserError(f"{folder}: no run where the figure draws {route}'s")
    return runs[min(runs)]


def _packed_state(run: Path, rows: list) -> str:
    state = "training, packed" if run.name.endswith(".partial") else "finished"
    return f"{state} at step {max(r.step for r in rows):,}"


def _route_inputs(figure: str) -> list[str]:
    run = _route_run(figure).relative_to(REPO)
    return [f"{run}/config.yaml", f"{run}/metrics.parquet"]


def _draw_route(figure: str, scratch: Path) -> None:
    run = _route_run(figure)
    cfg, rows = load_yaml(run / "config.yaml"), read_metrics(run / "metrics.parquet")
    fig = modular_figures.run_figure(rows, {"config": cfg})
    fig.suptitle(f"{ROUTES[figure][1]}, run {run.name.removesuffix('.partial')} ({_packed_state(run, rows)}) · "
                 f"{cfg['profile']}", fontsize=8)
    save_figure(fig, scratch / figure)


# ---- route R3's seeds, their shot curves and probes (analyses of each seed's final and best checkpoints) -----------

GROK = f"{MODULAR}/grok"
GROK_CHECKPOINTS = ("final", "best")  # the analyses committed per seed: the last weights and the early-stopping pick
GROK_BAR = 0.5  # the bar for o.o.d.-test (strict, dense last-shot): a second seed, shots and probes past it


def _grok_seeds_inputs() -> list[str]:
    return [f"{run.relative_to(REPO)}/{f}" for run in _seeds(GROK).values() for f in ("config.yaml", "metrics.parquet")]


def _draw_grok_seeds(scratch: Path) -> None:
    seeds = _seeds(GROK)
    runs = {seed: read_metrics(run / "metrics.parquet") for seed, run in seeds.items()}
    cfg = load_yaml(seeds[min(seeds)] / "config.yaml")
    states = "; ".join(f"seed {s}: {_packed_state(run, runs[s])}" for s, run in sorted(seeds.items()))
    fig = modular_figures.seeds_figure(runs, cfg["task"]["p"], f"route R3 ({cfg['profile']}), every seed ({states})")
    save_figure(fig, scratch / "modular-grok-seeds")


def _grok_analyses() -> dict[tuple[int, str], Path]:
    """(seed, checkpoint) → the committed analysis folder of each R3 seed at its final and best checkpoints."""
    return {(seed, cp): run / "analysis" / cp for seed, run in sorted(_seeds(GROK).items())
            for cp in GROK_CHECKPOINTS if (run / "analysis" / cp / "shots.json").is_file()}


def _grok_step(folder: Path) -> int:
    """The step of the weights an analysis read: its ``checkpoint.json``; analyses written before ``analyze``
    recorded it are of the final checkpoint, the run's last step."""
    if (folder / "checkpoint.json").is_file():
        return read_json(folder / "checkpoint.json", "analysis checkpoint")["step"]
    if folder.name != "final":
        raise UserError(f"{folder}: no checkpoint.json to say which step it analysed; rerun reasonlab analyze")
    return read_json(folder.parents[1] / "summary.json", "summary")["steps"]


def _grok_at(seed: int, cp: str) -> str:
    step = _grok_step(_grok_analyses()[seed, cp])
    pick = " (the early-stopping pick: its o.o.d.-test peak)" if cp == "best" else ""
    return f"seed {seed}, {cp} checkpoint{pick}, step {step:,}"


def _grok_shots_name(seed: int, cp: str) -> str:
    return f"modular-grok-shots-s{seed}-{cp}"


def _grok_shots_inputs(seed: int, cp: str) -> list[str]:
    folder = _grok_analyses()[seed, cp].relative_to(REPO)
    return [f"{folder}/shots.json", f"{folder}/shots.npz", f"{folder.parents[1]}/config.yaml"]


def _draw_grok_shots(seed: int, cp: str, scratch: Path) -> None:
    folder = _grok_analyses()[seed, cp]
    arrays = np.load(folder / "shots.npz")
    curves = {name: arrays[short] for short, name in SETS.items()}
    ceilings = {k.removeprefix("ceiling_"): arrays[k] for k in arrays.files if k.startswith("ceiling_")}
    modular_figures.plot_shot_curves(curves, ceilings, scratch / _grok_shots_name(seed, cp),
                                     f"route R3, run {folder.parents[1].name.removesuffix('.partial')}, "
                                     f"{_grok_at(seed, cp)}: strict per-shot accuracy", modular_figures.PAPER_SHOTS,
                                     beyond=arrays["ood_test_beyond_rm"] if "ood_test_beyond_rm" in arrays.files
                                     else None)


@dataclass(frozen=True)
class GrokSeed:
    """One seed of route R3 as committed: how far it trained, when o.o.d.-test first reached the issue's bar, its
    peak, and the four sets and the spec's phase (τ_fit 0.9, τ_good 0.8) at the last evaluation."""
    run: Path
    state: str
    first: int | None
    peak: float
    peak_step: int
    last: dict[str, float]
    phase: str


@cache
def _grok_stats() -> dict[int, GrokSeed]:
    stats = {}
    for seed, run in sorted(_seeds(GROK).items()):
        metrics = read_metrics(run / "metrics.parquet")
        series = modular_figures.step_series(metrics)
        steps, ood = series["ood_test_last_shot"]
        last = {k: series[f"{k}_last_shot"][1][-1] for k in SETS}
        peak = max(range(len(ood)), key=ood.__getitem__)
        stats[seed] = GrokSeed(run, _packed_state(run, metrics),
                               next((s for s, v in zip(steps, ood, strict=True) if v >= GROK_BAR), None), ood[peak],
                               steps[peak], last, phase_label(last))
    return stats


def _grok_table() -> str:
    rows = [(str(seed), s.run.name, s.state, "never" if s.first is None else f"{s.first:,}",
             f"{s.peak:.3f} (step {s.peak_step:,})", *(f"{s.last[k]:.3f}" for k in SETS), s.phase)
            for seed, s in _grok_stats().items()]
    return markdown_table(["seed", "run", "state", f"first step o.o.d.-test ≥ {GROK_BAR}", "o.o.d.-test peak",
                           *(f"{s} (last)" for s in SETS.values()), "spec phase (last)"], rows)


def _grok_headline() -> str:
    """Route R3 in one sentence for the README's and results.md's rows: how many seeds passed the issue's bar and
    the spec's phase bar, and each seed's figures."""
    stats, p = _grok_stats(), _grok_p()
    parts = [f"seed {seed}: " + (f"≥ {GROK_BAR} from step {s.first:,}, " if s.first is not None else "")
             + f"peak {s.peak:.2f}, last {s.last['ood_test']:.2f} ({s.state})" for seed, s in stats.items()]
    done = [s for s in stats.values() if not s.run.name.endswith(".partial")]  # a training seed is no verdict yet
    passed = sum(s.first is not None for s in done)
    kept = sum(s.last["ood_test"] >= GROK_BAR for s in done)
    good = sum(s.peak >= GOOD for s in done)
    training = len(stats) - len(done)
    # at p 11 a context of 15 pairs puts most queries on a line through one of them: the bar is within reach of
    # ratio matching alone, which the sentence must say beside chance (each seed's final evaluation sequences)
    ceilings = [read_json(folder / "shots.json", "shots")["ceilings"]["rm"][-1]
                for (_, cp), folder in _grok_analyses().items() if cp == "final"]
    rm = (f"; ratio matching alone could answer {_span(ceilings)} of these queries" if ceilings else "")
    return (f"a p {p} grokking route (R3): strict o.o.d.-test last-shot ≥ {GROK_BAR} (chance {1 / p:.2f}{rm}) in "
            f"{passed} of {len(done)} finished seeds (still at the last evaluation in {kept}), ≥ {GOOD} (the spec's "
            f"o.o.d.-generalization bar) in {good}"
            + (f", {training} more training" if training else "") + " — " + "; ".join(parts))


def _span(values: list[float]) -> str:
    return f"{min(values):.2f}" if round(min(values), 2) == round(max(values), 2) else \
        f"{min(values):.2f}–{max(values):.2f}"


def _grok_probes() -> str:
    """The probes' one-line findings on each committed analysis (seed × final/best checkpoint), as the analysis
    wrote them into its committed JSON, with the grid over every context drawn for it."""
    blocks = []
    for (seed, cp), folder in _grok_analyses().items():
        at = _grok_at(seed, cp)
        lines = [f"**{at[:1].upper()}{at[1:]}** (`{folder.relative_to(REPO)}/`):", ""]
        lines += [f"- **{TITLES[name]}** (`{name}`): {read_json(folder / f'{name}.json', name)['headline']}"
                  for name in PROBES if (folder / f"{name}.json").is_file()]
        grids = _grok_grids(folder)
        if len(grids) > 1:  # the grid's one fixed context, and the others its --seed drew
            lines.append(_grok_contexts_line(folder, grids))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + "\n"


def _grok_beyond_rm() -> str:
    """Each committed analysis against ratio matching, at the last shot on o.o.d. tasks: the eval-set accuracy and
    the share ratio matching could answer, the accuracy on the queries it cannot, and the grid's composition cells
    (a multiple of no context pair) with its default context, a context of test pairs alone, and over every
    context drawn. Analyses written before a split existed read —."""
    def cell(value: float | None, n: int | None = None) -> str:
        return "—" if value is None else f"{value:.3f}" + (f" ({n:,})" if n is not None else "")

    rows, ks = [], set()
    for (seed, cp), folder in _grok_analyses().items():
        shots = read_json(folder / "shots.json", "shots")
        test = shots["ood/test"]
        beyond = test.get("beyond_rm", {})
        grids = _grok_grids(folder)
        grid = grids[0]  # the default context's; the others are the grid's --seed contexts
        last = max(grid["ood"], key=int)
        ks.add(last)
        tests_only = grid.get("unseen_context", {}).get("ood", {}).get(last, {})
        comp = [g["ood"][last]["composition"] for g in grids.values()]
        rows.append((_grok_at(seed, cp), cell(test["last_shot"]), cell(shots["ceilings"]["rm"][-1]),
                     cell(beyond.get("last_shot"), beyond.get("queries")), cell(grid["ood"][last]["on_rm"]),
                     cell(grid["ood"][last]["composition"]), cell(tests_only.get("on_rm")),
                     cell(tests_only.get("composition")),
                     f"{mean(comp):.3f} over {len(comp)}" if len(comp) > 1 else "—"))
    return markdown_table(["analysis", "o.o.d.-test last-shot", "RM could answer", "on queries RM cannot (n)",
                           "grid: RM cells", "grid: composition cells", "test-pair context: RM cells",
                           "test-pair context: composition cells", "grid composition, mean over contexts"], rows) + \
        f"\nChance 1/{_grok_p()} = {1 / _grok_p():.3f}; the grid columns are o.o.d. tasks at k = " \
        f"{', '.join(sorted(ks, key=int))}.\n"


def _grok_over_time() -> str:
    """Each R3 seed's committed ``--over-time`` analysis in one line: the range over its analysed steps of the
    o.o.d.-test accuracy on queries ratio matching cannot answer, and of the grid's o.o.d. and i.d. composition
    cells at the last k (the shots probe at the run's own evaluation batches there)."""
    lines = []
    for seed, run in sorted(_seeds(GROK).items()):
        path = run / "analysis" / "dynamics" / "dynamics.json"
        if not path.is_file():
            continue
        series = read_json(path, "dynamics")
        steps = sorted(map(int, series["grid"]))
        last = max(int(k.split(".")[1]) for k in series["grid"][str(steps[-1])] if k.startswith("ood."))

        def span(probe: str, key: str, series: dict = series) -> str:
            values = [v[key] for v in series[probe].values() if v.get(key) is not None]
            return f"{min(values):.3f}–{max(values):.3f}"

        lines.append(f"- seed {seed}, steps {steps[0]:,}–{steps[-1]:,} ({len(steps)} checkpoints): o.o.d.-test "
                     f"last-shot {span('shots', 'ood/test.last_shot')}, on the queries RM cannot answer "
                     f"{span('shots', 'ood/test.beyond_rm.last_shot')}; grid at k = {last}, o.o.d. composition "
                     f"cells {span('grid', f'ood.{last}.composition')} (a context of test pairs: "
                     f"{span('grid', f'unseen_context.ood.{last}.composition')}), i.d. composition cells "
                     f"{span('grid', f'id.{last}.composition')}")
    return "\n".join(lines) + "\n"


def _grok_contexts_line(folder: Path, grids: dict[int, dict]) -> str:
    """The grid probe over every committed context, o.o.d. tasks at the last k: composition and RM cells over all
    queries, and composition on the unseen pairs alone, weighted by their cells (a context may have none)."""
    last = max(next(iter(grids.values()))["ood"], key=int)
    at = [g["ood"][last] for g in grids.values()]
    comp, rm = [s["composition"] for s in at], [s["on_rm"] for s in at]
    unseen = [s["unseen"] for s in at if s["unseen"]["composition_cells"]]
    cells = sum(u["composition_cells"] for u in unseen)
    pooled = sum(u["composition"] * u["composition_cells"] for u in unseen) / cells
    seeds = sorted(grids)
    named = (f"{seeds[0]}–{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1))
             else ", ".join(map(str, seeds)))
    tasks = int(np.load(folder / "grid.npz")[f"ood_k{last}"].shape[0])  # the first axis of the k-shot grid
    return (f"- **the grid over {len(grids)} contexts** (`--probe grid --seed S`, S = {named}), "
            f"o.o.d. tasks at k = {last}: composition cells answered at {mean(comp):.3f} on average "
            f"(range {min(comp):.3f}–{max(comp):.3f}), RM cells at {mean(rm):.3f} ({min(rm):.3f}–{max(rm):.3f}); on "
            f"the unseen pairs alone, composition cells at {pooled:.3f} over {cells} cells × {tasks} tasks (per "
            f"context {min(u['composition'] for u in unseen):.3f}–{max(u['composition'] for u in unseen):.3f}; ≥ 0.5 "
            f"in {sum(u['composition'] >= 0.5 for u in unseen)} of {len(unseen)} contexts that have such cells); "
            f"chance 1/{_grok_p()}")


def _grok_p() -> int:
    return load_yaml(_route_run("modular-grok") / "config.yaml")["task"]["p"]


def _grok_grids(folder: Path) -> dict[int, dict]:
    """Probe-input seed → the grid probe's numbers in one analysis folder (seed 0 is the default)."""
    paths = {0: folder / "grid.json", **{int(d.name.removeprefix("seed-")): d / "grid.json"
                                          for d in sorted(folder.glob("seed-*")) if (d / "grid.json").is_file()}}
    return {s: read_json(path, "grid") for s, path in sorted(paths.items()) if path.is_file()}


def _grok_probes_inputs() -> list[str]:
    return [str(p.relative_to(REPO)) for folder in _grok_analyses().values()
            for p in [*(folder / f"{name}.json" for name in PROBES), folder / "grid.npz",
                      *(d / "grid.json" for d in sorted(folder.glob("seed-*")))]]


# ---- the synthetic reasoning-bias study (cpu profile): its figures from the committed sweep ----------------------

RB_FIGURES = {"reasoning-bias-cpu-curves": "curves", "reasoning-bias-cpu-label-distribution": "label-distribution",
              "reasoning-bias-cpu-cosine-emb_mlp-g0.8": "cosine-emb_mlp-g0.8"}


def _rb_inputs() -> list[str]:
    """Every run's record and, for each mixture run, the geometry it kept (no checkpoint is committed): the runs
    ``reasoning_bias.measure`` reads."""
    cfgs = reasoning_bias.study_configs("cpu")
    return [f"{RB_CPU}/{c.run_id()}/{f}" for c in cfgs for f in ("config.yaml", "summary.json", "metrics.parquet")] + [
        f"{RB_CPU}/{c.run_id()}/analysis/geometry/geometry.{ext}" for c in cfgs for ext in ("json", "npz")
        if reasoning_bias.is_fig8(c) is None]


@cache
def _rb_results() -> dict:
    return reasoning_bias.measure(reasoning_bias.study_configs("cpu"), REPO / RB_CPU, keep=False)


def _draw_rb(scratch: Path) -> None:
    reasoning_bias.draw(_rb_results(), reasoning_bias.study_configs("cpu"), scratch)


def _rb_e1() -> str:
    results = _rb_results()
    walls = [read_json(run / "summary.json", "run summary")["wall_time_s"] for run in _runs(RB_CPU)
             if not run.name.endswith(".partial")]
    return "\n".join([f"Committed: {_counts([RB_CPU])}; {sum(walls) / 60:.0f} min of training summed over the "
                      f"runs (one thread each, beside other work).", "", *reasoning_bias.runs_table(results["runs"]),
                      "", "(t50 = first evaluated epoch, every 2 epochs, with accuracy ≥ 0.5; — = never within the "
                      "run.) E1's criteria (spec §6), per model over the seeds:", "",
                      *reasoning_bias.criteria_table(results["criteria"])]) + "\n"


def _rb_headline() -> str:
    """The results table's line for the committed cpu sweep: E1's criteria and the theory checks, in how many
    seeds each held, and Fig. 8's two claims (1 seed)."""
    results = _rb_results()
    parts = []
    for model, name in (("emb_mlp", "Emb-MLP"), ("transformer", "transformer")):
        mine = {s: c for (m, s), c in results["criteria"].items() if m == model}
        parts.append(f"{name}, E1 criteria held in (of {len(mine)} seeds): " + ", ".join(
            f"{label.split(' (')[0]} {sum(c[key] for c in mine.values())}"
            for key, label in reasoning_bias.CRITERIA.items()))
    checks = [f"{name} ({m}) {held_in(per_seed)}" for (name, m), per_seed in sorted(results["checks"].items())]
    fig8 = reasoning_bias.fig8_held(results["fig8"])
    t1 = {None: "not testable", True: "passed", False: "did not pass"}[reasoning_bias.t1_passed(results["attention"])]
    shown = {None: "not run", True: "showed", False: "did not show"}
    return ("; ".join(parts) + f"; T1 (at initialization) {t1}; theory checks at γ {reasoning_bias.SMALL_INIT}, passed "
            f"in: {', '.join(checks)}; Fig. 8 (1 seed): (i) {shown[fig8.get('ranges')]}, (ii) "
            f"{shown[fig8.get('rules')]}")


# ---- the studies' cpu sweeps, as the PENDING commands below commit them under results/<study>-cpu/ -------------

def _sweep_inputs(folder: str, configs: list[RunConfig]) -> list[str]:
    """Each run's record in a committed sweep (its results table is rebuilt from them: packs carry none)."""
    return [f"{folder}/{c.run_id()}/{f}" for c in configs for f in ("config.yaml", "summary.json", "metrics.parquet")]


@dataclass(frozen=True)
class CpuSweep:
    """A study's reduced sweep (its ``profile``, cpu unless named): its module (``spec_for``, ``draw``) and which
    drawn file each docs figure is."""
    study: object
    figures: dict[str, str]  # docs figure name → the file ``draw`` leaves in its folder (no suffix)
    doc: str  # the doc that shows the sweep's report (``report``), as the table ``<study>-cpu``
    report: Callable[[list[RunConfig], list[dict], Path], list[str]]  # configs, rows, sweep folder → its lines
    headline: Callable[[list[RunConfig], list[dict], Path], str]  # the results table's line
    needs_runs: bool = False  # ``draw`` reads the runs' metrics too (its third argument is the sweep folder)
    profile: str = "cpu"

    @property
    def folder(self) -> str:
        return f"results/{self.study.spec_for(self.profile).name}"

    def configs(self) -> list[RunConfig]:
        return sweep_configs(self.study.spec_for(self.profile))[0]

    def inputs(self) -> list[str]:
        return _sweep_inputs(self.folder, self.configs())

    def finished(self) -> tuple[list[RunConfig], list[dict], Path]:
        """The configs, the committed finished rows and the folder: read once per invocation (``_finished``)."""
        return _finished(self.study, self.profile)

    def draw(self, scratch: Path) -> None:
        configs, rows, sweep = self.finished()
        self.study.draw(configs, rows, *([sweep] if self.needs_runs else []), scratch)

    def table(self) -> str:
        return "\n".join(self.report(*self.finished())) + "\n"

    def cells(self, runs: str, command: str, now: str, observed: str) -> tuple[str, str]:
        """The results table's committed-runs and finding cells: counted and computed from the committed sweep,
        or, until it is committed, the docs' earlier observation (``runs`` … ``observed``), named as such."""
        if not (REPO / self.folder).is_dir():
            return _not_committed(runs, command, now), observed
        return _counts([self.folder]), self.headline(*self.finished())


@cache
def _finished(study: object, profile: str) -> tuple[list[RunConfig], list[dict], Path]:
    """A committed reduced sweep's configs, finished rows (its results table, rebuilt from the run folders) and
    folder, read once though the figure, the docs table and two results-table rows all use them."""
    spec = study.spec_for(profile)
    configs, sweep = sweep_configs(spec)[0], REPO / "results" / spec.name
    return configs, finished_rows(configs, sweep), sweep


def _transitions(configs: list[RunConfig], rows: list[dict]) -> str:
    return anchor_phase.transition_line(rows, configs[0].task.held_out_pairs[0].key, named=False)


def _phase_short(configs: list[RunConfig], rows: list[dict], what: str) -> str:
    key = configs[0].task.held_out_pairs[0].key
    by_label, at_bar = anchor_phase.transitions(rows), anchor_phase.transitions(rows, (key, anchor_phase.STUDY_BAR))
    cells = [{"init.gamma": c.x, "model.depth": c.y, "seed": 0, "label": c.label}  # a depth's cells as one line
             for c in anchor_phase.phase_cells(rows, configs[0].task.held_out_pairs[0])]
    depths = [d for (d, _), ok in anchor_phase.transitions(cells).items() if ok]
    return (f"{what}: symmetric → inferential along γ in {sum(by_label.values())} of {len(by_label)} (depth, "
            f"seed) lines by label, {sum(at_bar.values())} at the study's bar (≥ {anchor_phase.STUDY_BAR} on each "
            "target); on the mean of seeds " + (f"at depth {', '.join(f'{d:g}' for d in depths)}" if depths
                                                else "at no depth"))


def _phase_headline(configs: list[RunConfig], rows: list[dict], _: Path) -> str:
    cells = anchor_phase.phase_cells(rows, configs[0].task.held_out_pairs[0])
    return (f"{_transitions(configs, rows)}; cells (mean over seeds): "
            + "; ".join(anchor_phase.describe_depth(cells, d) for d in sorted({c.y for c in cells})))


def _complexity_headline(configs: list[RunConfig], rows: list[dict], sweep: Path) -> str:
    epochs = configs[0].train.epochs
    spread = anchor_complexity.sensitivity(anchor_complexity.fit_table(rows, sweep), epochs)
    large = min(spread)
    return f"the hypothesis (a smaller initialization more sensitive to k), against γ {large:g}: " + "; ".join(
        f"γ {g:g} in {held_in(anchor_complexity.more_sensitive(spread, g, large))}"
        for g in sorted(spread, reverse=True) if g != large)


def _lr_wd_headline(configs: list[RunConfig], rows: list[dict], _: Path) -> str:
    pair = anchor_lr_wd.PAIRS[0]
    return (f"{pair.caption} inferential: a larger peak lr pushes towards it in "
            f"{held_in(anchor_lr_wd.pushes(rows, pair, 0))}, a larger weight decay in "
            f"{held_in(anchor_lr_wd.pushes(rows, pair, 1))} (paper App. E: both)")


def _modular_headline(configs: list[RunConfig], rows: list[dict], _: Path) -> str:
    tasks, _lines = modular_phase.task_count_claim(rows)
    one, detail = modular_phase.depth_one_claim(rows)
    return (f"o.o.d. generalization appearing with the task count (depth 2, α ≥ 0.5, in ≥ 2 seeds per α): "
            f"{modular_phase.verdict(tasks)}; depth 1 never generalizing o.o.d.: {modular_phase.verdict(one)} "
            f"({detail})")


CPU_SWEEPS = (CpuSweep(anchor_phase, {"anchor-phase-cpu": "phase"}, doc="docs/anchor-composition.md",
                       report=lambda configs, rows, _: anchor_phase.report_lines(configs, rows, 4),
                       headline=_phase_headline),
              CpuSweep(anchor_complexity, {"anchor-complexity-cpu": "complexity"}, needs_runs=True,
                       doc="docs/anchor-composition.md",
                       report=lambda configs, rows, sweep: anchor_complexity.report_lines(
                           anchor_complexity.fit_table(rows, sweep), configs[0].train.epochs, 3),
                       headline=_complexity_headline),
              CpuSweep(anchor_lr_wd, {"anchor-lr-wd-cpu": "lr-wd"}, doc="docs/anchor-composition.md",
                       report=lambda configs, rows, _: anchor_lr_wd.report_lines(rows, configs[0].train.base_lr, 3),
                       headline=_lr_wd_headline),
              CpuSweep(modular_phase, {"modular-phase-cpu-L2": "phase-L2-final", "modular-phase-cpu-shots": "shots"},
                       needs_runs=True, doc="docs/modular-icl.md", report=lambda configs, rows, sweep:
                       modular_phase.report_lines(rows, modular_phase.measure(rows, sweep), 4, figures=False),
                       headline=_modular_headline),
              CpuSweep(anchor_phase, {"anchor-phase-cpu-wide": "phase"}, doc="docs/anchor-composition.md",
                       report=lambda configs, rows, _: anchor_phase.report_lines(configs, rows, 4),
                       headline=_phase_headline, profile="cpu-wide"))
PHASE, COMPLEXITY, LR_WD, MODULAR_PHASE, WIDE = CPU_SWEEPS


# ---- the benchmarks' cpu profiles: each one's figure and report from its committed sweep -----------------------

def _bench_folder(name: str) -> str:
    return f"results/{benchmarks.STUDIES[name].spec_for('cpu').name}"


def _bench_configs(name: str) -> list[RunConfig]:
    return sweep_configs(benchmarks.STUDIES[name].spec_for("cpu"))[0]


@cache
def _bench_table(name: str) -> list[dict]:
    """A committed benchmark's runs table, read once though its figure and its docs table both use it."""
    rows = finished_rows(_bench_configs(name), REPO / _bench_folder(name))
    return benchmarks.runs_table(rows, benchmarks.STUDIES[name].plans["cpu"])


def _bench_inputs(name: str) -> list[str]:
    return _sweep_inputs(_bench_folder(name), _bench_configs(name))


def _bench_report(name: str) -> str:
    return "\n".join(benchmarks.report_lines(_bench_table(name), level=4)) + "\n"


def _draw_bench(name: str, scratch: Path) -> None:
    benchmarks.benchmark_figure(_bench_table(name), name, scratch / name, _bench_configs(name)[0].profile)


BENCHMARKS = [name for name in benchmarks.STUDIES if (REPO / _bench_folder(name)).is_dir()]  # the committed ones
BENCH_EARLIER = {  # what the docs observed before a benchmark's runs were committed (1 seed, in the ignored runs/)
    "addition": "small init far above large init on the held-out box",
    "scan": "no setting separates", "cogs": "small init learns i.d. faster, no run fits",
    "prontoqa": "no setting separates"}
assert set(BENCH_EARLIER) == set(benchmarks.STUDIES), "a benchmark without its earlier observation"


def _bench_found() -> str:
    """Per benchmark: small init + large wd against large init + small wd, computed from its committed runs, or
    the earlier observation, named as such."""
    small, large = benchmarks.SETTINGS[1], benchmarks.SETTINGS[0]
    found = [f"{b}: {benchmarks.verdict(_bench_table(b), small, large) or 'no size with both settings'}"
             for b in BENCHMARKS]
    earlier = [f"{b}: {seen}" for b, seen in BENCH_EARLIER.items() if b not in BENCHMARKS]
    return "; ".join(found + ([f"observed in 1 seed, runs not committed: {'; '.join(earlier)}"] if earlier else []))


# ---- the anchor mechanism pair: flow and representations of two cpu-phase runs, from their committed analyses --

ANCHOR_PROBED = {"symmetric": "6481c657be98", "inferential": "628dca9517d0"}  # the docs' pair, by run id


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


def _probed_figures() -> dict[str, Figures]:
    """Registered once the pair's analyses are committed (else PENDING, below)."""
    return {which: Figures(lambda w=which: [f"{_probed(w)}/{name}.{ext}" for name in ("flow", "representations")
                                            for ext in ("json", "npz")],
                           {f"{FIGURES}/anchor-{probe}-{which}.png": f"anchor-{probe}-{which}.png"
                            for probe in ("flow", "representations")}, partial(_draw_probed, which))
            for which in ANCHOR_PROBED if (REPO / _probed(which) / "representations.json").is_file()}


MECHANISM_PROBES = ("flow", "representations", "condensation", "embedding", "fused")


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


# ---- the modular cpu memorizer's k-shot grid (i.d. tasks), from its committed analysis --------------------------

GRID_MEMORIZER = f"results/{modular_phase.spec_for('cpu').name}/183d5f788a34/analysis/final"  # 8 tasks, α 0.5, d 2, s 2


def _draw_memorizer_grid(scratch: Path) -> None:
    folder = REPO / GRID_MEMORIZER
    with np.load(folder / "grid.npz") as arrays:
        modular_probes.draw_grid(read_json(folder / "grid.json", "grid"), dict(arrays), scratch)


# ---- SQL tables over committed sweeps ---------------------------------------------------------------------------

def _sql(root: str) -> str:
    return (REPO / root / "table.sql").read_text()


def _sql_table(target: str, sql_root: str) -> str:
    return markdown_table(*query(REPO / target, _sql(sql_root)))


def _mixture_rows() -> list[dict]:
    columns, rows = query(REPO / MIXTURE, _sql(f"{MIXTURE}/mixture-transformer-seeds"))
    return [dict(zip(columns, r, strict=True)) for r in rows]


def _mixture_runs_table() -> str:
    rows = [(r["g"], r["seed"],
             *(f"{epoch_cell(r[f'{x}50'])} / {epoch_cell(r[f'{x}90'])}" for x in ("mem", "rsn", "test")),
             f"{r['memory']:.3f}", f"{r['test']:.3f}", f"{r['s']:.0f}", r["run_id"]) for r in _mixture_rows()]
    return markdown_table(["γ", "seed", "t50 / t90 memory", "t50 / t90 reasoning-train", "t50 / t90 reasoning-test",
                           "final memory acc", "final reasoning-test acc", "s", "run"], rows)


def _epochs_range(values: list[int | None], horizon: int) -> str:
    """First epochs over seeds: one value in every seed, a range, or beyond the horizon in every seed."""
    if all(v is None for v in values):
        return f"beyond {horizon} in every seed"
    if None in values:
        return f"{min(v for v in values if v is not None)}–never"
    return f"{values[0]} in every seed" if len(set(values)) == 1 else f"{min(values)}–{max(values)}"


def _mixture_horizon() -> int:
    return max(load_yaml(d / "config.yaml")["train"]["epochs"] for s in MIXTURE_SWEEPS for d in _runs(f"{MIXTURE}/{s}"))


def _mixture_means_table() -> str:
    horizon, by_gamma = _mixture_horizon(), {}
    for r in _mixture_rows():
        by_gamma.setdefault(r["g"], []).append(r)
    rows = [(f"{g} ({'large' if g == min(by_gamma) else 'small'} init)", lm.spread([r["memory"] for r in rs]),
             lm.spread([r["test"] for r in rs]), _epochs_range([r["mem50"] for r in rs], horizon),
             _epochs_range([r["rsn50"] for r in rs], horizon)) for g, rs in sorted(by_gamma.items())]
    return markdown_table(["γ", "final memory acc, mean [min, max]", "final reasoning-test acc, mean [min, max]",
                           "t50 memory", "t50 reasoning-train"], rows)


def _mixture_inputs() -> list[str]:
    return [*(f"{MIXTURE}/{s}" for s in MIXTURE_SWEEPS), f"{MIXTURE}/mixture-transformer-seeds/table.sql"]


# ---- the README's "what reproduces" table -----------------------------------------------------------------------

def _counts(roots: list[str]) -> str:
    """Committed runs and seeds under ``roots``, and how many of the runs are unfinished snapshots."""
    runs = [d for r in roots for d in _runs(r)]
    seeds = sorted({load_yaml(d / "config.yaml")["seed"] for d in runs})
    partial = sum(d.name.endswith(".partial") for d in runs)
    where = ", ".join(f"`{r}/`" for r in roots)
    return (f"{len(runs)} runs" + (f" ({partial} unfinished, as snapshots)" if partial
                                   else "")
            + f", seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}: {where}")


def _not_committed(runs: str, command: str, now: str | None = None) -> str:
    """What the docs' observation rests on (``runs``, not committed) and what the command trains: the same runs,
    or (``now``) the profile's grid since it has 3 seeds, of which the earlier runs are a part (same run ids)."""
    if now is None:
        return f"not committed ({runs}; `{command}` trains them)"
    return f"not committed (earlier {runs}; `{command}` now trains {now}, the earlier runs among them)"


def _summary_row(root: str, sweep: str) -> dict:
    columns, rows = query(REPO / root, 'SELECT sweep, label, "escape.at50.lr_sum" AS lr50, '
                          '"escape.at50.heldout.4-3.train_keys.inferential" AS inf50, '
                          '"final.heldout.4-3.train_keys.inferential" AS inf, '
                          '"final.heldout.4-3.train_keys.symmetric" AS sym, wall_time_s AS s FROM runs '
                          f"WHERE sweep = '{sweep}'")
    return dict(zip(columns, rows[0], strict=True))


def _demo_headline() -> str:
    small, large = _summary_row(ANCHOR_SEARCH, "search-s3"), _summary_row(ANCHOR_SEARCH, "search-s3-g03")
    return (f"the escape ordering, and composing at the escape: γ 0.85 leaves its plateau "
            f"{small['lr50'] / large['lr50']:.1f}× later in Σlr than γ 0.3 (read at per-epoch evaluations), with "
            f"(4,3) inferential {small['inf50']:.2f} there, and ends at {small['inf']:.2f}; γ 0.3 ends "
            f"{large['label']} {large['sym']:.2f}: the contrast's labels, below the study's 0.8 bar (1 seed; "
            f"`search-s3` and `search-s3-g03`, {small['s']:,.0f} s and {large['s']:,.0f} s, one thread each)")


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


def _trajectory_headline() -> str:
    ours, _, _ = _trajectory()
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
            f"draws; {_own_draws_g08(ours.get('0.8', {}))}")


def _own_draws_g08(lines: dict[str, dict]) -> str:
    """What γ 0.8 landed on from our own draws (``lines``: the committed γ 0.8 lines, as ``_trajectory`` reads
    them), counted over the runs followed until they fitted, and whether one draw trained twice (a rerun on another
    machine) landed on two answers: then not the draw alone decides."""
    runs = {n: r for n, r in lines.items() if "authors' draws" not in n
            and any(e.get("seen_test_acc", 0.0) >= FITTED for e in r["evaluations"])}
    composed = {n: any(shows_logged_outcome("0.8", e) for e in r["evaluations"]) for n, r in runs.items()}
    by_seed: dict[str, set[bool]] = {}
    for n, c in composed.items():
        by_seed.setdefault(n.split(" (")[0], set()).add(c)
    split = [s for s, outcomes in by_seed.items() if len(outcomes) > 1]
    text = (f"on our own draws γ 0.8 composed in {sum(composed.values())} of the {len(runs)} runs followed until "
            f"they fitted ({len(by_seed)} seeds)")
    if split:
        text += (f"; {', '.join(split)} composed in one run and not in its rerun on another machine, so at γ 0.8 "
                 "the landing depends on the draw and, beyond it, on float rounding")
    return text


def _mixture_headline() -> str:
    by_gamma: dict[float, list[dict]] = {}
    for r in _mixture_rows():
        by_gamma.setdefault(r["g"], []).append(r)
    cells = [f"γ {g}: memory {min(r['memory'] for r in rs):.2f}–{max(r['memory'] for r in rs):.2f}, reasoning-test "
             f"{min(r['test'] for r in rs):.2f}–{max(r['test'] for r in rs):.2f}, the rule at 0.5 before the facts "
             f"in {sum(r['mem50'] is None or r['rsn50'] < r['mem50'] for r in rs)} of {len(rs)} seeds"
             for g, rs in sorted(by_gamma.items())]
    return "with the spec's data volume (`transformer-volume`, 200,000 sequences): " + "; ".join(cells)


def _lm_setting(profile: str) -> str:
    """The main group's optimizer length and peak, from its configs."""
    train = _lm(profile)[0]["main"][0].train
    return f"peak lr {train.base_lr * train.lr_multiplier:.0e}".replace("e-0", "e-") + f", {train.epochs} epochs"


def _lm_headline() -> str:
    """The results table's line: the regime sweep's verdicts first, then the earlier cpu sweep and the search."""
    rows = _dl_search_orders()
    highest = sum(max(v, key=v.get) == 0.5 for v in rows)
    (order, verdict), (cpu_order, cpu_verdict) = _lm_order("regime"), _lm_order("cpu")
    return (f"`regime` ({_lm_setting('regime')}): ΔL̄ over γ (paper: 0.3 < 0.5 < 0.8) {verdict} — seed means "
            f"{_chain(order)}; early cosines, PrOntoQA-only vs TinyStories-only: {_regime_cosines()}. Earlier, `cpu` "
            f"({_lm_setting('cpu')}): {cpu_verdict} — seed means {_chain(cpu_order)}; γ 0.5 highest in {highest} of "
            f"{len(rows)} single-seed settings of the search")


def _dl_search_orders() -> list[dict[float, float]]:
    """Per setting of the ΔL̄ search, γ → ΔL̄ on the training subsets."""
    columns, rows = query(REPO / DL_SEARCH, 'SELECT sweep, "init.gamma" AS g, "delta_L_window.train" AS dl '
                          "FROM runs ORDER BY sweep, g")
    out: dict[str, dict[float, float]] = {}
    for sweep, g, dl in rows:
        out.setdefault(sweep, {})[g] = dl
    return list(out.values())


def _what_reproduces() -> str:
    """The README's table: per study, what is committed under results/ (counted from it), and what it showed
    (computed from it where committed; where not, the docs' observation, named as such, with its command)."""
    link = "docs/anchor-composition.md"
    rows = [
        ("γ × depth phase diagram (`reproduce anchor-phase`)", "`cpu`",
         *PHASE.cells("30 runs, 2 seeds, 37 min", "reasonlab reproduce anchor-phase --profile cpu",
                      "45 runs, 3 seeds, about 55 min",
                      "observed in 2 seeds, runs not committed: the γ transition is **not reproduced**: large init "
                      "gives the symmetric (or another memorized) answer, small init does not fit or fits onto the "
                      "symmetric answer"),
         f"[anchor-composition]({link}#the-cpu-profile-reduced-the-γ-transition-is-not-reproduced-at-this-scale)"),
        ("the same at the paper's width (`reproduce anchor-phase --profile cpu-wide`)", "`cpu-wide`",
         *WIDE.cells("6 runs, 3 seeds × 2 γ", "reasonlab reproduce anchor-phase --profile cpu-wide",
                     "the same grid, 16 min per run", "observed, runs not committed: the study's contrast (γ 0.5 "
                     "symmetric, γ 0.8 inferential) in 1 seed of 3"),
         f"[anchor-composition]({link}#the-search-for-a-cpu-profile)"),
        ("the demo (`reasonlab demo`): Emb-MLP on the reasoning/memory mixture", "`emb-mlp-cpu`",
         _counts([DEMO]), _demo_main_headline(), "[reasoning-bias](docs/reasoning-bias.md#the-demo-reasonlab-demo)"),
        ("the anchor demo (`reasonlab demo anchor`) and the search behind it", "`cpu-regime` and its search",
         _counts([ANCHOR_SEARCH]), _demo_headline(), f"[anchor-composition]({link}#the-search-for-a-cpu-profile)"),
        ("paper-scale trajectory (`reproduce anchor-trajectory`)",
         "`trajectory` (the `paper` model and data, truncated; hours per run)", _counts([TRAJECTORY]),
         _trajectory_headline(), f"[anchor-composition]({link}#the-paper-scale-trajectory-on-this-cpu)"),
        ("inferential complexity (`reproduce anchor-complexity`)", "`cpu`",
         *COMPLEXITY.cells("21 runs, 1 seed, 28 min", "reasonlab reproduce anchor-complexity --profile cpu",
                           "63 runs, 3 seeds, about 84 min",
                           "observed in 1 seed, runs not committed: the hypothesis held for γ 0.6 against γ 0.3; "
                           "γ 0.8 fits no k in 10 epochs"),
         f"[anchor-composition]({link}#inferential-complexity-reasonlab-reproduce-anchor-complexity---profile-cpupaper)"),
        ("learning rate × weight decay (`reproduce anchor-lr-wd`)", "`cpu`",
         *LR_WD.cells("9 runs, 1 seed, 13 min", "reasonlab reproduce anchor-lr-wd --profile cpu",
                      "27 runs, 3 seeds, about 39 min",
                      "observed in 1 seed, runs not committed: larger lr and larger wd push towards the inferential "
                      "solution (paper App. E)"),
         f"[anchor-composition]({link}#learning-rate--weight-decay-reasonlab-reproduce-anchor-lr-wd---profile-cpupaper)"),
        ("reasoning bias on the mixture (`reproduce reasoning-bias`)", "`cpu`",
         _counts([RB_CPU]), _rb_headline(),
         "[reasoning-bias](docs/reasoning-bias.md#what-the-cpu-profiles-showed-reasonlab-reproduce-reasoning-bias---"
         "profile-cpu)"),
        ("the mixture transformer at the spec's volume (`train --family mixture --profile transformer-volume`)",
         "`transformer-volume` (24–46 min per run)", _counts([f"{MIXTURE}/{s}" for s in MIXTURE_SWEEPS]),
         _mixture_headline(),
         "[reasoning-bias](docs/reasoning-bias.md#what-the-cpu-profiles-showed-reasonlab-reproduce-reasoning-bias---"
         "profile-cpu)"),
        ("PrOntoQA vs TinyStories (`reproduce prontoqa-tinystories`)",
         f"`regime` (the spec's optimizer on reduced data and model; {_lm_minutes('regime')}); earlier `cpu` and "
         "a search of 8 settings", f"{_lm_finished('regime')}: `{LM_REGIME}/`; earlier "
         f"{_counts([LM, DL_SEARCH])}", _lm_headline(), f"[reasoning-bias](docs/reasoning-bias.md#{REGIME_ANCHOR})"),
        ("in-context modular arithmetic (`reproduce modular-phase`)", "`cpu`",
         *MODULAR_PHASE.cells("32 runs, 2 seeds, 48 min", "reasonlab reproduce modular-phase --profile cpu",
                              "48 runs, 3 seeds, about 72 min",
                              "observed in 2 seeds, runs not committed: i.d. memorization only, o.o.d. generalization "
                              "**did not appear**"),
         "[modular-icl](docs/modular-icl.md#where-the-search-stands-2026-12-03-ood-generalization-not-reached)"),
        ("the modular search and steering runs (`train --family modular`)", "`cpu` with changes (up to 67 min per run)",
         _counts([MODULAR]), "observed in 1 seed per setting: o.o.d.-test stays near chance; depths 3 and 4 "
         "show the pattern of o.o.d. memorization below the spec's phase thresholds, then i.d. memorization; at p "
         "13–17 the plateau outlasts the budget (the docs' table, re-evaluated on 64 batches per set, from the "
         "committed analysis JSON)",
         "[modular-icl](docs/modular-icl.md#where-the-search-stands-2026-12-03-ood-generalization-not-reached)"),
        ("route R3: the p 11 line in a grokking regime (`train --family modular --profile grok`)",
         "`grok` (reduced: p 11, 64 tasks, α 0.8, 16 shots, width 64, depth 4, batch 64, 200k steps; about 5 h a "
         "run on one thread)", _counts([GROK]), _grok_headline(),
         "[modular-icl](docs/modular-icl.md#route-r3-the-p-11-line-in-a-grokking-regime---profile-grok)"),
        ("addition, SCAN, COGS, PrOntoQA (`reproduce addition|scan|cogs|prontoqa`)", "`cpu`",
         "; ".join(([_counts([_bench_folder(b) for b in BENCHMARKS])] if BENCHMARKS else []) + (
             [_not_committed("6 runs each of " + ", ".join(b for b in benchmarks.STUDIES if b not in BENCHMARKS)
                             + ", 1 seed, 14–27 min", "reasonlab reproduce <benchmark> --profile cpu")]
             if len(BENCHMARKS) < len(benchmarks.STUDIES) else [])),
         _bench_found(), "[benchmarks](docs/benchmarks.md#what-the-cpu-profiles-show-in-one-paragraph)"),
    ]
    table = markdown_table(["study (command)", "profile", "committed under results/", "what it showed", "details"],
                           rows)
    return table.replace("](docs/", "](")  # it lives in docs/results.md


def _short_counts(roots: list[str]) -> str:
    runs = [d for r in roots for d in _runs(r)]
    seeds = {load_yaml(d / "config.yaml")["seed"] for d in runs}
    partial = sum(d.name.endswith(".partial") for d in runs)
    return f"{len(runs)} runs" + (f" ({partial} unfinished)" if partial else "") + f", {len(seeds)} seed" + (
        "s" if len(seeds) > 1 else "")


def _reduced_anchor_short() -> tuple[str, str]:
    """The short table's cells for the reduced anchor sweeps: what of them is committed (runs and seeds per sweep),
    and what each committed one showed (the phase diagrams' transition counts, the others' headlines); until the
    phase diagram is committed, its earlier observation with its seed count."""
    committed = [sweep for sweep in (PHASE, WIDE, COMPLEXITY, LR_WD) if (REPO / sweep.folder).is_dir()]
    runs = "; ".join(f"{_short_counts([s.folder])} ({s.folder.removeprefix('results/')})" for s in committed
                     ) or "not committed yet"
    found = [_phase_short(*sweep.finished()[:2], "phase diagram" if sweep is PHASE else "at the paper's width")
             if sweep.study is anchor_phase
             else sweep.headline(*sweep.finished()) for sweep in committed]
    if PHASE not in committed:
        found.insert(0, "observed in 2 seeds, runs not committed: the γ transition is not reproduced at reduced scale")
    if WIDE not in committed:
        found.insert(1, "at the paper's width: the contrast (γ 0.5 symmetric, γ 0.8 inferential) in 1 of 3 seeds "
                        "(observed, runs not committed)")
    return runs, "; ".join(found)


def _trajectory_short() -> str:
    ours, _, _ = _trajectory()
    lines = ours.get("0.8", {})
    theirs = {n: r["evaluations"][-1] for n, r in lines.items() if "authors' draws" in n}
    name, last = max(theirs.items(), key=lambda kv: kv[1]["epoch"])
    logged = {e["epoch"]: e for e in authors_log()["runs"]["0.8"]["evaluations"]}[last["epoch"]]
    return (f"our step on the authors' γ 0.8 draws (their seed-1 draw, 1 run) composes as their log (epoch "
            f"{last['epoch']}: (4,3) inferential {last['heldout_inferential']:.3f}, log "
            f"{logged['heldout_inferential']:.3f}); {_own_draws_g08(lines)}")


def _what_reproduces_short() -> str:
    """The README's front table: one line per study, computed where its runs are committed."""
    large, small = demo.DEMO_GAMMAS
    seeds = _demo_seeds()
    shown = sum(all(reasoning_bias_criteria(r[small], r[large])[k] for k in demo.CONTRAST) for r in seeds.values())
    mix: dict[float, list[dict]] = {}
    for r in _mixture_rows():
        mix.setdefault(r["g"], []).append(r)
    memory = {g: f"{min(r['memory'] for r in rs):.2f}–{max(r['memory'] for r in rs):.2f}" for g, rs in mix.items()}
    (order, verdict), (cpu_order, cpu_verdict) = _lm_order("regime"), _lm_order("cpu")
    rows = [
        ("**the demo**: initialization decides rule vs table (Emb-MLP)", _short_counts([DEMO]),
         f"the contrast shows in {shown} of {len(seeds)} seeds, about {round(median(_demo_walls().values()) / 60)} "
         "minutes each",
         "[reasoning-bias](docs/reasoning-bias.md#the-demo-reasonlab-demo)"),
        ("anchor composition at paper scale", _short_counts([TRAJECTORY]), _trajectory_short(),
         "[anchor-composition](docs/anchor-composition.md#the-paper-scale-trajectory-on-this-cpu)"),
        ("anchor composition at reduced scale (phase, paper width, complexity, lr × wd)", *_reduced_anchor_short(),
         "[anchor-composition]"
         "(docs/anchor-composition.md#the-cpu-profile-reduced-the-γ-transition-is-not-reproduced-at-this-scale)"),
        ("reasoning bias, transformer at the spec's data volume", _short_counts(
            [f"{MIXTURE}/{s}" for s in MIXTURE_SWEEPS]),
         f"the rule before the facts at both γ; facts memorized at γ 0.3 ({memory[0.3]}), hardly at γ 0.8 "
         f"({memory[0.8]})", "[reasoning-bias](docs/reasoning-bias.md)"),
        ("reasoning bias, PrOntoQA + TinyStories (ΔL over γ)",
         f"`regime`: {_lm_finished('regime')}; earlier: {_short_counts([LM, DL_SEARCH])}",
         f"in the paper's optimizer regime the ordering 0.3 < 0.5 < 0.8 {verdict} ({_chain(order)}); earlier, at "
         f"{_lm_setting('cpu')}: {cpu_verdict} ({_chain(cpu_order)})",
         f"[reasoning-bias](docs/reasoning-bias.md#{REGIME_ANCHOR})"),
        ("in-context modular arithmetic", _short_counts([MODULAR]),
         f"{_grok_headline()}; the paper's cell (p 29) at width 128 stayed on its loss plateau (routes R1, R2)",
         "[modular-icl](docs/modular-icl.md)"),
        ("benchmarks: addition, SCAN, COGS, PrOntoQA", _short_counts([_bench_folder(b) for b in BENCHMARKS])
         + f" ({', '.join(BENCHMARKS)})" if BENCHMARKS else "not committed yet", _bench_found(),
         "[benchmarks](docs/benchmarks.md)"),
    ]
    return markdown_table(["study", "committed runs", "in one line", "details"], rows)


def _what_reproduces_inputs() -> list[str]:
    return [DEMO, ANCHOR_SEARCH, TRAJECTORY, *(f"{MIXTURE}/{s}" for s in MIXTURE_SWEEPS), LM, *_regime_inputs(),
            *(i for b in BENCHMARKS for i in _bench_inputs(b)),
            DL_SEARCH, MODULAR, *_under(TRAJECTORY, *TRAJECTORY_REPLAYS),
            *_rb_inputs(), *(i for sweep in CPU_SWEEPS if (REPO / sweep.folder).is_dir() for i in sweep.inputs())]


FIGURE_GENERATORS: dict[str, Figures] = {
    "demo": Figures(_demo_inputs, {f"{FIGURES}/demo.png": "demo.png"}, _draw_demo),
    "anchor-trajectory": Figures(_trajectory_inputs, {f"{TRAJECTORY}/figures/trajectory.png": "figures/trajectory.png"},
                                 _draw_trajectory),
    "prontoqa-tinystories-cpu": Figures(_lm_inputs, _lm_figures("cpu"), partial(_draw_lm, "cpu")),
    "prontoqa-tinystories-regime": Figures(_regime_inputs, _lm_figures("regime"), partial(_draw_lm, "regime")),
    **{name: Figures(partial(_route_inputs, name), {f"{FIGURES}/{name}.png": f"{name}.png"},
                     partial(_draw_route, name)) for name in ROUTES},
    "modular-grok-seeds": Figures(_grok_seeds_inputs, {f"{FIGURES}/modular-grok-seeds.png": "modular-grok-seeds.png"},
                                  _draw_grok_seeds),
    **{_grok_shots_name(*at): Figures(partial(_grok_shots_inputs, *at),
                                      {f"{FIGURES}/{_grok_shots_name(*at)}.png": f"{_grok_shots_name(*at)}.png"},
                                      partial(_draw_grok_shots, *at)) for at in _grok_analyses()},
    **({name: Figures(_rb_inputs, {f"{FIGURES}/{name}.png": f"{made}.png"}, _draw_rb)
        for name, made in RB_FIGURES.items()}),
    **{name: Figures(sweep.inputs, {f"{FIGURES}/{name}.png": f"{made}.png"}, sweep.draw)
       for sweep in CPU_SWEEPS if (REPO / sweep.folder).is_dir() for name, made in sweep.figures.items()},
    **{f"anchor-mechanism-{which}": figures for which, figures in _probed_figures().items()},
    **{f"benchmark-{b}-cpu": Figures(partial(_bench_inputs, b), {f"{FIGURES}/benchmark-{b}-cpu.png": f"{b}.png"},
                                     partial(_draw_bench, b)) for b in BENCHMARKS},
    **({"modular-grid-id-cpu": Figures(lambda: [f"{GRID_MEMORIZER}/grid.json", f"{GRID_MEMORIZER}/grid.npz"],
                                       {f"{FIGURES}/modular-grid-id-cpu.png": "grid-id.png"}, _draw_memorizer_grid)}
       if (REPO / GRID_MEMORIZER / "grid.json").is_file() else {}),
}

DRAWN = {target for g in FIGURE_GENERATORS.values() for target in g.outputs}

TABLES: dict[str, Table] = {
    "anchor-trajectory-summary": Table(f"{TRAJECTORY}/summary.md", _trajectory_inputs, _trajectory_summary, True),
    "anchor-search": Table("docs/anchor-composition.md", lambda: [ANCHOR_SEARCH, f"{ANCHOR_SEARCH}/table.sql"],
                           lambda: _sql_table(ANCHOR_SEARCH, ANCHOR_SEARCH)),
    "dl-search": Table("docs/reasoning-bias.md", lambda: [DL_SEARCH, f"{DL_SEARCH}/table.sql"],
                       lambda: _sql_table(DL_SEARCH, DL_SEARCH)),
    "prontoqa-tinystories-seeds": Table("docs/reasoning-bias.md", _lm_inputs, _lm_seeds_table),
    "prontoqa-tinystories-regime-reading": Table("docs/reasoning-bias.md", _regime_inputs, _regime_reading),
    "prontoqa-tinystories-regime": Table("docs/reasoning-bias.md", _regime_inputs, _regime_report),
    "mixture-transformer-runs": Table("docs/reasoning-bias.md", _mixture_inputs, _mixture_runs_table),
    "mixture-transformer-means": Table("docs/reasoning-bias.md", _mixture_inputs, _mixture_means_table),
    "demo-seeds": Table("docs/reasoning-bias.md", _demo_inputs, _demo_seeds_table),
    "demo-sample": Table("README.md", _demo_inputs, _demo_sample),
    "modular-grok": Table("docs/modular-icl.md", _grok_seeds_inputs, _grok_table),
    "modular-grok-probes": Table("docs/modular-icl.md", _grok_probes_inputs, _grok_probes),
    "modular-grok-beyond-rm": Table("docs/modular-icl.md", _grok_probes_inputs, _grok_beyond_rm),
    "modular-grok-over-time": Table("docs/modular-icl.md", lambda: [
        str((run / "analysis/dynamics/dynamics.json").relative_to(REPO)) for run in _seeds(GROK).values()
        if (run / "analysis/dynamics/dynamics.json").is_file()], _grok_over_time),
    "reasoning-bias-cpu-e1": Table("docs/reasoning-bias.md", _rb_inputs, _rb_e1),
    "reasoning-bias-cpu-geometry": Table("docs/reasoning-bias.md", _rb_inputs,
                                         lambda: "\n".join(reasoning_bias.geometry_lines(_rb_results())) + "\n"),
    "reasoning-bias-cpu-fig8": Table("docs/reasoning-bias.md", _rb_inputs,
                                     lambda: "\n".join(reasoning_bias.fig8_lines(_rb_results()["fig8"])) + "\n"),
    **{f"benchmark-{b}-cpu": Table("docs/benchmarks.md", partial(_bench_inputs, b), partial(_bench_report, b))
       for b in BENCHMARKS},
    **{sweep.folder.removeprefix("results/"): Table(sweep.doc, sweep.inputs, sweep.table) for sweep in CPU_SWEEPS
       if (REPO / sweep.folder).is_dir()},
    **({"anchor-mechanism-cpu": Table("docs/anchor-composition.md", _mechanism_inputs, _mechanism_table)}
       if _probed_figures() else {}),
    "what-reproduces-short": Table("README.md", _what_reproduces_inputs, _what_reproduces_short),
    "what-reproduces": Table("docs/results.md", _what_reproduces_inputs, _what_reproduces),
}

def _train_pack(study: str, profile: str = "cpu") -> str:
    """Train a study's reduced arm in a store outside the work tree, then pack its records into results/."""
    return (f"reasonlab reproduce {study} --profile {profile} --out ~/reasonlab-runs && reasonlab pack "
            f"~/reasonlab-runs/{study}-{profile} results/{study}-{profile}")


def _analyze_pack(study: str, run: str, probes: str) -> str:
    return (f"{_train_pack(study)}, then reasonlab analyze ~/reasonlab-runs/{study}-cpu/{run} {probes} and the same "
            "pack again (it adds the analysis files)")


BENCHMARK_MINUTES = {"addition": 54, "scan": 28, "cogs": 51, "prontoqa": 40}  # measured here, 2026-11
assert set(BENCHMARK_MINUTES) == set(benchmarks.STUDIES), "a benchmark without its cost (or a cost without it)"
_PHASE, _MOD = _train_pack("anchor-phase"), _train_pack("modular-phase")
_MECHANISM = "--probe flow --probe representations"
PENDING: dict[str, Pending] = {
    "anchor-phase-cpu": Pending(_PHASE, "45 runs, 3 seeds, about 55 min on 2 cores",
                                "anchor-composition.md, the cpu profile"),
    "anchor-flow-symmetric": Pending(_analyze_pack("anchor-phase", ANCHOR_PROBED["symmetric"], _MECHANISM),
                                     "the phase sweep, then seconds",
                                     "anchor-composition.md, symmetric vs inferential"),
    "anchor-flow-inferential": Pending(_analyze_pack("anchor-phase", ANCHOR_PROBED["inferential"], _MECHANISM),
                                       "the phase sweep, then seconds",
                                       "anchor-composition.md, symmetric vs inferential"),
    "anchor-representations-symmetric": Pending("as anchor-flow-symmetric", "as anchor-flow-symmetric",
                                                "anchor-composition.md"),
    "anchor-representations-inferential": Pending("as anchor-flow-inferential", "as anchor-flow-inferential",
                                                  "anchor-composition.md"),
    "anchor-phase-cpu-wide": Pending(_train_pack("anchor-phase", "cpu-wide"),
                                     "6 runs, 3 seeds, about 50 min on 2 cores", "anchor-composition.md, the search"),
    "anchor-complexity-cpu": Pending(_train_pack("anchor-complexity"), "63 runs, 3 seeds, about 84 min on 2 cores",
                                     "anchor-composition.md, inferential complexity"),
    "anchor-lr-wd-cpu": Pending(_train_pack("anchor-lr-wd"), "27 runs, 3 seeds, about 39 min on 2 cores",
                                "anchor-composition.md, learning rate × weight decay"),
    "modular-phase-cpu-L2": Pending(_MOD, "48 runs, 3 seeds, about 72 min on 2 cores",
                                    "modular-icl.md, the cpu profile"),
    "modular-phase-cpu-shots": Pending(_MOD, "the same sweep", "modular-icl.md, the cpu profile"),
    "modular-grid-id-cpu": Pending(_analyze_pack("modular-phase", GRID_MEMORIZER.split("/")[2], "--probe grid"),
                                   "the sweep, then about a minute", "modular-icl.md, k-shot grids"),
    **{f"benchmark-{name}-cpu": Pending(_train_pack(name), f"6 runs, 1 seed, about {minutes} min of training summed",
                                        "benchmarks.md") for name, minutes in BENCHMARK_MINUTES.items()},
}


def _missing(paths: list[str]) -> list[str]:
    return [p for p in paths if not (REPO / p).exists()]


def coverage(check: bool = True) -> list[str]:
    """Every problem that needs no drawing: figures without a generator, generators without inputs, images the
    docs show that no generator draws (or, when ``check``, that are not drawn yet), markers without a generator and
    generators without a marker."""
    problems = []
    outputs = {o for g in FIGURE_GENERATORS.values() for o in g.outputs}
    for png in sorted((REPO / FIGURES).iterdir()):
        if str(png.relative_to(REPO)) not in outputs:
            problems.append(f"{png.relative_to(REPO)}: no generator in scripts/regenerate_docs.py")
    for name, gen in {**FIGURE_GENERATORS, **TABLES}.items():
        problems += [f"{name}: input missing from the repository: {p}" for p in _missing(gen.inputs())]
    for doc in DOCS:
        text = (REPO / doc).read_text()
        for m in IMAGE.finditer(text):
            target = str(((REPO / doc).parent / m["path"]).resolve().relative_to(REPO))
            if target not in outputs:
                problems.append(f"{doc}: shows {m['path']}, which no generator draws")
            elif not (REPO / target).is_file() and check:  # else drawn by this very invocation
                problems.append(f"{doc}: shows {m['path']}, which does not exist (run scripts/regenerate_docs.py)")
        problems += [f"{doc}: marker `{m['name']}` names no table generator" for m in TABLE.finditer(text)
                     if m["name"] not in TABLES]
    for name, table in TABLES.items():
        if not table.whole and name not in {m["name"] for m in TABLE.finditer((REPO / table.doc).read_text())}:
            problems.append(f"{table.doc}: no `<!-- table: {name} -->` … `<!-- /table -->` block")
    return problems


def regenerate_tables(write: bool) -> list[str]:
    """Rebuild every table; write the docs when ``write``, else name each table whose text differs."""
    changed = []
    for doc in sorted({t.doc for t in TABLES.values()}):
        path = REPO / doc
        old = path.read_text()
        whole = [t for t in TABLES.values() if t.doc == doc and t.whole]
        if whole:
            new = whole[0].render()
        else:
            new = TABLE.sub(lambda m: f"<!-- table: {m['name']} -->\n{TABLES[m['name']].render()}<!-- /table -->",
                            old)
        if new != old:
            changed.append(doc)
            if write:
                path.write_text(new)
    return changed


def draw_figures(into: Path | None) -> list[Path]:
    """Draw every generator's figures in a scratch folder; copy them into place (``into`` None) or under
    ``into`` (a check: the drawing works, nothing in the repository changes)."""
    written = []
    for gen in FIGURE_GENERATORS.values():
        with tempfile.TemporaryDirectory() as scratch:
            gen.draw(Path(scratch))
            for target, made in gen.outputs.items():
                dest = (into or REPO) / target
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(Path(scratch) / made, dest)
                written.append(dest)
    return written


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when a figure or table would drift")
    parser.add_argument("--draw", action="store_true", help="with --check: also draw every figure (scratch copy)")
    parser.add_argument("--pending", action="store_true", help="list the figures whose runs are not committed")
    parser.add_argument("--tables", action="store_true", help="rewrite the tables only, drawing nothing (seconds)")
    args = parser.parse_args()
    try:
        if args.draw and not args.check:
            raise UserError("--draw goes with --check (without --check every figure is drawn anyway)")
        if args.tables and args.check:
            raise UserError("--tables rewrites the docs; --check only reads them: use one")
        if args.pending:
            for name, p in PENDING.items():
                if f"{FIGURES}/{name}.png" in DRAWN:  # its runs are committed now: no longer pending
                    continue
                print(f"{name}: {p.command}  [{p.cost}; {p.section}]")
            return 0
        global CHECKING
        CHECKING = args.check
        problems = coverage(args.check)
        if args.check:
            if not problems:
                problems += [f"{doc}: a generated table differs from results/ (run scripts/regenerate_docs.py)"
                             for doc in regenerate_tables(write=False)]
            if not problems and args.draw:
                with tempfile.TemporaryDirectory() as scratch:
                    draw_figures(Path(scratch))
            for p in problems:
                print(p, file=sys.stderr)
            print(f"{len(problems)} problem(s)" if problems else "docs match results/")
            return 1 if problems else 0
        if problems:
            raise UserError(problems[0] + (f" (and {len(problems) - 1} more; see --check)" if len(problems) > 1
                                           else ""))
        for path in regenerate_tables(write=True):
            print(f"rewritten: {path}")
        for path in [] if args.tables else draw_figures(None):
            print(f"drawn: {path.relative_to(REPO)}")
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
