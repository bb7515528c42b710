"""Stacked ensembles: grouping, and M members trained as one equal M runs trained one by one."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
import torch
from conftest import tiny_run, tiny_run_dict
from safetensors.torch import load_file

from reasonlab.config import resolve
from reasonlab.tasks.base import trim_padding
from reasonlab.train.ensemble import group_stackable, stack_key, train_ensemble
from reasonlab.train.loop import Trainer
from reasonlab.train.run import train_run
from reasonlab.train.step import epoch_batches

MEMBERS = [  # differ in seed, γ, peak lr, weight decay and clipping: everything a member may set
    {"seed": 1, "init": {"gamma": 0.5}},
    {"seed": 2, "init": {"gamma": 0.8}, "train": {"lr_multiplier": 6.0, "weight_decay": 0.1}},
    {"seed": 1, "init": {"gamma": 0.3}, "train": {"grad_clip": 0.05}},
]


def member(**kw):
    return tiny_run(**kw)


def test_stack_key_and_grouping():
    a, b = member(seed=1), member(seed=2, init={"gamma": 0.9}, train={"weight_decay": 0.3})
    deeper = member(model={"depth": 3})
    assert stack_key(a) == stack_key(b) != stack_key(deeper)
    groups = group_stackable([a, deeper, b, member(seed=3)], size=2)
    assert [[c.seed for c in g] for g in groups] == [[1, 2], [1], [3]]
    assert group_stackable([a, b], size=1) == [[a], [b]]


def _weights(run_dir):
    ckpt = run_dir / "checkpoints"
    last = max(ckpt.glob("step-*.safetensors"), key=lambda p: int(p.stem.split("-")[1]))
    return load_file(last)


def _config(m: dict, task: str):
    data = tiny_run_dict(**m)
    if task == "lm":  # per-token loss on (B, T) targets, pre-LN with RoPE and a tied head; one seed, since the
        data["seed"] = 1  # vocabulary is learned from each seed's documents
        data["task"] = {"kind": "text_mixture", "n_per_source": 24, "max_len": 32, "train_eval_n": 4}
        data["model"].update(norm="pre", final_norm=True, positions="rope", tied_head=True, max_positions=32,
                             n_heads=2)
        data["train"].update(batch_size=8, epochs=2, weight_decay_on="matrices")
    if task == "seq2seq":  # right-padded rows scored after their prompt: trimmed batches, a subset of positions
        data["task"] = {"kind": "seq2seq", "n_train": 64, "eval_n": 8}
        data["model"]["max_positions"] = 64
        data["train"].update(batch_size=16, epochs=2)
    if task == "emb_mlp":  # the Emb-MLP on the reasoning/memory mixture
        data["task"] = {"kind": "mixture", "n_samples": 1200, "emb_mlp_form": True, "memory_keying": "unordered"}
        data["model"] = {"kind": "emb_mlp", "d_model": 16, "d_ff": 24}
        data["init"]["bias"] = "zero"
    return resolve(data)


@pytest.fixture
def float64():
    before = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(before)


@pytest.mark.parametrize("task", ["anchor", "lm", "seq2seq", "emb_mlp"])
def test_ensemble_matches_independent_runs(tmp_path, task, float64):
    """Stacked training equals training each member alone: exact in real arithmetic, but batched and single
    GEMMs sum in different orders, and in float32 training amplifies that difference past any fixed tolerance on
    some CPUs. So both are trained in float64, where the same reordering stays ~1e-16 relative and amplified
    over the run stays far below the tolerance below (a real difference, such as a wrong learning rate or a
    member's batch taken from another member, moves the weights by 1e-3 or more)."""
    cfgs = [_config(m, task) for m in MEMBERS]
    assert len({stack_key(c) for c in cfgs}) == 1
    stacked = train_ensemble(cfgs, tmp_path / "stacked")
    for cfg, (run_dir, summary) in zip(cfgs, stacked, strict=True):
        alone_dir, alone = train_run(cfg, tmp_path / "alone", progress=False, log=lambda _: None)
        assert run_dir.name == alone_dir.name == cfg.run_id()
        a, b = _weights(run_dir), _weights(alone_dir)
        assert a.keys() == b.keys()
        for name in a:
            assert a[name].dtype == torch.float64, name
            torch.testing.assert_close(a[name], b[name], rtol=1e-9, atol=1e-11, msg=name)
        rows_a = pq.read_table(run_dir / "metrics.parquet").to_pylist()
        rows_b = pq.read_table(alone_dir / "metrics.parquet").to_pylist()
        assert [(r["epoch"], r["split"], r["metric"]) for r in rows_a] == \
               [(r["epoch"], r["split"], r["metric"]) for r in rows_b]
        for ra, rb in zip(rows_a, rows_b, strict=True):
            assert ra["value"] == pytest.approx(rb["value"], rel=1e-9, abs=1e-11), (ra, rb)
        assert summary["label"] == alone["label"] and summary["steps"] == alone["steps"]
        assert json.loads((run_dir / "summary.json").read_text())["config"] == cfg.model_dump(mode="json")


def test_ensemble_resumes_and_skips_finished(tmp_path):
    cfgs = [member(seed=s) for s in (1, 2)]
    train_run(cfgs[0], tmp_path, progress=False, log=lambda _: None)  # one member already finished
    before = (tmp_path / cfgs[0].run_id() / "summary.json").read_text()
    results = train_ensemble(cfgs, tmp_path)
    assert (tmp_path / cfgs[0].run_id() / "summary.json").read_text() == before
    assert [d.name for d, _ in results] == [c.run_id() for c in cfgs]
    with pytest.raises(ValueError, match="differ in more than"):
        train_ensemble([member(seed=5), member(seed=6, model={"depth": 3})], tmp_path)


class Killed(Exception):
    pass


@pytest.mark.parametrize("kill_at", [4, 2])
def test_members_killed_an_epoch_apart_resume_stacked_and_equal_the_uninterrupted_run(tmp_path, monkeypatch,
                                                                                       kill_at):
    """A kill between the members' checkpoints of one epoch leaves them apart (the ``kill_at``-th checkpoint
    write: the second member's of epoch 2, or of epoch 1 so that it has none); the resumed ensemble trains stacked
    from their common checkpoint and ends bit for bit as the uninterrupted one (trained apart, the members would
    differ from it in float rounding)."""
    from reasonlab.train import loop

    cfgs = [member(seed=1), member(seed=2, init={"gamma": 0.8})]
    reference = {d.name: (pq.read_table(d / "metrics.parquet").to_pylist(), _weights(d))
                 for d, _ in train_ensemble(cfgs, tmp_path / "reference")}
    save, calls = loop.save_checkpoint, []

    def save_or_die(*args, **kwargs):
        calls.append(1)
        if len(calls) == kill_at:
            raise Killed
        save(*args, **kwargs)

    monkeypatch.setattr(loop, "save_checkpoint", save_or_die)
    with pytest.raises(Killed):
        train_ensemble(cfgs, tmp_path / "killed")
    monkeypatch.setattr(loop, "save_checkpoint", save)
    epochs = [max((json.loads(m.read_text())["epoch"] for m in (tmp_path / "killed").glob(f"{c.run_id()}.partial/"
                   "checkpoints/step-*.json")), default=0) for c in cfgs]
    assert epochs == [kill_at // 2, kill_at // 2 - 1]
    for run_dir, _ in train_ensemble(cfgs, tmp_path / "killed"):
        rows, weights = reference[run_dir.name]
        assert pq.read_table(run_dir / "metrics.parquet").to_pylist() == rows
        got = _weights(run_dir)
        assert all(torch.equal(got[n], weights[n]) for n in weights)
        assert (run_dir / "events.log").read_text().count("resume from") <= 1


@pytest.mark.parametrize("task", ["anchor", "seq2seq"])
def test_each_member_takes_the_batches_it_takes_alone(tmp_path, task):
    """The stack's epoch iterator is the trainer's: with a member axis, ``epoch_batches`` gives each member its own
    rows in its own order (seeds differ), and trimmed again to its own scored columns a member's batch is the one
    it trains on alone (the stack trims right padding to its longest member)."""
    cfgs = [_config({"seed": s}, task) for s in (1, 2)]
    trainers = [Trainer(c, tmp_path / str(c.seed), progress=False, log=lambda _: None) for c in cfgs]
    first = trainers[0]
    orders = torch.stack([t.batch_order(1) for t in trainers])
    assert not torch.equal(orders[0], orders[1])
    stacked = list(epoch_batches(torch.stack([t.x for t in trainers]), torch.stack([t.y for t in trainers]), orders,
                                 first.cfg.train.batch_size, 1, first.steps_per_epoch, first.data.right_padded))
    assert len(stacked) == first.steps_per_epoch - 1
    for i, t in enumerate(trainers):
        alone = list(t._batches(1, 1))
        assert len(alone) == len(stacked)
        for (x, y), (xs, ys) in zip(alone, stacked, strict=True):
            if t.data.right_padded:
                xs, ys = trim_padding(xs[i], ys[i])
            else:
                xs, ys = xs[i], ys[i]
            assert torch.equal(x, xs) and torch.equal(y, ys)
