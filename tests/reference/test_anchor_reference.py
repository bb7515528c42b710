"""reasonlab's anchor transformer and training step against what the anchor study authors' own code computes.

Reference: the authors' repository ``understanding_dl`` (https://github.com/xuzhiqin1990/understanding_dl), commit
``3bc8533cf019d8bec78325ee572ab624d69137f6``, folder ``code/book_jupyter_composition_task`` (their ``data.py``,
``model.py``, ``train.py`` with ``warmup_scheduler`` 0.3, ``utils/seed.py``). The fixtures in
``fixtures/anchor/`` were written by their code at a small config (d_model 32, depth 2, one head, γ 0.5, their
vocabulary of 201 and 9-token inputs, 10 batches of 64 per epoch) on the CPU in fp32 with one thread, by
``scripts/reference/anchor_fixtures.py`` (``fixtures/anchor/README.md``). No code of theirs is needed here.

reasonlab's side is built as a run is: the ``anchor-trajectory`` profile (the authors' logged settings) with the
fixture's sizes as ``--set`` overrides, ``Trainer`` (``build_task``/``build_model``, AdamW over ``decay_groups``), its
one step ``Trainer.train_step`` and its schedule ``Trainer.set_lr``; their initial weights are loaded by name.

Tolerances (fp32; every comparison is of numbers computed independently on each side):
- logits: 1e-5 absolute (their logits are O(1); reasonlab's SDPA and last-position block reorder the sums);
- one loss on one batch: 1e-6 relative;
- learning rates: 1e-12 relative (float64 values equal in real arithmetic: only rounding order differs);
- per-step losses over 50 steps: 1e-5 relative; weights after them: 1e-6 absolute (they are O(0.1-1)).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import torch

from reasonlab.build import make_task
from reasonlab.config import raw_config, resolve
from reasonlab.kinds.anchor.config import Pair
from reasonlab.train.loop import Trainer
from reasonlab.train.step import training_loss

FIXTURES = Path(__file__).parent / "fixtures" / "anchor"
AUTHORS_COMMIT = "3bc8533cf019d8bec78325ee572ab624d69137f6"
LOGIT_ATOL, LOSS_RTOL, LR_RTOL, STEP_LOSS_RTOL, WEIGHT_ATOL = 1e-5, 1e-6, 1e-12, 1e-5, 1e-6

# The one difference found (fixtures/anchor/README.md): with T the warm-up steps and c(k) = (1 + cos(πk/S))/2 over the
# S cosine steps, reasonlab's default lr at step T + k is floor + (peak - floor)·c(k) (schedule.lr_at); their
# scheduler (warmup_scheduler 0.3 over CosineAnnealingLR) runs the cosine one step late: floor + (peak - floor)·c(k - 1)
# on the torch releases of their runs, whose CosineAnnealingLR.get_lr returned the current lr at its last_epoch 0,
# and that excess scaled by 1/c(1) on torch 2.13, which made the fixtures. ``train.cosine_lag_steps=1`` is the
# one-step lag; the 1/c(1) is of the torch release, not of their code, and is named in the comparison.


# their module names (model.py) -> reasonlab's Transformer's, per decoder layer and outside it
_LAYER = {"dec_self_attn.W_Q": "attn.W_Q", "dec_self_attn.W_K": "attn.W_K", "dec_self_attn.W_V": "attn.W_V",
          "dec_self_attn.fc": "attn.W_O", "dec_self_attn.layernorm": "ln1", "pos_ffn.fc.0": "mlp.W_in",
          "pos_ffn.fc.2": "mlp.W_out", "pos_ffn.layernorm": "ln2"}
_OUTSIDE = {"embedding.tgt_emb": "embed", "embedding.pos_emb": "pos_embed", "projection": "head"}


def reasonlab_name(theirs: str) -> str:
    """``decoder.layers.1.pos_ffn.fc.2.weight`` -> ``blocks.1.mlp.W_out.weight`` (their ``myGPT_specific``'s
    parameter names to reasonlab's ``Transformer``'s); KeyError for a name outside the mapping."""
    module, kind = theirs.rsplit(".", 1)
    if module.startswith("decoder.layers."):
        layer, rest = module.removeprefix("decoder.layers.").split(".", 1)
        return f"blocks.{layer}.{_LAYER[rest]}.{kind}"
    return f"{_OUTSIDE[module]}.{kind}"


def load_state(prefix: str) -> dict[str, torch.Tensor]:
    """Their state dict at ``init`` or ``final`` (after the 50 steps), under reasonlab's names."""
    with np.load(FIXTURES / "weights.npz") as npz:
        return {reasonlab_name(k.removeprefix(prefix + "/")): torch.from_numpy(npz[k])
                for k in npz.files if k.startswith(prefix + "/")}


@pytest.fixture(scope="module")
def ref() -> dict:
    config = json.loads((FIXTURES / "config.json").read_text())
    steps = json.loads((FIXTURES / "steps.json").read_text())
    with np.load(FIXTURES / "batches.npz") as npz:
        batches = {k: torch.from_numpy(npz[k].astype(np.int64)) for k in npz.files}
    with np.load(FIXTURES / "logits.npz") as npz:
        logits = {k.removeprefix("probe/"): torch.from_numpy(npz[k]) for k in npz.files}
    return {"config": config, "steps": steps, "rows": batches.pop("train_rows"),
            "probes": {k.removeprefix("probe/"): v for k, v in batches.items()}, "logits": logits}


def reasonlab_overrides(config: dict) -> list[str]:
    """The fixture's settings as ``--set`` overrides of the ``anchor-trajectory`` profile."""
    a, opt = config["args"], config["optimizer"]
    sizes = config["group_sizes"]
    return [f"seed={a['seed']}", f"init.gamma={a['std_rate']}",
            f"task.vocab_size={a['vocab_size']}", f"task.seq_len={a['seq_len']}",
            f"task.item_min={a['data_min']}", f"task.item_max={a['data_max'] - 1}",  # their randint excludes max
            f"task.split_modulus={a['seq_len']}",  # their generate_mod_list(data_min, data_max, seq_len)
            f"task.n_train_per_pair={sizes['13_xel']}", f"task.n_test_per_pair={sizes['13_xm0']}",
            f"model.d_model={a['d_model']}", f"model.d_k={a['d_k']}", f"model.d_v={a['d_v']}",
            f"model.d_ff={a['d_feedforward']}", f"model.depth={a['n_layers']}", f"model.n_heads={a['n_heads']}",
            f"model.max_positions={a['max_pos']}",
            f"train.batch_size={a['batch_size']}", f"train.base_lr={a['lr']}",
            f"train.lr_multiplier={a['optim_multiplier']}", f"train.floor_lr={a['optim_eta_min']}",
            f"train.warmup_epochs={a['optim_total_epoch']}", f"train.cosine_epochs={a['optim_T_max']}",
            f"train.epochs={a['optim_total_epoch'] + a['optim_T_max']}", f"train.grad_clip={a['clip']}",
            f"train.weight_decay={opt['weight_decay']}", f"train.betas=[{opt['betas'][0]}, {opt['betas'][1]}]",
            f"train.eps={opt['eps']}", "train.weight_decay_on=all", "train.threads=1", "train.device=cpu",
            "train.precision=fp32"]


def trainer_at_their_init(ref: dict, run_dir: Path, more: list[str] = ()) -> Trainer:
    """reasonlab's trainer for the fixture's config (with ``more`` overrides), its model holding their initial
    weights."""
    cfg = resolve(raw_config(None, "anchor-trajectory", [*reasonlab_overrides(ref["config"]), *more]))
    trainer = Trainer(cfg, run_dir, progress=False)
    assert trainer.steps_per_epoch == ref["config"]["num_batches"], "the schedule's epoch differs from theirs"
    trainer.model.load_state_dict(load_state("init"), strict=True)
    return trainer


def train_steps(trainer: Trainer, rows: torch.Tensor, set_lr: Callable[[int], None]) -> list[float]:
    """The fixture's batches through ``Trainer.train_step``, the lr of each step set by ``set_lr(step)``."""
    trainer.model.train()
    losses = []
    for step, batch in enumerate(rows):
        set_lr(step)
        losses.append(float(trainer.train_step(batch[:, :-1], batch[:, -1])))
    return losses


def rel(a, b) -> np.ndarray:
    """|a - b| / |b|, elementwise, in float64."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return np.abs(a - b) / np.abs(b)


def test_fixtures_are_the_pinned_commit(ref):
    """The fixtures name the commit this module names and hold 50 steps."""
    assert ref["config"]["commit"] == AUTHORS_COMMIT
    assert len(ref["rows"]) == len(ref["steps"]["loss"]) == len(ref["steps"]["lr"]) == ref["config"]["steps"] == 50


def test_their_weights_map_one_to_one(ref, tmp_path):
    """Every parameter of theirs has one of reasonlab's, of the same shape, and none of reasonlab's is left over."""
    cfg = resolve(raw_config(None, "anchor-trajectory", reasonlab_overrides(ref["config"])))
    ours = Trainer(cfg, tmp_path / "run", progress=False).model.state_dict()
    theirs = load_state("init")
    assert sorted(theirs) == sorted(ours)
    assert {k: tuple(v.shape) for k, v in theirs.items()} == {k: tuple(v.shape) for k, v in ours.items()}


def test_their_data_follow_reasonlab_task_law(ref, tmp_path):
    """Every fixture sequence (their ``get_data``, through their loader for the training rows): its label is what
    reasonlab's task law gives for its key and anchor pair, its key sits at one of reasonlab's key positions on the
    side of reasonlab's key split its group is on (test keys for the ``xm0`` rows, train keys for the rest), and
    the training rows hold only pairs reasonlab trains on."""
    cfg = resolve(raw_config(None, "anchor-trajectory", reasonlab_overrides(ref["config"])))
    task = make_task(cfg)
    anchors = torch.tensor(cfg.task.anchors)
    groups = {"train": (ref["rows"].flatten(0, 1), False), "heldout_43": (ref["probes"]["heldout_43"], False),
              "test_keys": (ref["probes"]["test_keys"], True)}
    for name, (rows, test) in groups.items():
        table, counts = task._key_table(test)
        x, labels = rows[:, :-1], rows[:, -1]
        pos = torch.isin(x, anchors).int().argmax(1) - 1  # the key: just before the anchor pair
        at = torch.arange(len(x))
        keys, firsts, seconds = x[at, pos], x[at, pos + 1], x[at, pos + 2]
        pairs = [Pair(int(a), int(b)) for a, b in zip(firsts, seconds, strict=True)]
        assert all(int(p) in cfg.task.positions() for p in pos), name
        index = torch.tensor([cfg.task.positions().index(int(p)) for p in pos])
        assert all(int(k) in table[i, : counts[i]] for k, i in zip(keys, index, strict=True)), name
        for pair in set(pairs):
            mine = torch.tensor([p == pair for p in pairs])
            assert torch.equal(task.designated(keys[mine], pair), labels[mine]), (name, pair)
        if name == "train":
            assert set(pairs) <= set(task.trained), "their training rows hold a pair reasonlab holds out"
        if name == "heldout_43":
            assert set(pairs) == set(task.held_out) == {Pair(4, 3)}


def test_logits_match(ref, tmp_path):
    """Their initial weights in reasonlab's transformer: the logits of every position (the analyses' path) and
    of the last (the training path) on each probe batch, within 1e-5."""
    model = trainer_at_their_init(ref, tmp_path / "run").model.eval()
    with torch.no_grad():
        for name, rows in ref["probes"].items():
            theirs = ref["logits"][name]
            every = model(rows[:, :-1], "all")
            last = model(rows[:, :-1])
            assert every.shape == theirs.shape
            assert (every - theirs).abs().max() <= LOGIT_ATOL, name
            assert (last - theirs[:, -1]).abs().max() <= LOGIT_ATOL, name


def test_loss_on_a_batch_matches(ref, tmp_path):
    """reasonlab's training loss (last-token cross-entropy) against their ``test_step`` on the same batch."""
    model = trainer_at_their_init(ref, tmp_path / "run").model
    batches = dict(ref["probes"], train_batch_0=ref["rows"][0])
    with torch.no_grad():
        for name, rows in batches.items():
            ours = float(training_loss(model, rows[:, :-1], rows[:, -1]))
            assert rel(ours, ref["steps"]["probe_loss"][name]) <= LOSS_RTOL, name


def test_learning_rates_match_during_warmup(ref, tmp_path):
    """``Trainer.set_lr`` against their GradualWarmupScheduler, steps 0 to the end of warm-up (its peak)."""
    trainer = trainer_at_their_init(ref, tmp_path / "run")
    warm = ref["config"]["warmup_steps"]
    ours = []
    for step in range(warm + 1):
        trainer.set_lr(step)
        ours.append(trainer.opt.param_groups[0]["lr"])
    assert rel(ours, ref["steps"]["lr"][: warm + 1]).max() <= LR_RTOL


def schedule(trainer: Trainer, steps: int) -> list[float]:
    """``Trainer.set_lr``'s learning rate at steps 0 .. ``steps`` - 1."""
    out = []
    for step in range(steps):
        trainer.set_lr(step)
        out.append(trainer.opt.param_groups[0]["lr"])
    return out


def test_learning_rates_after_warmup_are_theirs_with_the_one_step_lag(ref, tmp_path):
    """With ``train.cosine_lag_steps=1`` reasonlab's schedule after warm-up is theirs: the cosine one step late.
    On torch 2.13 their excess over the floor is that of the torch releases of their runs divided by c(1), the
    cosine's first factor; compared so, within 1e-12. Without the lag (the default) it is not theirs."""
    warm, steps = ref["config"]["warmup_steps"], ref["config"]["steps"]
    trainer = trainer_at_their_init(ref, tmp_path / "lag", ["train.cosine_lag_steps=1"])
    floor, peak = trainer.cfg.train.floor_lr, trainer.cfg.train.base_lr * trainer.cfg.train.lr_multiplier
    span = steps - warm
    c1 = (1 + np.cos(np.pi / span)) / 2
    lagged = schedule(trainer, steps)
    assert lagged[warm] == lagged[warm + 1] == pytest.approx(peak, rel=1e-12)
    theirs = ref["steps"]["lr"][warm + 1 :]
    assert rel([floor + (lr - floor) / c1 for lr in lagged[warm + 1 :]], theirs).max() <= LR_RTOL
    default = schedule(trainer_at_their_init(ref, tmp_path / "default"), steps)
    assert rel([floor + (lr - floor) / c1 for lr in default[warm + 1 :]], theirs).max() > 1e-3


def test_training_step_matches_at_their_learning_rates(ref, tmp_path):
    """reasonlab's one step (loss, backward, clipping at 1, AdamW) on their 50 batches from their initial weights,
    each step at the lr their scheduler gave it: the same per-step losses and the same weights after them."""
    trainer = trainer_at_their_init(ref, tmp_path / "run")

    def their_lr(step: int) -> None:
        for group in trainer.opt.param_groups:
            group["lr"] = ref["steps"]["lr"][step]

    losses = train_steps(trainer, ref["rows"], their_lr)
    assert rel(losses, ref["steps"]["loss"]).max() <= STEP_LOSS_RTOL
    final = load_state("final")
    ours = trainer.model.state_dict()
    assert max(float((ours[k] - v).abs().max()) for k, v in final.items()) <= WEIGHT_ATOL


def test_training_matches_during_warmup(ref, tmp_path):
    """The same with reasonlab's own schedule (``Trainer.set_lr``): the losses of every step whose weights were
    made at warm-up rates only (steps 0 to warm-up + 1; the lrs agree there)."""
    trainer = trainer_at_their_init(ref, tmp_path / "run")
    warm = ref["config"]["warmup_steps"]
    losses = train_steps(trainer, ref["rows"][: warm + 2], trainer.set_lr)
    assert rel(losses, ref["steps"]["loss"][: warm + 2]).max() <= STEP_LOSS_RTOL
