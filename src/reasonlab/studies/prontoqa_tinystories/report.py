"""The study's ``summary.md``: per group its runs and verdicts (ΔL̄ rising with γ, over seeds for the main group),
each source's training loss, and the embedding-cosine contrast (E3) beside the paper's."""

from __future__ import annotations

from statistics import mean

from reasonlab.config import RunConfig
from reasonlab.kinds.text_mixture.data import SOURCES
from reasonlab.report.markdown import header, table
from reasonlab.studies.prontoqa_tinystories import GAMMAS, PAPER_COSINE, TITLES
from reasonlab.studies.prontoqa_tinystories.measure import by_peak_lr, per_gamma, stage_cosine, with_cosines


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"


def spread(values: list[float]) -> str:
    """A seed mean with its range: ``mean [min, max]`` (one value alone, — for none)."""
    if not values:
        return "—"
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{mean(values):.3f} [{min(values):.3f}, {max(values):.3f}]"


def summary_markdown(profile: str, groups: dict[str, list[RunConfig]], measured: dict, timing: str) -> str:
    return "\n".join([*header("prontoqa-tinystories", profile, groups["main"][0].profile, timing),
                      *report_sections(groups, measured)]) + "\n"


def report_sections(groups: dict[str, list[RunConfig]], measured: dict) -> list[str]:
    """The report below its header: the ΔL figure, each group's section and the cosine section (``summary.md``'s
    body, and the docs' generated copy of a committed sweep, which points the figures at its own files)."""
    return ["![ΔL](figures/delta-l.png)", "", *(line for group, cfgs in groups.items()
                                                 for line in group_section(group, cfgs, measured)),
            *cosine_section(groups, measured)]


def group_section(group: str, cfgs: list[RunConfig], measured: dict) -> list[str]:
    """One group's runs (ΔL̄, final ΔL, early and final cosines, — for a run without cosines) and its verdicts:
    over seeds for the main group, the ordering over γ per peak learning rate for the others. A group none of whose
    runs has finished says so in one line (a sweep reports while its arms are still queued)."""
    title = [f"## {TITLES.get(group, group)}", ""]
    if not any(c.run_id() in measured for c in cfgs):
        return [*title, "No finished run yet.", ""]
    cosines = [f"cos {name}-only {when}" for when in ("early", "final") for name in ("PrOntoQA", "TinyStories")]
    rows = []
    by_lr: dict[float, dict[float, list[float]]] = {}  # peak lr → γ → ΔL̄ over seeds
    for c in cfgs:
        m = measured.get(c.run_id())
        if m is None:
            continue
        cos = [stage_cosine(m, when)[src] if m["cosine"] is not None else None
               for when in ("early", "final") for src in ("prontoqa", "tinystories")]
        lr = c.train.base_lr * c.train.lr_multiplier
        rows.append([str(c.init.gamma), f"{lr:g}", str(c.seed), *map(_fmt, (
            m["delta_L_train_window"], m["delta_L_eval_window"], m["delta_L_train_final"], m["delta_L_eval_final"],
            *cos))])
        if m["delta_L_train_window"] is not None:
            by_lr.setdefault(lr, {}).setdefault(c.init.gamma, []).append(m["delta_L_train_window"])
    lines = [*title, *table(["γ", "peak lr", "seed", "ΔL̄ train (5–50 %)", "ΔL̄ eval", "final ΔL train",
                             "final ΔL eval", *cosines], rows)]
    lines.append("")
    if group != "main":
        return lines + [f"ΔL̄ rises with γ at peak lr {lr:g} ({_means(by_gamma)}): {ordering_verdict(by_gamma)}."
                        for lr, by_gamma in sorted(by_lr.items())] + [""]
    if by_lr:
        by_gamma = next(iter(by_lr.values()))
        top = max(by_gamma)
        lines += [f"At γ {top} PrOntoQA's training loss falls below TinyStories' (ΔL̄ > 0, E2): "
                  f"{'**held**' if mean(by_gamma[top]) > 0 else '**did not hold**'}.", ""]
    return lines + seed_summary(cfgs, measured)


def _means(by_gamma: dict[float, list[float]]) -> str:
    return "mean over seeds per γ: " + ", ".join(f"{g}: {mean(v):.3f}" for g, v in sorted(by_gamma.items()) if v)


def ordering_verdict(by_gamma: dict[float, list[float]]) -> str:
    """Whether a figure rises with γ: **held** when the seed means rise and the seed ranges of neighbouring γ do
    not overlap, **not separable from noise** when the means rise but the ranges overlap, **did not hold**
    otherwise; with one seed at some γ there is no spread, so rising means are an observation, not "held"."""
    gammas = sorted(g for g, v in by_gamma.items() if v)
    if len(gammas) < 2:
        return "not testable (fewer than two γ measured)"
    means = [mean(by_gamma[g]) for g in gammas]
    if not all(a < b for a, b in zip(means, means[1:], strict=False)):
        return "**did not hold**"
    if any(len(by_gamma[g]) < 2 for g in gammas):
        return "rose in the seed means (1 seed at some γ: an observation, with no spread to separate it from noise)"
    apart = all(max(by_gamma[a]) < min(by_gamma[b]) for a, b in zip(gammas, gammas[1:], strict=False))
    return "**held**" if apart else "**not separable from noise** (the means rise, the seed ranges overlap)"


def seed_summary(main: list[RunConfig], measured: dict) -> list[str]:
    """The main contrast over seeds: per γ the mean and range of ΔL̄ (train and eval), the final ΔL and the early
    and final cosines, and whether ΔL̄ and the final ΔL rise with γ (the paper's 0.3 < 0.5 < 0.8)."""
    per = per_gamma(main, measured)
    lines = ["### Over seeds", "", "Mean over seeds [min, max].", "",
             "| γ | seeds | ΔL̄ train (5–50 %) | ΔL̄ eval | final ΔL train | cos PrOntoQA-only early | cos "
             "TinyStories-only early | cos PrOntoQA-only final | cos TinyStories-only final |",
             "|---|---|---|---|---|---|---|---|---|"]
    figures: dict[str, dict[float, list[float]]] = {"delta_L_train_window": {}, "delta_L_eval_window": {},
                                                    "delta_L_train_final": {}}
    for g, ms in per.items():
        for key, by_gamma in figures.items():
            by_gamma[g] = [m[key] for m in ms if m[key] is not None]
        cos = {(when, src): [stage_cosine(m, when)[src] for m in ms if m["cosine"] is not None]
               for when in ("early", "final") for src in ("prontoqa", "tinystories")}
        n_cos = sum(m["cosine"] is not None for m in ms)  # a run without cosines still counts for ΔL
        seeds = f"{len(ms)}" if n_cos == len(ms) else f"{len(ms)} ({n_cos} with cosines)"
        lines.append(f"| {g} | {seeds} | " + " | ".join(spread(v[g]) for v in figures.values()) + " | "
                     + " | ".join(spread(cos[k]) for k in sorted(cos)) + " |")
    gammas = " < ".join(str(g) for g in sorted(per))
    for key, what in (("delta_L_train_window", "ΔL̄ rises with γ"), ("delta_L_eval_window", "ΔL̄ on the eval "
                      "split rises with γ"), ("delta_L_train_final", "The final ΔL rises with γ")):
        ranges = "; ".join(f"{g}: {spread(v)}" for g, v in figures[key].items())
        lines += ["", f"{what}, {gammas} in the seed means (per γ, mean [min, max]: {ranges}): "
                  f"{ordering_verdict(figures[key])}."]
    return lines + ["", *source_losses(per)]


def source_losses(per: dict[float, list[dict]]) -> list[str]:
    """Each source's training loss per γ over the ΔL̄ window and at the end, and the γ at which each is lowest:
    ΔL is a ratio of the two, so an ordering of ΔL̄ over γ can come from how fast each γ trains either source."""
    keys = [f"loss_{src}_{when}" for when in ("window", "final") for src in SOURCES]
    rows = [[str(g), str(len(ms)), *(spread([m[k] for m in ms if m.get(k) is not None]) for k in keys)]
            for g, ms in per.items()]
    window = {src: {g: mean(v) for g, ms in per.items()
                    if (v := [m[f"loss_{src}_window"] for m in ms if m.get(f"loss_{src}_window") is not None])}
              for src in SOURCES}
    lowest = {src: min(by_gamma, key=by_gamma.get) if by_gamma else "—" for src, by_gamma in window.items()}
    return ["Each source's training loss (the fixed training subsets), mean over seeds [min, max]:", "",
            *table(["γ", "seeds", "L PrOntoQA (5–50 %)", "L TinyStories (5–50 %)", "L PrOntoQA final",
                    "L TinyStories final"], rows), "",
            f"Lowest over the window: PrOntoQA at γ {lowest['prontoqa']}, TinyStories at γ {lowest['tinystories']}.",
            ""]


def cosine_section(groups: dict[str, list[RunConfig]], measured: dict) -> list[str]:
    """E3: per group and γ, the cosines at every stage (mean [min, max] over seeds) beside the paper's, and per
    group the contrast at its smallest initialization (largest γ)."""
    paper_gap = PAPER_COSINE["tinystories"] - PAPER_COSINE["prontoqa"]
    lines = ["## Embedding cosine (E3)", "",
             f"The paper reports {PAPER_COSINE['prontoqa']} (PrOntoQA-only tokens) vs {PAPER_COSINE['tinystories']} "
             "(TinyStories-only) early at small initialization (its early point: step 5,000); the project's target "
             "is PrOntoQA below TinyStories by ≥ 0.2 at the early checkpoint. Stages: the initialization rebuilt "
             "from the seed, the weights at 5 % of training, at each absolute step saved, and at the end.", "",
             "![cosine](figures/cosine.png)", "",
             "| group | γ | stage | seeds | exclusive tokens (PrOntoQA / TinyStories) | cos PrOntoQA-only | "
             "cos TinyStories-only | TinyStories − PrOntoQA |", "|---|---|---|---|---|---|---|---|",
             f"| paper | small init | early | | | {PAPER_COSINE['prontoqa']} | {PAPER_COSINE['tinystories']} | "
             f"{paper_gap:.3f} |"]
    verdicts, shown = [], []
    for group, cfgs in groups.items():
        lrs = by_peak_lr(cfgs)
        for lr, sub in lrs.items():
            name = group if len(lrs) == 1 else f"{group}, peak lr {lr:g}"
            per = per_gamma(sub, with_cosines(measured))
            for g, ms in per.items():
                counts = "; ".join(f"{a} / {b}" for a, b in sorted({tuple(m["n_exclusive"]) for m in ms}))
                for stage, pairs in stage_pairs(ms).items():
                    lines.append(f"| {name} | {g} | {stage} | {len(pairs)} | {counts} | "
                                 f"{spread([p for p, _ in pairs])} | {spread([t for _, t in pairs])} | "
                                 f"{spread([t - p for p, t in pairs])} |")
            if not per:
                continue
            top = max(per)
            early = [stage_cosine(m, "early") for m in per[top]]
            gaps = [e["tinystories"] - e["prontoqa"] for e in early]
            smallest = "the smallest initialization" + (" measured so far" if len(per) < len(GAMMAS) else "")
            seeds = (f"in every seed, {len(per[top])} seeds" if len(per[top]) > 1
                     else "1 seed: an observation, with no spread to test it against")
            verdicts += [f"- {name}, γ {top} ({smallest}), cosine contrast (PrOntoQA-only below "
                         f"TinyStories-only, {seeds}): {contrast_verdict(stage_pairs(per[top]))}. "
                         f"TinyStories-only minus PrOntoQA-only cosine, early: {spread(gaps)} (paper: "
                         f"{paper_gap:.3f}); target ≥ 0.2: {'**held**' if mean(gaps) >= 0.2 else '**did not hold**'}."]
            tokens = (per[top][0].get("tokens") or {}).get("prontoqa")
            if tokens and tokens not in shown:  # each token set once (the BPE arm's differs from the word one's)
                shown.append(tokens)
                verdicts.append(f"  PrOntoQA-only tokens of this group (γ {top}, seed {per[top][0]['seed']}): "
                                + ", ".join(f"`{t}`" for t in tokens[:40]) + (" …" if len(tokens) > 40 else ""))
    have = with_cosines(measured)
    per_run = [f"- {group}, γ {c.init.gamma}, peak lr {c.train.base_lr * c.train.lr_multiplier:g}, seed {c.seed} "
               f"({m['n_exclusive'][0]} / {m['n_exclusive'][1]} "
               "exclusive tokens): " + "; ".join(f"{k}: {v['prontoqa']:.3f} vs {v['tinystories']:.3f}"
                                                 for k, v in m["cosine"].items())
               for group, cfgs in groups.items() for c in cfgs if (m := have.get(c.run_id()))]
    return lines + ["", *verdicts, "", "Per run, PrOntoQA-only vs TinyStories-only cosine at each stage:", "",
                    *per_run]


def stage_pairs(ms: list[dict]) -> dict[str, list[tuple[float, float]]]:
    """Stage → (PrOntoQA-only, TinyStories-only) cosine per seed, over the stages every seed has, in order."""
    stages = [s for s in ms[0]["cosine"] if all(s in m["cosine"] for m in ms)]
    return {s: [(m["cosine"][s]["prontoqa"], m["cosine"][s]["tinystories"]) for m in ms] for s in stages}


def contrast_verdict(pairs: dict[str, list[tuple[float, float]]]) -> str:
    """Whether PrOntoQA-only tokens are less aligned than TinyStories-only ones (lower mean pairwise cosine) in
    every seed: **held** early at the trained stages before the end where it is so (naming them), else **did not
    hold**; and at the end. With one seed it is an observation: "showed" / "did not show"."""
    early = [s for s in pairs if s != "init" and not s.startswith("final")]
    held = [s for s, v in pairs.items() if v and all(p < t for p, t in v)]
    read = [v for s, v in pairs.items() if s != "init"]  # the stages the verdict reads
    yes, no = ("held", "did not hold") if min((len(v) for v in read), default=0) > 1 else (
        "showed", "did not show")  # one seed at any stage it reads (or none): an observation
    if not early:
        head = "not testable early (no stage between initialization and the end)"
    elif held_early := [s for s in early if s in held]:
        head = f"**{yes}** early at {', '.join(held_early)}"
        if len(held_early) < len(early):
            head += f" (not at {', '.join(s for s in early if s not in held)})"
    else:
        head = f"**{no}** early (at none of {', '.join(early)})"
    final = [s for s in pairs if s.startswith("final")]
    return head + "".join(f"; at the end ({s}): {yes if s in held else no}" for s in final)
