"""The typed metrics accessor of the store: rows as ``MetricRow`` named tuples, and ``Metrics`` look-ups by name."""

from __future__ import annotations

import pytest

from reasonlab.errors import StoreError
from reasonlab.store import MetricRow, Metrics, read_metrics, write_metrics

ROWS = [
    MetricRow(1, 10, "train", "loss", 2.0),
    MetricRow(1, 10, "pooled", "train_acc", 0.2),
    MetricRow(1, 10, "heldout/4-3/train_keys", "acc_inferential", 0.1),
    MetricRow(2, 20, "train", "loss", 1.0),
    MetricRow(2, 20, "pooled", "train_acc", 0.6),
    MetricRow(2, 20, "heldout/4-3/train_keys", "acc_inferential", 0.5),
    MetricRow(3, 30, "train", "loss", 0.5),
    MetricRow(3, 30, "pooled", "train_acc", 0.95),
    MetricRow(3, 30, "heldout/4-3/train_keys", "acc_pos_1", 0.7),
    MetricRow(3, 30, "heldout/4-3/train_keys", "acc_pos_0", 0.9),
]


def test_rows_round_trip_as_named_tuples(tmp_path):
    path = tmp_path / "metrics.parquet"
    write_metrics(path, ROWS, "0123456789ab")
    rows = read_metrics(path)
    assert rows == ROWS and all(isinstance(r, MetricRow) for r in rows)
    assert rows[0] == (1, 10, "train", "loss", 2.0)  # still a tuple: equal to the plain row
    assert (rows[3].epoch, rows[3].step, rows[3].split, rows[3].metric, rows[3].value) == (2, 20, "train", "loss", 1.0)
    assert Metrics.read(path).rows == ROWS


def test_a_damaged_file_is_a_store_error(tmp_path):
    path = tmp_path / "metrics.parquet"
    path.write_bytes(b"not parquet")
    with pytest.raises(StoreError, match="damaged metrics file"):
        Metrics.read(path)


def test_look_ups_by_name():
    m = Metrics(tuple(r) for r in ROWS)  # plain tuples are typed on the way in
    assert len(m) == len(ROWS) and all(isinstance(r, MetricRow) for r in m)
    assert m.series("train", "loss") == [(1, 2.0), (2, 1.0), (3, 0.5)]
    assert m.series("train", "loss", clock="step") == [(10, 2.0), (20, 1.0), (30, 0.5)]
    assert m.where("pooled") == [ROWS[1], ROWS[4], ROWS[7]]
    assert m.last("pooled", "train_acc") == 0.95
    assert m.last("heldout/4-3/train_keys", "acc_inferential") == 0.5  # its own last epoch, not the run's
    assert m.last("pooled", "missing") is None
    assert m.at(2, "pooled", "train_acc") == 0.6 and m.at(5, "pooled", "train_acc") is None
    assert m.last_epoch() == 3 and m.last_epoch("nowhere") is None
    assert m.at_epoch(3, "heldout/4-3/train_keys") == {"acc_pos_1": 0.7, "acc_pos_0": 0.9}
    assert m.first_epoch("pooled", "train_acc", 0.5) == 2
    assert m.first_epoch("pooled", "train_acc", 0.99) is None


def test_an_empty_run():
    m = Metrics([])
    assert m.series("train", "loss") == [] and m.last("train", "loss") is None and m.last_epoch() is None
