"""In-context modular arithmetic: the task law (modular-icl spec §2).

Over 400 lines: the modular kind's task law, its four sets and scoring, each a property of the spec.
"""

from __future__ import annotations

import json
import math

import pyarrow.parquet as pq
import pytest
import torch
from conftest import tiny_modular

from reasonlab.config import ConfigError, resolve
from reasonlab.kinds.modular.data import (
    IGNORE,
    ModularTask,
    balanced_batch,
    ood_tasks,
    pair_stream,
    random_tasks,
    rectangular_tasks,
    sequences,
    split_pairs,
    task_grid,
)
from reasonlab.kinds.modular.evaluate import early_stopping, is_atypical, phase_label, plateau_exits
from reasonlab.plots.run import run_figure
from reasonlab.store import MetricRow
from reasonlab.sweep.results import run_row
from reasonlab.train.run import train_run


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


@pytest.mark.parametrize("p, n", [(29, 512), (17, 64), (11, 32)])
def test_rectangular_rule(p, n):
    tasks = rectangular_tasks(p, n, gen(1))
    assert len(tasks) == n == len(set(tasks))
    for i in range(0, n, 4):  # base, (a, b'), (a', b), (a', b'): the corners of one axis-aligned rectangle
        (a, b), (a1, b2), (a2, b1), (a3, b3) = tasks[i : i + 4]
        assert a1 == a and b1 == b and (a3, b3) == (a2, b2)
        assert a2 not in (a, b) and b2 not in (a, b, a2)
    assert rectangular_tasks(p, n, gen(1)) == tasks and rectangular_tasks(p, n, gen(2)) != tasks


def test_rectangular_rule_errors():
    with pytest.raises(ConfigError, match="multiple of 4"):
        rectangular_tasks(17, 30, gen())
    with pytest.raises(ConfigError, match="exceeds"):
        rectangular_tasks(5, 28, gen())
    with pytest.raises(ConfigError, match="could not be drawn"):
        rectangular_tasks(5, 24, gen(), max_draws=3)


def test_zero_components_and_random_rule():
    assert all(a and b for a, b in rectangular_tasks(13, 40, gen(), allow_zero=False))
    assert len(task_grid(13, False)) == 144 and len(task_grid(13, True)) == 169
    exclude = set(task_grid(7, True)[:10])
    drawn = random_tasks(7, 20, gen(), exclude=exclude)
    assert len(set(drawn)) == 20 and not exclude & set(drawn)


def test_ood_tasks_are_disjoint_and_a_multiple_of_8():
    id_tasks = rectangular_tasks(17, 64, gen(1))
    ood = ood_tasks(17, id_tasks, 256, gen(2))
    assert len(ood) == 224 and len(set(ood)) == len(ood)  # 289 - 64 = 225 left, trimmed to a multiple of 8
    assert not set(ood) & set(id_tasks)
    assert len(ood_tasks(29, rectangular_tasks(29, 512, gen(1)), 256, gen(2))) == 256


def test_alpha_split_counts_and_partition():
    for alpha, n in zip((0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8), (168, 252, 336, 420, 505, 589, 673), strict=True):
        train, test = split_pairs(29, alpha, 0)
        assert len(train) == n and len(train) + len(test) == 841
        assert sorted(torch.cat([train, test]).tolist()) == list(range(841))
    with pytest.raises(ConfigError, match="alpha"):
        split_pairs(5, 0.01, 0)


def test_sequences_follow_the_law_and_mask_all_but_z():
    p = 11
    tasks = torch.tensor([[3, 5], [0, 7]])
    ids = torch.tensor([[1 * p + 2, 4 * p + 9, 10 * p + 0], [5 * p + 5, 0, 7 * p + 3]])
    inputs, targets = sequences(tasks, ids, p)
    assert inputs.shape == targets.shape == (2, 8)
    assert inputs[0].tolist() == [1, 2, (3 * 1 + 5 * 2) % p, 4, 9, (3 * 4 + 5 * 9) % p, 10, 0]
    kept = (targets != IGNORE).nonzero()[:, 1].unique().tolist()
    assert kept == [1, 4, 7]  # the z of each example, and nothing else
    assert targets[1, 7] == (7 * 3) % p and targets[0, 7] == (3 * 10) % p


def test_pair_stream_is_stateless_and_covers_each_pass():
    pairs = torch.arange(10, 30)
    whole = pair_stream(pairs, 0, 50, seed=3)
    assert torch.equal(whole[17:41], pair_stream(pairs, 17, 24, seed=3))
    assert sorted(whole[:20].tolist()) == pairs.tolist() and sorted(whole[20:40].tolist()) == pairs.tolist()


def test_balanced_shared_batch():
    p, shots = 13, 6
    tasks = torch.tensor(rectangular_tasks(p, 8, gen(1)))
    train, _ = split_pairs(p, 0.5, 0)
    inputs, targets = balanced_batch(p, tasks, train, 32, shots, step=3, seed=5)
    assert inputs.shape == (32, 3 * shots - 1)
    rows = 32 // 8
    xy = inputs.view(8, rows, -1)[:, :, [i for i in range(3 * shots - 1) if i % 3 != 2]]
    assert all(torch.equal(xy[0], xy[t]) for t in range(8))  # every task gets the same pair rows
    pair_ids = inputs[:, 0::3] * p + inputs[:, 1::3]
    assert set(pair_ids.flatten().tolist()) <= set(train.tolist())  # context and query from the train pairs
    z = targets[:, 1::3]
    task_of_row = tasks.repeat_interleave(rows, 0)
    x, y = inputs[:, 0::3], inputs[:, 1::3]
    assert torch.equal(z, (task_of_row[:, :1] * x + task_of_row[:, 1:] * y) % p)
    again, _ = balanced_batch(p, tasks, train, 32, shots, step=3, seed=5)
    assert torch.equal(again, inputs)
    with pytest.raises(ConfigError, match="multiple of task.n_tasks"):
        balanced_batch(p, tasks, train, 30, shots, step=0, seed=5)


def _last_shot_repeats(ids: torch.Tensor) -> float:
    """Share of sequences whose last pair already occurs earlier in the same sequence."""
    return float((ids[:, :-1] == ids[:, -1:]).any(1).float().mean())


def test_iid_pair_draw_repeats_pairs_at_the_law_rate_and_the_stream_does_not():
    p, shots, n_tasks = 11, 24, 64
    tasks = torch.tensor(random_tasks(p, n_tasks, gen(1)))
    train, _ = split_pairs(p, 0.8, 0)
    iid = torch.cat([balanced_batch(p, tasks, train, n_tasks, shots, step, seed=5, iid=True)[0]
                     for step in range(40)])
    stream = torch.cat([balanced_batch(p, tasks, train, n_tasks, shots, step, seed=5)[0] for step in range(40)])
    ids = lambda x: x[::n_tasks, 0::3] * p + x[::n_tasks, 1::3]  # one row per batch: shared rows  # noqa: E731
    assert set(ids(iid).flatten().tolist()) <= set(train.tolist())
    expected = 1 - (1 - 1 / len(train)) ** (shots - 1)  # 0.20 for 97 pairs and 24 shots
    assert abs(_last_shot_repeats(ids(iid)) - expected) < 0.1
    assert _last_shot_repeats(ids(stream)) == 0.0  # one row per task: a sequence is consecutive draws of a pass
    again = balanced_batch(p, tasks, train, n_tasks, shots, 3, seed=5, iid=True)[0]
    assert torch.equal(again, iid[3 * n_tasks : 4 * n_tasks])  # stateless: a resumed run draws the same


def test_pair_draw_is_hashed_only_when_iid():
    base = resolve(tiny_modular())
    assert resolve(tiny_modular(pair_draw="stream")).run_id() == base.run_id()
    assert resolve(tiny_modular(pair_draw="iid")).run_id() != base.run_id()


# ---- the task in a run ------------------------------------------------------------------------------------------
def _tasks_of_rows(inputs: torch.Tensor, targets: torch.Tensor, p: int) -> list[tuple[int, int]]:
    """The task (a, b) each row follows, solved from its examples (every row has enough to fix it)."""
    x, y, z = inputs[:, 0::3], inputs[:, 1::3], targets[:, 1::3]
    found = []
    for row in range(len(inputs)):
        fits = [(a, b) for a in range(p) for b in range(p) if torch.equal((a * x[row] + b * y[row]) % p, z[row])]
        assert len(fits) == 1
        found.append(fits[0])
    return found


def test_a_task_curriculum_grows_the_tasks_in_batches_by_doubling():
    """curriculum_start 2 of 8 tasks, all by step 10: batches hold the first 2 tasks (steps 0-4), the first 4
    (5-9), then all 8, each task equally often; eval sets are untouched; a config without it keeps its run id."""
    cfg = resolve(tiny_modular(n_shots=8, curriculum_start=2, curriculum_steps=10))
    assert [cfg.task.curriculum_tasks(s) for s in (0, 4, 5, 9, 10, 1000)] == [2, 2, 4, 4, 8, 8]
    task = ModularTask(cfg.task)
    data = task.build(cfg.seed)
    for step, n in ((0, 2), (4, 2), (7, 4), (10, 8)):
        rows = _tasks_of_rows(*data.batch_fn(step, 16), cfg.task.p)
        assert sorted(set(rows)) == sorted(map(tuple, task.id_tasks[:n]))
        assert all(rows.count(t) == 16 // n for t in set(rows))
    plain = ModularTask(resolve(tiny_modular(n_shots=8)).task).build(cfg.seed)
    assert all(torch.equal(data.eval_sets[k].inputs, plain.eval_sets[k].inputs) for k in plain.eval_sets)
    assert torch.equal(data.batch_fn(10, 16)[0], plain.batch_fn(10, 16)[0])
    assert resolve(tiny_modular(curriculum_steps=0)).run_id() == resolve(tiny_modular()).run_id()
    with pytest.raises(ConfigError, match="curriculum_start: 3 times a power of two"):
        resolve(tiny_modular(curriculum_start=3, curriculum_steps=10))
    with pytest.raises(ConfigError, match="curriculum_steps"):
        resolve(tiny_modular(curriculum_start=2))


def test_the_four_evaluation_sets():
    task = ModularTask(resolve(tiny_modular()).task)
    data = task.build(seed=1)
    train, test = set(task.train_pairs.tolist()), set(task.test_pairs.tolist())
    expect = {"id/train": (task.id_tasks, train), "id/test": (task.id_tasks, test),
              "ood/train": (task.ood_tasks, train), "ood/test": (task.ood_tasks, test)}
    assert set(data.eval_sets) == set(expect)
    for name, (tasks, pairs) in expect.items():
        es = data.eval_sets[name]
        x, y = es.inputs[:, 0::3], es.inputs[:, 1::3]
        assert set((x * 7 + y).flatten().tolist()) <= pairs, name  # context and query from the set's pairs
        z = es.targets["designated"][:, 1::3]
        for row in range(len(es)):  # each sequence follows one task of the set's task list
            found = [t for t in tasks if torch.equal((t[0] * x[row] + t[1] * y[row]) % 7, z[row])]
            assert found, (name, row)
    assert len(data.eval_sets["ood/test"]) == 2 * 16 and len(data.eval_sets["id/test"]) == 2 * 16
    assert data.vocab_size == 7 and data.steps_per_epoch == 5
    assert json.loads(data.artifacts["tasks.json"])["id"] == [list(t) for t in task.id_tasks]


def _last_pairs(es, p: int) -> torch.Tensor:
    return es.inputs[:, -2] * p + es.inputs[:, -1]  # the query x, y: the last z is the target, not an input


def test_independent_eval_rows_give_each_sequence_its_own_query():
    """Shared rows give every task of a batch the same query (a set of b batches holds b distinct queries); a row
    per sequence gives a set of n sequences about n distinct (task, query) pairs."""
    shared = ModularTask(resolve(tiny_modular(p=13, n_tasks=8, eval_batch_size=8)).task).build(seed=1)
    own = ModularTask(resolve(tiny_modular(p=13, n_tasks=8, eval_batch_size=8, eval_rows="independent")).task)
    indep = own.build(seed=1)
    for name in ("id/train", "ood/test"):
        assert len(set(_last_pairs(shared.eval_sets[name], 13).tolist())) <= 2  # 2 batches
        assert len(set(_last_pairs(indep.eval_sets[name], 13).tolist())) > 2
        assert len(indep.eval_sets[name]) == len(shared.eval_sets[name])
    train = set(own.train_pairs.tolist())
    es = indep.eval_sets["id/train"]
    assert set((es.inputs[:, 0::3] * 13 + es.inputs[:, 1::3]).flatten().tolist()) <= train
    assert resolve(tiny_modular(eval_rows="shared")).run_id() == resolve(tiny_modular()).run_id()
    assert resolve(tiny_modular(eval_rows="independent")).run_id() != resolve(tiny_modular()).run_id()


def test_eval_iid_adds_the_reference_sets_beside_the_strict_ones():
    """SET:iid draws pairs with replacement (a query may recur in its context, as in the reference's figure) from
    the same tasks and pairs as SET; the strict sets are unchanged by it."""
    p, shots = 7, 12
    base = ModularTask(resolve(tiny_modular(n_shots=shots)).task)
    task = ModularTask(resolve(tiny_modular(n_shots=shots, eval_iid=True)).task)
    plain, data = base.build(seed=1), task.build(seed=1)
    assert set(data.eval_sets) == set(plain.eval_sets) | {f"{n}:iid" for n in plain.eval_sets}
    pairs = {"train": set(task.train_pairs.tolist()), "test": set(task.test_pairs.tolist())}
    for name in plain.eval_sets:
        assert torch.equal(data.eval_sets[name].inputs, plain.eval_sets[name].inputs)
        iid = data.eval_sets[f"{name}:iid"]
        assert len(iid) == len(plain.eval_sets[name])
        ids = iid.inputs[:, 0::3] * p + iid.inputs[:, 1::3]
        assert set(ids.flatten().tolist()) <= pairs[name.split("/")[1]]
    ids = lambda sets: torch.cat([(s.inputs[:, 0::3] * p + s.inputs[:, 1::3]) for s in sets])  # noqa: E731
    expected = 1 - (1 - 1 / len(pairs["train"])) ** (shots - 1)  # 0.32: the query recurs in its context
    iid = ids([data.eval_sets[f"{n}:iid"] for n in ("id/train", "ood/train")])
    assert abs(_last_shot_repeats(iid) - expected) < 0.12
    assert _last_shot_repeats(ids([data.eval_sets[n] for n in ("id/train", "ood/train")])) == 0.0


def test_batch_size_rounds_up_to_a_multiple_of_the_tasks():
    task = ModularTask(resolve(tiny_modular(n_tasks=12)).task)
    assert task.batch_size(16) == 24 and task.batch_size(24) == 24
    data = task.build(seed=1)
    assert data.batch_fn(0, 16)[0].shape == (24, 11)


@pytest.mark.parametrize("last, label, atypical", [
    ({"id_train": 0.5, "id_test": 0.9, "ood_train": 0.9, "ood_test": 0.9}, "unfit", False),
    ({"id_train": 0.95, "id_test": 0.9, "ood_train": 0.9, "ood_test": 0.85}, "ood-generalization", False),
    ({"id_train": 0.95, "id_test": 0.5, "ood_train": 0.9, "ood_test": 0.85}, "ood-generalization", True),
    ({"id_train": 0.95, "id_test": 0.3, "ood_train": 0.85, "ood_test": 0.1}, "ood-memorization", False),
    ({"id_train": 0.95, "id_test": 0.85, "ood_train": 0.1, "ood_test": 0.1}, "id-generalization", False),
    ({"id_train": 0.95, "id_test": 0.2, "ood_train": 0.1, "ood_test": 0.1}, "id-memorization", False),
])
def test_phase_labels(last, label, atypical):
    assert phase_label(last) == label
    assert is_atypical(label, last) == atypical


def _rows(history):
    return [MetricRow(e, 0, "pooled", f"{k}_last_shot", v) for e, figures in history.items()
            for k, v in figures.items()]


def test_early_stopping_and_transience():
    base = {"id_train": 0.99, "id_test": 0.9, "ood_train": 0.9}
    rows = _rows({1: {**base, "ood_test": 0.3}, 2: {**base, "ood_test": 0.85}, 3: {**base, "ood_test": 0.6}})
    out = early_stopping(rows)
    assert out["t_star_epoch"] == 2 and out["ood_test_peak"] == 0.85 and out["transient"]
    assert out["label_at_t_star"] == "ood-generalization"
    steady = early_stopping(_rows({1: {**base, "ood_test": 0.85}, 2: {**base, "ood_test": 0.8}}))
    assert steady["t_star_epoch"] == 1 and not steady["transient"]


def test_plateau_exits_on_synthetic_rows():
    """The first epoch whose training loss is at most 0.9 / 0.5 of chance, with its step, Σlr and the last-shot
    accuracies of that epoch's evaluation; a level never reached is None."""
    chance = math.log(11)
    loss = {1: 2.39, 2: 2.30, 3: 2.10, 4: 1.50, 5: 1.10}
    rows = [MetricRow(e, 500 * e, "train", "loss", v) for e, v in loss.items()]
    rows += [MetricRow(e, 500 * e, "train", "lr_sum", 0.25 * e) for e in loss]
    rows += [MetricRow(e, 500 * e, "pooled", "ood_test_last_shot", e / 10) for e in loss]
    out = plateau_exits(rows, chance)
    assert out["left"]["epoch"] == 3 and out["left"]["step"] == 1500 and out["left"]["lr_sum"] == 0.75
    assert out["left"]["loss"] == 2.10 and out["left"]["last_shot"] == {"ood_test": 0.3}
    assert out["half"]["epoch"] == 5 and out["half"]["fraction"] == 0.5
    assert plateau_exits(rows[:2], chance) == {"left": None, "half": None}


def test_a_tiny_modular_run_logs_shots_and_a_phase(tmp_path):
    cfg = resolve(tiny_modular())
    run_dir, summary = train_run(cfg, tmp_path, progress=False, log=lambda _: None)
    assert summary["label"] in {"unfit", "id-memorization", "id-generalization", "ood-memorization",
                                "ood-generalization"}
    assert summary["steps"] == 15 and "t_star_epoch" in summary["best"]
    rows = pq.read_table(run_dir / "metrics.parquet").to_pylist()
    shots = {r["metric"] for r in rows if r["split"] == "ood/test" and r["metric"].startswith("acc_pos_")}
    assert shots == {f"acc_pos_{k}" for k in range(4)}
    losses = [r["value"] for r in rows if r["split"] == "train" and r["metric"] == "loss"]
    assert losses[-1] < losses[0]
    assert (run_dir / "tasks.json").is_file()
    best = json.loads((run_dir / "checkpoints" / "best.json").read_text())  # the early-stopped weights
    assert best["epoch"] == summary["best"]["t_star_epoch"] and (run_dir / "checkpoints" / "best.safetensors").is_file()
    assert best["value"] == summary["best"]["ood_test_peak"]
    # its plateau exits are read from its own training losses, against chance ln p, and reach the results table
    assert summary["plateau"] == plateau_exits([MetricRow(**r) for r in rows], math.log(cfg.task.p))
    row = run_row(summary)
    for key, point in summary["plateau"].items():
        assert row[f"plateau.{key}.step"] == (point or {}).get("step")
    # its run figure is the kind's own: the loss over steps against ln p, the four sets' last-shot accuracy
    loss_ax, sets_ax = run_figure(run_dir).axes
    assert loss_ax.get_title() == "training loss" and loss_ax.get_xlabel() == "step"
    assert loss_ax.lines[0].get_ydata().tolist() == losses
    labels = [line.get_label() for line in sets_ax.lines]
    assert labels == [f"{name}: last-shot accuracy ({name.replace('/', '_')}_last_shot)"
                      for name in ("id/train", "id/test", "ood/train", "ood/test")] + ["chance 1/7"]
    last = [r["value"] for r in rows if (r["split"], r["metric"]) == ("pooled", "ood_test_last_shot")]
    assert sets_ax.lines[3].get_ydata().tolist() == last


def test_paper_profile_is_the_reference_recipe():
    """Spec §3–§4: 12,606,976 parameters at depth 4 with vocabulary p = 29 (the reference's 12,616,192 with 47
    tokens, less 18 × 512), and the schedule's spot values."""
    from reasonlab.config import raw_config
    from reasonlab.schedule import lr_at
    from reasonlab.train.loop import build_model, build_task

    cfg = resolve(raw_config(None, "paper", [], "modular"))
    assert [lr_at(s, cfg.train, 1000) for s in (0, 10_000, 200_000)] == pytest.approx([1.5e-6, 1.5e-4, 1.5e-5])
    assert lr_at(100_000, cfg.train, 1000) == pytest.approx(8.8e-5, rel=1e-3)
    data = build_task(cfg)
    assert sum(p.numel() for p in build_model(cfg, data).parameters()) == 12_606_976
    assert len(data.eval_sets["ood/test"]) == 4096 and len(data.eval_sets["id/train"]) == 16_384


def test_log_spaced_checkpoint_epochs():
    from reasonlab.config import TrainConfig
    from reasonlab.train.loop import log_spaced_epochs

    epochs = sorted(log_spaced_epochs(TrainConfig(epochs=200, warmup_epochs=10, checkpoint_log=20)))
    assert epochs[0] == 10 and epochs[-1] == 200 and len(epochs) == 20
    ratios = [b / a for a, b in zip(epochs, epochs[1:], strict=False)]
    assert max(ratios) < 1.25 and min(ratios) > 1.1  # evenly spaced in log scale, up to rounding
    assert log_spaced_epochs(TrainConfig(checkpoint_log=0)) == set()


def _table_row(n_tasks, alpha, seed, final, at_t_star=None):
    row = {"status": "finished", "task.kind": "modular", "task.n_tasks": n_tasks, "task.alpha": alpha, "seed": seed,
           "task.p": 7}
    row.update({f"final.{k}_last_shot": v for k, v in final.items()})
    row.update({f"best.at_t_star.{k}": v for k, v in (at_t_star or final).items()})
    return row


def test_modular_cells_average_seeds_then_classify():
    from reasonlab.kinds.modular.evaluate import modular_cells

    good = {"id_train": 1.0, "id_test": 0.9, "ood_train": 0.9, "ood_test": 0.9}
    poor = {"id_train": 1.0, "id_test": 0.1, "ood_train": 0.1, "ood_test": 0.1}
    rows = [_table_row(8, 0.6, 1, good), _table_row(8, 0.6, 2, good),
            _table_row(4, 0.6, 1, poor, at_t_star=good), _table_row(4, 0.6, 2, {**good, "ood_test": 0.5})]
    final = {(c.x, c.y): c for c in modular_cells(rows)}
    assert final[(8, 0.6)].label == "ood-generalization" and final[(8, 0.6)].n_runs == 2
    assert final[(4, 0.6)].last_shot["ood_test"] == pytest.approx(0.3)  # mean over seeds, then classified
    assert final[(4, 0.6)].label == "id-memorization"  # means: id-test 0.5, ood-train 0.5, ood-test 0.3
    early = {(c.x, c.y): c for c in modular_cells(rows, at="t_star")}
    assert early[(4, 0.6)].last_shot["ood_test"] == pytest.approx(0.7)
    rows.append({**_table_row(8, 0.4, 1, good), "task.p": 11})
    with pytest.raises(ConfigError, match="task.p varies"):
        modular_cells(rows)


@pytest.mark.slow
def test_modular_sweep_phase_cli(tmp_path):
    from typer.testing import CliRunner

    from reasonlab.cli import app
    from reasonlab.sweep.executors import LocalExecutor
    from reasonlab.sweep.grid import expand
    from reasonlab.sweep.runner import run_sweep

    base = tiny_modular()
    base["train"].update(epochs=1, threads=None)
    cfgs = expand(base, {"task.n_tasks": [4, 8], "task.alpha": [0.4, 0.6]})
    report = run_sweep("mod", cfgs, tmp_path, LocalExecutor(1, 1), ["task.n_tasks", "task.alpha"])
    assert not report.failed
    result = CliRunner().invoke(app, ["phase", str(tmp_path / "mod"), "--at", "t_star"])
    assert result.exit_code == 0, result.output
    assert "task.n_tasks=8 task.alpha=0.6:" in result.output
    assert (tmp_path / "mod" / "figures" / "phase-t_star.png").is_file()
    result = CliRunner().invoke(app, ["phase", str(tmp_path / "mod"), "--where", "task.alpha=0.6", "--x",
                                      "task.n_tasks", "--y", "seed"])
    assert result.exit_code == 0, result.output
    assert "task.alpha=0.4" not in result.output and "task.n_tasks=4 seed=1:" in result.output
    assert (tmp_path / "mod" / "figures" / "phase-final-task.alpha0.6.png").is_file()
    for bad, message in (("task.alpha", "not COLUMN=VALUE"), ("task.alfa=1", "no column"),
                         ("task.alpha=0.9", "no run has")):
        result = CliRunner().invoke(app, ["phase", str(tmp_path / "mod"), "--where", bad])
        assert result.exit_code == 2 and message in result.output


def test_train_cli_prints_a_modular_run(tmp_path):
    import yaml
    from typer.testing import CliRunner

    from reasonlab.cli import app

    data = tiny_modular()
    data["train"].update(epochs=1)
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(app, ["train", str(tmp_path / "m.yaml"), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "ood_test_last_shot" in result.output and "t_star_epoch" in result.output
    assert "plateau: loss ≤ 0.9·ln p" in result.output and "plateau: loss ≤ 0.5·ln p" in result.output
