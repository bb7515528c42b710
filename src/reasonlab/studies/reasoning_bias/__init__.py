"""``reasonlab reproduce reasoning-bias``: the synthetic half of the reasoning-bias study (spec §2–§6, E1, T1–T4).

The transformer and the Emb-MLP are trained on the reasoning/memory mixture at a large (γ 0.3) and a small
(γ 0.8) initialization. The command overlays the per-source curves (Fig. 3A/3B), reads the t50 criteria, and
measures the embedding and attention geometry of the runs: anchor cosine matrices against the label-distribution
prediction (T2), first-layer attention against 1/i at initialization (T1), W_V's alignment (T3) and the
theoretical embedding profile (T4), as ``theory.py`` states them. ``summary.md`` states every number and whether
each claim held. The study's class is in ``study.py``, its docs sections in ``docs.py``, its rows of the results
tables in ``findings.py``.
"""

from __future__ import annotations

from pathlib import Path

from reasonlab import vocabulary
from reasonlab.build import build_task
from reasonlab.config import RunConfig, raw_config
from reasonlab.errors import StoreError
from reasonlab.kinds.mixture.evaluate import label_law_criteria, reasoning_bias_criteria, t50
from reasonlab.plots.mixture import plot_cosine_matrices, plot_label_laws, plot_pca, plot_profiles, plot_source_curves
from reasonlab.records import load_record, run_metrics
from reasonlab.report.markdown import epoch_cell, header, held_in, table
from reasonlab.store import Metrics
from reasonlab.studies.base import Arm
from reasonlab.studies.reasoning_bias.theory import (
    GAMMAS,
    GEOMETRY,
    LARGE_INIT,
    SMALL_INIT,
    T1_LARGE_INIT,
    T1_SMALL_INIT,
    T2_MEMORY_MEAN,
    T2_MEMORY_STD,
    T2_PEARSON,
    T2_SPEARMAN,
    T3_REASONING_OVER_MEMORY,
    T3_SIGMA_RATIO,
    T4_PC1_SPEARMAN,
    T4_PROFILE_PEARSON,
    anchor_tokens,
    attention_at_init,
    geometry_of,
    load_geometry,
    save_geometry,
    t1_passed,
    theory_checks,
)
from reasonlab.sweep.grid import expand

KIND = "mixture"  # the task kind of the study's runs, whose labels word the study's tables and demo
# The figures the study's tables read, by their stored names
MEMORY, RULE_TRAINED, RULE_UNSEEN = "memory_acc", "reasoning_train_acc", "reasoning_test_acc"


def words(name: str) -> str:
    """A figure's label in the mixture kind's vocabulary: what every table, verdict and figure of the study calls
    it (``memory_acc`` -> ``memory``, ``reasoning_test_acc`` -> ``rule on unseen tuples``)."""
    return vocabulary.label(name, KIND)

PAPER = "2502.04375"  # the paper the reasoning-bias studies (this and prontoqa-tinystories) reproduce: its arXiv id
MODELS = ("transformer", "emb-mlp")
# each arm trains both models' profiles (``transformer-<arm>``, ``emb-mlp-<arm>``) over γ and its seeds
ARMS = {"cpu": Arm(profile="cpu", grid={"seed": [1, 2, 3]},
                  cost="18 runs of 9,240–9,360 steps: 1.9 CPU-hours on an AMD EPYC, 1 thread a run"),
        "paper": Arm(profile="paper", grid={"seed": [1, 2, 3]},
                     cost="18 runs of 20,160–96,000 steps (819,180 in all)")}


# Label-distribution experiments (spec §2, Fig. 8): memory data only, transformer at γ 0.8, one run each per seed.
FIG8 = {
    "ranges": [{"anchors": [2 * i - 1, 2 * i], "labels": "range", "lo": 30, "hi": 29 + 20 * i} for i in (1, 2, 3, 4)],
    "rules": [{"anchors": [1, 2, 3, 4, 5], "labels": "keys"}, {"anchors": [6, 7, 8, 9, 10], "labels": "near_key"}],
}
FIG8_GAMMA = SMALL_INIT
GROUP_NAMES = {"ranges": [f"labels in [30, {29 + 20 * i}]" for i in (1, 2, 3, 4)],
               "rules": ["F_mem,1: labels from the keys", "F_mem,2: labels in z ± Σa"]}


def study_configs(profile: str, overrides: list[str] = (), seeds: list[int] | None = None) -> list[RunConfig]:
    """Model × γ × seed (the arm's seeds, or ``seeds``) on the mixture, then the two Fig. 8 runs per seed."""
    seeds = list(seeds or ARMS[profile].grid["seed"])
    cfgs = []
    for model in MODELS:
        base = raw_config(None, f"{model}-{profile}", list(overrides), "mixture")
        cfgs += expand(base, {"init.gamma": list(GAMMAS), "seed": seeds})
    return cfgs + [c for seed in seeds for c in fig8_configs(profile, overrides, seed)]


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


def read_mixture_run(cfg: RunConfig, run_dir: Path, rows: Metrics | None = None) -> dict:
    """What the E1 criteria read of one finished mixture run: its final accuracies per source and the t50s."""
    rows = Metrics(run_metrics(run_dir)) if rows is None else rows
    summary = load_record(run_dir)[1]
    final = summary.final
    return {"cfg": cfg, "dir": run_dir, "rows": rows, "label": summary.label,
            "wall_time_s": summary.wall_time_s, "steps": summary.steps,
            "reasoning_test_acc": final.get("reasoning_test_acc", 0.0),
            "memory_acc": final.get("memory_acc"), "reasoning_train_acc": final.get("reasoning_train_acc"),
            "t50_memory": t50(rows, "memory"), "t50_reasoning_train": t50(rows, "reasoning_train"),
            "t50_reasoning_test": t50(rows, "reasoning_test"), "last_epoch": rows.last_epoch("pooled")}


def measure(cfgs: list[RunConfig], sweep_dir: Path, keep: bool = True) -> dict:
    """Read every finished run: t50s, final accuracies, criteria per model and seed, geometry of every mixture run.
    A committed sweep needs no checkpoint: each run keeps its geometry the first time it is read (``keep``; without
    it a run lacking its geometry is an error and nothing is written, as a reader of committed results wants)."""
    runs: dict[tuple[str, float, int], dict] = {}
    fig8: dict[tuple[str, int], dict] = {}  # (experiment, seed) → its run
    for cfg in cfgs:
        run_dir = sweep_dir / cfg.run_id()
        if not (run_dir / "summary.json").is_file():
            continue
        rows = Metrics(run_metrics(run_dir))
        if (experiment := is_fig8(cfg)) is not None:
            fig8[(experiment, cfg.seed)] = {"cfg": cfg, "rows": rows,
                                            "groups": label_law_criteria(rows, len(cfg.task.memory_groups))}
            continue
        runs[(cfg.model.kind, cfg.init.gamma, cfg.seed)] = read_mixture_run(cfg, run_dir, rows)
    criteria = {(m, s): reasoning_bias_criteria(runs[(m, SMALL_INIT, s)], runs[(m, LARGE_INIT, s)])
                for (m, g, s) in runs if g == SMALL_INIT and (m, LARGE_INIT, s) in runs}
    first = min(c.seed for c in cfgs)
    geometry, attention = {}, {}
    for (m, g, s), r in runs.items():
        kept = load_geometry(r["dir"])
        if kept is None and not keep:
            raise StoreError(f"{r['dir'] / GEOMETRY}: no geometry kept with this run; run the study's reproduce "
                             "command on the store that holds its checkpoints, then pack it again")
        if kept is None:  # read from the checkpoints once, then kept with the run (they are not committed)
            kept = geometry_of(r["cfg"], r["dir"], build_task(r["cfg"]))
            save_geometry(r["dir"], kept)
        geometry[(m, g, s)] = kept
        if m == "transformer" and s == first:
            attention[g] = attention_at_init(r["cfg"], build_task(r["cfg"]))
    return {"runs": runs, "criteria": criteria, "geometry": geometry, "attention": attention, "fig8": fig8,
            "checks": theory_checks(geometry)}


def draw(results: dict, cfgs: list[RunConfig], figures: Path) -> None:
    """The study's figures from what ``measure`` read (the first seed's runs) into ``figures``: a store's, or a
    scratch folder for a committed sweep."""
    runs, geometry, fig8 = results["runs"], results["geometry"], results["fig8"]
    seed = min(c.seed for c in cfgs)
    shown = [runs[(m, g, seed)] for m in ("transformer", "emb_mlp") for g in GAMMAS if (m, g, seed) in runs]
    panels = [(f"{r['cfg'].model.kind} γ={r['cfg'].init.gamma} (seed {seed})", r["rows"]) for r in shown]
    caption = "Profiles: " + " / ".join(dict.fromkeys(r["cfg"].profile for r in shown)) + "."
    plot_source_curves(panels, figures / "curves", caption)
    for (m, g, s), geo_run in geometry.items():
        if s != seed:
            continue
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
    shown = [(name, min(s for n, s in fig8 if n == name)) for name in FIG8 if any(n == name for n, _ in fig8)]
    if shown:  # each experiment at its lowest finished seed
        plot_label_laws([(f"Fig. 8 {name} (seed {s})", fig8[(name, s)]["rows"], GROUP_NAMES[name])
                         for name, s in shown], figures / "label-distribution",
                        f"Profile: {fig8[shown[0]]['cfg'].profile}; transformer γ {FIG8_GAMMA}.")


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _ratio(criteria: dict, which: str) -> str:
    """A t50 ratio, "< x" when memory never reached 0.5 (x from the last evaluated epoch)."""
    value = _num(criteria[f"t50_ratio_{which}_init"])
    return f"< {value}" if criteria[f"t50_ratio_{which}_init_bound"] else value


CRITERIA = {"small_init_reasons_first": "small init reasons first (t50 ratio ≤ 0.5)",
            "small_init_generalizes": "small init generalizes (test ≥ 0.9)",
            "large_init_no_bias": "large init shows no bias (t50 ratio in [0.5, 2])",
            "large_init_generalizes_less": "large init generalizes ≥ 0.5 less"}


def runs_table(runs: dict) -> list[str]:
    """E1's table: per model, γ and seed the t50s and final accuracies."""
    return table(["model", "γ", "seed", *(f"t50 {words(f)}" for f in (MEMORY, RULE_TRAINED, RULE_UNSEEN)),
                  f"final {words(MEMORY)}", f"final {words(RULE_UNSEEN)}"],
                 [(m, g, s, epoch_cell(r["t50_memory"]), epoch_cell(r["t50_reasoning_train"]),
                   epoch_cell(r["t50_reasoning_test"]), _num(r["memory_acc"]), _num(r["reasoning_test_acc"]))
                  for (m, g, s), r in sorted(runs.items())])


def criteria_table(criteria: dict) -> list[str]:
    """E1's four criteria per model: in how many seeds each held, and what each seed read."""
    rows = []
    for m in sorted({m for m, _ in criteria}):
        mine = {s: c for (mm, s), c in sorted(criteria.items()) if mm == m}
        rows += [(m, name, held_in({s: c[k] for s, c in mine.items()}),
                  ", ".join(f"{s}: {criterion_detail(c, k)}" for s, c in mine.items())) for k, name in CRITERIA.items()]
    return table(["model", "criterion", "held in", "per seed"], rows)


def criterion_detail(criteria: dict, key: str) -> str:
    """What a criterion read in one seed: its t50 ratio where it has one, else yes / no."""
    which = {"small_init_reasons_first": "small", "large_init_no_bias": "large"}.get(key)
    return _ratio(criteria, which) if which else ("yes" if criteria[key] else "no")


def geometry_lines(results: dict) -> list[str]:
    """T1's numbers and verdict, every run's geometry (early and final), and in how many seeds each small-init
    check passed."""
    attention = results["attention"]
    t1 = {None: "not testable", True: "passed", False: "did not pass"}[t1_passed(attention)]
    lines = [f"T1, first-layer attention at initialization, max |A_ij − 1/i| over 5 init seeds (pass: < "
             f"{T1_SMALL_INIT:g} at γ {SMALL_INIT}, > {T1_LARGE_INIT:g} at γ {LARGE_INIT}): "
             + ", ".join(f"γ {g}: {v:.2e}" for g, v in sorted(attention.items())) + f" — {t1}.",
             ""]
    rows = []
    for (m, g, s), gr in sorted(results["geometry"].items()):
        for when in ("early", "final"):
            e = gr[when]
            extra = ((f"{e['sigma_ratio']:.2f}", f"{e['reasoning_over_memory']:.2f}", f"{e['profile_pearson']:.3f}")
                     if "sigma_ratio" in e else ("—",) * 3)
            rows.append((m, g, s, f"{when} ({e['epoch']})", f"{e['memory_mean']:.3f} ({e['memory_std']:.3f})",
                         f"{e['reasoning_spearman_vs_distance']:.3f}", f"{e['pearson_vs_prediction']:.3f}",
                         f"{e['pc1_spearman']:.3f}", *extra))
    lines += table(["model", "γ", "seed", "when (epoch)", "memory block mean (std)", "reasoning Spearman vs distance",
                    "Pearson vs prediction", "PC1 rank corr. (abs.)", "W_V σ1/σ2", "r_rsn / r_mem", "profile Pearson"],
                   rows)
    lines += ["", *table([f"check at γ {SMALL_INIT}", "model", "passed in"],
                         [(name, m, held_in(per_seed)) for (name, m), per_seed in sorted(results["checks"].items())])]
    lines += ["", f"Pass thresholds (spec §5): memory block mean ≥ {T2_MEMORY_MEAN} with std ≤ {T2_MEMORY_STD}, "
              f"reasoning Spearman ≤ {T2_SPEARMAN}, Pearson vs prediction ≥ {T2_PEARSON} (T2, at the early "
              f"checkpoint); σ1/σ2 ≥ {T3_SIGMA_RATIO:g} and r_rsn ≥ {T3_REASONING_OVER_MEMORY:g}·r_mem (T3); profile "
              f"Pearson ≥ {T4_PROFILE_PEARSON} (T4) and PC1 |Spearman| vs token value over tokens 11..120 ≥ "
              f"{T4_PC1_SPEARMAN} (Fig. 5B)."]
    return lines


def fig8_lines(fig8: dict[tuple[str, int], dict]) -> list[str]:
    """E4's table per experiment, seed and group, and in how many seeds each of its two claims held."""
    if not fig8:
        return ["No Fig. 8 run has finished."]
    rows = []
    for (name, seed), r in sorted(fig8.items()):
        last = r["rows"].last_epoch()
        rows += [(name, seed, GROUP_NAMES[name][g["group"] - 1], epoch_cell(g["epoch_in_range"]),
                  _num(g["acc_then"]), epoch_cell(g["t50"]),
                  _num(r["rows"].at(last, "pooled", f"memory_group_{g['group']}_acc")),
                  _num(r["rows"].at(last, "pooled", f"memory_group_{g['group']}_in_range"))) for g in r["groups"]]
    lines = [*table(["experiment", "seed", "group", "epoch in-range ≥ 0.9", "accuracy then", "t50", "final accuracy",
                     "final in-range"], rows), ""]
    held = fig8_held(fig8)
    if "ranges" in held:
        groups = "; ".join(f"seed {s}: {sum(g['held'] for g in r['groups'])} of {len(r['groups'])}"
                           for (name, s), r in sorted(fig8.items()) if name == "ranges")
        lines.append("- (i) The in-range rate nears 1 while accuracy is still low (in-range ≥ 0.9 reached while "
                     f"accuracy < 0.5, in every group): {fig8_verdict(held['ranges'])} (groups: {groups}).")
    if "rules" in held:
        t50s = "; ".join(f"seed {s}: {epoch_cell(r['groups'][1]['t50'])} vs {epoch_cell(r['groups'][0]['t50'])}"
                         for (name, s), r in sorted(fig8.items()) if name == "rules")
        lines.append(f"- (ii) F_mem,2 (labels near the key) is learned much faster than F_mem,1 (criterion t50 "
                     f"ratio ≤ 0.5, a run that never reaches 0.5 counting as slower): {fig8_verdict(held['rules'])} "
                     f"(t50 of F_mem,2 vs F_mem,1: {t50s}).")
    return lines


def fig8_verdict(per_seed: dict[int, bool], bold: bool = True) -> str:
    """In how many seeds a Fig. 8 claim held; with one seed an observation ("showed"), never "held"."""
    mark = "**" if bold else ""
    if len(per_seed) == 1:
        (seed, ok), = per_seed.items()
        return f"{mark}{'showed' if ok else 'did not show'}{mark} (1 seed, seed {seed})"
    return f"{mark}held in {held_in(per_seed)}{mark}"


def fig8_held(fig8: dict[tuple[str, int], dict]) -> dict[str, dict[int, bool]]:
    """Per Fig. 8 experiment and seed, whether its claim held: (i) ``ranges``: in every group in-range reached 0.9
    while accuracy was below 0.5; (ii) ``rules``: F_mem,2's t50 at most half F_mem,1's (never counts as slower)."""
    out: dict[str, dict[int, bool]] = {}
    for (name, seed), r in fig8.items():
        if name == "ranges":
            ok = all(g["held"] for g in r["groups"])
        else:
            g1, g2 = (g["t50"] for g in r["groups"])
            ok = g2 is not None and (g1 is None or g2 <= 0.5 * g1)
        out.setdefault(name, {})[seed] = ok
    return out


def summary_markdown(profile: str, cfgs: list[RunConfig], results: dict, timing: str) -> str:
    lines = [*header("reasoning-bias", profile, sorted({c.profile for c in cfgs}), timing),
             "![curves](figures/curves.png)", "", "## Training order (E1)", "", *runs_table(results["runs"]), "",
             "Criteria (spec §6 E1; t50 = first epoch with accuracy ≥ 0.5):", "",
             *criteria_table(results["criteria"]), "", "## Geometry (T1–T4)", "", *geometry_lines(results)]
    if results["fig8"]:
        lines += ["", "## Label distribution (E4, Fig. 8)", "", "![label distribution](figures/label-distribution.png)",
                  "", *fig8_lines(results["fig8"])]
    return "\n".join(lines) + "\n"
