"""Outcome labels, offset histograms and scoring (spec §5)."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from reasonlab.config import ThresholdConfig
from reasonlab.evaluate.scoring import offset_histogram, score_sets
from reasonlab.evaluate.set_score import SetScore, histogram_bins, pooled
from reasonlab.kinds.anchor.evaluate import label_pair, outcome_dict, run_label
from reasonlab.tasks.base import EvalSet

TH = ThresholdConfig()


def score(n: int = 100, inf: int = 0, sym: int | None = 0, hist: list[int] | None = None) -> SetScore:
    correct = {"inferential": inf}
    if sym is not None:
        correct["symmetric"] = sym
    return SetScore(n, correct, hist)


def hist_with(mass: dict[int, int]) -> list[int]:
    deltas = torch.tensor([d for d, c in mass.items() for _ in range(c)], dtype=torch.long)
    return offset_histogram(deltas)


# ---- offset histogram --------------------------------------------------------------------------------------
def test_histogram_bins():
    bins = histogram_bins()
    assert len(bins) == 43
    assert bins[0] == "<-20" and bins[-1] == ">20"
    assert bins[1] == "-20" and bins[21] == "0" and bins[41] == "20"


def test_offset_histogram_binning():
    bins = histogram_bins()
    h = offset_histogram(torch.tensor([4, 4, 0, 50, -21, -20, 20, 21, -100]))
    assert len(h) == len(bins) == 43
    assert sum(h) == 9
    count = dict(zip(bins, h, strict=True))
    assert count["4"] == 2
    assert count["0"] == 1
    assert count[">20"] == 2  # 50 and 21
    assert count["<-20"] == 2  # -21 and -100
    assert count["-20"] == 1 and count["20"] == 1
    assert count["5"] == 0 and count["3"] == 0


def test_offset_histogram_empty():
    h = offset_histogram(torch.tensor([], dtype=torch.long))
    assert h == [0] * 43


# ---- one pair ----------------------------------------------------------------------------------------------
def test_not_fitted_takes_precedence():
    out = label_pair(0.89, score(inf=100, sym=0), "defined", TH)
    assert out.label == "not-fitted"
    assert out.clean is False
    assert out.inferential == 1.0


def test_fit_threshold_is_inclusive():
    assert label_pair(0.9, score(inf=60), "defined", TH).label == "inferential"


def test_inferential():
    out = label_pair(0.95, score(inf=51, sym=30), "defined", TH)
    assert out.label == "inferential" and out.clean is False
    assert out.inferential == pytest.approx(0.51)
    assert out.symmetric == pytest.approx(0.30)
    assert out.other == pytest.approx(0.19)
    assert out.modal_delta is None


def test_majority_is_strict():
    assert label_pair(1.0, score(inf=50, sym=50), "defined", TH).label == "other"


def test_symmetric_and_clean():
    out = label_pair(0.99, score(inf=5, sym=90), "defined", TH)
    assert out.label == "symmetric" and out.clean is True
    out = label_pair(0.99, score(inf=5, sym=89), "defined", TH)
    assert out.label == "symmetric" and out.clean is False


def test_inferential_clean_at_threshold():
    assert label_pair(0.99, score(inf=90, sym=0), "defined", TH).clean is True
    assert label_pair(0.99, score(inf=89, sym=0), "defined", TH).clean is False


def test_other_records_modal_delta():
    hist = hist_with({0: 20, 4: 20, -3: 45, 7: 15})
    out = label_pair(0.95, score(inf=20, sym=20, hist=hist), "defined", TH)
    assert out.label == "other" and out.clean is False
    assert out.modal_delta == -3
    assert out.modal_mass == pytest.approx(0.45)
    assert out.other == pytest.approx(0.6)


def test_other_modal_overflow_bin_has_no_delta():
    hist = hist_with({30: 80, 0: 10, 4: 10})
    out = label_pair(0.95, score(inf=10, sym=10, hist=hist), "defined", TH)
    assert out.label == "other"
    assert out.modal_delta is None
    assert out.modal_mass == pytest.approx(0.8)


def test_thresholds_configurable():
    th = ThresholdConfig(fit=0.5, majority=0.3, clean=0.35)
    s = score(inf=40, sym=10)
    assert label_pair(0.6, s, "defined", th).label == "inferential"
    assert label_pair(0.6, s, "defined", th).clean is True
    assert label_pair(0.6, s, "defined", TH).label == "not-fitted"
    assert label_pair(0.95, s, "defined", TH).label == "other"
    assert label_pair(0.4, s, "defined", th).label == "not-fitted"
    assert label_pair(0.6, score(inf=10, sym=31), "defined", th).label == "symmetric"


def test_indistinguishable_has_only_inferential_or_other():
    for inf in (0, 30, 50, 51, 100):
        out = label_pair(
            0.95, score(inf=inf, sym=None, hist=hist_with({0: inf, 9: 100 - inf})), "indistinguishable", TH
        )
        assert out.label in ("inferential", "other")
        assert out.symmetric is None
        assert out.symmetric_target == "indistinguishable"
        assert out.other == pytest.approx(1 - inf / 100)
    assert label_pair(0.95, score(inf=51, sym=None), "undefined", TH).label == "inferential"
    assert label_pair(0.95, score(inf=10, sym=None), "undefined", TH).label == "other"


# ---- the run -----------------------------------------------------------------------------------------------
def test_run_label():
    inf = label_pair(0.95, score(inf=80, sym=0), "defined", TH)
    sym = label_pair(0.95, score(inf=0, sym=80), "defined", TH)
    assert run_label(0.95, {"4-3": inf}, TH) == "inferential"
    assert run_label(0.95, {"4-3": inf, "3-4": inf}, TH) == "inferential"
    assert run_label(0.95, {"4-3": inf, "3-4": sym}, TH) == "mixed"
    assert run_label(0.95, {}, TH) == "fitted"
    assert run_label(0.5, {}, TH) == "not-fitted"
    assert run_label(0.5, {"4-3": inf}, TH) == "not-fitted"
    d = outcome_dict(0.95, {"4-3": sym}, TH)
    assert d["label"] == "symmetric"
    assert d["pairs"]["4-3"]["label"] == "symmetric"
    assert d["pairs"]["4-3"]["symmetric"] == pytest.approx(0.8)


def test_pooled():
    scores = {
        "test/1-2": SetScore(10, {"designated": 10}, None),
        "test/2-1": SetScore(30, {"designated": 0}, None),
        "train/1-2": SetScore(5, {"designated": 1}, None),
    }
    assert pooled(scores, "test/") == pytest.approx(10 / 40)  # pooled over sequences, not averaged over sets
    assert pooled(scores, "train/") == pytest.approx(0.2)
    assert pooled(scores, "heldout/") is None


class FixedPredictor(nn.Module):
    """Logits whose argmax is the first token plus a constant offset."""

    def __init__(self, offset: int, vocab: int = 60):
        super().__init__()
        self.offset, self.vocab = offset, vocab

    def forward(self, x):
        return nn.functional.one_hot(x[:, 0] + self.offset, self.vocab).float()


def test_score_sets():
    inputs = torch.tensor([[20, 1], [25, 1], [30, 1], [35, 2]])
    keys = inputs[:, 0]
    sets = {
        "heldout/4-3/train_keys": EvalSet(
            inputs, {"inferential": keys - 10, "symmetric": keys - 6}, reference="inferential"
        ),
        "test/1-2": EvalSet(inputs, {"designated": keys - 6}),
    }
    scores = score_sets(FixedPredictor(-6), sets, None, torch.device("cpu"))
    held = scores["heldout/4-3/train_keys"]
    assert held.n == 4 and held.acc("symmetric") == 1.0 and held.acc("inferential") == 0.0
    assert dict(zip(histogram_bins(), held.histogram, strict=True))["4"] == 4
    assert scores["test/1-2"].histogram is None and scores["test/1-2"].acc("designated") == 1.0
    limited = score_sets(FixedPredictor(-10), sets, 2, torch.device("cpu"))
    assert limited["heldout/4-3/train_keys"].n == 2
    assert limited["heldout/4-3/train_keys"].correct == {"inferential": 2, "symmetric": 0, "any": 2}


def test_other_fraction_with_partially_coinciding_targets():
    inputs = torch.tensor([[20, 1], [25, 1], [30, 1], [35, 2]])
    keys = inputs[:, 0]
    inf = keys - 10
    sym = torch.where(keys == 35, keys - 6, keys - 10)  # the two targets agree on three of four keys
    sets = {"heldout/2-1/train_keys": EvalSet(inputs, {"inferential": inf, "symmetric": sym}, "inferential")}
    s = score_sets(FixedPredictor(-10), sets, None, torch.device("cpu"))["heldout/2-1/train_keys"]
    out = label_pair(0.95, s, "defined", TH)
    assert out.label == "inferential"
    assert 0.0 <= out.other <= 1.0


def test_escape_points_on_synthetic_rows():
    from reasonlab.config import ThresholdConfig
    from reasonlab.kinds.anchor.evaluate import escape_points
    from reasonlab.store import MetricRow

    rows = []
    for epoch, seen, inf in ((1, 0.1, 0.0), (2, 0.55, 0.4), (3, 0.7, 0.6), (4, 0.95, 0.9)):
        step = 10 * epoch
        rows += [MetricRow(epoch, step, "train", "lr_sum", 0.01 * step),
                 MetricRow(epoch, step, "pooled", "seen_test_acc", seen),
                 MetricRow(epoch, step, "heldout/4-3/train_keys", "acc_inferential", inf),
                 MetricRow(epoch, step, "heldout/4-3/train_keys", "acc_symmetric", 1 - inf)]
    out = escape_points(rows, ThresholdConfig())
    assert out["at50"] == {"level": 0.5, "epoch": 2, "step": 20, "lr_sum": 0.2, "seen_test_acc": 0.55,
                           "heldout": {"4-3/train_keys/inferential": 0.4, "4-3/train_keys/symmetric": 0.6}}
    assert (out["at90"]["epoch"], out["at90"]["lr_sum"]) == (4, 0.4)
    assert escape_points(rows[:8], ThresholdConfig())["at90"] is None  # never reached within epochs 1-2
