"""The PrOntoQA + TinyStories study's rows of the results tables, read from a repository's committed records: its
claims (ΔL̄ rising with γ, the early embedding cosines at small initialization) and its finding (the regime sweep,
the earlier cpu sweep and the ΔL̄ search)."""

from __future__ import annotations

from statistics import mean

from reasonlab.report.markdown import seeds_text
from reasonlab.studies import prontoqa_tinystories as lm
from reasonlab.studies.claims import Claim, Finding
from reasonlab.studies.prontoqa_tinystories.docs import DL_SEARCH, DOC, LM, LM_REGIME, LmDocs, chain
from reasonlab.studies.reasoning_bias import PAPER
from reasonlab.studies.sections import counts

REGIME_LINK = f"[reasoning-bias]({DOC}#prontoqa--tinystories-in-the-papers-regime---profile-regime)"


def delta_l_claim(docs: LmDocs) -> Claim:
    (order, held), (cpu_order, cpu_held) = docs.lm_order("regime"), docs.lm_order("cpu")
    window, cpu_setting = docs.window("regime"), docs.lm_setting("cpu")
    seeds = {m["seed"] for ms in docs.per_gamma("regime").values() for m in ms}
    return Claim(
        "delta-l", "reasoning bias, PrOntoQA + TinyStories", PAPER,
        "ΔL = (L_TinyStories − L_PrOntoQA) / L_PrOntoQA rises with γ, 0.3 < 0.5 < 0.8 (Fig. 1, Fig. 7A)",
        f"seed means order {chain(order)} (ΔL̄ " + ", ".join(f"{mean(window[g]):.2f}" for g in order)
        + f"; {seeds_text(seeds)}); at {cpu_setting}: {chain(cpu_order)}",
        f"a sweep (the spec's optimizer regime, `regime`; the earlier `cpu` at {cpu_setting}): held when the "
        "seed means of ΔL̄ rise with γ over 0.3, 0.5, 0.8 and neighbouring γ's seed ranges do not overlap",
        [None if u.startswith("not testable") else u == "**held**" for u in (held, cpu_held)], None, REGIME_LINK)


def cosines_claim(docs: LmDocs) -> Claim:
    early = docs.regime_early()
    small = max(early)
    per_seed = [e["prontoqa"] < e["tinystories"] for e in early[small]]
    paper = lm.PAPER_COSINE
    return Claim(
        "cosines", "reasoning bias, embeddings", PAPER,
        f"early at small init, PrOntoQA-only tokens' embeddings are distinct (mean cosine {paper['prontoqa']}), "
        f"TinyStories-only ones are not ({paper['tinystories']}) (Fig. 7B)",
        f"γ {small}: {mean(e['prontoqa'] for e in early[small]):.3f} vs "
        f"{mean(e['tinystories'] for e in early[small]):.3f}; PrOntoQA-only below in {sum(per_seed)} of "
        f"{len(per_seed)} seeds",
        f"a seed of the `regime` sweep at γ {small}: held when the early mean cosine of PrOntoQA-only tokens is "
        "below that of TinyStories-only tokens",
        per_seed, None, f"[reasoning-bias]({DOC}#embedding-cosine-e3)")


def finding(docs: LmDocs) -> Finding:
    return Finding(
        "regime", "PrOntoQA vs TinyStories (`reproduce prontoqa-tinystories`)",
        f"`regime` (the spec's optimizer on reduced data and model; {docs.lm_minutes('regime')}); earlier `cpu` "
        "and a search of 8 settings", f"{docs.lm_finished('regime')}: `{LM_REGIME}/`; earlier "
        f"{counts(docs.repo, [LM, DL_SEARCH])}", docs.lm_headline(), REGIME_LINK)


def inputs(docs: LmDocs) -> list[str]:
    return [LM, *docs.regime_inputs(), DL_SEARCH]
