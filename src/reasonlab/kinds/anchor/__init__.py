"""The anchor-composition task (anchor spec): everything of the kind in this folder, registered on import.

config (the ``task:`` section), record (its part of ``summary.json``), data (``AnchorTask``), evaluate (outcome
labels, escape points, best held-out accuracies, progress line, the words of its figures), cells (phase-diagram
cells), figures (run, phase and analysis figures), analysis and probes, phase (the phase rule), results (results
columns), card (card rows).
"""

from reasonlab.kinds.anchor import card, evaluate, figures, phase, probes, results
from reasonlab.kinds.anchor.config import AnchorTaskConfig
from reasonlab.kinds.anchor.data import AnchorTask
from reasonlab.kinds.anchor.record import AnchorRecord
from reasonlab.registry import TaskKind, register_task

KIND = register_task(TaskKind(
    "anchor", AnchorTaskConfig, AnchorTask, evaluate.anchor_summary, best_of_run=evaluate.max_heldout,
    extras=evaluate.escape_summary, record=AnchorRecord, progress=evaluate.progress, probes=probes,
    run_figure=figures.anchor_figure, phase=phase.PHASE, columns=results.columns, main_columns=results.MAIN_COLUMNS,
    card=card.card, history=card.history, words=evaluate.WORDS, qualify=evaluate.qualify, palette=figures.PALETTE,
    axes=figures.AXES))
