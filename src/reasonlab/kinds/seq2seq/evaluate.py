"""The real benchmarks' summary of an evaluation and their best-of-run rule (anchor spec §8).

The label reads the headline set (``ood`` when the benchmark has one, else ``id``; the judgement for PrOntoQA):
``not-fitted`` while training exact match < ``fit``; then ``generalized`` (headline ≥ ``fit``), ``partial``
(≥ ``majority``) or ``memorized``. The true/false judgement is first measured above chance (2·acc − 1), so a
judgement at chance is ``memorized``, not ``partial``.

Layer: evaluate (by its file name).
"""

from __future__ import annotations

from reasonlab.config import ThresholdConfig
from reasonlab.evaluate.set_score import Evaluation, SetScore
from reasonlab.store import MetricRow
from reasonlab.tasks.base import EvalSet

# The kind's vocabulary (``reasonlab.vocabulary``): each figure's one label, its set and its measure (a category's
# figure, ``ood/prim:jump``, reads its set's words and the category as it is stored)
WORDS = {f"{name}_{measure}": f"{set_words}: {measure_words}"
         for name, set_words in (("train", "training rows"), ("id", "in-distribution test"),
                                 ("ood", "out-of-distribution test"))
         for measure, measure_words in (("exact", "exact match"), ("token", "token accuracy"), ("loss", "loss"),
                                        ("judgement", "true/false judgement"))}


def headline(sets: dict) -> tuple[str, str]:
    """(set, kind) that the label reads: the judgement on PrOntoQA, else exact match on ``ood`` or ``id``."""
    name = "ood" if "ood" in sets else "id"
    return name, "judgement" if "answer" in sets[name].info else "exact"


def seq2seq_summary(scores: dict[str, SetScore], sets: dict[str, EvalSet], th: ThresholdConfig) -> Evaluation:
    figures: dict[str, float] = {}
    categories: dict[str, dict[str, float]] = {}
    for name, s in scores.items():
        figures[f"{name}_exact"] = s.acc("exact")
        figures[f"{name}_token"] = s.acc("token")
        figures[f"{name}_loss"] = s.loss
        if "judgement" in s.correct:
            figures[f"{name}_judgement"] = s.acc("judgement")
        cats = {k: s.acc(k) for k in s.correct if k not in ("exact", "token", "judgement")}
        if cats:
            categories[name] = cats
    set_name, kind = headline(sets)
    main = figures[f"{set_name}_{kind}"]
    above_chance = max(0.0, 2 * main - 1) if kind == "judgement" else main  # a true/false answer: chance is 0.5
    if figures["train_exact"] < th.fit:
        label = "not-fitted"
    else:
        label = "generalized" if above_chance >= th.fit else "partial" if above_chance >= th.majority else \
            "memorized"
    shown = {k: v for k, v in figures.items() if k.endswith(("_exact", "_judgement"))}
    final = {**figures, **{f"{n}/{c}": v for n, cats in categories.items() for c, v in cats.items()}}
    return Evaluation(label, final, figures, shown, {"label": label, "headline": f"{set_name}_{kind}", "value": main})


def convergence(rows: list[MetricRow], fit: float = 0.9) -> dict[str, int | None]:
    """Steps to converge, read from the logged evaluations: the first step at which training exact match reaches
    ``fit`` (``fit_step``), and the first at which each test figure does (``<figure>_step``); None if never."""
    first: dict[str, int | None] = {}
    tracked = ("train_exact", "id_exact", "ood_exact", "id_judgement", "ood_judgement")
    for r in sorted(rows, key=lambda r: r.step):
        if r.split == "pooled" and r.metric in tracked:
            key = "fit_step" if r.metric == "train_exact" else f"{r.metric}_step"
            first.setdefault(key, None)
            if r.value >= fit and first[key] is None:
                first[key] = r.step
    return first


def best_of_run(rows: list[MetricRow], th: ThresholdConfig) -> dict[str, int | None]:
    """The task's best-of-run rule (registry): steps to converge."""
    return convergence(rows, th.fit)
