"""A kind that states only its name, config and task gets every other part from ``Kind``'s defaults: a summary of
each set's loss and accuracies, the accuracies on the progress line, the metrics figure, no extra summary fields,
results columns or history, the card's final figures, the label phase diagram's most common label, the pooled
accuracies over training; and a ``Report`` field is a results column without a ``columns`` of the kind's own."""

from __future__ import annotations

from reasonlab.config import ThresholdConfig
from reasonlab.evaluate.set_score import SetScore
from reasonlab.kinds.base import Kind
from reasonlab.record_schemas import KindReport
from reasonlab.vocabulary import labelled


class Bare(Kind):
    name = "bare"


def test_the_generic_summary_reads_each_set_and_target():
    scores = {"train": SetScore(4, {"designated": 3}, None, loss=0.5),
              "held/out": SetScore(2, {"designated": 1, "other": 2}, None)}
    report = Bare().summarize(scores, {}, ThresholdConfig())
    assert report.final == {"train_acc": 0.75, "train_loss": 0.5, "held_out_acc": 0.5, "held_out_other_acc": 1.0}
    assert report.figures == {"train_acc": 0.75, "held_out_acc": 0.5, "held_out_other_acc": 1.0}
    assert report.label == "trained" and report.pooled == report.final and report.select is None
    assert Bare().progress(report.figures) == ["train_acc 0.75", "held_out_acc 0.50", "held_out_other_acc 1.00"]


def test_the_other_defaults_add_nothing_of_a_kinds_own():
    bare = Bare()
    assert bare.best_of_run([], ThresholdConfig()) == {} and bare.extras([], None) == {} and bare.history({}) == []
    assert bare.columns({"final": {}, "outcome": {}}) == {} and bare.qualify("4-3") is None
    assert bare.classify([{"label": "a"}, {"label": "b"}, {"label": "b"}]) == "b"
    assert bare.accuracy_curve("pooled", "train_acc") == "train_acc" and bare.accuracy_curve("train", "loss") is None
    card = bare.card({"final": {"train_acc": 0.5}, "best": {"epoch": 3}})
    assert card == [(labelled("train_acc", "bare"), "0.500"), ("best: epoch", "3")]
    assert bare.profiles is None  # no profiles/ folder beside this module
    assert [ax.get_title() for ax in bare.run_figure([], {}).axes] == ["loss", "accuracy"]


def test_a_report_field_is_a_results_column():
    class Window(KindReport):
        window: dict[str, float | None] | None = None

    class Windowed(Bare):
        Report = Window

    summary = {"final": {}, "outcome": {}, "window": {"train": 0.25, "eval": None}}
    assert Windowed().columns(summary) == {"window.train": 0.25, "window.eval": None}
    assert Windowed().columns({"final": {}, "outcome": {}, "window": None}) == {}
