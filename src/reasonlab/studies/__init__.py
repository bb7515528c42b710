"""The built-in studies, registered on import (``register_study`` with their real grids and ``reproduce``).

Layer: studies; compositions over the kinds and the generic floors (never the trainer).
"""

from reasonlab.registry import Study, register_study
from reasonlab.studies import (
    anchor_complexity,
    anchor_lr_wd,
    anchor_phase,
    anchor_trajectory,
    benchmarks,
    modular_phase,
    prontoqa_tinystories,
    reasoning_bias,
)

for _study in (
    Study("anchor-phase", anchor_phase.GRIDS, anchor_phase.reproduce, "γ × depth phase diagram of the anchor task "
          "(paper Fig. 2a,b)", ("phase",), "anchor"),
    Study("anchor-trajectory", anchor_trajectory.GRIDS, anchor_trajectory.reproduce,
          "two paper-scale anchor runs beside the authors' logged trajectory", ("trajectory",), "anchor",
          runs_on_cpu=True),
    Study("anchor-complexity", anchor_complexity.GRIDS, anchor_complexity.reproduce,
          "anchor outcomes as more pairs get symmetric non-inferential targets", ("complexity",), "anchor"),
    Study("anchor-lr-wd", anchor_lr_wd.GRIDS, anchor_lr_wd.reproduce,
          "anchor outcomes over learning rate × weight decay", ("lr-wd",), "anchor"),
    Study("reasoning-bias", reasoning_bias.GRIDS, reasoning_bias.reproduce,
          "reasoning vs memory anchors in one training set, transformer and Emb-MLP",
          ("label-distribution", "curves", "cosine-*", "pca-*", "profile-*"), "mixture"),
    Study("prontoqa-tinystories", prontoqa_tinystories.GRIDS, prontoqa_tinystories.reproduce,
          "PrOntoQA reasoning text mixed with TinyStories, next-token training", ("delta-l", "cosine"), "mixture"),
    Study("modular-phase", modular_phase.GRIDS, modular_phase.reproduce,
          "in-context modular arithmetic: the four phases over tasks × data fraction", ("phase-L*", "shots"),
          "modular"),
    *(Study(b, benchmarks.STUDIES[b].GRIDS, benchmarks.STUDIES[b].reproduce, f"{b}: initialization and weight "
            "decay over nested training sizes", (b,), b) for b in ("scan", "cogs", "addition", "prontoqa")),
):
    register_study(_study)
