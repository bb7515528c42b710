"""Reasoning and memory anchors in one training set (reasoning-bias spec §2), registered on import: config, data
(``MixtureTask``), evaluate (its summary, the words of its figures and the study's criteria), figures (loss and
accuracy per source) and profiles/ (its built-in profiles)."""

from reasonlab.kinds.base import Kind
from reasonlab.kinds.mixture import evaluate, figures
from reasonlab.kinds.mixture.config import MixtureTaskConfig
from reasonlab.kinds.mixture.data import MixtureTask
from reasonlab.registry import register_task


class Mixture(Kind):
    name = "mixture"
    config = MixtureTaskConfig
    task = MixtureTask
    palette = figures.PALETTE
    words = evaluate.WORDS
    summarize = staticmethod(evaluate.mixture_summary)
    run_figure = staticmethod(figures.mixture_figure)


KIND = register_task(Mixture)
