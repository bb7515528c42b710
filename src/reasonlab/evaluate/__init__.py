"""Evaluation: task-independent scoring (``scoring``) and each task's summary of the scores."""

from __future__ import annotations

from reasonlab.config import ThresholdConfig
from reasonlab.evaluate.scoring import SetScore
from reasonlab.tasks.base import EvalSet


def summarize(kind: str, scores: dict[str, SetScore], sets: dict[str, EvalSet], th: ThresholdConfig) -> dict:
    """The task's report of one evaluation: ``pooled`` figures (logged), ``figures`` (progress), ``final``,
    ``label``, ``outcome`` and ``histograms`` (the run summary)."""
    from reasonlab.evaluate.mixture import mixture_summary, text_summary
    from reasonlab.evaluate.modular import modular_summary
    from reasonlab.evaluate.outcome import anchor_summary
    from reasonlab.evaluate.sequence import seq2seq_summary

    summaries = {"anchor": anchor_summary, "mixture": mixture_summary, "text_mixture": text_summary,
                 "modular": modular_summary, "seq2seq": seq2seq_summary}
    return summaries[kind](scores, sets, th)


def diverged_report(step: int) -> dict:
    """The report of a run stopped because its loss became NaN or inf at ``step``: labelled ``diverged``, with no
    final figures (the weights are not finite; the evaluations before it stay in the metrics)."""
    return {"label": "diverged", "outcome": {"label": "diverged", "step": step}, "final": {}, "histograms": {},
            "pooled": {}, "figures": {}}


def best_of_run(kind: str, rows: list[tuple], th: ThresholdConfig) -> dict:
    """Figures read over a run's whole history: early stopping for in-context modular arithmetic; steps to
    converge for the real benchmarks; otherwise the max over evaluations of each held-out accuracy (the anchor
    follow-up code's choice; secondary)."""
    if kind == "modular":
        from reasonlab.evaluate.modular import early_stopping

        return early_stopping(rows, th.fit)
    if kind == "seq2seq":
        from reasonlab.evaluate.sequence import convergence

        return convergence(rows, th.fit)
    best: dict[str, float] = {}
    for _, _, split, metric, value in rows:
        if split.startswith("heldout/"):
            key = f"{split}/{metric.removeprefix('acc_')}"
            best[key] = max(best.get(key, 0.0), value)
    return best
