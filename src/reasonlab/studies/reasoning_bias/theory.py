"""The theory the reasoning-bias study checks its runs against (spec §4–§5): the embedding and attention geometry
of a run — anchor cosine matrices against the label-distribution prediction (T2), first-layer attention against
1/i at initialization (T1), W_V's alignment (T3), the theoretical embedding profile (T4) — kept beside the run so
that no figure needs its checkpoints, and the pass thresholds of each check."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from reasonlab.analysis import geometry as geo
from reasonlab.analysis.loading import load_at_fraction
from reasonlab.build import build_model
from reasonlab.config import RunConfig
from reasonlab.files import read_with_arrays, write_with_arrays
from reasonlab.tasks.base import TaskData

GAMMAS = (0.3, 0.8)
LARGE_INIT, SMALL_INIT = min(GAMMAS), max(GAMMAS)  # a larger γ is a smaller initialization
EARLY = 0.05  # "early" = this fraction of training (spec §4)


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


def save_geometry(run_dir: Path, geometry: dict) -> None:
    """Keep a run's geometry (``geometry_of``) beside its record: numbers in JSON, matrices in npz."""
    (run_dir / GEOMETRY).mkdir(parents=True, exist_ok=True)
    write_with_arrays(run_dir / GEOMETRY / "geometry.json", geometry)


def load_geometry(run_dir: Path) -> dict | None:
    """A run's kept geometry, or None when it has none."""
    if not (run_dir / GEOMETRY / "geometry.json").is_file():
        return None
    return read_with_arrays(run_dir / GEOMETRY / "geometry.json", "geometry",
                            "delete the folder and rerun the study's reproduce command while the run's checkpoints "
                            "exist")


def attention_at_init(cfg: RunConfig, data: TaskData, n: int = 256, inits: int = 5) -> float:
    """T1: max |A_ij − 1/i| of the first layer at initialization over ``inits`` init seeds."""
    worst = 0.0
    for s in range(inits):
        model = build_model(cfg.model_copy(update={"seed": cfg.seed + 1000 * s}), data)
        worst = max(worst, geo.attention_deviation(model, data.train_inputs[:n]))
    return worst


# Pass thresholds of the theory checks (spec §5, its starting values).
T1_SMALL_INIT, T1_LARGE_INIT = 1e-3, 0.05  # max |A_ij − 1/i| below the first at small init, above the second at large
T2_MEMORY_MEAN, T2_MEMORY_STD, T2_SPEARMAN, T2_PEARSON = 0.8, 0.1, -0.8, 0.7
T3_SIGMA_RATIO, T3_REASONING_OVER_MEMORY = 2.0, 3.0
T4_PROFILE_PEARSON, T4_PC1_SPEARMAN = 0.7, 0.9


def theory_checks(geometry: dict[tuple[str, float, int], dict]) -> dict[tuple[str, str], dict[int, bool]]:
    """(check, model) → seed → passed, for every small-init run with geometry: T2 at the early checkpoint (its four
    thresholds), and for the transformer T3 at the end and T4 (profile) early and at the end; Fig. 5B (PC1) too."""
    out: dict[tuple[str, str], dict[int, bool]] = {}
    for (m, g, s), gr in sorted(geometry.items()):
        if g != SMALL_INIT:
            continue
        early, final = gr["early"], gr["final"]
        checks = {"T2 (early)": early["memory_mean"] >= T2_MEMORY_MEAN and early["memory_std"] <= T2_MEMORY_STD
                  and early["reasoning_spearman_vs_distance"] <= T2_SPEARMAN
                  and early["pearson_vs_prediction"] >= T2_PEARSON,
                  "Fig. 5B PC1 (end)": final["pc1_spearman"] >= T4_PC1_SPEARMAN}
        if "sigma_ratio" in final:
            checks["T3 (end)"] = (final["sigma_ratio"] >= T3_SIGMA_RATIO
                                  and final["reasoning_over_memory"] >= T3_REASONING_OVER_MEMORY)
            for when in ("early", "final"):
                checks[f"T4 ({'end' if when == 'final' else when})"] = (gr[when]["profile_pearson"]
                                                                       >= T4_PROFILE_PEARSON)
        for name, passed in checks.items():
            out.setdefault((name, m), {})[s] = bool(passed)
    return out


def t1_passed(attention: dict[float, float]) -> bool | None:
    """T1 on the attention at initialization per γ (``measure``'s): None without both γ."""
    if SMALL_INIT not in attention or LARGE_INIT not in attention:
        return None
    return attention[SMALL_INIT] < T1_SMALL_INIT and attention[LARGE_INIT] > T1_LARGE_INIT
