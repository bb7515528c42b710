"""The studies' committed sweeps and docs readers that the results tables read (each study renders its own sections)."""

from __future__ import annotations

from docgen.common import REPO
from reasonlab.studies import benchmarks, modular_phase
from reasonlab.studies.anchor import study as anchor
from reasonlab.studies.anchor.docs import PHASE_ARMS, complexity_sweep, lr_wd_sweep, phase_sweep
from reasonlab.studies.benchmarks.docs import committed
from reasonlab.studies.modular.docs import ModularDocs
from reasonlab.studies.modular.route_r3 import GROK, RouteR3  # noqa: F401 - GROK shared with the tables
from reasonlab.studies.prontoqa_tinystories.docs import LmDocs
from reasonlab.studies.reasoning_bias.docs import RbDocs

PHASE, WIDE, WIDE_WD = (phase_sweep(REPO, anchor.PHASE, arm) for arm in PHASE_ARMS)
COMPLEXITY, LR_WD = complexity_sweep(REPO, anchor.COMPLEXITY), lr_wd_sweep(REPO, anchor.LR_WD)
CPU_SWEEPS = (PHASE, COMPLEXITY, LR_WD, WIDE, WIDE_WD)
ROUTE_R3 = RouteR3(ModularDocs(REPO, modular_phase.STUDY))  # the modular study's own sections
MODULAR_PHASE = ROUTE_R3.docs.sweep
LM_DOCS = LmDocs(REPO)  # the PrOntoQA + TinyStories study's own sections
RB_DOCS = RbDocs(REPO)  # the reasoning-bias study's own sections
BENCHMARKS = {name: committed(study, REPO) for name, study in benchmarks.STUDIES.items()}  # their own sections
