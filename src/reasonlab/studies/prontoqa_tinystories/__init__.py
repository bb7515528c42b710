"""The PrOntoQA + TinyStories study (``reasonlab reproduce prontoqa-tinystories``; its class in ``study.py``, its
docs sections in ``docs.py``, its rows of the results tables in ``findings.py``): the language-model half of the
reasoning-bias study (spec §4, E2–E3): one GPT-style model trained by next-token prediction on PrOntoQA-style text
mixed with TinyStories.

Measured per run: ΔL = (L_TinyStories − L_PrOntoQA) / L_PrOntoQA along training, its mean over 5–50 % of the
steps (ΔL̄) and its final value, and the mean pairwise cosine of the input embeddings of PrOntoQA-only and
TinyStories-only tokens at initialization (rebuilt from the seed), early (5 %), at every absolute step a run saved
its weights for (``train.snapshot_steps``) and at the end. Grids: γ with seeds (the main contrast) and, per
profile, single-seed arms (no LayerNorm, peak learning rates, GPT-2 BPE tokens, width). A run logs the trained
cosines itself (every epoch and at every snapshot, in its metrics), so they survive a stop on one machine and a
resume on another; runs trained before that are read from their saved weights. The stages are kept in each run's
``analysis/embedding-cosine.json``, so a committed sweep (no checkpoints) regenerates its summary and figures
without training.

Over 400 lines: one study end to end (its grids, the per-run measurement from logged cosines or saved weights,
the report with its verdicts); the measurement is its own section and would be the first to move out.
"""

from __future__ import annotations

from pathlib import Path
from statistics import mean

from torch import nn

from reasonlab.analysis.loading import load_trained
from reasonlab.build import build_model
from reasonlab.checkpoint import complete_steps, snapshot_steps
from reasonlab.config import RunConfig, raw_config
from reasonlab.errors import StoreError
from reasonlab.kinds.text_mixture import evaluate as text_evaluate
from reasonlab.kinds.text_mixture.data import SOURCES, TextMixtureTask, load_tokenizer
from reasonlab.plots.language import Band, plot_delta_l, plot_embedding_cosine
from reasonlab.records import load_run, run_metrics
from reasonlab.report.markdown import header, table
from reasonlab.store import MetricRow, Metrics, read_json, warn, write_json
from reasonlab.sweep.grid import expand

GAMMAS = [0.3, 0.5, 0.8]
GRIDS = {
    "cpu": {"main": {"init.gamma": [0.3, 0.5, 0.8, 1.0], "seed": [1, 2, 3]}, "no_ln": {"init.gamma": [0.3, 0.8]},
            "lr": {"init.gamma": [0.3, 0.8], "train.lr_multiplier": [10, 30]}},
    "paper": {"main": {"init.gamma": GAMMAS, "seed": [1, 2, 3]}, "no_ln": {"init.gamma": GAMMAS},
              "lr": {"init.gamma": GAMMAS, "train.lr_multiplier": [1, 3, 10, 30, 50]}},
    # the spec's optimizer (lm-regime profile); its arms keep the profile's seed 1 and need every γ,
    # since each tests the ordering over γ and the cosine contrast at the smallest initialization
    "regime": {"main": {"init.gamma": GAMMAS, "seed": [1, 2, 3]}, "bpe": {"init.gamma": GAMMAS},
               "lr3e-5": {"init.gamma": GAMMAS}, "width256": {"init.gamma": GAMMAS}},
}
# what a group sets besides its axes
ARMS = {"no_ln": ["model.norm=none", "model.final_norm=false"], "bpe": ["task.tokenizer=bpe"],
        # the whole schedule scaled by 0.3: warm-up from 3e-6, peak 3e-5, cosine to 3e-6 (0.1x peak, as the spec)
        "lr3e-5": ["train.base_lr=3e-6", "train.floor_lr=3e-6"],
        "width256": ["model.d_model=256", "model.d_k=64", "model.d_v=64", "model.d_ff=1024"]}
TITLES = {"main": "γ (with LayerNorm)", "no_ln": "γ without any LayerNorm", "lr": "γ × peak learning rate",
          "bpe": "γ with GPT-2 BPE tokens (task.tokenizer=bpe)", "lr3e-5": "γ at peak lr 3e-5",
          "width256": "γ at width 256 (d_model 256, 4 heads of 64, d_ff 1024)"}
AXES = ("init.gamma", "model.norm", "train.lr_multiplier", "train.base_lr", "model.d_model", "task.tokenizer",
        "seed")
PAPER_COSINE = {"prontoqa": 0.123, "tinystories": 0.531}
EARLY = 0.05  # spec §4: the "early" point of the embedding cosines
COSINE_KEYS = {"run_id", "cosine", "n_exclusive"}


def study_configs(profile: str, overrides: list[str] = ()) -> dict[str, list[RunConfig]]:
    return {group: expand(raw_config(None, f"lm-{profile}", [*overrides, *ARMS.get(group, [])], "mixture"), axes)
            for group, axes in GRIDS[profile].items()}


def measure_run(cfg: RunConfig, run_dir: Path, keep: bool = True) -> dict:
    """ΔL̄ and the final ΔL of a finished run, and its embedding cosines (``cosine`` None, said in one line, when
    they cannot be had: its ΔL still counts); ``keep`` as ``embedding_cosines``."""
    rows = Metrics(run_metrics(run_dir))
    final = load_run(run_dir)[0]["final"]
    window = text_evaluate.delta_l_summary(rows, cfg)["delta_L_window"]  # also in newer summaries; older ones lack it
    total = max((r.step for r in rows), default=0)
    # each source's own training loss over the ΔL̄ window and at the end: ΔL is their ratio, and which of the two
    # moves with γ is what the ratio cannot say
    losses = {f"loss_{src}_{when}": (rows.last("pooled", f"{src}_train_loss") if when == "final" else
                                     text_evaluate.window_mean(rows, total, f"{src}_train_loss") if total else None)
              for src in SOURCES for when in ("window", "final")}
    return {"delta_L_train_window": window["train"], "delta_L_eval_window": window["eval"],
            "delta_L_train_final": final.get("delta_L_train"), "delta_L_eval_final": final.get("delta_L_eval"),
            "seed": cfg.seed, "rows": rows, **losses} | cosines_or_none(cfg, run_dir, keep)


def cosines_or_none(cfg: RunConfig, run_dir: Path, keep: bool = True) -> dict:
    """``embedding_cosines``, or None in their place (said in one line) for a run whose cosines cannot be had."""
    try:
        return embedding_cosines(cfg, run_dir, keep)
    except StoreError as e:
        warn(f"{cfg.run_id()}: its ΔL counts, its embedding cosines are left out: {e}")
        return {"cosine": None, "n_exclusive": None, "tokens": None}


def with_cosines(measured: dict) -> dict:
    """The measured runs that have embedding cosines."""
    return {k: m for k, m in measured.items() if m["cosine"] is not None}


def _is_early(fraction: float) -> bool:
    """Whether a snapshot's fraction of training is the "early" one (fractions are stored as floats)."""
    return abs(fraction - EARLY) < 1e-9


def logged_stages(cfg: RunConfig, rows: list[MetricRow]) -> dict[str, dict[str, float]]:
    """Stage label → cosine per source, from the cosines the run logged while training (``weights`` rows, every
    epoch and every snapshot): early (the logged step nearest to 5 % of training: exactly there with a 5 %
    snapshot), every absolute snapshot step and the end; empty for a run trained before they were logged."""
    logged: dict[int, dict[str, float]] = {}
    for r in rows:
        if r.split == "weights" and r.metric.startswith("cosine:"):
            logged.setdefault(r.step, {})[r.metric.removeprefix("cosine:")] = r.value
    if not logged:
        return {}
    total = max(logged)  # every epoch logs them, the last at the run's last step
    plan = cfg.train.snapshot_plan(total)
    if missing := [s for s in plan if s not in logged]:
        raise StoreError(f"{cfg.run_id()}: logged no embedding cosines at its snapshot steps {sorted(missing)} "
                         "(resumed from a checkpoint of a run trained before they were logged); train the run again")
    early = next((s for s, f in plan.items() if _is_early(f)), None)
    at = EARLY
    if early is None:  # no 5 % snapshot: the evaluation nearest to it, named by its own fraction
        early = min(logged, key=lambda s: abs(s - EARLY * total))
        at = early / total
    found = {early: f"early (step {early}, {at:.0%})", total: f"final (step {total})"}
    found |= {s: f"step {s}" for s in cfg.train.snapshot_steps if s in logged and s not in found}
    return {label: logged[s] for s, label in sorted(found.items())}


def cosine_checkpoints(run_dir: Path, cfg: RunConfig) -> list[tuple[str, str]]:
    """(stage label, checkpoint name for ``load_trained``) of the trained weights the cosines are read at, in order
    of step, for a run that logged no cosines: early (the 5 % snapshot), every other snapshot the run saved
    (``snapshot_steps``: absolute steps) and the end. Refused when a snapshot the run was configured to save is
    not in the store (a run restored from a pack keeps only its newest checkpoint): the stages would be a different
    set, silently."""
    ckpt = run_dir / "checkpoints"
    steps = complete_steps(ckpt)
    saved = snapshot_steps(ckpt)
    if (not steps or any(s not in saved for s in cfg.train.snapshot_plan(steps[-1]))
            or not any(_is_early(f) for f in saved.values())):
        raise StoreError(f"{ckpt}: the run logged no embedding cosines, and the weights they are read from (the 5 % "
                         "snapshot, its snapshot steps and the end) are not all in the store; train the run again")
    found = [(s, f"early (step {s}, {EARLY:.0%})" if _is_early(f) else f"step {s}", f"snapshot-{s}")
             for s, f in saved.items()]
    found.append((steps[-1], f"final (step {steps[-1]})", "final"))
    return [(label, name) for _, label, name in sorted(found)]


def embedding_cosines(cfg: RunConfig, run_dir: Path, keep: bool = True) -> dict:
    """Mean pairwise cosine of the PrOntoQA-only and TinyStories-only input embeddings per stage (initialization,
    then the run's ``logged_stages``, or ``cosine_checkpoints`` for a run that logged none), measured once and then
    read from ``analysis/embedding-cosine.json`` (older files of the cpu profile hold init, early and final by
    epoch); ``keep`` False measures without writing that file (a check that must leave the run as it found it)."""
    cached = run_dir / "analysis" / "embedding-cosine.json"
    if cached.is_file():
        kept = read_json(cached, "embedding-cosine file")
        if not isinstance(kept, dict) or not COSINE_KEYS <= set(kept) <= COSINE_KEYS | {"tokens"}:
            raise StoreError(f"{cached}: not an embedding-cosine file reasonlab wrote; delete it to measure again")
        if kept["run_id"] != cfg.run_id():
            raise StoreError(f"{cached}: written for run {kept['run_id']!r}, not {cfg.run_id()}; delete it")
        return {"cosine": kept["cosine"], "n_exclusive": tuple(kept["n_exclusive"]), "tokens": kept.get("tokens")}
    tok = load_tokenizer((run_dir / "tokenizer.json").read_text())
    data = TextMixtureTask(cfg.task).build(cfg.seed)  # the run's own data, with its exclusive token sets

    def stage(model: nn.Module) -> dict[str, float]:  # the statistic the run logs while training
        return {k.removeprefix("cosine:"): v for k, v in text_evaluate.embedding_cosines(model, data).items()}

    cosine = {"init": stage(build_model(cfg, data))}  # the initialization: same seed, same draw
    logged = logged_stages(cfg, run_metrics(run_dir))
    cosine |= logged
    for label, name in [] if logged else cosine_checkpoints(run_dir, cfg):
        cosine[label] = stage(load_trained(run_dir, name, data)[1])
    ids = data.info["exclusive"]
    out = {"cosine": cosine, "n_exclusive": (len(ids["prontoqa"]), len(ids["tinystories"])),
           "tokens": {source: [tok.decode([i]) for i in ids[source]] for source in SOURCES}}
    if keep:
        cached.parent.mkdir(exist_ok=True)
        write_json(cached, {"run_id": cfg.run_id(), **out})
    return out


def measure_sweep(cfgs: list[RunConfig], sweep_dir: Path, keep: bool = True) -> dict[str, dict]:
    """run id → ``measure_run`` of each finished run of ``cfgs`` in ``sweep_dir`` (read from the committed files
    alone when the runs keep their ``analysis/embedding-cosine.json``, as ``results/`` does; ``keep`` as
    ``embedding_cosines``)."""
    measured = {}
    for c in cfgs:
        if (sweep_dir / c.run_id() / "summary.json").is_file():
            try:
                measured[c.run_id()] = measure_run(c, sweep_dir / c.run_id(), keep)
            except StoreError as e:  # one run's damaged files leave it out of the tables, said in one line
                warn(f"{c.run_id()} left out: {e}")
    return measured


def draw_figures(main: list[RunConfig], measured: dict, figures_dir: Path) -> list[Path]:
    """``delta-l.png|svg`` and ``cosine.png|svg`` of the main group's measured runs (none when none is measured;
    the cosine figure of those with cosines); also what ``scripts/regenerate_docs.py`` draws the docs' copies with."""
    by_gamma = per_gamma(main, measured)
    if not by_gamma:
        return []
    caption = f"profile: {main[0].profile}"
    window = {g: [v for m in ms if (v := m["delta_L_train_window"]) is not None] for g, ms in by_gamma.items()}
    cosines = {f"γ={g}": cosine_bands(ms) for g, ms in per_gamma(main, with_cosines(measured)).items()}
    return [*plot_delta_l(delta_l_bands(by_gamma), {g: v for g, v in window.items() if v},
                          figures_dir / "delta-l", caption),
            *(plot_embedding_cosine(cosines, PAPER_COSINE, figures_dir / "cosine", caption) if cosines else [])]


def by_peak_lr(cfgs: list[RunConfig]) -> dict[float, list[RunConfig]]:
    """A group's runs split by peak learning rate (the ``lr`` groups vary it beside γ), in order of lr."""
    out: dict[float, list[RunConfig]] = {}
    for c in sorted(cfgs, key=lambda c: c.train.base_lr * c.train.lr_multiplier):
        out.setdefault(c.train.base_lr * c.train.lr_multiplier, []).append(c)
    return out


def per_gamma(cfgs: list[RunConfig], measured: dict) -> dict[float, list[dict]]:
    """γ → the measured runs of a group (its seeds), in γ order."""
    out: dict[float, list[dict]] = {}
    for c in sorted(cfgs, key=lambda c: (c.init.gamma, c.seed)):
        if c.run_id() in measured:
            out.setdefault(c.init.gamma, []).append(measured[c.run_id()])
    return out


def band(series: list[list[tuple[float, float]]]) -> Band:
    """Mean, min and max over seeds at the x every seed has (x, value) for."""
    values = [dict(s) for s in series]
    xs = sorted(set.intersection(*(set(v) for v in values))) if values else []
    at = [[v[x] for v in values] for x in xs]
    return xs, [mean(a) for a in at], [min(a) for a in at], [max(a) for a in at]


def delta_l_bands(by_gamma: dict[float, list[dict]]) -> dict[str, dict[str, Band]]:
    """Per γ, over its seeds: ΔL on the training subsets and on the eval splits, and each source's training loss."""
    metrics = ("delta_L_train", "delta_L_eval", "prontoqa_train_loss", "tinystories_train_loss")
    return {f"γ={g}": {k: band([m["rows"].series("pooled", k, clock="step") for m in ms]) for k in metrics}
            for g, ms in by_gamma.items()}


def cosine_bands(ms: list[dict]) -> dict[str, Band]:
    """Per source, the cosine over the stages every seed has (in order), as a band over seeds; x are stage labels
    (the x of ``band`` are their positions)."""
    stages = [s for s in ms[0]["cosine"] if all(s in m["cosine"] for m in ms)]
    out = {}
    for source in ("prontoqa", "tinystories"):
        xs, mid, lo, hi = band([[(i, m["cosine"][s][source]) for i, s in enumerate(stages)] for m in ms])
        out[source] = ([stages[int(i)] for i in xs], mid, lo, hi)
    return out


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


def stage_cosine(m: dict, when: str) -> dict[str, float]:
    """The cosines of one stage (``init``, ``early`` or ``final``) of a measured run."""
    return next(v for k, v in m["cosine"].items() if k.startswith(when))


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
