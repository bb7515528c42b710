"""``reasonlab reproduce reasoning-bias``: the synthetic half of the reasoning-bias study (spec §2–§6, E1, T1–T4).

The transformer and the Emb-MLP are trained on the reasoning/memory mixture at a large (γ 0.3) and a small
(γ 0.8) initialization. The command overlays the per-source curves (Fig. 3A/3B), reads the t50 criteria, and
measures the embedding and attention geometry of the runs: anchor cosine matrices against the label-distribution
prediction (T2), first-layer attention against 1/i at initialization (T1), W_V's alignment (T3) and the
theoretical embedding profile (T4). ``summary.md`` states every number and whether each claim held.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import torch
from rich.console import Console

from reasonlab.analysis import geometry as geo
from reasonlab.analysis.loading import load_at_fraction
from reasonlab.build import build_model, build_task
from reasonlab.config import RunConfig, raw_config
from reasonlab.errors import StoreError
from reasonlab.kinds.mixture.evaluate import label_law_criteria, reasoning_bias_criteria, t50
from reasonlab.plots.mixture import plot_cosine_matrices, plot_label_laws, plot_pca, plot_profiles, plot_source_curves
from reasonlab.records import load_record, run_metrics
from reasonlab.report.markdown import header
from reasonlab.store import Metrics, atomic_write_text, read_json, write_json, write_npz
from reasonlab.sweep.grid import expand
from reasonlab.sweep.runner import run_sweep
from reasonlab.tasks.base import TaskData

GAMMAS = (0.3, 0.8)
MODELS = ("transformer", "emb-mlp")
GRIDS = {"cpu": {"seed": [1, 2, 3]}, "paper": {"seed": [1, 2, 3]}}
EARLY = 0.05  # "early" = this fraction of training (spec §4)


# Label-distribution experiments (spec §2, Fig. 8): memory data only, transformer at γ 0.8, one run each.
FIG8 = {
    "ranges": [{"anchors": [2 * i - 1, 2 * i], "labels": "range", "lo": 30, "hi": 29 + 20 * i} for i in (1, 2, 3, 4)],
    "rules": [{"anchors": [1, 2, 3, 4, 5], "labels": "keys"}, {"anchors": [6, 7, 8, 9, 10], "labels": "near_key"}],
}
FIG8_GAMMA = 0.8
GROUP_NAMES = {"ranges": [f"labels in [30, {29 + 20 * i}]" for i in (1, 2, 3, 4)],
               "rules": ["F_mem,1: labels from the keys", "F_mem,2: labels in z ± Σa"]}


def study_configs(profile: str, overrides: list[str] = (), seeds: list[int] | None = None) -> list[RunConfig]:
    """Model × γ × seed (the arm's seeds, or ``seeds``) on the mixture, then the two Fig. 8 runs (the first seed
    only)."""
    seeds = list(seeds or GRIDS[profile]["seed"])
    cfgs = []
    for model in MODELS:
        base = raw_config(None, f"{model}-{profile}", list(overrides), "mixture")
        cfgs += expand(base, {"init.gamma": list(GAMMAS), "seed": seeds})
    return cfgs + fig8_configs(profile, overrides, seeds[0])


def fig8_configs(profile: str, overrides: list[str], seed: int) -> list[RunConfig]:
    """The two Fig. 8 runs (label ranges; label rules), on memory data only, at one seed."""
    out = []
    for name, groups in FIG8.items():
        base = raw_config(None, f"transformer-{profile}", list(overrides), "mixture")
        base["task"] = {**base.get("task", {}), "memory_groups": groups, "rsn_anchors": [], "masked_tuples": []}
        base["profile"] = f"{base.get('profile', profile)}; Fig. 8 {name}"
        out += expand(base, {"init.gamma": [FIG8_GAMMA], "seed": [seed]})
    return out


def is_fig8(cfg: RunConfig) -> str | None:
    """Which Fig. 8 experiment a config is, if any."""
    return next((name for name, groups in FIG8.items()
                 if [g.model_dump(exclude_none=True) for g in cfg.task.memory_groups] == groups), None)


def anchor_tokens(cfg: RunConfig) -> tuple[list[int], list[int]]:
    return [a for g in cfg.task.memory_groups for a in g.anchors], list(cfg.task.rsn_anchors)


def geometry_of(cfg: RunConfig, run_dir: Path, data: TaskData) -> dict[str, object]:
    """T2 (and T3/T4 for the transformer) at the early checkpoint and at the end of one run."""
    memory, reasoning = anchor_tokens(cfg)
    tokens = memory + reasoning
    c_pred = geo.predicted_cosine(data.train_inputs, data.train_targets, tokens, data.vocab_size)
    iu = np.triu_indices(len(tokens), k=1)
    out: dict[str, object] = {}
    for when, fraction in (("early", EARLY), ("final", 1.0)):
        epoch, model = load_at_fraction(run_dir, fraction, data)
        c = geo.cosine_matrix(model.embed.weight[tokens])
        stats = geo.block_statistics(c, list(range(len(memory))), list(range(len(memory), len(tokens))))
        entry = {"epoch": epoch, **stats, "pearson_vs_prediction": geo.pearson(c[iu], c_pred[iu]), "cosine": c}
        ordinal = list(range(min(reasoning), cfg.task.key_max + 1))  # reasoning anchors and keys: 11..120
        scores, explained = geo.pca(model.embed.weight[ordinal])
        entry["pc1_spearman"] = abs(geo.spearman(scores[:, 0], np.array(ordinal, dtype=float)))
        entry["pca"] = (ordinal, scores, explained)
        if cfg.model.kind == "transformer":
            entry.update(geo.wv_alignment(model.blocks[0].attn.W_V.weight, model.embed.weight, reasoning, memory))
            span = list(range(min(reasoning), min(reasoning) + 30))
            theory = geo.theoretical_embeddings(span, set(reasoning), cfg.model.d_model, cfg.init.gamma,
                                                torch.Generator().manual_seed(0))
            centre = span[4]
            entry["profile_pearson"] = geo.profile_correlation(model.embed.weight[span], theory, span, centre)
            entry["profile"] = (span, centre, geo.cosine_matrix(model.embed.weight[span])[4],
                                geo.cosine_matrix(theory)[4])
        out[when] = entry
    out["predicted"] = c_pred
    return out


GEOMETRY = Path("analysis") / "geometry"  # under a run: the geometry its checkpoints gave, so that no figure needs them


def _split(value: object, key: str, arrays: dict[str, np.ndarray]) -> object:
    """``value`` as JSON, each array in it moved into ``arrays`` under ``key`` and named in its place."""
    if isinstance(value, np.ndarray | torch.Tensor):
        arrays[key] = np.asarray(value.detach() if isinstance(value, torch.Tensor) else value)
        return {"npz": key}
    if isinstance(value, dict):
        return {k: _split(v, f"{key}.{k}", arrays) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_split(v, f"{key}.{i}", arrays) for i, v in enumerate(value)]
    return float(value) if isinstance(value, np.floating) else value


def _join(value: object, arrays: dict[str, np.ndarray]) -> object:
    if isinstance(value, dict):
        return arrays[value["npz"]] if set(value) == {"npz"} else {k: _join(v, arrays) for k, v in value.items()}
    return [_join(v, arrays) for v in value] if isinstance(value, list) else value


def save_geometry(run_dir: Path, geometry: dict) -> None:
    """Keep a run's geometry (``geometry_of``) beside its record: numbers in JSON, matrices in npz."""
    arrays: dict[str, np.ndarray] = {}
    numbers = _split(geometry, "g", arrays)
    (run_dir / GEOMETRY).mkdir(parents=True, exist_ok=True)
    write_npz(run_dir / GEOMETRY / "geometry.npz", arrays)
    write_json(run_dir / GEOMETRY / "geometry.json", numbers)  # last: its presence says the pair is whole


def load_geometry(run_dir: Path) -> dict | None:
    """A run's kept geometry, or None when it has none."""
    if not (run_dir / GEOMETRY / "geometry.json").is_file():
        return None
    numbers = read_json(run_dir / GEOMETRY / "geometry.json", "geometry")
    try:
        with np.load(run_dir / GEOMETRY / "geometry.npz", allow_pickle=False) as npz:
            return _join(numbers, dict(npz))
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile):
        raise StoreError(f"{run_dir / GEOMETRY}: damaged geometry files; delete the folder and rerun the study's "
                         "reproduce command while the run's checkpoints exist") from None


def attention_at_init(cfg: RunConfig, data: TaskData, n: int = 256, inits: int = 5) -> float:
    """T1: max |A_ij − 1/i| of the first layer at initialization over ``inits`` init seeds."""
    worst = 0.0
    for s in range(inits):
        model = build_model(cfg.model_copy(update={"seed": cfg.seed + 1000 * s}), data)
        worst = max(worst, geo.attention_deviation(model, data.train_inputs[:n]))
    return worst


def reproduce(profile: str, out: Path, make_executor, console: Console, overrides: list[str] = (),
              seeds: list[int] | None = None) -> Path:
    cfgs = study_configs(profile, overrides, seeds)
    name = f"reasoning-bias-{profile}"
    executor = make_executor(len(cfgs))
    console.print(f"reasoning-bias, profile {profile}: {len(cfgs)} runs (model × γ × seed, and Fig. 8's two) with "
                  f"{executor.workers} workers × {executor.threads} threads; store {out / name}")
    report = run_sweep(name, cfgs, out, executor, ["model.kind", "init.gamma", "seed"], {"profile": profile}, console)
    if report.failed:
        console.print(f"{len(report.failed)} runs failed; the summary covers the finished ones")
    sweep_dir = report.sweep_dir
    results = measure(cfgs, sweep_dir, sweep_dir / "figures")
    atomic_write_text(sweep_dir / "summary.md", summary_markdown(profile, cfgs, results, report.timing()))
    console.print(f"summary: {sweep_dir / 'summary.md'}")
    return sweep_dir


def read_mixture_run(cfg: RunConfig, run_dir: Path, rows: Metrics | None = None) -> dict:
    """What the E1 criteria read of one finished mixture run: its final accuracies per source and the t50s."""
    rows = Metrics(run_metrics(run_dir)) if rows is None else rows
    summary = load_record(run_dir)[1]
    final = summary.final
    return {"cfg": cfg, "dir": run_dir, "rows": rows, "label": summary.label,
            "wall_time_s": summary.wall_time_s, "reasoning_test_acc": final.get("reasoning_test_acc", 0.0),
            "memory_acc": final.get("memory_acc"), "reasoning_train_acc": final.get("reasoning_train_acc"),
            "t50_memory": t50(rows, "memory"), "t50_reasoning_train": t50(rows, "reasoning_train"),
            "t50_reasoning_test": t50(rows, "reasoning_test"), "last_epoch": rows.last_epoch("pooled")}


def measure(cfgs: list[RunConfig], sweep_dir: Path, figures: Path) -> dict:
    """Read every finished run: t50s, final accuracies, criteria per model and seed, geometry of the first seed;
    draw the figures into ``figures`` (a committed sweep's into a scratch folder: it needs no checkpoint once each
    run keeps its geometry)."""
    runs: dict[tuple[str, float, int], dict] = {}
    fig8: dict[str, dict] = {}
    for cfg in cfgs:
        run_dir = sweep_dir / cfg.run_id()
        if not (run_dir / "summary.json").is_file():
            continue
        rows = Metrics(run_metrics(run_dir))
        if (experiment := is_fig8(cfg)) is not None:
            fig8[experiment] = {"cfg": cfg, "rows": rows,
                                "groups": label_law_criteria(rows, len(cfg.task.memory_groups))}
            continue
        runs[(cfg.model.kind, cfg.init.gamma, cfg.seed)] = read_mixture_run(cfg, run_dir, rows)
    criteria = {(m, s): reasoning_bias_criteria(runs[(m, 0.8, s)], runs[(m, 0.3, s)])
                for (m, g, s) in runs if g == 0.8 and (m, 0.3, s) in runs}
    geometry, attention = {}, {}
    for (m, g, s), r in runs.items():
        if s != min(c.seed for c in cfgs):
            continue
        data = build_task(r["cfg"])
        kept = load_geometry(r["dir"])
        if kept is None:  # read from the checkpoints once, then kept with the run (they are not committed)
            kept = geometry_of(r["cfg"], r["dir"], data)
            save_geometry(r["dir"], kept)
        geometry[(m, g)] = kept
        if m == "transformer":
            attention[g] = attention_at_init(r["cfg"], data)
    _figures(runs, geometry, figures, cfgs)
    if fig8:
        plot_label_laws([(f"Fig. 8 {name}", r["rows"], GROUP_NAMES[name])
                         for name, r in fig8.items()], figures / "label-distribution",
                        f"Profile: {next(iter(fig8.values()))['cfg'].profile}; transformer γ {FIG8_GAMMA}.")
    return {"runs": runs, "criteria": criteria, "geometry": geometry, "attention": attention, "fig8": fig8}


def _figures(runs: dict, geometry: dict, figures: Path, cfgs: list[RunConfig]) -> None:
    seed = min(c.seed for c in cfgs)
    panels = [(f"{m} γ={g} (seed {seed})", runs[(m, g, seed)]["rows"]) for m in ("transformer", "emb_mlp")
              for g in GAMMAS if (m, g, seed) in runs]
    caption = f"Profile: {cfgs[0].profile} / {cfgs[-1].profile}."
    plot_source_curves(panels, figures / "curves", caption)
    for (m, g), geo_run in geometry.items():
        tokens = [t for part in anchor_tokens(runs[(m, g, seed)]["cfg"]) for t in part]
        mats = [(f"{m} γ={g} epoch {geo_run[w]['epoch']}", geo_run[w]["cosine"]) for w in ("early", "final")]
        mats.append(("prediction cos(P_s − u, P_t − u)", geo_run["predicted"]))
        plot_cosine_matrices(mats, tokens, figures / f"cosine-{m}-g{g}")
        plot_pca([(f"{m} γ={g} epoch {geo_run[w]['epoch']}", *geo_run[w]["pca"]) for w in ("early", "final")],
                 figures / f"pca-{m}-g{g}")
        if "profile" in geo_run["final"]:
            span, centre, learned_final, theory = geo_run["final"]["profile"]
            learned_early = geo_run["early"]["profile"][2]
            plot_profiles(span, [("learned, early", learned_early), ("learned, final", learned_final),
                                 ("Theorem 1 (eq. 14)", theory)], centre, figures / f"profile-{m}-g{g}")


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _ratio(criteria: dict, which: str) -> str:
    """A t50 ratio, "< x" when memory never reached 0.5 (x from the last evaluated epoch)."""
    value = _num(criteria[f"t50_ratio_{which}_init"])
    return f"< {value}" if criteria[f"t50_ratio_{which}_init_bound"] else value


def _yes(flag: bool) -> str:
    return "**held**" if flag else "**did not hold**"


def _fig8_lines(fig8: dict[str, dict]) -> list[str]:
    lines = ["", "## Label distribution (E4, Fig. 8)", "", "![label distribution](figures/label-distribution.png)", "",
             "| experiment | group | epoch in-range ≥ 0.9 | accuracy then | t50 | final accuracy | final in-range |",
             "|---|---|---|---|---|---|---|"]
    for name, r in fig8.items():
        for g in r["groups"]:
            last = r["rows"].last_epoch()
            final_acc = r["rows"].at(last, "pooled", f"memory_group_{g['group']}_acc")
            final_in = r["rows"].at(last, "pooled", f"memory_group_{g['group']}_in_range")
            lines.append(f"| {name} | {GROUP_NAMES[name][g['group'] - 1]} | {g['epoch_in_range']} | "
                         f"{_num(g['acc_then'])} | {g['t50']} | {_num(final_acc)} | {_num(final_in)} |")
    lines.append("")
    if "ranges" in fig8:
        groups = fig8["ranges"]["groups"]
        lines.append("- (i) The in-range rate nears 1 while accuracy is still low (in-range ≥ 0.9 reached while "
                     f"accuracy < 0.5, in every group): {_yes(all(g['held'] for g in groups))} "
                     f"({sum(g['held'] for g in groups)} of {len(groups)} groups).")
    if "rules" in fig8:
        g1, g2 = (g["t50"] for g in fig8["rules"]["groups"])
        held = g2 is not None and (g1 is None or g2 <= 0.5 * g1)
        lines.append(f"- (ii) F_mem,2 (labels near the key) is learned much faster than F_mem,1 (t50 {g2} vs {g1}; "
                     f"criterion t50 ratio ≤ 0.5, a run that never reaches 0.5 counting as slower): {_yes(held)}.")
    return lines


def summary_markdown(profile: str, cfgs: list[RunConfig], results: dict, timing: str) -> str:
    runs, criteria, geometry = results["runs"], results["criteria"], results["geometry"]
    lines = [*header("reasoning-bias", profile, sorted({c.profile for c in cfgs}), timing),
             "![curves](figures/curves.png)", "", "## Training order (E1)", "",
             "| model | γ | seed | t50 memory | t50 reasoning-train | t50 reasoning-test | final memory acc | "
             "final reasoning-test acc |", "|---|---|---|---|---|---|---|---|"]
    for (m, g, s), r in sorted(runs.items()):
        lines.append(f"| {m} | {g} | {s} | {r['t50_memory']} | {r['t50_reasoning_train']} | "
                     f"{r['t50_reasoning_test']} | {_num(r['memory_acc'])} | {_num(r['reasoning_test_acc'])} |")
    lines += ["", "Criteria (spec §6 E1; t50 = first epoch with accuracy ≥ 0.5):", ""]
    for (m, s), c in sorted(criteria.items()):
        lines.append(f"- {m}, seed {s}: small init reasons first (t50 ratio {_ratio(c, 'small')}) "
                     f"{_yes(c['small_init_reasons_first'])}; small init generalizes (≥ 0.9) "
                     f"{_yes(c['small_init_generalizes'])}; large init shows no bias (ratio "
                     f"{_ratio(c, 'large')} in [0.5, 2]) {_yes(c['large_init_no_bias'])}; large init "
                     f"generalizes ≥ 0.5 less {_yes(c['large_init_generalizes_less'])}.")
    lines += ["", "## Geometry (T1–T4)", "", "T1, first-layer attention at initialization, max |A_ij − 1/i| "
              "(pass: < 1e-3 at γ 0.8, > 0.05 at γ 0.3): "
              + ", ".join(f"γ {g}: {v:.2e}" for g, v in sorted(results["attention"].items())), "",
              "| model | γ | when (epoch) | memory block mean (std) | reasoning Spearman vs distance | "
              "Pearson vs prediction | PC1 rank corr. (abs.) | W_V σ1/σ2 | r_rsn / r_mem | profile Pearson |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for (m, g), gr in sorted(geometry.items()):
        for when in ("early", "final"):
            e = gr[when]
            extra = (f"{e['sigma_ratio']:.2f} | {e['reasoning_over_memory']:.2f} | {e['profile_pearson']:.3f}"
                     if "sigma_ratio" in e else "— | — | —")
            lines.append(f"| {m} | {g} | {when} ({e['epoch']}) | {e['memory_mean']:.3f} ({e['memory_std']:.3f}) | "
                         f"{e['reasoning_spearman_vs_distance']:.3f} | {e['pearson_vs_prediction']:.3f} | "
                         f"{e['pc1_spearman']:.3f} | {extra} |")
    if results["fig8"]:
        lines += _fig8_lines(results["fig8"])
    lines += ["", "Pass thresholds (spec §5): memory block mean ≥ 0.8 with std ≤ 0.1, reasoning Spearman ≤ −0.8, "
              "Pearson vs prediction ≥ 0.7 (T2, at the early checkpoint, γ 0.8); σ1/σ2 ≥ 2 and r_rsn ≥ 3·r_mem (T3); "
              "profile Pearson ≥ 0.7 and PC1 |Spearman| vs token value over tokens 11..120 ≥ 0.9 (T4, Fig. 5B)."]
    return "\n".join(lines) + "\n"
