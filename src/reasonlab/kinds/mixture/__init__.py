"""Reasoning and memory anchors in one training set (reasoning-bias spec §2), registered on import: config, data
(``MixtureTask``), evaluate (its summary, the words of its figures and the study's criteria) and figures (loss and
accuracy per source)."""

from reasonlab.kinds.mixture import evaluate, figures
from reasonlab.kinds.mixture.config import MixtureTaskConfig
from reasonlab.kinds.mixture.data import MixtureTask
from reasonlab.registry import TaskKind, register_task

KIND = register_task(TaskKind("mixture", MixtureTaskConfig, MixtureTask, evaluate.mixture_summary,
                              run_figure=figures.mixture_figure, palette=figures.PALETTE, words=evaluate.WORDS))
