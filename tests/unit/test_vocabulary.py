"""One name per number (``reasonlab.vocabulary``): on a committed run of each task kind, every surface that names a
figure of the run's summary names it by the kind's one label with its stored name beside it (the run card, the
report, the run figure's legend) or by the stored name (the progress line, the results columns). Nothing trains: the
runs are read from ``results/``."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

from reasonlab.evaluate import progress_parts
from reasonlab.plots.run import run_figure
from reasonlab.registry import task_kinds
from reasonlab.report.card import run_card
from reasonlab.report.html import run_section
from reasonlab.sweep.results import run_row
from reasonlab.vocabulary import key, label, labelled

RESULTS = Path(__file__).resolve().parents[2] / "results"
KINDS = ("anchor", "mixture", "modular", "seq2seq", "text_mixture")


@cache
def committed_run(kind: str) -> tuple[Path, dict]:
    """The first committed run of ``kind`` under results/ (its directory, its summary)."""
    for path in sorted(RESULTS.glob("**/summary.json")):
        summary = json.loads(path.read_text())
        if summary.get("config", {}).get("task", {}).get("kind") == kind:
            return path.parent, summary
    raise AssertionError(f"no committed run of kind {kind!r} under results/")


def _named(texts: list[str], names: list[str]) -> dict[str, str]:
    """The texts among ``texts`` that name a stored figure in parentheses, by that name."""
    return {name: text for text in texts for name in names if text.endswith(f"({name})")}


def _figures(summary: dict) -> list[str]:
    return [k for k, v in summary["final"].items() if isinstance(v, int | float)]


def test_labels_come_from_the_kind_that_declares_them():
    assert label("reasoning_test_acc", "mixture") == "rule on unseen tuples"
    assert labelled("reasoning_test_acc", "mixture") == "rule on unseen tuples (reasoning_test_acc)"
    assert label("heldout/4-3/test_keys/inferential", "anchor") == "held-out (4,3) · test keys · inferential"
    assert labelled("memory_group_1_acc", "mixture") == "memory_group_1_acc"  # no word declared: its own label
    assert key(["memory_acc", "memory_group_1_acc", "memory_acc"], "mixture") == "memory = memory_acc"
    assert label("ood_exact", "seq2seq") == "out-of-distribution test: exact match"
    for kind in KINDS:  # every built-in kind words the figures its summary shows
        assert task_kinds()[kind].words, kind


@pytest.mark.parametrize("kind", KINDS)
def test_every_surface_names_a_figure_by_its_kinds_label_or_its_stored_name(kind):
    run_dir, summary = committed_run(kind)
    names = _figures(summary)
    declared = [n for n in names if label(n, kind) != n]
    assert declared, f"{kind}: no figure of {run_dir} has a label"

    card = run_card(run_dir)
    keys = [str(text) for text in card.columns[0]._cells]
    shown = _named(keys, names)
    assert shown and all(text == labelled(name, kind) for name, text in shown.items()), shown

    report = dict(run_section(run_dir)["figures"])
    assert set(report) == {labelled(n, kind) for n in names if isinstance(summary["final"][n], float)}

    fig = run_figure(run_dir)
    legends = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    plt.close(fig)
    drawn = _named(legends, [*names, *(n.rsplit("/", 1)[0] for n in names)])
    assert all(text == labelled(name, kind) for name, text in drawn.items()), drawn
    if kind != "seq2seq":  # the generic figure draws accuracies; a benchmark logs exact match, not accuracy
        assert drawn, legends

    parts = progress_parts(kind, {n: summary["final"][n] for n in names})
    assert parts and all(part.rsplit(" ", 1)[0] in names for part in parts), parts

    row = run_row(summary)
    assert all(f"final.{n.replace('/', '.')}" in row for n in names)


def test_an_anchor_cards_held_out_rows_name_the_results_columns_they_show():
    """A held-out pair's row on the card (its answers' shares at the end) names the columns results and SQL give
    the same numbers under, ``outcome.4-3.inferential`` and its siblings."""
    from reasonlab.kinds.anchor.card import card

    _, summary = committed_run("anchor")
    rows = dict(card(summary))
    for pair, outcome in summary["outcome"]["pairs"].items():
        assert f"inferential {outcome['inferential']:.3f}" in rows[f"held-out {pair} (outcome.{pair}.*)"]
