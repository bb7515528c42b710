"""A task as a torch ``Dataset`` (``reasonlab.TaskDataset``) and a run's metrics without pandas
(``Run.metrics``): the rows a ``DataLoader`` reads are the trainer's own, a split or target a task lacks is one line
naming the ones it has, and the metrics read, look up and convert with the base install alone."""

from __future__ import annotations

import builtins

import pytest
import torch
from conftest import tiny_modular, tiny_run_dict
from torch.utils.data import DataLoader

import reasonlab
from reasonlab.config import resolve


def test_a_fixed_training_set_and_each_evaluation_set_read_row_by_row():
    data = reasonlab.build_task(resolve(tiny_run_dict()))
    splits = reasonlab.TaskDataset.splits(data)
    assert splits[0] == "train" and splits[1:] == list(data.eval_sets)
    train = reasonlab.TaskDataset(data)
    assert len(train) == len(data.train_inputs) and isinstance(train, torch.utils.data.Dataset)
    x, y = train[3]
    assert x.equal(data.train_inputs[3]) and y.equal(data.train_targets[3])
    inputs, targets = next(iter(DataLoader(train, batch_size=8)))
    assert inputs.equal(data.train_inputs[:8]) and targets.equal(data.train_targets[:8])

    held_out = reasonlab.TaskDataset(data, "heldout/4-3/train_keys", target="symmetric")
    assert held_out[0][1] == data.eval_sets["heldout/4-3/train_keys"].targets["symmetric"][0]
    for call, message in ((lambda: reasonlab.TaskDataset(data, "heldout/4-3/train_keys"),
                           "^TaskDataset target 'designated': the set 'heldout/4-3/train_keys' holds the targets "
                           "'inferential', 'symmetric'; pass target= one of them$"),
                          (lambda: reasonlab.TaskDataset(data, "tset/1-1"), "^TaskDataset split 'tset/1-1': not a "
                           "split of this task; choose one of 'train', "),
                          (lambda: reasonlab.TaskDataset("anchor-cpu"), "^TaskDataset data: expected the TaskData")):
        with pytest.raises(reasonlab.ConfigError, match=message) as refused:
            call()
        assert "\n" not in str(refused.value)


def test_a_task_drawing_its_batches_per_step_offers_its_evaluation_sets():
    data = reasonlab.build_task(resolve(tiny_modular()))
    splits = reasonlab.TaskDataset.splits(data)
    assert "train" not in splits and splits == list(data.eval_sets)
    with pytest.raises(reasonlab.ConfigError, match="draws its training batches per step") as refused:
        reasonlab.TaskDataset(data)
    assert "'id/train'" in str(refused.value) and "\n" not in str(refused.value)
    first = reasonlab.TaskDataset(data, splits[0])
    assert len(first) == len(data.eval_sets[splits[0]])


def test_an_evaluation_set_named_train_is_read_as_eval_train():
    raw = tiny_run_dict()
    raw["task"] = {"kind": "seq2seq", "n_train": 64, "eval_n": 8}
    raw["model"]["max_positions"] = 64
    data = reasonlab.build_task(resolve(raw))
    assert "train" in data.eval_sets and "eval:train" in reasonlab.TaskDataset.splits(data)
    rows = reasonlab.TaskDataset(data, "eval:train")
    assert len(rows) == len(data.eval_sets["train"]) != len(reasonlab.TaskDataset(data))


def test_metrics_read_look_up_and_convert_without_pandas(tmp_path, monkeypatch):
    run = reasonlab.run(resolve(tiny_run_dict(train={"epochs": 1})), out=tmp_path)
    real = builtins.__import__

    def no_pandas(name, *args, **kwargs):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("No module named 'pandas'")
        return real(name, *args, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(builtins, "__import__", no_pandas)
        table = run.metrics
        columns = table.columns()
        assert isinstance(table, reasonlab.MetricTable) and len(table) > 0
        assert list(columns) == ["epoch", "step", "split", "metric", "value"]
        assert all(len(values) == len(table) for values in columns.values())
        assert table.last("pooled", "seen_test_acc") == run.summary["final"]["seen_test_acc"]
        with pytest.raises(reasonlab.ConfigError, match=r"^Run.metrics.to_pandas\(\): needs pandas; pip install"):
            table.to_pandas()
    pytest.importorskip("pandas")
    frame = table.to_pandas()
    assert list(frame.columns) == list(columns) and frame["value"].tolist() == columns["value"]
