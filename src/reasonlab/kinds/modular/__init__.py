"""In-context modular arithmetic (modular-icl spec): everything of the kind in this folder, registered on import.

config, record (plateau exits in ``summary.json``), data (``ModularTask``), evaluate (phases, plateau exits, early
stopping, the words of its figures), figures (probe, phase and run figures), analysis and probes, phase (its phase
diagram), results (plateau columns), card (plateau rows), profiles/ (its built-in profiles).
"""

from reasonlab.kinds.base import Kind
from reasonlab.kinds.modular import card as cards
from reasonlab.kinds.modular import evaluate, figures, phase, results
from reasonlab.kinds.modular import probes as probing
from reasonlab.kinds.modular.config import ModularTaskConfig
from reasonlab.kinds.modular.data import ModularTask
from reasonlab.kinds.modular.record import ModularReport
from reasonlab.registry import register_task


class Modular(Kind):
    name = "modular"
    config = ModularTaskConfig
    task = ModularTask
    Report = ModularReport
    palette = figures.PALETTE
    words = evaluate.WORDS
    axes = figures.AXES
    main_columns = results.MAIN_COLUMNS
    phase_axes = phase.AXES
    phase_options = phase.OPTIONS
    probes = probing.PROBES
    probe_titles = probing.TITLES
    probe_figures = probing.MAIN_FIGURE
    probe_options = probing.OPTIONS
    summarize = staticmethod(evaluate.modular_summary)
    best_of_run = staticmethod(evaluate.best_of_run)
    extras = staticmethod(evaluate.plateau_summary)
    run_figure = staticmethod(figures.run_figure)
    columns = staticmethod(results.columns)
    history = staticmethod(cards.history)
    draw_phase = staticmethod(phase.draw)
    phase_name = staticmethod(phase.name)
    headline = staticmethod(probing.headline)

    def accuracy_curve(self, split: str, metric: str) -> str | None:
        """The pooled accuracies and last-shot accuracies."""
        shot = metric if split == "pooled" and "shot" in metric else None
        return shot or super().accuracy_curve(split, metric)


KIND = register_task(Modular)
