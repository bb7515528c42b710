"""Parity of a few bits, as a task kind shaped like reasonlab's built-in ones (``reasonlab/kinds/<kind>/``): the
whole kind in this one folder, outside the package, registered on import. The worked example of
docs/extending.md; ``test_parity_kind.py`` drives every part of it through the command line.

config (the ``task:`` section), record (its ``Report``: its outcome in ``summary.json``), data (``ParityTask``),
evaluate (summary, best of run, progress line), figures (its run figure and its probe's), probes (``flips``, with
its option ``--bit``), phase (its phase diagram, with its option ``--split``), results (its results columns), card
(its card rows), profiles/ (its built-in profiles, ``parity-cpu`` and ``parity-wide``, registered with the kind).
"""

from reasonlab.kinds.base import Kind
from reasonlab.registry import register_task

from . import card as cards
from . import evaluate, figures, phase, results
from . import probes as probing
from .config import ParityTaskConfig
from .data import ParityTask
from .record import ParityReport


class Parity(Kind):
    name = "parity"
    config = ParityTaskConfig
    task = ParityTask
    Report = ParityReport
    words = figures.WORDS
    main_columns = results.MAIN_COLUMNS
    phase_options = phase.OPTIONS
    probes = probing.PROBES
    probe_titles = probing.TITLES
    probe_options = probing.OPTIONS
    summarize = staticmethod(evaluate.parity_summary)
    best_of_run = staticmethod(evaluate.best_of_run)
    progress = staticmethod(evaluate.progress)
    run_figure = staticmethod(figures.run_figure)
    columns = staticmethod(results.columns)
    card = staticmethod(cards.card)
    draw_phase = staticmethod(phase.draw)
    phase_name = staticmethod(phase.name)
    headline = staticmethod(probing.headline)


KIND = register_task(Parity, replace=True)
