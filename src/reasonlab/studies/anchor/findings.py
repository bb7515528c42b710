"""The anchor studies' rows of the results tables, read from a repository's committed records: their claims (the
γ transition of the reduced phase diagrams, γ 0.8 composing at paper scale, the push of a larger learning rate and
of a larger weight decay) and their findings (each committed phase arm, the demo and its search, the paper-scale
trajectory, inferential complexity, learning rate × weight decay)."""

from __future__ import annotations

from collections import Counter

from reasonlab.evaluate import DIVERGED
from reasonlab.kinds.anchor.cells import phase_cells
from reasonlab.report.markdown import held_in, seeds_text
from reasonlab.studies.anchor import PAPER, STUDY_BAR, lr_wd, phase
from reasonlab.studies.anchor.demo_docs import ANCHOR_SEARCH, DEMO_ANCHOR, anchor_demo_headline
from reasonlab.studies.anchor.docs import DOC, PHASE_ARMS, complexity_sweep, lr_wd_sweep, phase_sweep
from reasonlab.studies.anchor.trajectory import authors_log
from reasonlab.studies.anchor.trajectory_docs import (
    TRAJECTORY,
    own_draws_composed,
    pinned,
    trajectory,
    trajectory_headline,
)
from reasonlab.studies.base import Study
from reasonlab.studies.claims import Claim, Finding
from reasonlab.studies.reference import Reference
from reasonlab.studies.sections import CommittedSweep, Repository, counts
from reasonlab.terminal import counted

REFERENCE = Reference(("tests/reference/test_anchor_reference.py",), DOC)


# ---- anchor-phase: the reduced phase diagrams and the demo --------------------------------------------------------

def seed_mean_lines(sweep: CommittedSweep) -> dict[float, bool | None]:
    """Per depth of a reduced phase diagram, on the paper's cells (best over learning rates, mean over seeds):
    whether the transition shows at the study's bar (``phase.transitions``); None when fewer than two γ fitted, so
    that no order along γ can show."""
    configs, rows, _ = sweep.finished()
    pair = configs[0].task.held_out_pairs[0]
    cells = phase_cells(rows, pair)
    as_runs = [{"init.gamma": c.x, "model.depth": c.y, "seed": 0, "label": c.label,
                f"outcome.{pair.key}.inferential": c.inferential,
                f"outcome.{pair.key}.symmetric": c.symmetric or 0.0} for c in cells]
    fitted = Counter(c.y for c in cells if not c.shadow and c.label != DIVERGED)
    return {depth: ok if fitted[depth] >= 2 else None
            for (depth, _), ok in phase.transitions(as_runs, (pair.key, STUDY_BAR)).items()}


def phase_claim(repo: Repository, study: Study) -> Claim:
    """The γ transition on the seed means of every committed phase arm, and in single seeds."""
    sweeps = [phase_sweep(repo, study, arm) for arm in PHASE_ARMS]
    units = [ok for sweep in sweeps for ok in seed_mean_lines(sweep).values()]
    single, seeds = [], set()  # the transition per (depth, seed) line, at the study's bar
    for sweep in sweeps:
        configs, rows, _ = sweep.finished()
        single += phase.transitions(rows, (configs[0].task.held_out_pairs[0].key, STUDY_BAR)).values()
        seeds |= {r["seed"] for r in rows}
    return Claim(
        "phase", "anchor composition, γ × depth", PAPER,
        "large init answers the held-out (4,3) by the symmetric mapping (nearly 100 %), small init infers it "
        "(depth 2: γ 0.5 symmetric, γ 0.8 inferential; §4, Fig. 2)",
        f"reduced scale, at the {STUDY_BAR} bar: on the seed means at {sum(map(bool, units))} of {len(units)} depths "
        f"({len(sweeps)} profiles, {seeds_text(seeds)}); in single seeds at {sum(single)} of {len(single)} lines",
        f"a depth of a reduced phase diagram (the `cpu`, `cpu-wide` and wd 0.28 profiles), on the paper's cells "
        f"(best over learning rates, mean over seeds): held when every cell labelled symmetric lies at a smaller γ "
        f"than every cell labelled inferential, each ≥ {STUDY_BAR} on its target answer; not testable when fewer "
        "than two γ fitted",
        units, REFERENCE, f"[anchor-composition]({DOC}#the-cpu-profile-reduced-the-γ-transition-is-not-reproduced"
        "-at-this-scale)")


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


# what each phase arm's row says it is, and the section of the doc that details it
PHASE_ROWS = {
    "cpu": ("γ × depth phase diagram (`reproduce anchor-phase`)", "`cpu`",
            "the-cpu-profile-reduced-the-γ-transition-is-not-reproduced-at-this-scale"),
    "cpu-wide": ("the same at the paper's width (`reproduce anchor-phase --profile cpu-wide`)", "`cpu-wide`",
                 "the-search-for-a-cpu-profile"),
    "cpu-wide-wd": ("the same at the paper's integrated weight decay (`reproduce anchor-phase --profile "
                    "cpu-wide-wd`)", "`cpu-wide` with wd 0.28", "the-search-for-a-cpu-profile"),
}


def phase_findings(repo: Repository, study: Study) -> list[Finding]:
    """Each committed phase arm, then the anchor demo with the search behind its profile."""
    return [*(Finding(f"phase/{arm}", what, profile, *_phase_cells(phase_sweep(repo, study, arm)),
                      f"[anchor-composition]({DOC}#{section})")
              for arm, (what, profile, section) in PHASE_ROWS.items()),
            Finding("demo", "the anchor demo (`reasonlab demo anchor`) and the search behind it",
                    "`cpu-regime` and its search", counts(repo, [ANCHOR_SEARCH, DEMO_ANCHOR]),
                    anchor_demo_headline(repo), f"[anchor-composition]({DOC}#the-search-for-a-cpu-profile)")]


def phase_inputs(repo: Repository, study: Study) -> list[str]:
    return [ANCHOR_SEARCH, *(i for arm in PHASE_ARMS for i in phase_sweep(repo, study, arm).inputs()),
            *REFERENCE.inputs()]


# ---- anchor-trajectory: the paper-scale runs beside the authors' log ----------------------------------------------

def paper_scale_claim(repo: Repository) -> Claim:
    """γ 0.8 composing: our step on the authors' seed-1 draw against their log, and our own draws."""
    ours, _, _ = trajectory(repo)
    lines = ours.get("0.8", {})
    theirs = {n: r["evaluations"][-1] for n, r in lines.items() if "authors' draws" in n}
    last = max(theirs.values(), key=lambda e: e["epoch"])
    logged = authors_log()["runs"]["0.8"]["evaluations"]
    at = {e["epoch"]: e for e in logged}[last["epoch"]]
    composed = own_draws_composed(lines)
    tested = [c for c in composed.values() if c is not None]
    return Claim(
        "paper-scale", "anchor composition, paper scale", PAPER,
        f"depth 2, γ 0.8 composes: (4,3) inferential {logged[-1]['heldout_inferential']:.3f} at epoch "
        f"{logged[-1]['epoch']} (the authors' log, seed 1)",
        f"our step on their seed-1 draw (1 run): {last['heldout_inferential']:.3f} at epoch {last['epoch']} (log "
        f"{at['heldout_inferential']:.3f}); on our own draws composed in {sum(tested)} of "
        f"{counted(len(tested), 'fitted run')}",
        "a γ 0.8 run from our own draws (each seed other than the log's is another draw; one seed trained twice): "
        "held when an evaluation meets the log's outcome (fitted, (4,3) inferential ≥ 0.9, symmetric ≤ 0.05); not "
        "testable when the run was stopped before it fitted",
        list(composed.values()), REFERENCE, f"[anchor-composition]({DOC}#the-paper-scale-trajectory-on-this-cpu)")


def trajectory_finding(repo: Repository) -> Finding:
    return Finding("trajectory", "paper-scale trajectory (`reproduce anchor-trajectory`)",
                   "`trajectory` (the `paper` model and data, truncated; hours per run)", counts(repo, [TRAJECTORY]),
                   trajectory_headline(repo), f"[anchor-composition]({DOC}#the-paper-scale-trajectory-on-this-cpu)")


def trajectory_inputs(repo: Repository) -> list[str]:
    return [TRAJECTORY, *(f"{TRAJECTORY}/{r}" for r in pinned(repo, "trajectory_replays")), *REFERENCE.inputs()]


# ---- anchor-complexity and anchor-lr-wd ---------------------------------------------------------------------------

def complexity_finding(repo: Repository, study: Study) -> Finding:
    return Finding("cpu", "inferential complexity (`reproduce anchor-complexity`)", "`cpu`",
                   *complexity_sweep(repo, study).cells(), f"[anchor-composition]({DOC}#inferential-complexity-"
                   "reasonlab-reproduce-anchor-complexity---profile-cpupaper)")


LR_WD_SECTION = "learning-rate--weight-decay-reasonlab-reproduce-anchor-lr-wd---profile-cpupaper"


def lr_wd_claim(repo: Repository, study: Study, axis: int) -> Claim:
    """A larger peak learning rate (``axis`` 0) or weight decay (1) pushing (4,3) towards the inferential answer."""
    what = ("peak learning rate", "weight decay")[axis]
    _, rows, _ = lr_wd_sweep(repo, study).finished()
    pair = lr_wd.PAIRS[0]
    per_seed = lr_wd.pushes(rows, pair, axis)
    rises = lr_wd.rises(rows, pair, axis)
    return Claim(
        ("lr", "wd")[axis], f"anchor composition, {what}", PAPER,
        f"a larger {what} pushes the held-out (4,3) towards the inferential answer (App. E, Fig. 14)",
        f"rises at each {what} step in {held_in(per_seed)}; largest − smallest "
        + ", ".join(f"{rises[s]:+.2f}" for s in sorted(rises)),
        f"a seed of the `cpu` lr × wd sweep (depth 3, γ 0.5): held when (4,3) inferential accuracy, mean over the "
        f"other axis, rises at every step of {what}",
        list(per_seed.values()), REFERENCE, f"[anchor-composition]({DOC}#{LR_WD_SECTION})")


def lr_wd_finding(repo: Repository, study: Study) -> Finding:
    return Finding("cpu", "learning rate × weight decay (`reproduce anchor-lr-wd`)", "`cpu`",
                   *lr_wd_sweep(repo, study).cells(), f"[anchor-composition]({DOC}#{LR_WD_SECTION})")
