"""One type for an anchor pair: every accepted spelling parses to it, and it prints one way per purpose."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402
from conftest import tiny_run  # noqa: E402
from pydantic import ValidationError  # noqa: E402

from reasonlab.kinds.anchor.cells import held_out_pair  # noqa: E402
from reasonlab.kinds.anchor.config import (
    AnchorTaskConfig,  # noqa: E402
    Pair,  # noqa: E402
)
from reasonlab.store import MetricRow  # noqa: E402
from reasonlab.vocabulary import label  # noqa: E402


@pytest.mark.parametrize("spelling", ["4-3", "4,3", " 4 , 3 ", "(4,3)", "(4, 3)", [4, 3], (4, 3), Pair(4, 3)])
def test_every_spelling_parses_to_one_pair(spelling):
    pair = Pair.parse(spelling)
    assert pair == Pair(4, 3) == (4, 3) and isinstance(pair, Pair)
    assert (pair.first, pair.second, pair.mirror) == (4, 3, Pair(3, 4))


@pytest.mark.parametrize("bad", ["4x3", "4", "4-3-2", "a,b", "", [4], [4, 3, 2], ["4", "3"], [True, 3]])
def test_what_is_not_a_pair_is_refused(bad):
    with pytest.raises(ValueError, match="pair of anchors"):
        Pair.parse(bad)


def test_one_spelling_per_purpose_and_round_trips():
    pair = Pair(4, 3)
    assert (pair.key, pair.caption, pair.config_key) == ("4-3", "(4,3)", "4,3")
    for text in (pair.key, pair.caption, pair.config_key):
        assert Pair.parse(text) == pair
    assert pair.eval_set() == "heldout/4-3/train_keys" and pair.eval_set("test_keys") == "heldout/4-3/test_keys"
    assert Pair.of_eval_set(pair.eval_set("test_keys")) == (pair, "test_keys")
    assert Pair.of_eval_set("test/4-3") is None and Pair.of_eval_set("heldout/x/train_keys") is None
    assert Pair.of_eval_set("pooled") is None


def test_a_config_takes_every_spelling_and_dumps_as_before():
    cfg = AnchorTaskConfig(held_out_pairs=["3-4", [4, 3]], non_inferential={"1-2": 4, (2, 1): 4, "3,4": -6})
    assert cfg.held_out_pairs == [Pair(3, 4), Pair(4, 3)] and all(isinstance(p, Pair) for p in cfg.held_out_pairs)
    assert set(cfg.non_inferential) == {"1,2", "2,1", "3,4"}  # one config spelling
    assert cfg.model_dump(mode="json")["held_out_pairs"] == [[3, 4], [4, 3]]
    assert type(cfg.model_dump()["held_out_pairs"][0]) is tuple  # a plain tuple, as before the type existed
    default = AnchorTaskConfig()
    assert default.held_out_pairs == [Pair(4, 3)] and default.model_dump(mode="json")["held_out_pairs"] == [[4, 3]]
    with pytest.raises(ValidationError, match="non_inferential key"):
        AnchorTaskConfig(non_inferential={"3x4": -6})


def test_the_run_id_does_not_depend_on_the_spelling():
    base = tiny_run()
    spelled = tiny_run(task={"held_out_pairs": ["4-3"]})
    listed = tiny_run(task={"held_out_pairs": [[4, 3]]})
    assert base.run_id() == spelled.run_id() == listed.run_id()


def test_captions_follow_the_configs_held_out_pair():
    """A run (or sweep) that holds out (3,4) is captioned (3,4), never the paper's (4,3)."""
    from reasonlab.kinds.anchor import KIND
    from reasonlab.kinds.anchor.figures import anchor_figure
    from reasonlab.kinds.base import Kind
    from reasonlab.plots.dynamics import accuracy_figure

    cfg = tiny_run(task={"held_out_pairs": [[3, 4]], "non_inferential": {}})
    pair = cfg.task.held_out_pairs[0]
    assert pair == Pair(3, 4)
    rows = [MetricRow(e, 10 * e, s, m, v) for e in (1, 2) for s, m, v in (
        ("train", "loss", 1.0 / e), ("pooled", "seen_test_acc", 0.5 * e),
        (pair.eval_set(), "acc_inferential", 0.1 * e), (pair.eval_set(), "acc_symmetric", 0.2))]
    summary = {"histograms": {pair.eval_set(): [1] * 10}}
    fig = anchor_figure(rows, summary)
    labels = [t.get_text() for ax in fig.axes if ax.get_legend() for t in ax.get_legend().get_texts()]
    titles = [ax.get_title() for ax in fig.axes]
    assert "held-out (3,4) · train keys · inferential (heldout/3-4/train_keys/inferential)" in labels
    assert "(3,4) answers at the end" in titles
    assert not any("(4,3)" in text for text in labels + titles)
    curves = [t.get_text() for t in accuracy_figure(rows, [], KIND.accuracy_curve).axes[0].get_legend().get_texts()]
    assert "heldout/3-4/train_keys/inferential" in curves and "seen_test_acc" in curves
    generic = accuracy_figure(rows, [], Kind().accuracy_curve)
    assert all("held-out" not in t.get_text() for t in generic.axes[0].get_legend().get_texts())
    assert held_out_pair([{"task.held_out_pairs": "[[3, 4]]"}]) == Pair(3, 4)
    assert label("heldout/3-4/train_keys/inferential") == "held-out (3,4) · train keys · inferential"


def test_a_phase_diagram_reads_and_titles_the_runs_pair(tmp_path, monkeypatch):
    from reasonlab.kinds.anchor import figures as phase_plots
    from reasonlab.kinds.anchor.phase import draw

    rows = [{"init.gamma": g, "model.depth": 2, "seed": 1, "train.base_lr": 1e-5, "train.lr_multiplier": 10,
             "train.weight_decay": 0.01, "outcome.3-4.inferential": 0.9, "outcome.3-4.symmetric": 0.0,
             "final.seen_test_acc": 0.99, "status": "finished", "task.held_out_pairs": "[[3, 4]]"} for g in (0.5, 0.8)]
    titles = []
    monkeypatch.setattr(phase_plots, "save_figure",
                        lambda fig, out: titles.extend(ax.get_title() for ax in fig.axes) or [out])
    draw(rows, tmp_path / "phase", "init.gamma", "model.depth", {}, "")
    assert "(3,4) inferential accuracy" in titles and not any("4,3" in t or "4-3" in t for t in titles)
    with pytest.raises(Exception, match="first held-out pairs are 3-4, 4-3"):
        held_out_pair([*rows, {**rows[0], "task.held_out_pairs": "[[4, 3]]"}])
