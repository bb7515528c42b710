"""The README's verdict table: per headline claim of the three papers, the claim with its number, what the committed
runs give (one figure with its seeds), and a verdict word computed by one rule from the claim's units.

A claim is read on units — seeds, (depth) lines of a phase diagram, training sizes, runs — each of which held, did
not hold, or could not test the claim (None: a side did not fit its training data, or no run reached the bar the
claim is stated at). Each row is one small function returning a ``Claim``; ``CLAIMS`` lists them in table order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, partial
from statistics import mean

from docgen.common import REGIME_ANCHOR, REPO
from docgen.sweeps import BENCHMARKS, GROK, LM_DOCS, LR_WD, MODULAR_PHASE, PHASE, RB_DOCS, ROUTE_R3, WIDE, WIDE_WD
from reasonlab.config import load_yaml
from reasonlab.evaluate import DIVERGED
from reasonlab.kinds.anchor.cells import phase_cells
from reasonlab.kinds.modular.evaluate import GOOD
from reasonlab.report.markdown import held_in
from reasonlab.studies import benchmarks
from reasonlab.studies import prontoqa_tinystories as lm
from reasonlab.studies import reasoning_bias as rb
from reasonlab.studies.anchor import STUDY_BAR
from reasonlab.studies.anchor import lr_wd as anchor_lr_wd
from reasonlab.studies.anchor import phase as anchor_phase
from reasonlab.studies.anchor.trajectory import authors_log
from reasonlab.studies.anchor.trajectory_docs import own_draws_composed, trajectory
from reasonlab.studies.benchmarks.docs import ARM, LARGE, SMALL
from reasonlab.studies.benchmarks.report import SAME, comparison, runs_table
from reasonlab.studies.modular import report as modular_report
from reasonlab.studies.prontoqa_tinystories.docs import chain
from reasonlab.studies.sections import CommittedSweep
from reasonlab.terminal import counted

VERDICTS = ("reproduced", "partly", "not reproduced", "not testable at this scale")
RULE = ("Each claim is read on units (seeds, lines of a phase diagram, training sizes or runs, as its row says); a "
        "unit held the claim, did not hold it, or could not test it — a side did not fit its training data, or no "
        "run reached the bar the claim is stated at. **not testable at this scale**: no unit could test it; "
        "**reproduced**: every unit held it; **not reproduced**: no unit held it; **partly**: some units held it "
        "and others did not, or could not test it.")
PAPERS = {"anchor": "2405.05409", "modular": "2406.02550", "bias": "2502.04375"}
ANCHOR_DOC = "docs/anchor-composition.md"


def verdict(units: list[bool | None]) -> str:
    """The verdict word of a claim from its units' outcomes (True held, False did not, None could not test), by
    ``RULE``."""
    tested = [u for u in units if u is not None]
    if not tested:
        return VERDICTS[3]
    if all(units):
        return VERDICTS[0]
    return VERDICTS[1] if any(tested) else VERDICTS[2]


@dataclass(frozen=True)
class Claim:
    """One row: the study part and its paper (a key of ``PAPERS``), the paper's claim with its number, the
    committed runs' figure with its seeds (``here``), what one unit is and when it holds (``unit``, for
    docs/results.md), each unit's outcome, the study whose authors' code reasonlab is checked against (``reference``,
    a key of ``reference.MODULES``; None for none) and the doc that details it."""
    study: str
    paper: str
    claim: str
    here: str
    unit: str
    units: list[bool | None]
    reference: str | None
    link: str

    @property
    def verdict(self) -> str:
        return verdict(self.units)

    @property
    def study_cell(self) -> str:
        arxiv = PAPERS[self.paper]
        return f"{self.study} ([{arxiv}](https://arxiv.org/abs/{arxiv}))"


def seeds_text(seeds: set[int]) -> str:
    """"seeds 1–3", "seeds 1, 3" or "seed 2"."""
    s = sorted(seeds)
    if len(s) == 1:
        return f"seed {s[0]}"
    return f"seeds {s[0]}–{s[-1]}" if s == list(range(s[0], s[-1] + 1)) else f"seeds {', '.join(map(str, s))}"


# ---- anchor composition -------------------------------------------------------------------------------------------

def seed_mean_lines(sweep: CommittedSweep) -> dict[float, bool | None]:
    """Per depth of a reduced phase diagram, on the paper's cells (best over learning rates, mean over seeds):
    whether the transition shows at the study's bar (``anchor_phase.transitions``); None when fewer than two γ
    fitted, so that no order along γ can show."""
    configs, rows, _ = sweep.finished()
    pair = configs[0].task.held_out_pairs[0]
    cells = phase_cells(rows, pair)
    as_runs = [{"init.gamma": c.x, "model.depth": c.y, "seed": 0, "label": c.label,
                f"outcome.{pair.key}.inferential": c.inferential,
                f"outcome.{pair.key}.symmetric": c.symmetric or 0.0} for c in cells]
    fitted = Counter(c.y for c in cells if not c.shadow and c.label != DIVERGED)
    return {depth: ok if fitted[depth] >= 2 else None
            for (depth, _), ok in anchor_phase.transitions(as_runs, (pair.key, STUDY_BAR)).items()}


def _anchor_phase() -> Claim:
    sweeps = (PHASE, WIDE, WIDE_WD)
    units = [ok for sweep in sweeps for ok in seed_mean_lines(sweep).values()]
    single, seeds = [], set()  # the transition per (depth, seed) line, at the study's bar
    for sweep in sweeps:
        configs, rows, _ = sweep.finished()
        single += anchor_phase.transitions(rows, (configs[0].task.held_out_pairs[0].key, STUDY_BAR)).values()
        seeds |= {r["seed"] for r in rows}
    return Claim(
        "anchor composition, γ × depth", "anchor",
        "large init answers the held-out (4,3) by the symmetric mapping (nearly 100 %), small init infers it "
        "(depth 2: γ 0.5 symmetric, γ 0.8 inferential; §4, Fig. 2)",
        f"reduced scale, at the {STUDY_BAR} bar: on the seed means at {sum(map(bool, units))} of {len(units)} depths "
        f"({len(sweeps)} profiles, {seeds_text(seeds)}); in single seeds at {sum(single)} of {len(single)} lines",
        f"a depth of a reduced phase diagram (the `cpu`, `cpu-wide` and wd 0.28 profiles), on the paper's cells "
        f"(best over learning rates, mean over seeds): held when every cell labelled symmetric lies at a smaller γ "
        f"than every cell labelled inferential, each ≥ {STUDY_BAR} on its target answer; not testable when fewer "
        "than two γ fitted",
        units, "anchor", f"[anchor-composition]({ANCHOR_DOC}#the-cpu-profile-reduced-the-γ-transition-is-not-reproduced"
        "-at-this-scale)")


def _anchor_paper_scale() -> Claim:
    ours, _, _ = trajectory(REPO)
    lines = ours.get("0.8", {})
    theirs = {n: r["evaluations"][-1] for n, r in lines.items() if "authors' draws" in n}
    last = max(theirs.values(), key=lambda e: e["epoch"])
    logged = authors_log()["runs"]["0.8"]["evaluations"]
    at = {e["epoch"]: e for e in logged}[last["epoch"]]
    composed = own_draws_composed(lines)
    tested = [c for c in composed.values() if c is not None]
    return Claim(
        "anchor composition, paper scale", "anchor",
        f"depth 2, γ 0.8 composes: (4,3) inferential {logged[-1]['heldout_inferential']:.3f} at epoch "
        f"{logged[-1]['epoch']} (the authors' log, seed 1)",
        f"our step on their seed-1 draw (1 run): {last['heldout_inferential']:.3f} at epoch {last['epoch']} (log "
        f"{at['heldout_inferential']:.3f}); on our own draws composed in {sum(tested)} of "
        f"{counted(len(tested), 'fitted run')}",
        "a γ 0.8 run from our own draws (each seed other than the log's is another draw; one seed trained twice): "
        "held when an evaluation meets the log's outcome (fitted, (4,3) inferential ≥ 0.9, symmetric ≤ 0.05); not "
        "testable when the run was stopped before it fitted",
        list(composed.values()), "anchor", f"[anchor-composition]({ANCHOR_DOC}#the-paper-scale-trajectory-on-this-cpu)")


def _anchor_lr_wd(axis: int) -> Claim:
    what = ("peak learning rate", "weight decay")[axis]
    _, rows, _ = LR_WD.finished()
    pair = anchor_lr_wd.PAIRS[0]
    per_seed = anchor_lr_wd.pushes(rows, pair, axis)
    rises = anchor_lr_wd.rises(rows, pair, axis)
    return Claim(
        f"anchor composition, {what}", "anchor",
        f"a larger {what} pushes the held-out (4,3) towards the inferential answer (App. E, Fig. 14)",
        f"rises at each {what} step in {held_in(per_seed)}; largest − smallest "
        + ", ".join(f"{rises[s]:+.2f}" for s in sorted(rises)),
        f"a seed of the `cpu` lr × wd sweep (depth 3, γ 0.5): held when (4,3) inferential accuracy, mean over the "
        f"other axis, rises at every step of {what}",
        list(per_seed.values()), "anchor",
        f"[anchor-composition]({ANCHOR_DOC}#learning-rate--weight-decay-reasonlab-reproduce-anchor-lr-wd---profile-"
        "cpupaper)")


# ---- reasoning bias -----------------------------------------------------------------------------------------------

RB_LINK = ("[reasoning-bias](docs/reasoning-bias.md#what-the-cpu-profiles-showed-reasonlab-reproduce-reasoning-bias"
           "---profile-cpu)")


def _e1(model: str, name: str, figure: str) -> Claim:
    mine = {s: c for (m, s), c in RB_DOCS.results()["criteria"].items() if m == model}
    n = len(mine)
    per_seed = {s: all(c[k] for k in rb.CRITERIA) for s, c in mine.items()}
    missed = [f"{label.split(' (')[0]} in {k} of {n}" for key, label in rb.CRITERIA.items()
              if (k := sum(c[key] for c in mine.values())) < n]
    return Claim(
        f"reasoning bias, {name}", "bias",
        f"small init (γ {rb.SMALL_INIT}) learns the rule before the facts and answers unseen tuples; large init "
        f"(γ {rb.LARGE_INIT}) learns both together ({figure})",
        f"all 4 E1 criteria in {held_in(per_seed)}" + (f"; {', '.join(missed)}" if missed else ""),
        f"a seed of the `cpu` sweep ({name}): held when all four of the spec's E1 criteria hold (small init: t50 "
        "ratio ≤ 0.5 and unseen ≥ 0.9; large init: t50 ratio in [0.5, 2] and unseen at least 0.5 lower)",
        list(per_seed.values()), None, RB_LINK)


def _delta_l() -> Claim:
    (order, held), (cpu_order, cpu_held) = LM_DOCS.lm_order("regime"), LM_DOCS.lm_order("cpu")
    window, cpu_setting = LM_DOCS.window("regime"), LM_DOCS.lm_setting("cpu")
    seeds = {m["seed"] for ms in LM_DOCS.per_gamma("regime").values() for m in ms}
    return Claim(
        "reasoning bias, PrOntoQA + TinyStories", "bias",
        "ΔL = (L_TinyStories − L_PrOntoQA) / L_PrOntoQA rises with γ, 0.3 < 0.5 < 0.8 (Fig. 1, Fig. 7A)",
        f"seed means order {chain(order)} (ΔL̄ " + ", ".join(f"{mean(window[g]):.2f}" for g in order)
        + f"; {seeds_text(seeds)}); at {cpu_setting}: {chain(cpu_order)}",
        f"a sweep (the spec's optimizer regime, `regime`; the earlier `cpu` at {cpu_setting}): held when the "
        "seed means of ΔL̄ rise with γ over 0.3, 0.5, 0.8 and neighbouring γ's seed ranges do not overlap",
        [None if u.startswith("not testable") else u == "**held**" for u in (held, cpu_held)], None,
        f"[reasoning-bias](docs/reasoning-bias.md#{REGIME_ANCHOR})")


def _cosines() -> Claim:
    early = LM_DOCS.regime_early()
    small = max(early)
    per_seed = [e["prontoqa"] < e["tinystories"] for e in early[small]]
    paper = lm.PAPER_COSINE
    return Claim(
        "reasoning bias, embeddings", "bias",
        f"early at small init, PrOntoQA-only tokens' embeddings are distinct (mean cosine {paper['prontoqa']}), "
        f"TinyStories-only ones are not ({paper['tinystories']}) (Fig. 7B)",
        f"γ {small}: {mean(e['prontoqa'] for e in early[small]):.3f} vs "
        f"{mean(e['tinystories'] for e in early[small]):.3f}; PrOntoQA-only below in {sum(per_seed)} of "
        f"{len(per_seed)} seeds",
        f"a seed of the `regime` sweep at γ {small}: held when the early mean cosine of PrOntoQA-only tokens is "
        "below that of TinyStories-only tokens",
        per_seed, None, "[reasoning-bias](docs/reasoning-bias.md#embedding-cosine-e3)")


def _fig8() -> Claim:
    held = rb.fig8_held(RB_DOCS.results()["fig8"])
    return Claim(
        "reasoning bias, label distributions", "bias",
        "trained on memory data alone, labels land in range long before they are right; F_mem,2 is learned much "
        "faster than F_mem,1 (Fig. 8)",
        f"(i) in range first in {held_in(held['ranges'])}; (ii) F_mem,2 first in {held_in(held['rules'])} "
        f"(transformer, γ {rb.SMALL_INIT})",
        "a seed of each experiment: (i) held when in every group the in-range rate reached 0.9 while accuracy was "
        "below 0.5; (ii) held when F_mem,2's t50 is at most half F_mem,1's",
        [*held["ranges"].values(), *held["rules"].values()], None, RB_LINK)


# ---- in-context modular arithmetic ----------------------------------------------------------------------------------

MODULAR_LINK = ("[modular-icl](docs/modular-icl.md#what-the-cpu-profile-showed-reasonlab-reproduce-modular-phase---"
                "profile-cpu)")


def _modular_peak(rows: list[dict]) -> float:
    return max(max(r["final.ood_test_last_shot"], r.get("best.ood_test_peak") or 0.0) for r in rows)


def _task_count() -> Claim:
    configs, rows, _ = MODULAR_PHASE.finished()
    held, _ = modular_report.task_count_claim(rows)
    tasks = sorted({c.task.n_tasks for c in configs})
    peak = _modular_peak(rows)
    return Claim(
        "in-context modular arithmetic", "modular",
        f"o.o.d. generalization (o.o.d.-test ≥ {GOOD}) appears between 128 and 256 pre-training tasks at α ≥ 0.4 "
        "(p 29, Fig. 1b)",
        f"5-minute `cpu` grid (p {configs[0].task.p}, {tasks[0]}–{tasks[-1]} tasks): highest o.o.d.-test "
        f"{peak:.3f} of {counted(len(rows), 'run')}, {seeds_text({r['seed'] for r in rows})}",
        f"the `cpu` grid: held when at depth 2 and each α ≥ 0.5 the largest task count reaches {GOOD} on "
        "o.o.d.-test and the smallest stays below, in ≥ 2 seeds; not testable when no run reached "
        f"{GOOD}",
        [None if peak < GOOD else held], "modular", MODULAR_LINK)


def _depth_one() -> Claim:
    _, rows, _ = MODULAR_PHASE.finished()
    held, detail = modular_report.depth_one_claim(rows)
    return Claim(
        "in-context modular arithmetic, depth", "modular",
        "depth 1 never generalizes o.o.d.; depth 2 is the smallest depth that does (abstract)",
        f"{detail}; {seeds_text({r['seed'] for r in rows})}",
        f"the `cpu` grid: held when every depth-1 run stays below {GOOD} on o.o.d.-test while a deeper run reaches "
        "it; not testable when no deeper run does",
        [held], "modular", MODULAR_LINK)


def _grokking() -> Claim:
    stats = {s: g for s, g in ROUTE_R3.stats.items() if not g.run.name.endswith(".partial")}
    per_seed = {s: g.peak >= GOOD for s, g in stats.items()}
    task = load_yaml(next(iter(stats.values())).run / "config.yaml")["task"]
    return Claim(
        "in-context modular arithmetic, long training", "modular",
        f"pre-trained on enough tasks, the model generalizes o.o.d. (o.o.d.-test ≥ {GOOD}: the OG phase, Fig. 1b)",
        f"route R3 (p {task['p']}, {task['n_tasks']} tasks): o.o.d.-test peak "
        + ", ".join(f"{g.peak:.2f}" for g in stats.values()) + f" ({seeds_text(set(stats))})",
        f"a finished seed of route R3 (`{GROK}/`): held when its o.o.d.-test peak reaches {GOOD}; not testable when "
        "no seed did",
        list(per_seed.values()) if any(per_seed.values()) else [None] * len(per_seed), "modular",
        "[modular-icl](docs/modular-icl.md#route-r3-the-p-11-line-in-a-grokking-regime---profile-grok)")


# ---- the real-task extensions of the anchor study -------------------------------------------------------------------

HEADLINES = {"ood_exact": "o.o.d. exact match", "id_judgement": "true/false judgement", "id_exact": "i.d. exact match"}
BENCHMARK_CLAIMS = {  # name → (its title, the paper's claim)
    "addition": ("addition", "small init + large wd carries a + b into the held-out 400–600 box where large init + "
                             "small wd memorizes (§6, App. F; figure-only)"),
    "scan": ("SCAN", "small init + large wd generalizes to the held-out \"turn left\" compositions better than large "
                     "init + small wd (§6; figure-only)"),
    "cogs": ("COGS", "with 20k rows both settings exceed 99 % i.d. while small init + large wd stays far ahead "
                     "o.o.d. (§6)"),
    "prontoqa": ("PrOntoQA", "small init (γ 0.7, wd 0.1) judges fresh questions better than large init (γ 0.5, wd "
                             "0.01) at every training size; chance 0.5 (§6)"),
}


def _benchmark(name: str) -> Claim:
    table = runs_table(BENCHMARKS[name].finished()[1], benchmarks.STUDIES[name].plans[ARM])
    comp = comparison(table, SMALL, LARGE)
    units = [None if w.startswith("not testable") else w.startswith("better") for *_, w in comp]
    sizes = "; ".join(f"{n:,} rows: " + ("not testable" if u is None else f"{va:.2f} vs {vb:.2f} ({w.split(';')[0]})")
                      for (n, va, vb, w), u in zip(comp, units, strict=True))
    return Claim(
        f"anchor composition, {BENCHMARK_CLAIMS[name][0]}", "anchor", BENCHMARK_CLAIMS[name][1],
        f"{HEADLINES[table[0]['headline']]}, small vs large init: {sizes}; {seeds_text({t['seed'] for t in table})}",
        f"a training size of the `cpu` sweep: held when small init + large wd is better by {SAME} or more "
        "in the mean and in every seed; not testable when a side did not fit its training data in most seeds",
        units, None, "[benchmarks](docs/benchmarks.md#what-the-cpu-profiles-show-in-one-paragraph)")


CLAIMS: list[Callable[[], Claim]] = [
    _anchor_phase, _anchor_paper_scale, partial(_anchor_lr_wd, 0), partial(_anchor_lr_wd, 1),
    *(partial(_benchmark, name) for name in BENCHMARKS),
    _task_count, _depth_one, _grokking,
    partial(_e1, "emb_mlp", "Emb-MLP", "Fig. 3B"), partial(_e1, "transformer", "transformer", "Fig. 3A"),
    _delta_l, _cosines, _fig8,
]


@cache
def claims() -> list[Claim]:
    """Every row, computed once per invocation: the README's table and docs/results.md's account both read them."""
    return [claim() for claim in CLAIMS]
