"""PrOntoQA text mixed with TinyStories for next-token training (reasoning-bias spec §4), registered on import:
config, data (``TextMixtureTask``), evaluate (per-source loss, ΔL, ΔL̄, the embedding cosines logged while
training, the words of its figures), record (ΔL̄ in ``summary.json``, and so the results columns), card (ΔL̄) and
profiles/ (its built-in profiles)."""

from reasonlab.kinds.base import Kind
from reasonlab.kinds.text_mixture import card, evaluate
from reasonlab.kinds.text_mixture.config import TextMixtureTaskConfig
from reasonlab.kinds.text_mixture.data import TextMixtureTask
from reasonlab.kinds.text_mixture.record import TextMixtureReport
from reasonlab.registry import register_task


class TextMixture(Kind):
    name = "text_mixture"
    config = TextMixtureTaskConfig
    task = TextMixtureTask
    Report = TextMixtureReport
    main_columns = ("delta_L_window.train",)
    words = evaluate.WORDS
    summarize = staticmethod(evaluate.text_summary)
    extras = staticmethod(evaluate.delta_l_summary)
    weights = staticmethod(evaluate.embedding_cosines)
    history = staticmethod(card.history)


KIND = register_task(TextMixture)
