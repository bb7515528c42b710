"""The reasoning-bias study: its theory checks per seed, ``reproduce`` end to end on a tiny override, and the
verdict its docs give the spec-lr runs."""

from __future__ import annotations

import re

import pytest
from conftest import reproduce_tiny


def test_theory_checks_apply_the_spec_thresholds_per_seed():
    """T2 needs all three thresholds at the early checkpoint; T3 and T4 apply to the transformer only; a check is
    counted per seed, and γ 0.3 runs are not checked."""
    from reasonlab.studies.reasoning_bias import criteria_table, theory_checks

    def entry(mean=0.9, std=0.05, spearman=-0.9, pearson=0.8, pc1=0.95, **transformer):
        return {"memory_mean": mean, "memory_std": std, "reasoning_spearman_vs_distance": spearman,
                "pearson_vs_prediction": pearson, "pc1_spearman": pc1, **transformer}

    t = {"sigma_ratio": 3.0, "reasoning_over_memory": 4.0, "profile_pearson": 0.8}
    geometry = {("emb_mlp", 0.8, 1): {"early": entry(), "final": entry()},
                ("emb_mlp", 0.8, 2): {"early": entry(std=0.11), "final": entry(pc1=0.5)},
                ("emb_mlp", 0.3, 3): {"early": entry(mean=0.0), "final": entry()},  # large init: not checked
                ("transformer", 0.8, 1): {"early": entry(**t), "final": entry(**{**t, "reasoning_over_memory": 2.9})}}
    checks = theory_checks(geometry)
    assert checks[("T2 (early)", "emb_mlp")] == {1: True, 2: False}
    assert checks[("Fig. 5B PC1 (end)", "emb_mlp")] == {1: True, 2: False}
    assert checks[("T3 (end)", "transformer")] == {1: False}
    assert checks[("T4 (early)", "transformer")] == checks[("T4 (end)", "transformer")] == {1: True}
    assert ("T3 (end)", "emb_mlp") not in checks and all(3 not in per_seed for per_seed in checks.values())

    def crit(first: bool) -> dict:
        return {"t50_ratio_small_init": 0.4 if first else 0.8, "t50_ratio_small_init_bound": False,
                "t50_ratio_large_init": 1.0, "t50_ratio_large_init_bound": False, "small_init_reasons_first": first,
                "small_init_generalizes": True, "large_init_no_bias": True, "large_init_generalizes_less": False}

    lines = criteria_table({("emb_mlp", 1): crit(True), ("emb_mlp", 2): crit(False), ("emb_mlp", 3): crit(True)})
    assert "| emb_mlp | small init reasons first (t50 ratio ≤ 0.5) | 2 of 3 seeds (1, 3) | 1: 0.400, 2: 0.800, " \
           "3: 0.400 |" in lines
    assert "| emb_mlp | large init generalizes ≥ 0.5 less | 0 of 3 seeds | 1: no, 2: no, 3: no |" in lines


@pytest.mark.slow
def test_reproduce_reasoning_bias_end_to_end_on_a_tiny_override(tmp_path):
    tiny = ["task.n_samples=2000", "model.d_model=40", "model.d_ff=48", "train.epochs=4", "train.warmup_epochs=1",
            "train.batch_size=128", "train.checkpoint_every=1", "train.eval_max_per_set=500"]
    reproduce_tiny("reasoning-bias", tmp_path, tiny, seeds="1,2")
    sweep_dir = tmp_path / "reasoning-bias-cpu"
    summary = (sweep_dir / "summary.md").read_text()
    assert "| transformer | 0.8 | 1 |" in summary and "| emb_mlp | 0.3 | 2 |" in summary
    assert "T1, first-layer attention" in summary and "held" in summary
    assert "## Label distribution (E4, Fig. 8)" in summary  # the two Fig. 8 runs at each seed
    assert "| ranges | 1 | labels in [30, 109] |" in summary and "| rules | 2 | F_mem,2: labels in z ± Σa |" in summary
    assert re.search(r"F_mem,2 \(labels near the key\) is learned much faster .*\*\*held in \d of 2 seeds", summary)
    for name in ("curves", "cosine-transformer-g0.8", "cosine-emb_mlp-g0.3", "profile-transformer-g0.8",
                 "pca-emb_mlp-g0.8", "label-distribution"):
        assert (sweep_dir / "figures" / f"{name}.png").is_file(), name

    # the geometry is kept with each run it was read from, so the summary comes back without checkpoints (which
    # are never committed): the same numbers, the figures drawn again
    import shutil
    kept = sorted(sweep_dir.glob("*/analysis/geometry/geometry.json"))
    assert len(kept) == 8  # every mixture run: two models × two γ × two seeds
    for run in sweep_dir.iterdir():
        shutil.rmtree(run / "checkpoints", ignore_errors=True)
    shutil.rmtree(sweep_dir / "figures")
    reproduce_tiny("reasoning-bias", tmp_path, tiny, seeds="1,2")
    body = summary.split("\n## ", 1)[1]  # past the header and its timing line
    assert (sweep_dir / "summary.md").read_text().split("\n## ", 1)[1] == body
    assert (sweep_dir / "figures" / "cosine-transformer-g0.8.png").is_file()


def test_the_spec_lr_verdict_waits_for_seeds_that_could_still_decide_it():
    """The spec-lr mixture's verdict asks every E1 criterion in ≥ 2 of 3 seeds: met → reproduced; a criterion that
    cannot reach 2 with the seeds still running → not reproduced, named; otherwise pending, never a result."""
    from reasonlab.studies.reasoning_bias import docs as rb

    keys = list(rb.reasoning_bias.CRITERIA)
    every = {k: [True, True] for k in keys}
    assert rb.spec_lr_verdict(every, finished=2) == "**reproduced**"
    one_fails = {**every, keys[2]: [False]}
    assert rb.spec_lr_verdict({k: v[:1] for k, v in one_fails.items()}, finished=1).startswith("pending")
    failed = rb.spec_lr_verdict({**every, keys[2]: [False, False]}, finished=2)
    assert failed.startswith("**not reproduced**") and "large init shows no bias" in failed
    assert rb.spec_lr_verdict({**every, keys[3]: [True, False]}, finished=2).startswith("pending")
    assert rb.spec_lr_verdict({k: [] for k in keys}, finished=0).startswith("pending")
