"""The reasoning-bias study's rows of the results tables, read from a repository's committed records: its claims (E1
per model, Fig. 8's label distributions) and its findings (the demo, the cpu sweep, the mixture transformer at the
spec's volume)."""

from __future__ import annotations

from reasonlab.report.markdown import held_in
from reasonlab.studies import reasoning_bias as rb
from reasonlab.studies.claims import Claim, Finding
from reasonlab.studies.reasoning_bias.docs import (
    DEMO,
    DOC,
    MIXTURE,
    MIXTURE_SWEEPS,
    RB_CPU,
    SPEC_LR,
    RbDocs,
)
from reasonlab.studies.sections import counts

CPU_LINK = f"[reasoning-bias]({DOC}#what-the-cpu-profiles-showed-reasonlab-reproduce-reasoning-bias---profile-cpu)"
E1_MODELS = {"emb_mlp": ("Emb-MLP", "Fig. 3B"), "transformer": ("transformer", "Fig. 3A")}  # model → name, figure


def e1_claim(docs: RbDocs, model: str) -> Claim:
    """E1 on one model: all four of the spec's criteria, seed by seed."""
    name, figure = E1_MODELS[model]
    mine = {s: c for (m, s), c in docs.results["criteria"].items() if m == model}
    n = len(mine)
    per_seed = {s: all(c[k] for k in rb.CRITERIA) for s, c in mine.items()}
    missed = [f"{label.split(' (')[0]} in {k} of {n}" for key, label in rb.CRITERIA.items()
              if (k := sum(c[key] for c in mine.values())) < n]
    return Claim(
        f"e1/{model}", f"reasoning bias, {name}", rb.PAPER,
        f"small init (γ {rb.SMALL_INIT}) learns the rule before the facts and answers unseen tuples; large init "
        f"(γ {rb.LARGE_INIT}) learns both together ({figure})",
        f"all 4 E1 criteria in {held_in(per_seed)}" + (f"; {', '.join(missed)}" if missed else ""),
        f"a seed of the `cpu` sweep ({name}): held when all four of the spec's E1 criteria hold (small init: t50 "
        "ratio ≤ 0.5 and unseen ≥ 0.9; large init: t50 ratio in [0.5, 2] and unseen at least 0.5 lower)",
        list(per_seed.values()), None, CPU_LINK)


def spec_lr_claim(docs: RbDocs) -> Claim:
    """E1 on the transformer at the spec's peak learning rate and data volume, seed by seed, with the Σlr it ended
    at beside the spec's recipe's."""
    criteria = docs.spec_lr_criteria()
    per_seed = {s: all(c[k] for k in rb.CRITERIA) for s, c in criteria.items()}
    n = len(criteria)
    missed = [f"{label.split(' (')[0]} in {k} of {n}" for key, label in rb.CRITERIA.items()
              if (k := sum(c[key] for c in criteria.values())) < n]
    sums = docs.spec_lr_sums()
    clock = "" if sums is None else f"; Σlr {sums[0]:.1f} at the end (the spec's recipe: {sums[1]:.1f})"
    name, figure = E1_MODELS["transformer"]
    return Claim(
        "e1/transformer-spec-lr", f"reasoning bias, {name} at the spec's learning rate", rb.PAPER,
        f"as above at the spec's peak lr 2.5e-4 ({figure})",
        f"width 128, 60 epochs{clock}: all 4 E1 criteria in {held_in(per_seed)}"
        + (f"; {', '.join(missed)}" if missed else ""),
        "a seed of the `transformer-spec-lr` sweep with both γ finished: held when all four of the spec's E1 "
        "criteria hold",
        list(per_seed.values()), None, f"[reasoning-bias]({DOC}#the-transformer-at-the-specs-peak-learning-rate-25e-4"
                                      "---profile-transformer-spec-lr)")


def fig8_claim(docs: RbDocs) -> Claim:
    held = rb.fig8_held(docs.results["fig8"])
    return Claim(
        "fig8", "reasoning bias, label distributions", rb.PAPER,
        "trained on memory data alone, labels land in range long before they are right; F_mem,2 is learned much "
        "faster than F_mem,1 (Fig. 8)",
        f"(i) in range first in {held_in(held['ranges'])}; (ii) F_mem,2 first in {held_in(held['rules'])} "
        f"(transformer, γ {rb.SMALL_INIT})",
        "a seed of each experiment: (i) held when in every group the in-range rate reached 0.9 while accuracy was "
        "below 0.5; (ii) held when F_mem,2's t50 is at most half F_mem,1's",
        [*held["ranges"].values(), *held["rules"].values()], None, CPU_LINK)


def findings(docs: RbDocs) -> list[Finding]:
    """The demo, the cpu sweep and the mixture transformer at the spec's data volume."""
    return [
        Finding("demo", "the demo (`reasonlab demo`): Emb-MLP on the reasoning/memory mixture", "`emb-mlp-cpu`",
                counts(docs.repo, [DEMO]), docs.demo_headline(), f"[reasoning-bias]({DOC}#the-demo-reasonlab-demo)"),
        Finding("cpu", "reasoning bias on the mixture (`reproduce reasoning-bias`)", "`cpu`",
                counts(docs.repo, [RB_CPU]), docs.rb_headline(), CPU_LINK),
        Finding("volume", "the mixture transformer at the spec's volume (`train --family mixture --profile "
                "transformer-volume`)", "`transformer-volume` (24–46 min per run)",
                counts(docs.repo, [f"{MIXTURE}/{s}" for s in MIXTURE_SWEEPS]), docs.mixture_headline(), CPU_LINK),
    ]


def inputs(docs: RbDocs) -> list[str]:
    return [DEMO, *(f"{MIXTURE}/{s}" for s in MIXTURE_SWEEPS), SPEC_LR, *docs.rb_inputs()]
