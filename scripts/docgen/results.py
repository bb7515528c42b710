"""The README's verdict table and docs/results.md's tables (the detailed "what reproduces" and the account of each
verdict), computed from what is committed."""

from __future__ import annotations

from collections import Counter

from docgen.common import (
    DEMO,
    DL_SEARCH,
    LM,
    LM_REGIME,
    MIXTURE,
    MIXTURE_SWEEPS,
    MODULAR,
    RB_CPU,
    REGIME_ANCHOR,
    REPO,
    Table,
    counts,
)
from docgen.reference import reference_cell, reference_inputs
from docgen.sweeps import (
    BENCHMARKS,
    COMPLEXITY,
    CPU_SWEEPS,
    GROK,
    LM_DOCS,
    LR_WD,
    MODULAR_PHASE,
    PHASE,
    RB_DOCS,
    ROUTE_R3,
    WIDE,
    WIDE_WD,
)
from docgen.verdicts import RULE, claims, seed_mean_lines
from reasonlab.studies.anchor import STUDY_BAR
from reasonlab.studies.anchor.demo_docs import ANCHOR_SEARCH, DEMO_ANCHOR, anchor_demo_headline
from reasonlab.studies.anchor.trajectory_docs import TRAJECTORY, pinned, trajectory_headline
from reasonlab.studies.reasoning_bias.docs import rb_inputs
from reasonlab.studies.sections import CommittedSweep
from reasonlab.sweep.results import markdown_table


def _phase_cells(sweep: CommittedSweep) -> tuple[str, str]:
    """A reduced phase diagram's committed runs, and what it showed seed by seed and on the paper's cells (best over
    learning rates, mean over seeds)."""
    lines = seed_mean_lines(sweep)
    shown = [f"{d:g}" for d, ok in lines.items() if ok]
    untested = [f"{d:g}" for d, ok in lines.items() if ok is None]
    runs, found = sweep.cells()
    return runs, (f"{found}; on the paper's cells, at the study's bar (≥ {STUDY_BAR} on each target): "
                  + (f"at depth {', '.join(shown)}" if shown else "at no depth")
                  + (f" (depth {', '.join(untested)}: fewer than two γ fitted)" if untested else ""))


def _modular_grid() -> tuple[str, str]:
    """The `cpu` grid's committed runs, and its claims with the labels its runs ended on."""
    runs, found = MODULAR_PHASE.cells()
    labels = Counter(r["label"] for r in MODULAR_PHASE.finished()[1])
    return runs, f"{found}; runs: " + ", ".join(f"{n} {label}" for label, n in labels.most_common())


def _what_reproduces() -> str:
    """The results table: per study, what is committed under results/ (counted from it), and what it showed
    (computed from it)."""
    link = "docs/anchor-composition.md"
    rows = [
        ("γ × depth phase diagram (`reproduce anchor-phase`)", "`cpu`",
         *_phase_cells(PHASE),
         f"[anchor-composition]({link}#the-cpu-profile-reduced-the-γ-transition-is-not-reproduced-at-this-scale)"),
        ("the same at the paper's width (`reproduce anchor-phase --profile cpu-wide`)", "`cpu-wide`",
         *_phase_cells(WIDE),
         f"[anchor-composition]({link}#the-search-for-a-cpu-profile)"),
        ("the same at the paper's integrated weight decay (`reproduce anchor-phase --profile cpu-wide-wd`)",
         "`cpu-wide` with wd 0.28", *_phase_cells(WIDE_WD),
         f"[anchor-composition]({link}#the-search-for-a-cpu-profile)"),
        ("the demo (`reasonlab demo`): Emb-MLP on the reasoning/memory mixture", "`emb-mlp-cpu`",
         counts([DEMO]), RB_DOCS.demo_headline(), "[reasoning-bias](docs/reasoning-bias.md#the-demo-reasonlab-demo)"),
        ("the anchor demo (`reasonlab demo anchor`) and the search behind it", "`cpu-regime` and its search",
         counts([ANCHOR_SEARCH, DEMO_ANCHOR]), anchor_demo_headline(REPO),
         f"[anchor-composition]({link}#the-search-for-a-cpu-profile)"),
        ("paper-scale trajectory (`reproduce anchor-trajectory`)",
         "`trajectory` (the `paper` model and data, truncated; hours per run)", counts([TRAJECTORY]),
         trajectory_headline(REPO), f"[anchor-composition]({link}#the-paper-scale-trajectory-on-this-cpu)"),
        ("inferential complexity (`reproduce anchor-complexity`)", "`cpu`",
         *COMPLEXITY.cells(),
         f"[anchor-composition]({link}#inferential-complexity-reasonlab-reproduce-anchor-complexity---profile-cpupaper)"),
        ("learning rate × weight decay (`reproduce anchor-lr-wd`)", "`cpu`",
         *LR_WD.cells(),
         f"[anchor-composition]({link}#learning-rate--weight-decay-reasonlab-reproduce-anchor-lr-wd---profile-cpupaper)"),
        ("reasoning bias on the mixture (`reproduce reasoning-bias`)", "`cpu`",
         counts([RB_CPU]), RB_DOCS.rb_headline(),
         "[reasoning-bias](docs/reasoning-bias.md#what-the-cpu-profiles-showed-reasonlab-reproduce-reasoning-bias---"
         "profile-cpu)"),
        ("the mixture transformer at the spec's volume (`train --family mixture --profile transformer-volume`)",
         "`transformer-volume` (24–46 min per run)", counts([f"{MIXTURE}/{s}" for s in MIXTURE_SWEEPS]),
         RB_DOCS.mixture_headline(),
         "[reasoning-bias](docs/reasoning-bias.md#what-the-cpu-profiles-showed-reasonlab-reproduce-reasoning-bias---"
         "profile-cpu)"),
        ("PrOntoQA vs TinyStories (`reproduce prontoqa-tinystories`)",
         f"`regime` (the spec's optimizer on reduced data and model; {LM_DOCS.lm_minutes('regime')}); earlier `cpu` "
         "and a search of 8 settings", f"{LM_DOCS.lm_finished('regime')}: `{LM_REGIME}/`; earlier "
         f"{counts([LM, DL_SEARCH])}", LM_DOCS.lm_headline(),
         f"[reasoning-bias](docs/reasoning-bias.md#{REGIME_ANCHOR})"),
        ("in-context modular arithmetic (`reproduce modular-phase`)", "`cpu`",
         *_modular_grid(),
         "[modular-icl](docs/modular-icl.md#where-the-search-stands-2026-12-03-ood-generalization-not-reached)"),
        ("the modular search and steering runs (`train --family modular`)", "`cpu` with changes (up to 67 min per run)",
         counts([MODULAR]), "observed in 1 seed per setting: o.o.d.-test stays near chance; depths 3 and 4 "
         "show the pattern of o.o.d. memorization below the spec's phase thresholds, then i.d. memorization; at p "
         "13–17 the plateau outlasts the budget (the docs' table, re-evaluated on 64 batches per set, from the "
         "committed analysis JSON); the paper's cell (p 29) at width 128 stayed on its loss plateau (routes R1, R2; "
         "1 seed each)",
         "[modular-icl](docs/modular-icl.md#where-the-search-stands-2026-12-03-ood-generalization-not-reached)"),
        ("route R3: the p 11 line in a grokking regime (`train --family modular --profile grok`)",
         "`grok` (reduced: p 11, 64 tasks, α 0.8, 16 shots, width 64, depth 4, batch 64, 200k steps; about 5 h a "
         "run on one thread)", counts([GROK]), ROUTE_R3.grok_headline(),
         "[modular-icl](docs/modular-icl.md#route-r3-the-p-11-line-in-a-grokking-regime---profile-grok)"),
        ("addition, SCAN, COGS, PrOntoQA (`reproduce addition|scan|cogs|prontoqa`)", "`cpu`",
         counts([sweep.folder for sweep in BENCHMARKS.values()]),
         "; ".join(sweep.headline(*sweep.finished()) for sweep in BENCHMARKS.values()),
         "[benchmarks](docs/benchmarks.md#what-the-cpu-profiles-show-in-one-paragraph)"),
    ]
    table = markdown_table(["study (command)", "profile", "committed under results/", "what it showed", "details"],
                           rows)
    return table.replace("](docs/", "](")  # it lives in docs/results.md


def _verdicts() -> str:
    """The README's front table: per headline claim of the three papers, what the committed runs give and the
    verdict (``verdicts.RULE``, stated in docs/results.md)."""
    rows = [(c.study_cell, c.claim, c.here, c.verdict, reference_cell(c.reference), c.link)
            for c in claims()]
    return markdown_table(["study", "the paper's claim", "here", "verdict", "checked against the authors' code",
                           "details"], rows)


def _verdict_readings() -> str:
    """docs/results.md's account of the README's verdicts: the rule, then per claim what one unit is, when it
    holds, and how many units held, did not hold and could not test it."""
    rows = [(c.study, c.unit, sum(u is True for u in c.units), sum(u is False for u in c.units),
             sum(u is None for u in c.units), c.verdict) for c in claims()]
    return RULE + "\n\n" + markdown_table(["claim", "one unit, and when it holds", "held", "did not hold",
                                            "could not test", "verdict"], rows)


def _what_reproduces_inputs() -> list[str]:
    return [DEMO, ANCHOR_SEARCH, TRAJECTORY, *(f"{MIXTURE}/{s}" for s in MIXTURE_SWEEPS), LM,
            *LM_DOCS.regime_inputs(),
            *(i for sweep in BENCHMARKS.values() for i in sweep.inputs()),
            DL_SEARCH, MODULAR, *(f"{TRAJECTORY}/{r}" for r in pinned(REPO, "trajectory_replays")),
            *rb_inputs(), *(i for sweep in (*CPU_SWEEPS, MODULAR_PHASE) for i in sweep.inputs()), *reference_inputs()]


TABLES: dict[str, Table] = {
    "verdicts": Table("README.md", _what_reproduces_inputs, _verdicts),
    "verdict-readings": Table("docs/results.md", _what_reproduces_inputs, _verdict_readings),
    "what-reproduces": Table("docs/results.md", _what_reproduces_inputs, _what_reproduces),
}
