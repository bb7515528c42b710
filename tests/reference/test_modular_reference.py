"""reasonlab's in-context modular arithmetic against the reference code, ``ICL_Modular_Arithmetic``
(https://github.com/ablghtianyi/ICL_Modular_Arithmetic, commit d520c0cb8dfa0cbde5d8c80eb7448330ded4b7f7, MIT).

The fixtures in ``fixtures/modular`` are what that code computed at a small config on the CPU in fp32
(``scripts/reference/modular_fixtures.py``; its README says how to regenerate them): its task draw, its α split,
its initial and trained weights, 50 training batches with their losses and learning rates, its weight-decay groups,
and its evaluation of fixed batches. reasonlab runs the same config with the reference's options
(``task.split_draw=numpy``, ``task.vocab_size`` = the reference's 29 tokens at p 11, ``train.loss_mean=nonzero``,
GPT-2 init, i.i.d. shared rows). The reference rotates interleaved pairs of each head's query and key dimensions
(``rotary_embedding_torch``), reasonlab the two halves: its weights enter reasonlab with each head's query and key
rows permuted (even dimensions first, then odd), the same function written in another basis.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from reasonlab.config import RunConfig
from reasonlab.evaluate.scoring import score_sets
from reasonlab.kinds.modular.data import ModularTask, rectangular_tasks, sequences
from reasonlab.models.transformer import Transformer
from reasonlab.schedule import lr_at
from reasonlab.tasks.base import EvalSet
from reasonlab.train.loop import Trainer
from reasonlab.train.step import decay_groups, training_loss

FIXTURES = Path(__file__).parent / "fixtures" / "modular"
CONFIG = json.loads((FIXTURES / "config.json").read_text())
ARGS = CONFIG["args"]
ARRAYS = dict(np.load(FIXTURES / "arrays.npz"))


def run_config() -> RunConfig:
    """reasonlab's config of the fixture's reference run."""
    steps_per_epoch = 10
    return RunConfig.model_validate({
        "task": {"kind": "modular", "p": ARGS["p"], "n_shots": ARGS["n_point_per_row"], "n_tasks": ARGS["n_tasks"],
                 "task_rule": "rectangular", "alpha": ARGS["data_pct"] / 100, "n_ood_tasks": ARGS["n_ood_tasks"],
                 "pair_draw": "iid", "batch_mode": "balanced_shared", "split_draw": "numpy",
                 "split_seed": ARGS["data_seed"], "vocab_size": ARGS["vocab_size"], "task_seed": ARGS["seed"],
                 "steps_per_epoch": steps_per_epoch, "eval_batches": 1, "eval_batch_size": ARGS["eval_bs"]},
        "model": {"kind": "transformer", "d_model": ARGS["n_embd"], "depth": ARGS["n_layer"],
                  "n_heads": ARGS["n_head"], "d_k": ARGS["n_embd"] // ARGS["n_head"],
                  "d_v": ARGS["n_embd"] // ARGS["n_head"], "d_ff": ARGS["widen_factor"] * ARGS["n_embd"],
                  "activation": "relu", "norm": "pre", "final_norm": True, "positions": "rope",
                  "max_positions": 3 * ARGS["n_point_per_row"], "block_bias": False, "head_bias": False,
                  "tied_head": True},
        "init": {"scheme": "gpt", "std": 0.02, "bias": "zero"},
        "train": {"epochs": ARGS["steps"] // steps_per_epoch, "batch_size": ARGS["bs"], "base_lr": ARGS["lr"] / 100,
                  "lr_multiplier": 100, "floor_lr": ARGS["lr"] / 10,
                  "warmup_epochs": ARGS["warmup_steps"] / steps_per_epoch, "weight_decay": ARGS["wd"],
                  "weight_decay_on": "matrices", "betas": [ARGS["beta1"], ARGS["beta2"]], "eps": ARGS["eps"],
                  "grad_clip": None, "loss_mean": "nonzero", "device": "cpu", "threads": 1},
        "seed": ARGS["seed"],
    })


def rope_rows(d_k: int, heads: int) -> torch.Tensor:
    """Row ``i`` of reasonlab's query/key weight is the reference's row ``rope_rows[i]``: per head, the reference's
    even dimensions (first of each rotated pair) then its odd ones (second)."""
    within = torch.cat([torch.arange(0, d_k, 2), torch.arange(1, d_k, 2)])
    return torch.cat([h * d_k + within for h in range(heads)])


def reasonlab_state(prefix: str) -> dict[str, torch.Tensor]:
    """The reference's weights (``init`` or ``trained``) under reasonlab's names and layout."""
    ref = {k.removeprefix(f"{prefix}/"): torch.from_numpy(v) for k, v in ARRAYS.items() if k.startswith(f"{prefix}/")}
    d, heads = ARGS["n_embd"], ARGS["n_head"]
    rows = rope_rows(d // heads, heads)
    state = {"embed.weight": ref["transformer.wte.weight"], "head.weight": ref["transformer.wte.weight"],
             "ln_final.weight": ref["transformer.ln_f.weight"], "ln_final.bias": ref["transformer.ln_f.bias"]}
    for i in range(ARGS["n_layer"]):
        r, o = f"transformer.h.{i}.", f"blocks.{i}."
        q, k, v = ref[r + "attn.to_qkv.weight"].split(d)
        state |= {o + "attn.W_Q.weight": q[rows], o + "attn.W_K.weight": k[rows], o + "attn.W_V.weight": v,
                  o + "attn.W_O.weight": ref[r + "attn.o.weight"], o + "mlp.W_in.weight": ref[r + "mlp.c_fc.weight"],
                  o + "mlp.W_out.weight": ref[r + "mlp.c_proj.weight"]}
        for n in (1, 2):
            state |= {f"{o}ln{n}.{w}": ref[f"{r}ln_{n}.{w}"] for w in ("weight", "bias")}
    return state


REFERENCE_NAME = {"embed.weight": "transformer.wte.weight", "ln_final.weight": "transformer.ln_f.weight",
                  "ln_final.bias": "transformer.ln_f.bias"}


def reference_name(name: str) -> str:
    """The reference's parameter name of one of reasonlab's (the inverse of ``reasonlab_state``'s renaming)."""
    if name in REFERENCE_NAME:
        return REFERENCE_NAME[name]
    _, i, part = name.split(".", 2)
    part = {"attn.W_Q.weight": "attn.to_qkv.weight", "attn.W_K.weight": "attn.to_qkv.weight",
            "attn.W_V.weight": "attn.to_qkv.weight", "attn.W_O.weight": "attn.o.weight",
            "mlp.W_in.weight": "mlp.c_fc.weight", "mlp.W_out.weight": "mlp.c_proj.weight"}.get(part, part)
    for n in (1, 2):
        part = part.replace(f"ln{n}.", f"ln_{n}.")
    return f"transformer.h.{i}.{part}"


@pytest.fixture(scope="module")
def model_at():
    torch.manual_seed(0)  # the model is overwritten at once; a fixed draw keeps the test free of global state
    cfg = run_config()

    def build(prefix: str) -> Transformer:
        model = Transformer(cfg.model, ARGS["vocab_size"])
        missing, unexpected = model.load_state_dict(reasonlab_state(prefix), strict=False)
        assert not missing and not unexpected, (missing, unexpected)
        return model.eval()

    return build


def test_the_id_tasks_follow_the_reference_law():
    """(a) The reference draws its tasks with Python's ``random``, reasonlab with torch's generator, so the lists
    cannot be the same draw; their law is compared: how often each set of 8 tasks (2 rectangles at p 5) comes out
    over 20,000 seeds of each code. A homogeneity chi-square over the outcomes must lie within 6 standard
    deviations of its mean (its value is fixed by the seeds; a law that differs in any rule of the construction —
    which corners, which exclusions, the redraw on a collision — gives outcomes the other never does)."""
    law = json.loads((FIXTURES / "law.json").read_text())
    theirs = Counter(law["counts"])
    ours = Counter(json.dumps(sorted(map(list, rectangular_tasks(law["p"], 4 * law["n_tasks_pl"],
                                                                  torch.Generator().manual_seed(s)))))
                   for s in range(law["draws"]))
    outcomes = set(theirs) | set(ours)
    chi2 = sum((theirs[o] - ours[o]) ** 2 / (theirs[o] + ours[o]) for o in outcomes)
    df = len(outcomes) - 1
    assert abs(chi2 - df) < 6 * math.sqrt(2 * df), (chi2, df)


def test_the_fixture_tasks_are_the_reference_rectangles_and_the_rest_of_the_grid_out_of_distribution():
    """(a) The reference's own task lists have the structure reasonlab's draw gives: bases then, per base, the
    three other corners of an axis-aligned rectangle, no task twice; o.o.d. tasks from the rest of the grid."""
    ids, ood = [tuple(t) for t in CONFIG["id_tasks"]], [tuple(t) for t in CONFIG["ood_tasks"]]
    n = len(ids) // 4
    assert len(set(ids)) == len(ids) == ARGS["n_tasks"] and not set(ids) & set(ood)
    for (a, b), corners in zip(ids[:n], (ids[n + 3 * i : n + 3 * i + 3] for i in range(n)), strict=True):
        (a1, y), (x, b1), (x2, y2) = corners
        assert (a1, b1, x2, y2) == (a, b, x, y) and x not in (a, b) and y not in (a, b, x)
    assert len(ood) == ARGS["n_ood_tasks"] and len(ood) % 8 == 0


def test_the_alpha_split_is_the_reference_split():
    """(b) With ``task.split_draw=numpy`` reasonlab's train and test pairs are the reference's, in its order."""
    task = ModularTask(run_config().task)
    assert task.train_pairs.tolist() == CONFIG["train_pairs"]
    assert task.test_pairs.tolist() == CONFIG["test_pairs"]
    torch_split = ModularTask(run_config().task.model_copy(update={"split_draw": "torch"}))
    assert len(torch_split.train_pairs) == len(CONFIG["train_pairs"]) and torch_split.train_pairs.tolist() != \
        CONFIG["train_pairs"]


def test_reference_sequences_are_reasonlab_sequences():
    """The reference's batches are reasonlab's layout: ``x y z`` per shot, one token per residue, the z targets
    alone scored; so the same task and pairs give the same inputs and targets."""
    x, y = torch.from_numpy(ARRAYS["train_x"][0]).long(), torch.from_numpy(ARRAYS["train_y"][0]).long()
    tokens = torch.cat([x, y[:, -1:]], dim=1).view(len(x), -1, 3)
    p = ARGS["p"]
    pairs = tokens[..., 0] * p + tokens[..., 1]  # rows are task-major: the reference's tasks in order
    ours_x, ours_y = sequences(torch.tensor(CONFIG["id_tasks"]).repeat_interleave(len(x) // ARGS["n_tasks"], 0),
                               pairs, p)
    assert torch.equal(ours_x, x) and torch.equal(ours_y, y)


def test_logits_at_every_position_match_the_reference(model_at):
    """(c) The reference's initial weights in reasonlab's model give its logits at every position within 1e-5."""
    model = model_at("init")
    for x, logits in ((ARRAYS["train_x"][0], ARRAYS["logits_train"]), (ARRAYS["eval/id_test/x"][0],
                                                                        ARRAYS["logits_eval"])):
        with torch.no_grad():
            ours = model(torch.from_numpy(x).long(), "all")
        assert ours.shape == logits.shape
        assert float((ours - torch.from_numpy(logits)).abs().max()) < 1e-5


def test_logits_on_the_scored_positions_path_match_the_reference(model_at):
    """(c) The final block computing only the scored positions (the training step's path) gives the reference's
    logits there within 1e-5."""
    model = model_at("init")
    x, y = torch.from_numpy(ARRAYS["train_x"][0]).long(), torch.from_numpy(ARRAYS["train_y"][0]).long()
    columns = (y != -100).any(0).nonzero().flatten()
    with torch.no_grad():
        ours = model(x, columns)
    theirs = torch.from_numpy(ARRAYS["logits_train"])[:, columns]
    assert len(columns) == ARGS["n_point_per_row"] and float((ours - theirs).abs().max()) < 1e-5


def test_the_loss_on_a_batch_is_the_reference_loss(model_at):
    """(d) ``train.loss_mean=nonzero`` is the reference's ``losses[losses > 0].mean()``: the same loss within 1e-6
    (relative) on its first training batch; the masked mean agrees too while no target is fitted to the last bit."""
    model = model_at("init")
    x, y = torch.from_numpy(ARRAYS["train_x"][0]).long(), torch.from_numpy(ARRAYS["train_y"][0]).long()
    with torch.no_grad():
        for mean in ("nonzero", "targets"):
            assert float(training_loss(model, x, y, mean=mean)) == pytest.approx(float(ARRAYS["loss0"]), rel=1e-6)


def test_the_loss_means_differ_once_a_target_is_fitted_to_the_last_bit():
    """(d) Where a target's loss is exactly 0 the two means differ: the reference's drops it from the count."""
    logits = torch.zeros(2, 3, 5)
    logits[0, 0, 1] = 200.0  # target 1 at (0, 0): probability 1 in fp32, loss exactly 0
    y = torch.tensor([[1, -100, 2], [3, -100, 4]])
    model = lambda x, columns: logits[:, columns]  # noqa: E731 — a stand-in module with fixed logits
    targets = training_loss(model, torch.zeros(2, 3, dtype=torch.long), y, mean="targets")
    nonzero = training_loss(model, torch.zeros(2, 3, dtype=torch.long), y, mean="nonzero")
    assert float(nonzero) == pytest.approx(3 * math.log(5) / 3) and float(targets) == pytest.approx(
        3 * math.log(5) / 4)


def test_weight_decay_groups_are_the_reference_groups(model_at):
    """(e) Decayed: every matrix, the tied embedding among them; not decayed: LayerNorm weights and biases."""
    model = model_at("init")
    cfg = run_config().train
    decayed, kept = ({reference_name(n) for n, p in model.named_parameters() if any(p is q for q in g["params"])}
                     for g in decay_groups(model, cfg))
    assert decayed == set(CONFIG["decay"]) and kept == set(CONFIG["no_decay"])


@pytest.mark.parametrize("step", [0, 1, 9, 10, 11, 55, 99])
def test_the_learning_rate_is_the_reference_schedule(step):
    """(e) The reference's warm-up from 1 % of the peak, then cosine to 10 % over the remaining steps, at the named
    steps (warm-up − 1, warm-up, warm-up + 1, the middle of the cosine, the last) within 1e-12."""
    cfg = run_config()
    assert lr_at(step, cfg.train, cfg.task.steps_per_epoch) == pytest.approx(ARRAYS["lrs"][step], rel=1e-12)


def test_fifty_reference_batches_through_reasonlabs_step_give_the_reference_losses(model_at, tmp_path):
    """(f) From the reference's initial weights, reasonlab's trainer (its AdamW groups, its schedule, its one
    training step) on the reference's 50 batches gives its per-step losses within 1e-5 (relative)."""
    trainer = Trainer(run_config(), tmp_path / "run", progress=False, log=lambda _: None)
    trainer.model.load_state_dict(reasonlab_state("init"), strict=False)
    losses = []
    for step, (x, y) in enumerate(zip(ARRAYS["train_x"], ARRAYS["train_y"], strict=True)):
        trainer.set_lr(step)
        losses.append(float(trainer.train_step(torch.from_numpy(x).long(), torch.from_numpy(y).long())))
    theirs = ARRAYS["losses"]
    assert len(losses) == len(theirs) == 50
    assert np.abs(np.array(losses) / theirs - 1).max() < 1e-5
    trained = reasonlab_state("trained")
    drift = max(float((p - trained[n]).abs().max()) for n, p in trainer.model.state_dict().items() if n in trained)
    assert drift < 1e-5


@pytest.mark.parametrize("name", ["id_test", "ood_test"])
def test_the_reference_evaluation_is_reasonlabs_on_the_same_weights_and_batches(model_at, name):
    """(g) The reference's all-shot and last-shot accuracy of its trained weights on its own evaluation batches
    (i.i.d. pairs, rows shared across tasks, one row per task) are reasonlab's scores of those batches: the mean
    over tasks of its per-task figures is reasonlab's pooled figure (balanced batches). Its loss figure is
    reasonlab's times 3n/(3n − 1): it averages over all 3n − 1 positions and multiplies by 3."""
    model = model_at("trained")
    x = torch.from_numpy(ARRAYS[f"eval/{name}/x"]).long().flatten(0, 1)
    y = torch.from_numpy(ARRAYS[f"eval/{name}/y"]).long().flatten(0, 1)
    score = score_sets(model, {name: EvalSet(x, {"designated": y}, scoring="shots")}, None,
                       torch.device("cpu"))[name]
    shots = ARGS["n_point_per_row"]
    assert score.acc("designated") == pytest.approx(float(ARRAYS[f"eval/{name}/acc"].mean()), abs=1e-6)
    assert score.acc(f"pos_{shots - 1}") == pytest.approx(float(ARRAYS[f"eval/{name}/last_acc"].mean()), abs=1e-6)
    assert score.loss * 3 * shots / (3 * shots - 1) == pytest.approx(float(ARRAYS[f"eval/{name}/loss"].mean()),
                                                                     rel=1e-5)
