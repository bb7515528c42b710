"""The reasoning-bias study's generators: the demo, PrOntoQA + TinyStories, the mixture transformer and the
synthetic cpu sweep."""

from __future__ import annotations

import re
from functools import cache, partial
from pathlib import Path
from statistics import mean, median

from docgen import common
from docgen.common import (
    DEMO,
    DL_SEARCH,
    FIGURES,
    LM,
    LM_REGIME,
    LM_SWEEPS,
    MIXTURE,
    MIXTURE_SWEEPS,
    RB_CPU,
    REPO,
    Figures,
    Table,
    counts,
    run_folders,
    sql_of,
    sql_table,
)
from reasonlab.config import RunConfig, load_yaml
from reasonlab.kinds.mixture.evaluate import reasoning_bias_criteria
from reasonlab.report.markdown import epoch_cell, held_in
from reasonlab.store import read_json
from reasonlab.studies import (
    demo,
    reasoning_bias,
)
from reasonlab.studies import prontoqa_tinystories as lm
from reasonlab.sweep.results import markdown_table, query

# ---- the demo: its figure (seed 1) and the 3-seed table of benchmarks/demo_seeds.py ------------------------------

def demo_seeds() -> dict[int, dict[float, dict]]:
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
    runs = demo_seeds()[1]
    demo.draw_demo(runs, next(iter(runs.values()))["cfg"].profile, 1, scratch / "demo")


def _demo_cell(r: dict) -> str:
    return f"{r['label']}, {r['reasoning_test_acc']:.2f}, {r['t50_memory']} / {r['t50_reasoning_train']}"


def demo_walls() -> dict[str, float]:
    """Seed → the demo's wall time as the benchmark measured it (seconds)."""
    return {s: v["wall_s"] for s, v in read_json(REPO / DEMO / "demo-seeds.json", "demo benchmark")["seeds"].items()}


def _demo_seeds_table() -> str:
    walls = demo_walls()
    large, small = demo.DEMO_GAMMAS
    rows = []
    for seed, runs in demo_seeds().items():
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
    runs = demo_seeds()[1]
    console = Console(file=StringIO(), width=100, color_system=None, legacy_windows=False)
    console.print(demo.demo_table(runs, "runs/demo"))
    lines = ["demo: 2 runs (init.gamma) with 2 workers × 1 threads; store runs/demo",
             "…   (a live table of both runs from the first seconds: step, steps/s, ETA, loss, accuracies)",
             *(line.rstrip() for line in console.file.getvalue().splitlines()), "figure: runs/demo/figures/demo.png",
             fill(demo.demo_verdict(runs), 116)]
    walls = list(demo_walls().values())
    return (f"It takes {min(walls):.0f}–{max(walls):.0f} s (about {round(max(walls) / 60)} minutes) over "
            f"{len(walls)} seeds on 2 quiet cores (`benchmarks/demo_seeds.py`, committed in `results/demo/`) and "
            "prints a live table from the first seconds, then (seed 1):\n\n```text\n" + "\n".join(lines)
            + "\n```\n")


def demo_headline() -> str:
    large, small = demo.DEMO_GAMMAS
    seeds = demo_seeds()
    shows = [all(reasoning_bias_criteria(r[small], r[large])[k] for k in demo.CONTRAST) for r in seeds.values()]
    unseen = {g: [r[g]["reasoning_test_acc"] for r in seeds.values()] for g in (large, small)}
    walls = list(demo_walls().values())
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
                                    keep=not common.CHECKING)


def _lm_per_gamma(profile: str, group: str = "main") -> dict[float, list[dict]]:
    groups, measured = _lm(profile)
    return lm.per_gamma(groups[group], measured)


def _lm_window(profile: str, group: str = "main") -> dict[float, list[float]]:
    """γ → ΔL̄ on the training subsets over a group's finished seeds."""
    return {g: [v for m in ms if (v := m["delta_L_train_window"]) is not None]
            for g, ms in _lm_per_gamma(profile, group).items()}


def lm_order(profile: str) -> tuple[list[float], str]:
    """The main group's γ in the order of their seed-mean ΔL̄, and the study's verdict on the paper's rising order
    over its own γ (0.3 < 0.5 < 0.8)."""
    window = {g: v for g, v in _lm_window(profile).items() if v}
    order = sorted(window, key=lambda g: mean(window[g]))
    return order, lm.ordering_verdict({g: v for g, v in window.items() if g in lm.GAMMAS})


def chain(gammas: list[float]) -> str:
    return " < ".join(map(str, gammas))


def lm_finished(profile: str) -> str:
    """How many of the study's runs have finished in the committed sweep, and their seeds."""
    measured = _lm(profile)[1]
    seeds = sorted({m["seed"] for m in measured.values()})
    return f"{len(measured)} finished runs, seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"


def lm_minutes(profile: str) -> str:
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


def regime_inputs() -> list[str]:
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


def _regime_early() -> dict[float, list[dict]]:
    """γ → the early cosines of each main-grid run of the regime sweep that has them."""
    groups, measured = _lm("regime")
    per = lm.per_gamma(groups["main"], lm.with_cosines(measured))
    return {g: [lm.stage_cosine(m, "early") for m in ms] for g, ms in per.items()}


def cosine_contrast() -> tuple[int, int]:
    """At how many γ of the regime sweep the paper's direction (PrOntoQA-only below TinyStories-only, early) shows
    in the seed means, and of how many γ measured."""
    early = _regime_early()
    return sum(mean(e["prontoqa"] for e in es) < mean(e["tinystories"] for e in es) for es in early.values()), len(
        early)


def _regime_cosines() -> str:
    """Early cosines per γ over the runs that have them, PrOntoQA-only vs TinyStories-only, and at how many γ the
    paper's direction (PrOntoQA-only below) shows in the seed means."""
    early = _regime_early()
    below, _ = cosine_contrast()
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
             f"{lm_minutes('regime')}; unfinished snapshots (`*.partial`) are not counted."]
    if lost := [c for cs in groups.values() for c in cs if (m := measured.get(c.run_id())) and m["cosine"] is None]:
        lines.append("- **Without embedding cosines**: " + ", ".join(f"`{c.run_id()}` (γ {c.init.gamma}, seed "
                     f"{c.seed})" for c in lost) + ": their cosines cannot be had from the committed files (the "
                     "generator prints why; such a run is retrained to get them), so their ΔL counts in every table "
                     "and in the ΔL figure and their cosines read —.")
    order, verdict = lm_order("regime")
    lines += [f"- **ΔL̄ over γ** (ΔL = (L_TinyStories − L_PrOntoQA) / L_PrOntoQA on the training subsets, averaged "
              "over 5–50 % of the steps: how far below the stories' loss the reasoning text's is): the paper's rising "
              f"order 0.3 < 0.5 < 0.8 {verdict}; the seed means order {chain(order)}, the largest at "
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


# ---- the synthetic reasoning-bias study (cpu profile): its figures from the committed sweep ----------------------

RB_FIGURES = {"reasoning-bias-cpu-curves": "curves", "reasoning-bias-cpu-label-distribution": "label-distribution",
              "reasoning-bias-cpu-cosine-emb_mlp-g0.8": "cosine-emb_mlp-g0.8"}


def rb_inputs() -> list[str]:
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
    walls = [read_json(run / "summary.json", "run summary")["wall_time_s"] for run in run_folders(RB_CPU)
             if not run.name.endswith(".partial")]
    return "\n".join([f"Committed: {counts([RB_CPU])}; {sum(walls) / 60:.0f} min of training summed over the "
                      f"runs (one thread each, beside other work).", "", *reasoning_bias.runs_table(results["runs"]),
                      "", "(t50 = first evaluated epoch, every 2 epochs, with accuracy ≥ 0.5; — = never within the "
                      "run.) E1's criteria (spec §6), per model over the seeds:", "",
                      *reasoning_bias.criteria_table(results["criteria"])]) + "\n"


def rb_headline() -> str:
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


# ---- the mixture transformer at the spec's volume: SQL tables over its committed sweeps ------------------------------

def mixture_rows() -> list[dict]:
    columns, rows = query(REPO / MIXTURE, sql_of(f"{MIXTURE}/mixture-transformer-seeds"))
    return [dict(zip(columns, r, strict=True)) for r in rows]


def _mixture_runs_table() -> str:
    rows = [(r["g"], r["seed"],
             *(f"{epoch_cell(r[f'{x}50'])} / {epoch_cell(r[f'{x}90'])}" for x in ("mem", "rsn", "test")),
             f"{r['memory']:.3f}", f"{r['test']:.3f}", f"{r['s']:.0f}", r["run_id"]) for r in mixture_rows()]
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
    return max(load_yaml(d / "config.yaml")["train"]["epochs"] for s in MIXTURE_SWEEPS
               for d in run_folders(f"{MIXTURE}/{s}"))


def _mixture_means_table() -> str:
    horizon, by_gamma = _mixture_horizon(), {}
    for r in mixture_rows():
        by_gamma.setdefault(r["g"], []).append(r)
    rows = [(f"{g} ({'large' if g == min(by_gamma) else 'small'} init)", lm.spread([r["memory"] for r in rs]),
             lm.spread([r["test"] for r in rs]), _epochs_range([r["mem50"] for r in rs], horizon),
             _epochs_range([r["rsn50"] for r in rs], horizon)) for g, rs in sorted(by_gamma.items())]
    return markdown_table(["γ", "final memory acc, mean [min, max]", "final reasoning-test acc, mean [min, max]",
                           "t50 memory", "t50 reasoning-train"], rows)


def _mixture_inputs() -> list[str]:
    return [*(f"{MIXTURE}/{s}" for s in MIXTURE_SWEEPS), f"{MIXTURE}/mixture-transformer-seeds/table.sql"]


# ---- the results tables' headlines: the mixture transformer and PrOntoQA + TinyStories -------------------------------

def mixture_headline() -> str:
    by_gamma: dict[float, list[dict]] = {}
    for r in mixture_rows():
        by_gamma.setdefault(r["g"], []).append(r)
    cells = [f"γ {g}: memory {min(r['memory'] for r in rs):.2f}–{max(r['memory'] for r in rs):.2f}, reasoning-test "
             f"{min(r['test'] for r in rs):.2f}–{max(r['test'] for r in rs):.2f}, the rule at 0.5 before the facts "
             f"in {sum(r['mem50'] is None or r['rsn50'] < r['mem50'] for r in rs)} of {len(rs)} seeds"
             for g, rs in sorted(by_gamma.items())]
    return "with the spec's data volume (`transformer-volume`, 200,000 sequences): " + "; ".join(cells)


def lm_setting(profile: str) -> str:
    """The main group's optimizer length and peak, from its configs."""
    train = _lm(profile)[0]["main"][0].train
    return f"peak lr {train.base_lr * train.lr_multiplier:.0e}".replace("e-0", "e-") + f", {train.epochs} epochs"


def lm_headline() -> str:
    """The results table's line: the regime sweep's verdicts first, then the earlier cpu sweep and the search."""
    rows = _dl_search_orders()
    highest = sum(max(v, key=v.get) == 0.5 for v in rows)
    (order, verdict), (cpu_order, cpu_verdict) = lm_order("regime"), lm_order("cpu")
    return (f"`regime` ({lm_setting('regime')}): ΔL̄ over γ (paper: 0.3 < 0.5 < 0.8) {verdict} — seed means "
            f"{chain(order)}; early cosines, PrOntoQA-only vs TinyStories-only: {_regime_cosines()}. Earlier, `cpu` "
            f"({lm_setting('cpu')}): {cpu_verdict} — seed means {chain(cpu_order)}; γ 0.5 highest in {highest} of "
            f"{len(rows)} single-seed settings of the search")


def _dl_search_orders() -> list[dict[float, float]]:
    """Per setting of the ΔL̄ search, γ → ΔL̄ on the training subsets."""
    columns, rows = query(REPO / DL_SEARCH, 'SELECT sweep, "init.gamma" AS g, "delta_L_window.train" AS dl '
                          "FROM runs ORDER BY sweep, g")
    out: dict[str, dict[float, float]] = {}
    for sweep, g, dl in rows:
        out.setdefault(sweep, {})[g] = dl
    return list(out.values())


# ---- what this module registers ----------------------------------------------------------------------------------

FIGURE_GENERATORS: dict[str, Figures] = {
    "demo": Figures(_demo_inputs, {f"{FIGURES}/demo.png": "demo.png"}, _draw_demo),
    "prontoqa-tinystories-cpu": Figures(_lm_inputs, _lm_figures("cpu"), partial(_draw_lm, "cpu")),
    "prontoqa-tinystories-regime": Figures(regime_inputs, _lm_figures("regime"), partial(_draw_lm, "regime")),
    **{name: Figures(rb_inputs, {f"{FIGURES}/{name}.png": f"{made}.png"}, _draw_rb)
       for name, made in RB_FIGURES.items()},
}
TABLES: dict[str, Table] = {
    "dl-search": Table("docs/reasoning-bias.md", lambda: [DL_SEARCH, f"{DL_SEARCH}/table.sql"],
                       lambda: sql_table(DL_SEARCH, DL_SEARCH)),
    "prontoqa-tinystories-seeds": Table("docs/reasoning-bias.md", _lm_inputs, _lm_seeds_table),
    "prontoqa-tinystories-regime-reading": Table("docs/reasoning-bias.md", regime_inputs, _regime_reading),
    "prontoqa-tinystories-regime": Table("docs/reasoning-bias.md", regime_inputs, _regime_report),
    "mixture-transformer-runs": Table("docs/reasoning-bias.md", _mixture_inputs, _mixture_runs_table),
    "mixture-transformer-means": Table("docs/reasoning-bias.md", _mixture_inputs, _mixture_means_table),
    "demo-seeds": Table("docs/reasoning-bias.md", _demo_inputs, _demo_seeds_table),
    "demo-sample": Table("README.md", _demo_inputs, _demo_sample),
    "reasoning-bias-cpu-e1": Table("docs/reasoning-bias.md", rb_inputs, _rb_e1),
    "reasoning-bias-cpu-geometry": Table("docs/reasoning-bias.md", rb_inputs,
                                         lambda: "\n".join(reasoning_bias.geometry_lines(_rb_results())) + "\n"),
    "reasoning-bias-cpu-fig8": Table("docs/reasoning-bias.md", rb_inputs,
                                     lambda: "\n".join(reasoning_bias.fig8_lines(_rb_results()["fig8"])) + "\n"),
}
