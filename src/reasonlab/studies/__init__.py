"""The built-in studies, registered on import: each a ``reasonlab.Study`` (``studies/base.py``) with its arms.

Layer: studies; compositions over the kinds and the generic floors (never the trainer).
"""

from reasonlab.registry import register_study
from reasonlab.studies import benchmarks
from reasonlab.studies.anchor import study as anchor
from reasonlab.studies.modular import phase as modular_phase
from reasonlab.studies.prontoqa_tinystories.study import ProntoqaTinystories
from reasonlab.studies.reasoning_bias.study import ReasoningBias

for _study in (anchor.PHASE, anchor.TRAJECTORY, anchor.COMPLEXITY, anchor.LR_WD, ReasoningBias, ProntoqaTinystories,
               modular_phase.ModularPhase, *(benchmarks.STUDIES[b] for b in ("scan", "cogs", "addition", "prontoqa"))):
    register_study(_study)
