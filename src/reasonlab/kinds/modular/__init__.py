"""In-context modular arithmetic (modular-icl spec): everything of the kind in this folder, registered on import.

config, record (plateau exits in ``summary.json``), data (``ModularTask``), evaluate (phases, plateau exits, early
stopping, the words of its figures), figures (probe, phase and run figures), analysis and probes, phase (the phase
rule), results (plateau columns), card (plateau rows).
"""

from reasonlab.kinds.modular import card, evaluate, figures, phase, probes, results
from reasonlab.kinds.modular.config import ModularTaskConfig
from reasonlab.kinds.modular.data import ModularTask
from reasonlab.kinds.modular.record import ModularRecord
from reasonlab.registry import TaskKind, register_task

KIND = register_task(TaskKind(
    "modular", ModularTaskConfig, ModularTask, evaluate.modular_summary, best_of_run=evaluate.best_of_run,
    extras=evaluate.plateau_summary, record=ModularRecord, probes=probes, phase=phase.PHASE, columns=results.columns,
    main_columns=results.MAIN_COLUMNS, history=card.history, run_figure=figures.run_figure, palette=figures.PALETTE,
    axes=figures.AXES, words=evaluate.WORDS))
