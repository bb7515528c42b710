"""The anchor-composition task (anchor spec): everything of the kind in this folder, registered on import.

config (the ``task:`` section), record (its part of ``summary.json``), data (``AnchorTask``), evaluate (outcome
labels, escape points, best held-out accuracies, progress line, the words of its figures), cells (phase-diagram
cells), figures (run, phase and analysis figures), analysis and probes, phase (its phase diagram), results (results
columns), card (card rows), profiles/ (its built-in profiles).
"""

from reasonlab.kinds.anchor import card as cards
from reasonlab.kinds.anchor import evaluate, figures, phase, results
from reasonlab.kinds.anchor import probes as probing
from reasonlab.kinds.anchor.config import AnchorTaskConfig
from reasonlab.kinds.anchor.data import AnchorTask
from reasonlab.kinds.anchor.record import AnchorReport
from reasonlab.kinds.base import Kind
from reasonlab.registry import register_task


class Anchor(Kind):
    name = "anchor"
    config = AnchorTaskConfig
    task = AnchorTask
    Report = AnchorReport
    words = evaluate.WORDS
    palette = figures.PALETTE
    axes = figures.AXES
    main_columns = results.MAIN_COLUMNS
    phase_options = phase.OPTIONS
    probes = probing.PROBES
    probe_titles = probing.TITLES
    probe_options = probing.OPTIONS
    summarize = staticmethod(evaluate.anchor_summary)
    best_of_run = staticmethod(evaluate.max_heldout)
    extras = staticmethod(evaluate.escape_summary)
    progress = staticmethod(evaluate.progress)
    run_figure = staticmethod(figures.anchor_figure)
    columns = staticmethod(results.columns)
    card = staticmethod(cards.card)
    history = staticmethod(cards.history)
    qualify = staticmethod(evaluate.qualify)
    draw_phase = staticmethod(phase.draw)
    phase_name = staticmethod(phase.name)
    headline = staticmethod(probing.headline)

    def accuracy_curve(self, split: str, metric: str) -> str | None:
        """The pooled accuracies and each held-out pair's targets on its train keys."""
        return figures.accuracy_curve(split, metric) or super().accuracy_curve(split, metric)


KIND = register_task(Anchor)
