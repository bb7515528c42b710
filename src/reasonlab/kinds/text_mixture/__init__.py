"""PrOntoQA text mixed with TinyStories for next-token training (reasoning-bias spec §4), registered on import:
config, data (``TextMixtureTask``), evaluate (per-source loss, ΔL, ΔL̄, the embedding cosines logged while
training, the words of its figures), record (ΔL̄ in ``summary.json``), results and card (ΔL̄)."""

from reasonlab.kinds.text_mixture import card, evaluate, results
from reasonlab.kinds.text_mixture.config import TextMixtureTaskConfig
from reasonlab.kinds.text_mixture.data import TextMixtureTask
from reasonlab.kinds.text_mixture.record import TextMixtureRecord
from reasonlab.registry import TaskKind, register_task

KIND = register_task(TaskKind(
    "text_mixture", TextMixtureTaskConfig, TextMixtureTask, evaluate.text_summary, extras=evaluate.delta_l_summary,
    record=TextMixtureRecord, weights=evaluate.embedding_cosines,
    columns=results.columns, main_columns=results.MAIN_COLUMNS, history=card.history, words=evaluate.WORDS))
