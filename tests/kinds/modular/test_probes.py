"""Probes of the modular-arithmetic study (modular-icl spec §7) on constructed models and inputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import tiny_run_dict
from torch import nn
from typer.testing import CliRunner

from reasonlab.analysis.loading import task_data
from reasonlab.build import make_task
from reasonlab.cli import app
from reasonlab.config import ConfigError, resolve
from reasonlab.kinds.modular import analysis as mod
from reasonlab.models.transformer import Transformer
from reasonlab.records import load_run
from reasonlab.train.run import train_run

P = 7


class Oracle(nn.Module):
    """Reads ``x y z ... x y`` and answers the query by ratio matching (``mode='rm'``) or by solving for (a, b)
    (``mode='mr'``); where its rule gives no answer it is wrong on purpose, (truth + 1) mod p."""

    def __init__(self, task: tuple[int, int], mode: str):
        super().__init__()
        self.task, self.mode = task, mode

    def answer(self, row: list[int]) -> int:
        a, b = self.task
        context = [(row[i], row[i + 1]) for i in range(0, len(row) - 2, 3)]
        x, y = row[-2], row[-1]
        truth = (a * x + b * y) % P
        rule = mod.ratio_matching if self.mode == "rm" else mod.modular_regression
        return truth if rule(context, P)[x, y] else (truth + 1) % P

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return nn.functional.one_hot(torch.tensor([self.answer(r.tolist()) for r in tokens]), P).float()


def test_primitive_roots_and_discrete_logs():
    assert mod.primitive_root(29) == 2 and mod.primitive_root(7) == 3 and mod.primitive_root(17) == 3
    logs = mod.discrete_logs(29)
    assert sorted(logs) == list(range(1, 29)) and sorted(logs.values()) == list(range(28))
    assert mod.discrete_logs(29, 27)[27] == 1


def test_ratio_matching_and_modular_regression_grids():
    rm = mod.ratio_matching([(1, 2)], P)
    assert rm.sum() == P and rm[0, 0] and rm[3, 6] and not rm[1, 3]  # the multiples c·(1, 2), c in Z_7
    assert mod.rank_mod_p([(1, 2), (2, 4)], P) == 1 and mod.rank_mod_p([(1, 2), (1, 3)], P) == 2
    assert mod.rank_mod_p([(0, 0)], P) == 0
    assert (mod.modular_regression([(1, 2), (3, 6)], P) == rm).all()  # collinear: the span is the line
    assert mod.modular_regression([(1, 2), (1, 3)], P).all()  # two independent pairs determine (a, b)
    assert mod.ratio_matching([(1, 2), (1, 3)], P).sum() == 2 * P - 1  # two lines meet at (0, 0)


@pytest.mark.parametrize("mode", ["rm", "mr"])
def test_shot_grids_score_a_ratio_matcher_and_a_regressor(mode):
    task, context = (3, 5), [(1, 2), (2, 4), (1, 3), (4, 1)]
    grids = mod.shot_grids(Oracle(task, mode), [task], context, P, shots=(1, 2, 3))
    for g in grids:
        expected = g.rm if mode == "rm" else g.mr
        assert (g.correct[0] == expected).all()
        s = g.scores()
        assert s["on_rm"] == 1.0 and s["accuracy"] == pytest.approx(expected.mean())
    k1, k2, k3 = (g.scores() for g in grids)
    assert k1["rm_fraction"] == k2["rm_fraction"] == pytest.approx(P / P**2)  # (2, 4) = 2·(1, 2): no new line
    assert np.isnan(k1["composition"]) and k3["mr_fraction"] == 1.0  # rank 2 from the third pair on
    assert k3["composition"] == (1.0 if mode == "mr" else 0.0) and np.isnan(k3["off_mr"])
    # on the unseen pairs only: the same rule, counted over those cells
    unseen = np.zeros((P, P), dtype=bool)
    unseen[:, 3:] = True
    u = grids[2].scores(unseen)["unseen"]
    comp = unseen & grids[2].mr & ~grids[2].rm
    assert u["cells"] == unseen.sum() and u["composition_cells"] == comp.sum() > 0
    assert u["composition"] == (1.0 if mode == "mr" else 0.0) and u["on_rm"] == 1.0


def test_shot_ceilings_on_constructed_sequences():
    pairs = [(1, 2), (2, 4), (3, 3), (5, 1), (0, 0)]
    ids = torch.tensor([[x * P + y for x, y in pairs]])
    c = {k: v.mean(0) for k, v in mod.shot_answerable(ids, P).items()}
    assert c["rm"].tolist() == [0, 1, 0, 0, 1]  # (2,4) = 2·(1,2); (3,3) and (5,1) are on no earlier line
    assert c["mr"].tolist() == [0, 1, 0, 1, 1]  # rank 2 after (1,2), (3,3): everything is in the span


def test_probe_context_draws_distinct_nonzero_pairs_from_its_pool():
    # the default draw, pinned: the committed grid probes' contexts were drawn by it (their numbers name them)
    pinned = [(5, 5), (1, 2), (4, 3), (5, 1), (2, 0), (4, 5), (1, 0), (2, 4), (3, 2), (4, 0)]
    assert mod.probe_context(P, 10, 3) == pinned
    assert mod.probe_context(P, 10, 3) == mod.probe_context(P, 10, 3, torch.arange(P * P))  # all pairs as a pool
    pool = torch.tensor([0, 3, 9, 10, 20, 33])
    ctx = mod.probe_context(P, 10, 3, pool)
    assert len(ctx) == 5 == len(set(ctx)) and {x * P + y for x, y in ctx} == {3, 9, 10, 20, 33}
    assert len(mod.probe_context(P, 3, 3, pool)) == 3


@pytest.mark.parametrize("p", [5, 7, 11])
def test_answerable_masks_match_the_grids_of_ratio_matching_and_modular_regression(p):
    """The vectorized masks against the grid definitions, query by query, on random sequences rich in repeats,
    multiples and (0, 0) (drawn from a few pairs and their multiples)."""
    gen = np.random.default_rng(p)
    base = gen.integers(0, p, size=(3, 2))
    pool = [(c * x % p, c * y % p) for x, y in base for c in range(p)] + [(0, 0), (1, 0), (0, 1)]
    seqs = [[pool[i] for i in gen.integers(0, len(pool), size=9)] for _ in range(60)]
    ids = torch.tensor([[x * p + y for x, y in s] for s in seqs])
    masks = mod.shot_answerable(ids, p)
    for n, pairs in enumerate(seqs):
        for k in range(1, len(pairs)):
            assert masks["rm"][n, k] == mod.ratio_matching(pairs[:k], p)[pairs[k]], (pairs, k)
            assert masks["mr"][n, k] == mod.modular_regression(pairs[:k], p)[pairs[k]], (pairs, k)
        assert masks["rm"][n, 0] == masks["mr"][n, 0] == (pairs[0] == (0, 0))
    assert masks["rm"].any() and (~masks["rm"]).any() and (masks["mr"] & ~masks["rm"]).any()


def test_attention_scores_of_hand_set_patterns():
    T = 12
    prev = np.zeros((T, T))
    prev[0, 0] = 1
    prev[np.arange(1, T), np.arange(T - 1)] = 1
    s = mod.attention_scores(prev)
    assert s["previous_token"] == 1.0 and s["same_role"] == 0.0
    period = np.zeros((T, T))
    for t in range(T):
        period[t, t - 3 if t >= 3 else t] = 1
    s = mod.attention_scores(period)
    assert s["same_role"] == pytest.approx(9 / 11) and s["previous_token"] == 0.0
    assert s["z_to_earlier_examples"] == 1.0  # every y position from example 1 on looks 3 back


def test_ratio_contrast_separates_ratio_organized_outputs():
    queries = np.array([(x, y) for x in range(P) for y in range(P)])
    ratio = np.array([(y * pow(int(x), -1, P)) % P if x else 0 for x, y in queries])
    organized = np.eye(P)[ratio] + 0.01 * np.random.default_rng(0).normal(size=(P * P, P))
    noise = np.random.default_rng(1).normal(size=(P * P, P))
    high = mod.ratio_contrast(mod.standardized_cosine(organized), queries, P)
    low = mod.ratio_contrast(mod.standardized_cosine(noise), queries, P)
    assert high > 0.9 and abs(low) < 0.1
    order = mod.ratio_order(queries, P)
    assert len(order) == (P - 1) ** 2 and len(set(ratio[order][: P - 1])) == 1  # one ratio block first


def test_corruption_shifts_only_the_chosen_labels_and_scores_clean_positions():
    task = (2, 3)
    clean = torch.stack([mod.example_tokens(task, mod.probe_context(P, 6, s), P) for s in range(4)])
    gen = torch.Generator().manual_seed(0)
    bad = mod.corrupt(clean, torch.tensor([[1, 4]] * 4), P, gen)
    changed = (bad != clean).nonzero()[:, 1].unique().tolist()
    assert changed == [5, 14]  # z of examples 1 and 4, never shifted by 0

    class Truth(nn.Module):  # always right about the task, whatever the context says
        def forward(self, tokens, positions="all"):
            x, y = tokens[:, 0::3], tokens[:, 1::3]
            z = (task[0] * x + task[1] * y) % P
            out = torch.full((*tokens.shape, P), -1.0)
            out[:, 1::3].scatter_(-1, z[..., None], 1.0)
            return out

    curves = mod.corruption_curves(Truth(), clean, P, seed=0, counts=(0, 2))
    assert all((c == 1.0).all() for c in curves.values())  # corrupted positions are not scored
    grid = mod.corruption_map(Truth(), clean, P, seed=0)
    assert np.isnan(grid[3, 2]) and (grid[np.triu_indices(6, 1)] == 1.0).all()


def _tiny_model() -> Transformer:
    cfg = resolve({"task": {"kind": "anchor"},
                   "model": {"d_model": 16, "depth": 2, "n_heads": 2, "d_k": 8, "d_v": 8, "d_ff": 32, "norm": "pre",
                             "positions": "rope", "max_positions": 18, "tied_head": True, "block_bias": False,
                             "head_bias": False}})
    torch.manual_seed(0)
    return Transformer(cfg.model, P).eval()


def test_per_head_outputs_sum_to_the_attention_output():
    model = _tiny_model()
    queries, outs = mod.head_outputs(model, (2, 3), mod.probe_context(P, 5, 0), 5, P, 6)
    assert outs["x"].shape == (P * P, 2, 2, 16) and set(outs) == {"x", "y", "z"}  # 18 positions hold the last z
    tokens = torch.stack([mod.example_tokens((2, 3), [*mod.probe_context(P, 5, 0), tuple(q)], P) for q in queries])
    _, cache = model.run_with_cache(tokens[:, :17])
    for li in range(2):
        total = outs["y"][:, li].sum(1)
        assert np.allclose(total, cache[f"blocks.{li}.hook_attn_out"][:, 16].numpy(), atol=1e-5)


def test_head_ablation_zeroes_the_head_and_restores():
    model = _tiny_model()
    tokens = torch.randint(P, (3, 17))
    before = model(tokens, "all")
    with model.ablated([(0, 0), (0, 1)]):
        _, cache = model.run_with_cache(tokens)
    assert cache["blocks.0.hook_attn_out"].abs().max() == 0  # both heads of layer 0 knocked out
    assert torch.equal(model(tokens, "all"), before)
    with pytest.raises(ZeroDivisionError), model.ablated([(1, 0)], "mean"):  # an error inside still restores
        _ = 1 / 0
    assert torch.equal(model(tokens, "all"), before)


def _tiny_modular_run(tmp_path, batch: int, epochs: int):
    """A finished modular run at p 7 (8 tasks, one evaluation batch of ``batch`` sequences per set)."""
    raw = tiny_run_dict()
    raw["task"] = {"kind": "modular", "p": 7, "n_shots": 6, "n_tasks": 8, "alpha": 0.6, "n_ood_tasks": 16,
                   "steps_per_epoch": 4, "eval_batches": 1, "eval_batch_size": batch}
    raw["model"].update({"norm": "pre", "positions": "rope", "max_positions": 18, "tied_head": True,
                         "head_bias": False})
    raw["train"].update({"epochs": epochs, "batch_size": batch})
    return train_run(resolve(raw), tmp_path / "runs", progress=False, log=lambda _: None)[0]


@pytest.mark.slow
def test_analyze_cli_runs_every_probe_on_a_saved_run(tmp_path):
    run_dir = _tiny_modular_run(tmp_path, batch=16, epochs=2)
    result = CliRunner().invoke(app, ["analyze", str(run_dir), "--max-tasks", "4"])
    assert result.exit_code == 0, result.output
    out = run_dir / "analysis" / "final"
    for name in ("shots", "grid", "attention", "ov", "pca", "corruption", "masking"):
        assert (out / f"{name}.json").is_file()
    for fig in ("shots", "grid-id", "grid-ood", "attention", "ov-x", "pca", "corruption", "masking"):
        assert (out / f"{fig}.png").is_file() and (out / f"{fig}.svg").is_file()
    grid = json.loads((out / "grid.json").read_text())
    assert set(grid["id"]) == {"1", "2", "3", "4", "5"}  # the spec's k up to the full context of n_shots − 1
    test_pairs = set(make_task(resolve(load_run(run_dir)[1])).test_pairs.tolist())
    held_out = grid["unseen_context"]
    assert {x * 7 + y for x, y in held_out["context"]} <= test_pairs and set(held_out["ood"]) <= set(grid["ood"])
    from reasonlab.kinds.modular.probes import draw_grid
    with np.load(out / "grid.npz") as arrays:  # the figures come back from the saved files alone
        drawn = draw_grid(grid, dict(arrays), tmp_path / "again")
    assert {tmp_path / "again" / f"grid-{g}.png" for g in ("id", "ood")} <= set(drawn)
    bad = CliRunner().invoke(app, ["analyze", str(run_dir), "--probe", "nope"])
    assert bad.exit_code == 2 and "unknown probe 'nope'" in bad.output and "Traceback" not in bad.output
    summary = json.loads((run_dir / "summary.json").read_text())
    assert json.loads((out / "checkpoint.json").read_text()) == {"checkpoint": "final", "step": summary["steps"]}

    # the early-stopping pick says which step it is, read from the run's own marker
    best = json.loads((run_dir / "checkpoints" / "best.json").read_text())
    picked = CliRunner().invoke(app, ["analyze", str(run_dir), "--checkpoint", "best", "--probe", "shots"])
    assert picked.exit_code == 0, picked.output
    assert json.loads((run_dir / "analysis" / "best" / "checkpoint.json").read_text()) == {
        "checkpoint": "best", "step": best["step"]}
    (run_dir / "checkpoints" / "best.json").write_text(json.dumps({**best, "step": "late"}))
    damaged = CliRunner().invoke(app, ["analyze", str(run_dir), "--checkpoint", "best", "--probe", "shots"])
    assert damaged.exit_code == 2 and "best.json: not a checkpoint marker" in damaged.output, damaged.output
    assert "Traceback" not in damaged.output

    # another seed's probe inputs land beside the default's: a new fixed context, the default's numbers kept
    again = CliRunner().invoke(app, ["analyze", str(run_dir), "--probe", "grid", "--seed", "3", "--max-tasks", "4"])
    assert again.exit_code == 0, again.output
    assert json.loads((out / "grid.json").read_text()) == grid
    other = json.loads((out / "seed-3" / "grid.json").read_text())
    assert other["context"] != grid["context"] and set(other["id"]) == set(grid["id"])


def test_eval_batches_draws_denser_evaluation_sets_that_extend_the_runs_own(tmp_path):
    run_dir = _tiny_modular_run(tmp_path, batch=8, epochs=1)
    own, dense = task_data(run_dir), task_data(run_dir, eval_batches=6)
    for name, s in own.eval_sets.items():
        assert torch.equal(dense.eval_sets[name].inputs[: len(s.inputs)], s.inputs)  # the run's own batch first
        assert len(dense.eval_sets[name].inputs) == 6 * len(s.inputs)
    result = CliRunner().invoke(app, ["analyze", str(run_dir), "--probe", "shots", "--eval-batches", "6"])
    assert result.exit_code == 0, result.output
    shots = json.loads((run_dir / "analysis" / "final" / "shots.json").read_text())
    assert shots["id/train"]["sequences"] == 48 and shots["id/train"]["distinct_queries"] > 1  # one row per batch
    for name in ("id/train", "id/test", "ood/train", "ood/test"):  # the query split partitions the last shot
        s, on, beyond = shots[name], shots[name]["on_rm"], shots[name]["beyond_rm"]
        assert on["queries"] + beyond["queries"] == s["sequences"] and on["queries"] > 0
        right = sum(v["last_shot"] * v["queries"] for v in (on, beyond) if v["queries"])
        assert right == pytest.approx(s["last_shot"] * s["sequences"])
        assert len(beyond["per_shot"]) == 6 and beyond["per_shot"][0] is not None  # shot 0: only (0, 0) is RM's
    ood = shots["ood/test"]
    assert shots["ceilings"]["rm"][-1] == pytest.approx(ood["on_rm"]["queries"] / ood["sequences"])

    anchor_dir, _ = train_run(resolve(tiny_run_dict()), tmp_path / "anchor", progress=False, log=lambda _: None)
    bad = CliRunner().invoke(app, ["analyze", str(anchor_dir), "--eval-batches", "4"])
    assert bad.exit_code == 2 and "--eval-batches" in bad.output and "task kind 'anchor'" in bad.output
    assert "Traceback" not in bad.output
    with pytest.raises(ConfigError, match="anchor run, whose evaluation sets are not drawn in batches"):
        task_data(anchor_dir, eval_batches=4)  # the API, without the CLI's option check


def test_headlines_say_what_ratio_matching_cannot_explain():
    """The grid headline names accuracy on the composition cells (in the span of the context, not a multiple of
    one pair) and the share RM covers; the shots headline the o.o.d.-test ceilings at the last shot: without them a
    high last-shot accuracy at small p reads as more than ratio matching."""
    from reasonlab.kinds.modular.probes import headline
    cell = {"accuracy": 0.8, "on_rm": 0.95, "composition": 0.25, "off_mr": None, "rm_fraction": 0.7, "mr_fraction": 1.0}
    grid = headline("grid", {"id": {"1": cell, "15": cell}, "ood": {"15": {**cell, "composition": None}}})
    assert "id k=15: accuracy 0.800 (on RM cells 0.950, on composition cells 0.250; RM covers 70%)" in grid
    assert "ood k=15" in grid and "composition cells —" in grid and "test pairs" not in grid
    none_unseen = {**cell, "unseen": {"on_rm": 1.0, "composition": None, "cells": 3, "composition_cells": 0}}
    assert "composition cells — of 0" in headline("grid", {"id": {"15": none_unseen}, "ood": {"15": none_unseen}})
    held_out = {"context": [(1, 2)] * 13, "ood": {"13": {**cell, "on_rm": 0.9, "composition": 0.1}}}
    grid = headline("grid", {"id": {"15": cell}, "ood": {"15": cell}, "unseen_context": held_out})
    assert grid.endswith("; with a context of 13 test pairs, ood k=13: on RM cells 0.900, on composition cells 0.100")
    shots = headline("shots", {"ood/test": {"last_shot": 0.7}, "ceilings": {"rm": [0.1, 0.85], "mr": [0.2, 1.0]}})
    assert shots == "ood/test last-shot 0.700 (o.o.d.-test at the last shot: RM ceiling 0.850; MR ceiling 1.000)"
    split = headline("shots", {"ood/test": {"last_shot": 0.7, "beyond_rm": {"last_shot": 0.25, "queries": 40}},
                               "ceilings": {"rm": [0.1, 0.85]}})
    assert split.endswith("RM ceiling 0.850; on the 40 queries RM cannot answer 0.250)")


def test_the_seeds_figure_draws_each_seeds_last_shot_series_per_set():
    """One panel per set, one line per seed with that seed's own values in step order, and chance at 1/p."""
    import matplotlib.pyplot as plt

    from reasonlab.kinds.modular.figures import seeds_figure
    from reasonlab.store import MetricRow
    sets = ("id_train", "id_test", "ood_train", "ood_test")
    runs = {seed: [MetricRow(step // 10, step, "pooled", f"{s}_last_shot", seed / 10 + step / 1e4)
                   for step in (2000, 1000) for s in sets] + [MetricRow(1, 1000, "train", "loss", 2.0)]
            for seed in (1, 2)}
    fig = seeds_figure(runs, 11, "title")
    assert len(fig.axes) == 4
    for ax in fig.axes:
        lines = [line for line in ax.get_lines() if line.get_label().startswith("seed")]
        assert [line.get_label() for line in lines] == ["seed 1", "seed 2"]
        assert [list(line.get_xdata()) for line in lines] == [[1000, 2000]] * 2
        assert list(lines[1].get_ydata()) == pytest.approx([0.3, 0.4])
        assert any(list(line.get_ydata()) == [1 / 11] * 2 for line in ax.get_lines())
    plt.close(fig)
