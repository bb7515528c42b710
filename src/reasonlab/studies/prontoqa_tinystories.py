"""``reasonlab reproduce prontoqa-tinystories``: the language-model half of the reasoning-bias study (spec §4,
E2–E3): one GPT-style model trained by next-token prediction on PrOntoQA-style text mixed with TinyStories.

Measured per run: ΔL = (L_TinyStories − L_PrOntoQA) / L_PrOntoQA along training and its mean over 5–50 % of the
steps (ΔL̄), and the mean pairwise cosine of the input embeddings of PrOntoQA-only and TinyStories-only tokens at
initialization, early (5 %) and at the end. Grids: γ (the main contrast, with seeds), the same without any
LayerNorm, and peak learning rates. The cosines are kept in each run's ``analysis/embedding-cosine.json``, so a
committed sweep (no checkpoints) regenerates its summary and figures without training.
"""

from __future__ import annotations

import json
from pathlib import Path
from statistics import mean

from rich.console import Console

from reasonlab.analysis.geometry import mean_pairwise_cosine
from reasonlab.analysis.loading import load_at_fraction
from reasonlab.build import build_model
from reasonlab.config import RunConfig, raw_config
from reasonlab.errors import StoreError
from reasonlab.evaluate.language import delta_l_summary, exclusive_tokens
from reasonlab.plots.language import plot_delta_l, plot_embedding_cosine
from reasonlab.report.markdown import header
from reasonlab.store import Metrics, atomic_write_text, read_json, write_json
from reasonlab.sweep.grid import expand
from reasonlab.sweep.runner import run_sweep
from reasonlab.tasks.text.mixture import TextMixtureTask
from reasonlab.tasks.text.tokenizer import WordTokenizer

NO_LN = ["model.norm=none", "model.final_norm=false"]
GRIDS = {
    "cpu": {"main": {"init.gamma": [0.3, 0.5, 0.8, 1.0], "seed": [1, 2, 3]}, "no_ln": {"init.gamma": [0.3, 0.8]},
            "lr": {"init.gamma": [0.3, 0.8], "train.lr_multiplier": [10, 30]}},
    "paper": {"main": {"init.gamma": [0.3, 0.5, 0.8], "seed": [1, 2, 3]}, "no_ln": {"init.gamma": [0.3, 0.5, 0.8]},
              "lr": {"init.gamma": [0.3, 0.5, 0.8], "train.lr_multiplier": [1, 3, 10, 30, 50]}},
}
PAPER_COSINE = {"prontoqa": 0.123, "tinystories": 0.531}


def study_configs(profile: str, overrides: list[str] = ()) -> dict[str, list[RunConfig]]:
    groups = {}
    for group, axes in GRIDS[profile].items():
        extra = NO_LN if group == "no_ln" else []
        groups[group] = expand(raw_config(None, f"lm-{profile}", [*overrides, *extra], "mixture"), axes)
    return groups


def measure_run(cfg: RunConfig, run_dir: Path) -> dict:
    rows = Metrics.read(run_dir / "metrics.parquet")
    summary = json.loads((run_dir / "summary.json").read_text())
    window = delta_l_summary(rows, cfg)["delta_L_window"]  # also in newer summaries; older ones lack it
    out = {"delta_L_train_window": window["train"], "delta_L_eval_window": window["eval"],
           "delta_L_train_final": summary["final"].get("delta_L_train"), "rows": rows}
    return out | embedding_cosines(cfg, run_dir)


def embedding_cosines(cfg: RunConfig, run_dir: Path) -> dict:
    """Mean pairwise cosine of the PrOntoQA-only and TinyStories-only input embeddings at initialization, early and
    at the end, measured once from the checkpoints and then read from ``analysis/embedding-cosine.json``."""
    cached = run_dir / "analysis" / "embedding-cosine.json"
    if cached.is_file():
        kept = read_json(cached, "embedding-cosine file")
        if not isinstance(kept, dict) or set(kept) != {"run_id", "cosine", "n_exclusive"}:
            raise StoreError(f"{cached}: not an embedding-cosine file reasonlab wrote; delete it to measure again")
        if kept["run_id"] != cfg.run_id():
            raise StoreError(f"{cached}: written for run {kept['run_id']!r}, not {cfg.run_id()}; delete it")
        return {"cosine": kept["cosine"], "n_exclusive": tuple(kept["n_exclusive"])}
    tok = WordTokenizer.from_json((run_dir / "tokenizer.json").read_text())
    task = TextMixtureTask(cfg.task)
    docs = task.documents(cfg.seed)
    pq_ids, ts_ids = exclusive_tokens(tok, docs["prontoqa"][0], docs["tinystories"][0])
    data = task.build(cfg.seed, docs)  # the run's own data: generated once, here
    model = build_model(cfg, data)  # the initialization itself (same seed, same draw)
    stages = {"init": model.embed.weight.detach().clone()}
    for when, fraction in (("early", 0.05), ("final", 1.0)):
        epoch, trained = load_at_fraction(run_dir, fraction, data)
        stages[f"{when} (epoch {epoch})"] = trained.embed.weight.detach().clone()
    out = {"cosine": {stage: {"prontoqa": mean_pairwise_cosine(w[pq_ids]),
                              "tinystories": mean_pairwise_cosine(w[ts_ids])} for stage, w in stages.items()},
           "n_exclusive": (len(pq_ids), len(ts_ids))}
    cached.parent.mkdir(exist_ok=True)
    write_json(cached, {"run_id": cfg.run_id(), **out})
    return out


def reproduce(profile: str, out: Path, make_executor, console: Console, overrides: list[str] = ()) -> Path:
    groups = study_configs(profile, overrides)
    every = list({c.run_id(): c for cs in groups.values() for c in cs}.values())
    name = f"prontoqa-tinystories-{profile}"
    executor = make_executor(len(every))
    console.print(f"prontoqa-tinystories, profile {profile}: {len(every)} runs with {executor.workers} workers × "
                  f"{executor.threads} threads; store {out / name}")
    report = run_sweep(name, every, out, executor, ["init.gamma", "model.norm", "train.lr_multiplier", "seed"],
                       {"profile": profile}, console)
    measured = {c.run_id(): measure_run(c, report.sweep_dir / c.run_id()) for c in every
                if (report.sweep_dir / c.run_id() / "summary.json").is_file()}
    _figure(groups["main"], measured, report.sweep_dir)
    _cosine_figure(groups["main"], measured, report.sweep_dir)
    atomic_write_text(report.sweep_dir / "summary.md", summary_markdown(profile, groups, measured, report.timing()))
    console.print(f"summary: {report.sweep_dir / 'summary.md'}")
    return report.sweep_dir


def _figure(main: list[RunConfig], measured: dict, sweep_dir: Path) -> None:
    """ΔL and the per-source training loss over steps, one curve per γ (the first seed)."""
    runs = []
    for cfg in main:
        if cfg.run_id() not in measured or cfg.seed != main[0].seed:
            continue
        rows = measured[cfg.run_id()]["rows"]
        losses = {source: sorted(rows.series("pooled", f"{source}_train_loss", clock="step"))
                  for source in ("prontoqa", "tinystories")}
        runs.append((f"γ={cfg.init.gamma}", sorted(rows.series("pooled", "delta_L_train", clock="step")), losses))
    plot_delta_l(runs, sweep_dir / "figures" / "delta-l", f"profile: {main[0].profile}")


def _cosine_figure(main: list[RunConfig], measured: dict, sweep_dir: Path) -> None:
    """Fig. 7B: mean pairwise cosine of PrOntoQA-only and TinyStories-only token embeddings at initialization, early
    and at the end, one panel per γ; the paper's early values at small initialization drawn for reference."""
    panels = [(f"γ={c.init.gamma}", measured[c.run_id()]["cosine"]) for c in main
              if c.run_id() in measured and c.seed == main[0].seed]
    if panels:
        plot_embedding_cosine(panels, PAPER_COSINE, sweep_dir / "figures" / "cosine", f"profile: {main[0].profile}")


def _fmt(v: float | None) -> str:
    return "—" if v is None else f"{v:.3f}"


def summary_markdown(profile: str, groups: dict[str, list[RunConfig]], measured: dict, timing: str) -> str:
    lines = [*header("prontoqa-tinystories", profile, groups["main"][0].profile, timing),
             "![ΔL](figures/delta-l.png)", ""]
    for group, title in (("main", "γ (with LayerNorm)"), ("no_ln", "γ without any LayerNorm"),
                         ("lr", "γ × peak learning rate")):
        lines += [f"## {title}", "", "| γ | peak lr | seed | ΔL̄ train (5–50 %) | ΔL̄ eval | final ΔL train | "
                  "cos PrOntoQA-only early | cos TinyStories-only early |", "|---|---|---|---|---|---|---|---|"]
        by_lr: dict[float, dict[float, list[float]]] = {}  # peak lr → γ → ΔL̄ over seeds
        for c in groups[group]:
            m = measured.get(c.run_id())
            if m is None:
                continue
            early = stage_cosine(m, "early")
            lr = c.train.base_lr * c.train.lr_multiplier
            lines.append(f"| {c.init.gamma} | {lr:g} | {c.seed} | "
                         f"{_fmt(m['delta_L_train_window'])} | {_fmt(m['delta_L_eval_window'])} | "
                         f"{_fmt(m['delta_L_train_final'])} | {early['prontoqa']:.3f} | {early['tinystories']:.3f} |")
            if m["delta_L_train_window"] is not None:
                by_lr.setdefault(lr, {}).setdefault(c.init.gamma, []).append(m["delta_L_train_window"])
        lines.append("")
        if group == "main" and by_lr:
            by_gamma = next(iter(by_lr.values()))
            top = max(by_gamma)
            lines += [f"At γ {top} PrOntoQA's training loss falls below TinyStories' (ΔL̄ > 0, E2): "
                      f"{'**held**' if mean(by_gamma[top]) > 0 else '**did not hold**'}.", ""]
        if group == "main":
            lines += seed_summary(groups["main"], measured)
            continue
        for lr, by_gamma in sorted(by_lr.items()):
            lines += [f"ΔL̄ rises with γ at peak lr {lr:g} (mean over seeds per γ: "
                      f"{', '.join(f'{g}: {mean(v):.3f}' for g, v in sorted(by_gamma.items()))}): "
                      f"{ordering_verdict(by_gamma)}.", ""]
    lines += ["## Embedding cosine (E3)", "",
              f"The paper reports {PAPER_COSINE['prontoqa']} (PrOntoQA-only tokens) vs {PAPER_COSINE['tinystories']} "
              "(TinyStories-only) early at small initialization; the project's target is PrOntoQA below TinyStories "
              "by ≥ 0.2 at the early checkpoint.", ""]
    lines += ["![cosine](figures/cosine.png)", ""]
    for c in groups["main"]:
        m = measured.get(c.run_id())
        if m is not None:
            parts = "; ".join(f"{k}: {v['prontoqa']:.3f} vs {v['tinystories']:.3f}" for k, v in m["cosine"].items())
            lines.append(f"- γ {c.init.gamma}, seed {c.seed} ({m['n_exclusive'][0]} / {m['n_exclusive'][1]} "
                         f"exclusive tokens): {parts}")
    small = [measured[c.run_id()] for c in groups["main"]
             if c.run_id() in measured and c.init.gamma == max(x.init.gamma for x in groups["main"])]
    if small:
        gaps = [stage_cosine(m, "early")["tinystories"] - stage_cosine(m, "early")["prontoqa"] for m in small]
        paper_gap = PAPER_COSINE["tinystories"] - PAPER_COSINE["prontoqa"]
        lines += ["", f"TinyStories-only minus PrOntoQA-only cosine, early, at the smallest initialization: "
                  f"{', '.join(f'{g:.3f}' for g in gaps)} (paper: {paper_gap:.3f}); "
                  f"target ≥ 0.2: {'**held**' if mean(gaps) >= 0.2 else '**did not hold**'}."]
    return "\n".join(lines) + "\n"


def _spread(values: list[float]) -> str:
    """A seed mean with its range: ``mean [min, max]`` (one value alone, — for none)."""
    if not values:
        return "—"
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{mean(values):.3f} [{min(values):.3f}, {max(values):.3f}]"


def ordering_verdict(by_gamma: dict[float, list[float]]) -> str:
    """Whether a figure rises with γ: **held** when the seed means rise and the seed ranges of neighbouring γ do
    not overlap, **not separable from noise** when the means rise but the ranges overlap, **did not hold**
    otherwise; one seed per γ cannot show a spread, and the verdict says so."""
    gammas = sorted(g for g, v in by_gamma.items() if v)
    if len(gammas) < 2:
        return "not testable (fewer than two γ measured)"
    means = [mean(by_gamma[g]) for g in gammas]
    if not all(a < b for a, b in zip(means, means[1:], strict=False)):
        return "**did not hold**"
    if any(len(by_gamma[g]) < 2 for g in gammas):
        return "**held** in the means (one seed at some γ: no spread to separate it from noise)"
    apart = all(max(by_gamma[a]) < min(by_gamma[b]) for a, b in zip(gammas, gammas[1:], strict=False))
    return "**held**" if apart else "**not separable from noise** (the means rise, the seed ranges overlap)"


def seed_summary(main: list[RunConfig], measured: dict) -> list[str]:
    """The main contrast over seeds: per γ the mean and range of ΔL̄, the final ΔL and the early and final
    cosines, and whether ΔL̄ and the final ΔL rise with γ (issue: the paper's 0.3 < 0.5 < 0.8)."""
    per: dict[float, list[dict]] = {}
    for c in main:
        if c.run_id() in measured:
            per.setdefault(c.init.gamma, []).append(measured[c.run_id()])
    lines = ["### Over seeds", "", "Mean over seeds [min, max].", "",
             "| γ | seeds | ΔL̄ train (5–50 %) | final ΔL train | cos PrOntoQA-only early | cos TinyStories-only "
             "early | cos PrOntoQA-only final | cos TinyStories-only final |", "|---|---|---|---|---|---|---|---|"]
    window: dict[float, list[float]] = {}
    final: dict[float, list[float]] = {}
    for g, ms in sorted(per.items()):
        window[g] = [m["delta_L_train_window"] for m in ms if m["delta_L_train_window"] is not None]
        final[g] = [m["delta_L_train_final"] for m in ms if m["delta_L_train_final"] is not None]
        cos = {(when, src): [stage_cosine(m, when)[src] for m in ms] for when in ("early", "final")
               for src in ("prontoqa", "tinystories")}
        lines.append(f"| {g} | {len(ms)} | {_spread(window[g])} | {_spread(final[g])} | "
                     + " | ".join(_spread(cos[k]) for k in sorted(cos)) + " |")
    lines += ["", f"ΔL̄ rises with γ: {ordering_verdict(window)}.", "",
              f"The final ΔL rises with γ: {ordering_verdict(final)}.", ""]
    return lines


def stage_cosine(m: dict, when: str) -> dict[str, float]:
    """The cosines of one stage (``init``, ``early`` or ``final``) of a measured run."""
    return next(v for k, v in m["cosine"].items() if k.startswith(when))
