"""The README's and docs/results.md's "what reproduces" tables, computed from what is committed."""

from __future__ import annotations

from collections import Counter
from statistics import median

from docgen.anchor import DEMO_ANCHOR, anchor_demo_headline, own_draws_g08, trajectory, trajectory_headline
from docgen.benchmarks import SWEEPS, bench_found, bench_short
from docgen.common import (
    ANCHOR_SEARCH,
    DEMO,
    DL_SEARCH,
    LM,
    LM_REGIME,
    MIXTURE,
    MIXTURE_SWEEPS,
    MODULAR,
    RB_CPU,
    REGIME_ANCHOR,
    TRAJECTORY,
    TRAJECTORY_REPLAYS,
    Table,
    counts,
    run_folders,
    under,
)
from docgen.modular import GROK, grok_headline
from docgen.prontoqa_tinystories import (
    chain,
    cosine_contrast,
    lm_finished,
    lm_headline,
    lm_minutes,
    lm_order,
    lm_setting,
    regime_inputs,
)
from docgen.reasoning_bias import (
    demo_headline,
    demo_seeds,
    demo_walls,
    mixture_headline,
    mixture_rows,
    rb_headline,
    rb_inputs,
)
from docgen.reference import reference_cell, reference_inputs
from docgen.sweeps import COMPLEXITY, CPU_SWEEPS, LR_WD, MODULAR_PHASE, PHASE, WIDE, WIDE_WD, phase_short
from reasonlab.config import load_yaml
from reasonlab.kinds.mixture.evaluate import reasoning_bias_criteria
from reasonlab.studies import (
    demo,
    modular_phase,
)
from reasonlab.studies import prontoqa_tinystories as lm
from reasonlab.studies.anchor_trajectory import authors_log
from reasonlab.sweep.results import markdown_table


def _what_reproduces() -> str:
    """The results table: per study, what is committed under results/ (counted from it), and what it showed
    (computed from it)."""
    link = "docs/anchor-composition.md"
    rows = [
        ("γ × depth phase diagram (`reproduce anchor-phase`)", "`cpu`",
         *PHASE.cells(),
         f"[anchor-composition]({link}#the-cpu-profile-reduced-the-γ-transition-is-not-reproduced-at-this-scale)"),
        ("the same at the paper's width (`reproduce anchor-phase --profile cpu-wide`)", "`cpu-wide`",
         *WIDE.cells(),
         f"[anchor-composition]({link}#the-search-for-a-cpu-profile)"),
        ("the same at the paper's integrated weight decay (`reproduce anchor-phase --profile cpu-wide-wd`)",
         "`cpu-wide` with wd 0.28", *WIDE_WD.cells(), f"[anchor-composition]({link}#the-search-for-a-cpu-profile)"),
        ("the demo (`reasonlab demo`): Emb-MLP on the reasoning/memory mixture", "`emb-mlp-cpu`",
         counts([DEMO]), demo_headline(), "[reasoning-bias](docs/reasoning-bias.md#the-demo-reasonlab-demo)"),
        ("the anchor demo (`reasonlab demo anchor`) and the search behind it", "`cpu-regime` and its search",
         counts([ANCHOR_SEARCH, DEMO_ANCHOR]), anchor_demo_headline(),
         f"[anchor-composition]({link}#the-search-for-a-cpu-profile)"),
        ("paper-scale trajectory (`reproduce anchor-trajectory`)",
         "`trajectory` (the `paper` model and data, truncated; hours per run)", counts([TRAJECTORY]),
         trajectory_headline(), f"[anchor-composition]({link}#the-paper-scale-trajectory-on-this-cpu)"),
        ("inferential complexity (`reproduce anchor-complexity`)", "`cpu`",
         *COMPLEXITY.cells(),
         f"[anchor-composition]({link}#inferential-complexity-reasonlab-reproduce-anchor-complexity---profile-cpupaper)"),
        ("learning rate × weight decay (`reproduce anchor-lr-wd`)", "`cpu`",
         *LR_WD.cells(),
         f"[anchor-composition]({link}#learning-rate--weight-decay-reasonlab-reproduce-anchor-lr-wd---profile-cpupaper)"),
        ("reasoning bias on the mixture (`reproduce reasoning-bias`)", "`cpu`",
         counts([RB_CPU]), rb_headline(),
         "[reasoning-bias](docs/reasoning-bias.md#what-the-cpu-profiles-showed-reasonlab-reproduce-reasoning-bias---"
         "profile-cpu)"),
        ("the mixture transformer at the spec's volume (`train --family mixture --profile transformer-volume`)",
         "`transformer-volume` (24–46 min per run)", counts([f"{MIXTURE}/{s}" for s in MIXTURE_SWEEPS]),
         mixture_headline(),
         "[reasoning-bias](docs/reasoning-bias.md#what-the-cpu-profiles-showed-reasonlab-reproduce-reasoning-bias---"
         "profile-cpu)"),
        ("PrOntoQA vs TinyStories (`reproduce prontoqa-tinystories`)",
         f"`regime` (the spec's optimizer on reduced data and model; {lm_minutes('regime')}); earlier `cpu` and "
         "a search of 8 settings", f"{lm_finished('regime')}: `{LM_REGIME}/`; earlier "
         f"{counts([LM, DL_SEARCH])}", lm_headline(), f"[reasoning-bias](docs/reasoning-bias.md#{REGIME_ANCHOR})"),
        ("in-context modular arithmetic (`reproduce modular-phase`)", "`cpu`",
         *MODULAR_PHASE.cells(),
         "[modular-icl](docs/modular-icl.md#where-the-search-stands-2026-12-03-ood-generalization-not-reached)"),
        ("the modular search and steering runs (`train --family modular`)", "`cpu` with changes (up to 67 min per run)",
         counts([MODULAR]), "observed in 1 seed per setting: o.o.d.-test stays near chance; depths 3 and 4 "
         "show the pattern of o.o.d. memorization below the spec's phase thresholds, then i.d. memorization; at p "
         "13–17 the plateau outlasts the budget (the docs' table, re-evaluated on 64 batches per set, from the "
         "committed analysis JSON)",
         "[modular-icl](docs/modular-icl.md#where-the-search-stands-2026-12-03-ood-generalization-not-reached)"),
        ("route R3: the p 11 line in a grokking regime (`train --family modular --profile grok`)",
         "`grok` (reduced: p 11, 64 tasks, α 0.8, 16 shots, width 64, depth 4, batch 64, 200k steps; about 5 h a "
         "run on one thread)", counts([GROK]), grok_headline(),
         "[modular-icl](docs/modular-icl.md#route-r3-the-p-11-line-in-a-grokking-regime---profile-grok)"),
        ("addition, SCAN, COGS, PrOntoQA (`reproduce addition|scan|cogs|prontoqa`)", "`cpu`",
         counts([sweep.folder for sweep in SWEEPS.values()]), bench_found(),
         "[benchmarks](docs/benchmarks.md#what-the-cpu-profiles-show-in-one-paragraph)"),
    ]
    table = markdown_table(["study (command)", "profile", "committed under results/", "what it showed", "details"],
                           rows)
    return table.replace("](docs/", "](")  # it lives in docs/results.md


def _short_counts(roots: list[str]) -> str:
    runs = [d for r in roots for d in run_folders(r)]
    seeds = {load_yaml(d / "config.yaml")["seed"] for d in runs}
    partial = sum(d.name.endswith(".partial") for d in runs)
    return f"{len(runs)} runs" + (f" ({partial} unfinished)" if partial else "") + f", {len(seeds)} seed" + (
        "s" if len(seeds) > 1 else "")


def _reduced_anchor_short() -> tuple[str, str]:
    """The short table's cells for the reduced anchor sweeps: runs and seeds per sweep, and what each showed (the
    phase diagrams' transition counts, the others' headlines)."""
    phases = ((PHASE, "phase diagram"), (WIDE, "at the paper's width"), (WIDE_WD, "the same at wd 0.28"))
    sweeps = (*(sweep for sweep, _ in phases), COMPLEXITY, LR_WD)
    runs = "; ".join(f"{_short_counts([s.folder])} ({s.folder.removeprefix('results/')})" for s in sweeps)
    found = [phase_short(*sweep.finished()[:2], what) for sweep, what in phases] + [
        sweep.headline(*sweep.finished()) for sweep in (COMPLEXITY, LR_WD)]
    return runs, "; ".join(found)


def _trajectory_short() -> str:
    ours, _, _ = trajectory()
    lines = ours.get("0.8", {})
    theirs = {n: r["evaluations"][-1] for n, r in lines.items() if "authors' draws" in n}
    name, last = max(theirs.items(), key=lambda kv: kv[1]["epoch"])
    logged = {e["epoch"]: e for e in authors_log()["runs"]["0.8"]["evaluations"]}[last["epoch"]]
    return (f"our step on the authors' γ 0.8 draws (their seed-1 draw, 1 run) composes as their log (epoch "
            f"{last['epoch']}: (4,3) inferential {last['heldout_inferential']:.3f}, log "
            f"{logged['heldout_inferential']:.3f}); {own_draws_g08(lines)}")


def _modular_grid_short() -> str:
    """The 5-minute `cpu` grid in one clause, computed from its committed runs."""
    rows = MODULAR_PHASE.finished()[1]
    labels = Counter(r["label"] for r in rows)
    held = modular_phase.verdict(modular_phase.task_count_claim(rows)[0]).replace("**", "")
    return (f"in the 5-minute `cpu` grid o.o.d. generalization appearing with the task count {held} (runs: "
            + ", ".join(f"{n} {label}" for label, n in labels.most_common()) + ")")


def _what_reproduces_short() -> str:
    """The README's front table: one line per study, computed where its runs are committed."""
    large, small = demo.DEMO_GAMMAS
    seeds = demo_seeds()
    shown = sum(all(reasoning_bias_criteria(r[small], r[large])[k] for k in demo.CONTRAST) for r in seeds.values())
    mix: dict[float, list[dict]] = {}
    for r in mixture_rows():
        mix.setdefault(r["g"], []).append(r)
    memory = {g: f"{min(r['memory'] for r in rs):.2f}–{max(r['memory'] for r in rs):.2f}" for g, rs in mix.items()}
    (order, verdict), (cpu_order, cpu_verdict) = lm_order("regime"), lm_order("cpu")
    (below, n_gammas), paper = cosine_contrast(), lm.PAPER_COSINE
    rows = [
        ("**the demo**: initialization decides rule vs table (Emb-MLP)", _short_counts([DEMO]),
         f"the contrast shows in {shown} of {len(seeds)} seeds, about {round(median(demo_walls().values()) / 60)} "
         "minutes each",
         "[reasoning-bias](docs/reasoning-bias.md#the-demo-reasonlab-demo)"),
        ("anchor composition at paper scale", _short_counts([TRAJECTORY]), _trajectory_short(),
         "[anchor-composition](docs/anchor-composition.md#the-paper-scale-trajectory-on-this-cpu)"),
        ("anchor composition at reduced scale (phase, paper width at wd 0.01 and 0.28, complexity, lr × wd)",
         *_reduced_anchor_short(),
         "[anchor-composition]"
         "(docs/anchor-composition.md#the-cpu-profile-reduced-the-γ-transition-is-not-reproduced-at-this-scale)"),
        ("reasoning bias, transformer at the spec's data volume", _short_counts(
            [f"{MIXTURE}/{s}" for s in MIXTURE_SWEEPS]),
         f"the rule before the facts at both γ; facts memorized at γ 0.3 ({memory[0.3]}), hardly at γ 0.8 "
         f"({memory[0.8]})", "[reasoning-bias](docs/reasoning-bias.md)"),
        ("reasoning bias, PrOntoQA + TinyStories (ΔL over γ)",
         f"`regime`: {lm_finished('regime')}; earlier: {_short_counts([LM, DL_SEARCH])}",
         f"in the paper's optimizer regime the ordering 0.3 < 0.5 < 0.8 {verdict} ({chain(order)}), and the early "
         f"embedding cosines put PrOntoQA-only tokens below TinyStories-only ones at {below} of {n_gammas} γ (paper: "
         f"{paper['prontoqa']} vs {paper['tinystories']}); earlier, at "
         f"{lm_setting('cpu')}: {cpu_verdict} ({chain(cpu_order)})",
         f"[reasoning-bias](docs/reasoning-bias.md#{REGIME_ANCHOR})"),
        ("in-context modular arithmetic",
         f"{_short_counts([MODULAR])} (routes, search); {_short_counts([MODULAR_PHASE.folder])} (the `cpu` grid)",
         f"{grok_headline()}; the paper's cell (p 29) at width 128 stayed on its loss plateau (routes R1, R2; 1 seed "
         "each); "
         + _modular_grid_short(),
         "[modular-icl](docs/modular-icl.md)"),
        ("benchmarks: addition, SCAN, COGS, PrOntoQA",
         f"{_short_counts([sweep.folder for sweep in SWEEPS.values()])} ({', '.join(SWEEPS)})",
         "small init + large wd against large init + small wd on each headline (o.o.d. exact match; PrOntoQA: the "
         f"true/false judgement), means over seeds: {bench_short()}",
         "[benchmarks](docs/benchmarks.md)"),
    ]
    checked = [None, "anchor", "anchor", None, None, "modular", None]  # the rows' studies with a reference code
    rows = [(*row[:3], reference_cell(study), row[3]) for row, study in zip(rows, checked, strict=True)]
    return markdown_table(["study", "committed runs", "in one line", "checked against the authors' code", "details"],
                          rows)


def _what_reproduces_inputs() -> list[str]:
    return [DEMO, ANCHOR_SEARCH, TRAJECTORY, *(f"{MIXTURE}/{s}" for s in MIXTURE_SWEEPS), LM, *regime_inputs(),
            *(i for sweep in SWEEPS.values() for i in sweep.inputs()),
            DL_SEARCH, MODULAR, *under(TRAJECTORY, *TRAJECTORY_REPLAYS),
            *rb_inputs(), *(i for sweep in CPU_SWEEPS for i in sweep.inputs()), *reference_inputs()]


TABLES: dict[str, Table] = {
    "what-reproduces-short": Table("README.md", _what_reproduces_inputs, _what_reproduces_short),
    "what-reproduces": Table("docs/results.md", _what_reproduces_inputs, _what_reproduces),
}
