"""The PrOntoQA + TinyStories study (``reasonlab reproduce prontoqa-tinystories``): the language-model half of the
reasoning-bias study (spec §4, E2–E3): one GPT-style model trained by next-token prediction on PrOntoQA-style text
mixed with TinyStories. This module holds its grids; ``study.py`` its class, ``measure.py`` the per-run
measurement, ``figures.py`` and ``report.py`` what it draws and writes, ``docs.py`` its sections of the docs,
``findings.py`` its rows of the results tables.

Measured per run: ΔL = (L_TinyStories − L_PrOntoQA) / L_PrOntoQA along training, its mean over 5–50 % of the
steps (ΔL̄) and its final value, and the mean pairwise cosine of the input embeddings of PrOntoQA-only and
TinyStories-only tokens at initialization (rebuilt from the seed), early (5 %), at every absolute step a run saved
its weights for (``train.snapshot_steps``) and at the end. Grids: γ with seeds (the main contrast) and, per
profile, single-seed arms (no LayerNorm, peak learning rates, GPT-2 BPE tokens, width).
"""

from __future__ import annotations

from reasonlab.config import RunConfig, raw_config
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
# each arm's stated cost: measured where its runs are committed (each run on 1 thread), else its steps
COSTS = {"cpu": "18 runs of 450 steps: 1.3 CPU-hours, 1 thread a run, CPU not recorded",
         "paper": "27 runs of 26,000 steps (702,000 in all)",
         "regime": "18 runs of 9,000 steps: 29.5 CPU-hours on AMD EPYC and Intel Xeon, 1 thread a run"}
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


def study_configs(profile: str, overrides: list[str] = ()) -> dict[str, list[RunConfig]]:
    return {group: expand(raw_config(None, f"lm-{profile}", [*overrides, *ARMS.get(group, [])], "mixture"), axes)
            for group, axes in GRIDS[profile].items()}
