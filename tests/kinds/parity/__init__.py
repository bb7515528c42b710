"""Parity of a few bits, as a task kind shaped like reasonlab's built-in ones (``reasonlab/kinds/<kind>/``): the
whole kind in this one folder, outside the package, registered on import. The worked example of
docs/extending.md; ``test_parity_kind.py`` drives every part of it through the command line.

config (the ``task:`` section), data (``ParityTask``), evaluate (summary, best of run, progress line), figures
(its run figure and its probe's), probes (``flips``, with its option ``--bit``), phase (its rule, with its option
``--split``), results (its results columns), card (its card rows), profiles/ (its built-in profiles: ``--family
parity --profile cpu``).
"""

from pathlib import Path

from reasonlab.registry import TaskKind, register_profiles, register_task

from . import card, evaluate, figures, phase, probes, results
from .config import ParityTaskConfig
from .data import ParityTask

KIND = register_task(TaskKind(
    "parity", ParityTaskConfig, ParityTask, evaluate.parity_summary, best_of_run=evaluate.best_of_run,
    progress=evaluate.progress, probes=probes, run_figure=figures.run_figure, phase=phase.PHASE,
    columns=results.columns, main_columns=results.MAIN_COLUMNS, card=card.card, words=figures.WORDS), replace=True)
register_profiles("parity", Path(__file__).parent / "profiles")
