"""Evaluation: task-independent scoring (``scoring``) and each task's summary of the scores."""

from __future__ import annotations

from reasonlab.config import ThresholdConfig
from reasonlab.evaluate.scoring import SetScore
from reasonlab.tasks.base import EvalSet


def summarize(kind: str, scores: dict[str, SetScore], sets: dict[str, EvalSet], th: ThresholdConfig) -> dict:
    """The task's report of one evaluation: ``pooled`` figures (logged), ``figures`` (progress), ``final``,
    ``label``, ``outcome`` and ``histograms`` (the run summary)."""
    from reasonlab.evaluate.mixture import mixture_summary, text_summary
    from reasonlab.evaluate.outcome import anchor_summary

    summaries = {"anchor": anchor_summary, "mixture": mixture_summary, "text_mixture": text_summary}
    return summaries[kind](scores, sets, th)
