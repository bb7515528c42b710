"""The training loop end to end on a tiny config: layout, determinism, resume, schedule, checkpoints (spec §4).

Over 400 lines: the training loop's contract (layout, determinism, resume, schedule, checkpoints), one property per
test.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from conftest import killed_after, tiny_run, tiny_run_dict
from safetensors.torch import load_file

from reasonlab.checkpoint import complete_steps, load_latest, load_weights, save_checkpoint
from reasonlab.config import ConfigError, ModelConfig, TrainConfig, resolve
from reasonlab.init import apply_init_rate
from reasonlab.models.transformer import Transformer
from reasonlab.schedule import lr_at
from reasonlab.store import Metrics, read_metrics
from reasonlab.sweep.results import run_row
from reasonlab.tasks.base import IGNORE, scored_positions
from reasonlab.train import loop
from reasonlab.train import run as lifecycle
from reasonlab.train.device import autocast
from reasonlab.train.loop import Trainer, build_model, build_task
from reasonlab.train.run import train_run
from reasonlab.train.step import decay_groups, training_loss

STEPS_PER_EPOCH = 15  # 15 trained pairs x 64 sequences / batch 64
EPOCHS = 4


def quiet(_msg: str) -> None:
    pass


def run(cfg, root):
    return train_run(cfg, root, progress=False, log=quiet)


def final_weights(run_dir) -> dict[str, torch.Tensor]:
    step = max(complete_steps(run_dir / "checkpoints"))
    return load_file(str(run_dir / "checkpoints" / f"step-{step}.safetensors"))


def assert_same_weights(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), k


@pytest.fixture(scope="module")
def cfg():
    return tiny_run()


@pytest.fixture(scope="module")
def reference(cfg, tmp_path_factory):
    """One uninterrupted run that the other tests compare against."""
    root = tmp_path_factory.mktemp("reference")
    run_dir, summary = run(cfg, root)
    return root, run_dir, summary


# ---- layout and summary ------------------------------------------------------------------------------------
def test_run_directory_layout(cfg, reference):
    root, run_dir, summary = reference
    assert run_dir == root / cfg.run_id()
    assert [p.name for p in root.iterdir() if p.name != ".locks"] == [cfg.run_id()]  # no .partial left
    for name in ("config.yaml", "metrics.parquet", "summary.json", "events.log"):
        assert (run_dir / name).is_file(), name
    ckpts = run_dir / "checkpoints"
    expected_steps = [STEPS_PER_EPOCH * e for e in range(1, EPOCHS + 1)]
    assert complete_steps(ckpts) == expected_steps
    for step in expected_steps:
        assert (ckpts / f"step-{step}.safetensors").is_file()
    # optimizer state is kept for the two newest checkpoints only (the older one is the fallback if the newest
    # is found damaged)
    assert sorted(p.name for p in ckpts.glob("*.optim.pt")) == [f"step-{s}.optim.pt" for s in expected_steps[-2:]]
    assert not list(run_dir.rglob(".*.tmp-*"))


def test_summary_contents(cfg, reference):
    _, run_dir, summary = reference
    on_disk = json.loads((run_dir / "summary.json").read_text())
    assert on_disk == summary
    for key in ("label", "versions", "git_revision", "config", "final", "best", "histograms", "outcome"):
        assert key in summary, key
    assert summary["run_id"] == cfg.run_id()
    assert summary["status"] == "finished"
    assert summary["config"] == cfg.model_dump(mode="json")
    assert summary["label"] in ("not-fitted", "inferential", "symmetric", "other", "mixed")
    assert set(summary["versions"]) >= {"reasonlab", "torch", "python"}
    # the machine facts that decide float rounding, in the summary and on the run's start line
    machine = summary["machine"]
    assert set(machine) == {"cpu", "kernels", "extensions"} and machine["cpu"] and machine["kernels"]
    assert isinstance(machine["extensions"], list)
    start = (run_dir / "events.log").read_text().splitlines()[0]
    assert f"on {summary['machine']['cpu']} ({summary['machine']['kernels']}), 1 thread(s)" in start
    assert summary["epochs"] == EPOCHS and summary["steps"] == EPOCHS * STEPS_PER_EPOCH
    final = summary["final"]
    for key in (
        "train_acc",
        "seen_test_acc",
        "heldout/4-3/train_keys/inferential",
        "heldout/4-3/train_keys/symmetric",
        "heldout/4-3/test_keys/inferential",
    ):
        assert 0.0 <= final[key] <= 1.0, key
    hist = summary["histograms"]["heldout/4-3/train_keys"]
    assert len(hist) == 43 and sum(hist) == 64
    assert summary["data"]["group_counts"]["4-3/train_keys"] == 64
    assert summary["n_params"] == sum(t.numel() for t in final_weights(run_dir).values())
    times = summary["time_s"]  # where the run's time went: every part measured, the steps the bulk of it
    assert set(times) == {"data", "steps", "evaluation", "checkpoints"}
    assert all(v > 0 for v in times.values()) and times["steps"] <= summary["wall_time_s"]


def test_config_yaml_round_trips(cfg, reference):
    from reasonlab.config import load_yaml, resolve

    _, run_dir, _ = reference
    assert resolve(load_yaml(run_dir / "config.yaml")) == cfg


def test_metrics_rows(reference):
    _, run_dir, summary = reference
    rows = Metrics.read(run_dir / "metrics.parquet")
    losses = rows.where("train", "loss")
    assert [(r.epoch, r.step) for r in losses] == [(e, e * STEPS_PER_EPOCH) for e in range(1, EPOCHS + 1)]
    assert all(math.isfinite(r.value) and r.value > 0 for r in losses)
    cfg_train = tiny_run().train
    for e, v in rows.series("train", "lr"):
        assert v == pytest.approx(lr_at(e * STEPS_PER_EPOCH - 1, cfg_train, STEPS_PER_EPOCH))
    assert rows.last("pooled", "seen_test_acc") == pytest.approx(summary["final"]["seen_test_acc"])
    assert rows.last_epoch("pooled") == EPOCHS
    evaluated = sorted({r.epoch for r in rows if r.split.startswith("heldout/")})
    assert evaluated == list(range(1, EPOCHS + 1))
    norms = rows.at_epoch(EPOCHS, "weights")
    assert {"norm", "norm:embed", "norm:blocks.0", "norm:blocks.1"} <= set(norms)
    parts = sum(v**2 for m, v in norms.items() if m != "norm")
    assert norms["norm"] == pytest.approx(parts**0.5)  # the parts partition the parameters
    weights = load_file(str(run_dir / "checkpoints" / f"step-{EPOCHS * STEPS_PER_EPOCH}.safetensors"))
    assert norms["norm:blocks.0"] == pytest.approx(
        sum(float(t.pow(2).sum()) for k, t in weights.items() if k.startswith("blocks.0.")) ** 0.5)


def test_loss_decreases(tmp_path):
    cfg = tiny_run(train={"epochs": 8, "checkpoint_every": 8, "eval_every": 4, "lr_multiplier": 5.0})
    run_dir, _ = run(cfg, tmp_path)
    losses = [v for _, v in sorted(Metrics.read(run_dir / "metrics.parquet").series("train", "loss"))]
    assert len(losses) == 8
    assert losses[-1] < 0.8 * losses[0]
    assert losses[-1] < min(losses[:2])


# ---- determinism and resume --------------------------------------------------------------------------------
def test_same_config_same_results(cfg, reference, tmp_path):
    _, ref_dir, ref_summary = reference
    run_dir, summary = run(cfg, tmp_path)
    assert summary["final"] == ref_summary["final"]
    assert summary["histograms"] == ref_summary["histograms"]
    assert summary["label"] == ref_summary["label"]
    assert_same_weights(final_weights(run_dir), final_weights(ref_dir))
    assert read_metrics(run_dir / "metrics.parquet") == read_metrics(ref_dir / "metrics.parquet")


def test_different_seed_different_weights(cfg, reference, tmp_path):
    _, ref_dir, _ = reference
    other = cfg.model_copy(update={"seed": 2})
    run_dir, _ = run(other, tmp_path)
    a, b = final_weights(run_dir), final_weights(ref_dir)
    assert not torch.equal(a["embed.weight"], b["embed.weight"])


def test_resume_after_kill_between_epochs(cfg, reference, tmp_path, monkeypatch):
    _, ref_dir, ref_summary = reference
    original = Trainer._epoch

    def killed(self, epoch, step, bar):
        if epoch == 2:  # after epoch 2's checkpoint
            raise KeyboardInterrupt
        return original(self, epoch, step, bar)

    monkeypatch.setattr(Trainer, "_epoch", killed)
    with pytest.raises(KeyboardInterrupt):
        run(cfg, tmp_path)
    partial = tmp_path / f"{cfg.run_id()}.partial"
    assert partial.is_dir() and not (tmp_path / cfg.run_id()).exists()
    assert complete_steps(partial / "checkpoints") == [STEPS_PER_EPOCH, 2 * STEPS_PER_EPOCH]
    monkeypatch.setattr(Trainer, "_epoch", original)

    messages: list[str] = []
    run_dir, summary = train_run(cfg, tmp_path, progress=False, log=messages.append)
    assert any("resuming" in m for m in messages)
    assert not partial.exists()
    assert summary["final"] == ref_summary["final"]
    assert summary["best"] == ref_summary["best"]
    assert summary["histograms"] == ref_summary["histograms"]
    assert summary["steps"] == ref_summary["steps"]
    assert_same_weights(final_weights(run_dir), final_weights(ref_dir))
    assert read_metrics(run_dir / "metrics.parquet") == read_metrics(ref_dir / "metrics.parquet")
    assert "resume from epoch 2" in (run_dir / "events.log").read_text()


def test_resume_after_kill_mid_epoch(cfg, reference, tmp_path, monkeypatch):
    """A kill in the middle of epoch 3 loses the in-memory steps; the rerun replays them identically."""
    _, ref_dir, ref_summary = reference
    calls = {"n": 0}
    original = loop.Progress.advance

    def advance(self):
        calls["n"] += 1
        if calls["n"] == 2 * STEPS_PER_EPOCH + 5:
            raise KeyboardInterrupt
        original(self)

    monkeypatch.setattr(loop.Progress, "advance", advance)
    with pytest.raises(KeyboardInterrupt):
        run(cfg, tmp_path)
    monkeypatch.setattr(loop.Progress, "advance", original)
    run_dir, summary = run(cfg, tmp_path)
    assert summary["final"] == ref_summary["final"]
    assert_same_weights(final_weights(run_dir), final_weights(ref_dir))


def test_resume_from_final_checkpoint(cfg, reference, tmp_path, monkeypatch):
    """Killed after the last checkpoint but before the run directory was published."""
    _, ref_dir, ref_summary = reference

    def no_finish(partial, final):
        raise KeyboardInterrupt

    monkeypatch.setattr(lifecycle, "finish_run", no_finish)
    with pytest.raises(KeyboardInterrupt):
        run(cfg, tmp_path)
    monkeypatch.undo()
    assert (tmp_path / f"{cfg.run_id()}.partial").is_dir()
    run_dir, summary = run(cfg, tmp_path)
    assert summary["final"] == ref_summary["final"]
    assert summary["best"] == ref_summary["best"]
    assert summary["epochs"] == EPOCHS
    assert read_metrics(run_dir / "metrics.parquet") == read_metrics(ref_dir / "metrics.parquet")


def test_kill_before_first_checkpoint_leaves_nothing(cfg, tmp_path, monkeypatch):
    def killed(self, epoch, step, bar):
        raise KeyboardInterrupt

    monkeypatch.setattr(Trainer, "_epoch", killed)
    with pytest.raises(KeyboardInterrupt):
        run(cfg, tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [".locks"]  # only the (released) lock file remains


def test_finished_run_is_not_rerun(cfg, reference, monkeypatch):
    root, run_dir, ref_summary = reference
    before = {p: p.stat().st_mtime_ns for p in run_dir.rglob("*")}

    def boom(*args, **kwargs):
        raise AssertionError("a finished run must not build a trainer")

    monkeypatch.setattr(lifecycle, "Trainer", boom)
    again_dir, summary = run(cfg, root)
    assert again_dir == run_dir
    assert summary == ref_summary
    assert {p: p.stat().st_mtime_ns for p in run_dir.rglob("*")} == before


def test_bad_config_fails_before_touching_disk(tmp_path):
    cfg = tiny_run(train={"batch_size": 5000})
    with pytest.raises(ConfigError, match="batch_size"):
        run(cfg, tmp_path)
    assert list(tmp_path.iterdir()) == []
    cfg = tiny_run(model={"max_positions": 4})
    with pytest.raises(ConfigError, match="max_positions"):
        run(cfg, tmp_path)
    cfg = tiny_run(init={"gamma": 0.5, "overrides": {"mpl": 0.3}})
    with pytest.raises(ConfigError, match="mpl"):
        run(cfg, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_last_partial_batch_is_dropped(tmp_path):
    trainer = Trainer(tiny_run(train={"batch_size": 100}), tmp_path / "never", progress=False, log=quiet)
    assert trainer.n_train == 15 * 64
    assert trainer.steps_per_epoch == 9  # 960 // 100
    assert not (tmp_path / "never").exists()  # building a trainer writes nothing


# ---- schedule ----------------------------------------------------------------------------------------------
def test_lr_schedule_paper_defaults():
    t = TrainConfig()  # base 1e-5, x25, 10 warm-up epochs, 210 epochs
    spe = 370
    total = t.epochs * spe
    assert lr_at(0, t, spe) == pytest.approx(1e-5)
    assert lr_at(10 * spe, t, spe) == pytest.approx(2.5e-4)
    assert lr_at(5 * spe, t, spe) == pytest.approx((1e-5 + 2.5e-4) / 2)
    assert lr_at(total, t, spe) == pytest.approx(1e-5)
    assert lr_at(10 * spe + 100 * spe, t, spe) == pytest.approx((1e-5 + 2.5e-4) / 2)  # cosine midpoint
    warm = [lr_at(s, t, spe) for s in range(0, 10 * spe + 1, 37)]
    assert all(a < b for a, b in zip(warm, warm[1:], strict=False))
    decay = [lr_at(s, t, spe) for s in range(10 * spe, total + 1, 370)]
    assert all(a > b for a, b in zip(decay, decay[1:], strict=False))
    assert min(lr_at(s, t, spe) for s in range(0, total, 97)) >= 1e-5 - 1e-12
    assert max(lr_at(s, t, spe) for s in range(0, total, 97)) <= 2.5e-4 + 1e-12


def test_lr_schedule_custom_floor_and_no_warmup():
    t = TrainConfig(epochs=10, warmup_epochs=0, base_lr=1e-3, lr_multiplier=2.0, floor_lr=0.0)
    assert lr_at(0, t, 5) == pytest.approx(2e-3)
    assert lr_at(50, t, 5) == pytest.approx(0.0, abs=1e-15)
    assert lr_at(500, t, 5) == pytest.approx(0.0, abs=1e-15)  # stays at the floor past the end


# ---- checkpoints -------------------------------------------------------------------------------------------
def test_checkpoint_files_load_safely(cfg, reference):
    _, run_dir, _ = reference
    ckpts = run_dir / "checkpoints"
    step = max(complete_steps(ckpts))
    state = torch.load(ckpts / f"step-{step}.optim.pt", weights_only=True)
    assert {"state", "param_groups"} <= set(state)
    assert state["param_groups"][0]["weight_decay"] == cfg.train.weight_decay
    marker = json.loads((ckpts / f"step-{step}.json").read_text())
    assert marker["step"] == step and marker["epoch"] == EPOCHS
    weights = load_file(str(ckpts / f"step-{step}.safetensors"))
    data = build_task(cfg)
    model = build_model(cfg, data)
    assert weights.keys() == model.state_dict().keys()
    load_weights(ckpts / f"step-{step}.safetensors", model)
    for k, v in model.state_dict().items():
        assert torch.equal(v, weights[k]), k
    # the restored model reproduces the summary's training accuracy
    from reasonlab.evaluate.scoring import score_sets
    from reasonlab.evaluate.set_score import pooled

    scores = score_sets(model, data.eval_sets, None, torch.device("cpu"))
    assert pooled(scores, "train/") == pytest.approx(reference[2]["final"]["train_acc"])


def test_checkpoint_round_trip_with_tied_head(tmp_path):
    cfg = tiny_run(model={"tied_head": True, "head_bias": False})
    data = build_task(cfg)
    model = build_model(cfg, data)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(data.train_inputs[:8]).sum().backward()
    opt.step()
    save_checkpoint(tmp_path, 7, {"epoch": 1, "wall_time_s": 0.0}, model, opt)
    fresh = build_model(cfg.model_copy(update={"seed": 9}), data)
    fresh_opt = torch.optim.AdamW(fresh.parameters(), lr=1e-3)
    state = load_latest(tmp_path, fresh, fresh_opt)
    assert state["step"] == 7 and state["epoch"] == 1
    assert fresh.head.weight is fresh.embed.weight
    for k, v in model.state_dict().items():
        assert torch.equal(v, fresh.state_dict()[k]), k
    assert torch.equal(fresh_opt.state_dict()["state"][0]["exp_avg"], opt.state_dict()["state"][0]["exp_avg"])


def test_incomplete_checkpoint_is_ignored(tmp_path):
    cfg = tiny_run()
    data = build_task(cfg)
    model = build_model(cfg, data)
    opt = torch.optim.AdamW(model.parameters())
    save_checkpoint(tmp_path, 3, {"epoch": 1, "wall_time_s": 0.0}, model, opt)
    (tmp_path / "step-6.safetensors").write_bytes(b"half written")  # no marker: not a checkpoint
    assert complete_steps(tmp_path) == [3]
    assert load_latest(tmp_path, model, opt)["step"] == 3
    assert load_latest(tmp_path / "missing", model, opt) is None


def test_weight_decay_on_matrices_spares_norms_and_biases():
    cfg = tiny_run(model={"norm": "pre", "final_norm": True}, train={"weight_decay_on": "matrices"})
    model = loop.build_model(cfg, loop.build_task(cfg))
    decayed, spared = decay_groups(model, cfg.train)
    names = {id(p): n for n, p in model.named_parameters()}
    assert all(p.dim() >= 2 for p in decayed["params"]) and "weight_decay" not in decayed
    assert spared["weight_decay"] == 0.0
    assert {names[id(p)] for p in spared["params"]} >= {"ln_final.weight", "ln_final.bias", "head.bias"}
    assert len(decay_groups(model, tiny_run().train)) == 1  # "all": one group, as before the option existed


def test_a_weight_decay_switch_fires_once_below_its_loss_and_resumes_with_the_decay_it_had(tmp_path, monkeypatch):
    base = tiny_run_dict(model={"norm": "pre", "final_norm": True},
                         train={**tiny_run_dict()["train"], "weight_decay": 0.1, "weight_decay_on": "matrices"})
    plain, _ = run(resolve(base), tmp_path / "plain")
    losses = [r.value for r in read_metrics(plain / "metrics.parquet") if r.split == "train" and r.metric == "loss"]
    assert losses[1] < losses[0]
    bar = (losses[0] + losses[1]) / 2  # crossed after epoch 2 at the earliest: epoch 1's own loss is above it
    base["train"]["weight_decay_switch"] = {"loss_below": bar, "weight_decay": 0.5}
    cfg = resolve(base)
    assert cfg.run_id() != plain.name  # a different run; without a switch, the ids of every earlier run stand
    run_dir, _ = run(cfg, tmp_path / "whole")
    rows = read_metrics(run_dir / "metrics.parquet")
    loss = [r.value for r in rows if r.metric == "loss" and r.split == "train"]
    decay = [r.value for r in rows if r.metric == "weight_decay"]
    first = next(i for i, v in enumerate(loss) if v < bar)
    assert loss[:first + 1] == losses[:first + 1]  # the same run until the switch
    assert decay == [0.1] * first + [0.5] * (len(loss) - first) and 0 < first < len(loss) - 1
    assert (run_dir / "events.log").read_text().count("weight decay 0.1 -> 0.5") == 1
    # resumed after the switch, the run keeps the stronger decay: the same weights as the run never stopped
    partial = killed_after(cfg, tmp_path / "resumed", first + 1, monkeypatch)
    assert complete_steps(partial / "checkpoints")[-1] == (first + 1) * STEPS_PER_EPOCH
    resumed, _ = run(cfg, tmp_path / "resumed")
    assert_same_weights(final_weights(resumed), final_weights(run_dir))


def test_precision_auto_is_fp32_on_cpu_and_bf16_autocasts(cfg, reference, tmp_path):
    _, ref_dir, ref_summary = reference
    auto = cfg.model_copy(update={"train": cfg.train.model_copy(update={"precision": "auto"})})
    assert auto.run_id() != cfg.run_id()  # a non-default precision is part of the run's identity
    run_dir, summary = run(auto, tmp_path / "auto")
    assert summary["final"] == ref_summary["final"]  # auto on a CPU run: plain fp32, the same numbers
    assert_same_weights(final_weights(run_dir), final_weights(ref_dir))
    trainer = Trainer(cfg.model_copy(update={"train": cfg.train.model_copy(update={"precision": "bf16"})}),
                      tmp_path / "bf16", progress=False, log=quiet)
    x, y = trainer.x[:8], trainer.y[:8]
    with trainer.autocast:
        assert trainer.model(x).dtype == torch.bfloat16  # forward under bf16 autocast ...
    trainer._loss(x, y).backward()
    assert all(p.dtype == torch.float32 for p in trainer.model.parameters())  # ... fp32 master weights
    assert autocast(cfg.train, torch.device("cpu")).__class__.__name__ == "nullcontext"


def test_escape_points_follow_the_metrics(reference):
    """The summary's escape points are the first evaluations at which seen-pair accuracy reaches 0.5 and 0.9,
    with Σlr equal to the schedule summed over the steps so far."""
    _, run_dir, summary = reference
    rows = Metrics.read(run_dir / "metrics.parquet")
    cfg_train = tiny_run().train
    sums = dict(rows.series("train", "lr_sum", clock="step"))
    for s, v in sums.items():
        assert v == pytest.approx(sum(lr_at(i, cfg_train, STEPS_PER_EPOCH) for i in range(s)))
    seen = sorted(rows.where("pooled", "seen_test_acc"))
    for key, level in (("at50", 0.5), ("at90", 0.9)):
        first = next(((r.epoch, r.step) for r in seen if r.value >= level), None)
        point = summary["escape"][key]
        if first is None:
            assert point is None
        else:
            assert (point["epoch"], point["step"], point["lr_sum"]) == (first[0], first[1], sums[first[1]])
            assert set(point["heldout"]) >= {"4-3/train_keys/inferential", "4-3/train_keys/symmetric"}
    assert any(p is not None for p in summary["escape"].values()) or max(r.value for r in seen) < 0.5
    row = run_row(summary)  # the results table carries each escape point and what (4,3) answered there
    for key, point in summary["escape"].items():
        assert row[f"escape.{key}.lr_sum"] == (point or {}).get("lr_sum")
        for name, value in ((point or {}).get("heldout") or {}).items():
            assert row[f"escape.{key}.heldout." + name.replace("/", ".")] == value


def test_flush_to_zero_is_on_during_a_run_and_restored_after(tmp_path, monkeypatch):
    """Denormals slow CPU kernels ~100x: training flushes them, and leaves the caller's process as it was."""
    from reasonlab.numerics import flushing

    seen = []
    original = Trainer.train_step

    def spy(self, x, y):
        seen.append(flushing())
        return original(self, x, y)

    monkeypatch.setattr(Trainer, "train_step", spy)
    assert not flushing()
    run(tiny_run(train={"epochs": 1}), tmp_path)
    assert seen and all(seen) and not flushing()


def test_the_allocator_keeps_freed_memory_during_a_run_and_is_reset_after(tmp_path, monkeypatch):
    """glibc is told to keep a step's freed tensors (no mappings, no trimming) while a run trains, once however
    deeply runs nest, and is given its default limits back, and the kept memory, when the outermost run ends."""
    from reasonlab import allocator

    class Libc:
        def __init__(self):
            self.settings, self.trims = {}, 0

        def mallopt(self, param, value):
            self.settings[param] = value
            return 1

        def malloc_trim(self, pad):
            self.trims += 1

    libc, seen = Libc(), []
    monkeypatch.setattr(allocator, "_libc", lambda: libc)
    original = Trainer.train_step

    def spy(self, x, y):
        seen.append(dict(libc.settings))
        return original(self, x, y)

    monkeypatch.setattr(Trainer, "train_step", spy)
    with allocator.keep_freed_memory():
        run(tiny_run(train={"epochs": 1}), tmp_path)
        assert libc.settings == allocator.KEPT and libc.trims == 0  # the outer scope still holds
    assert seen and all(s == allocator.KEPT for s in seen)
    assert libc.settings == allocator.DEFAULTS and libc.trims == 1


def test_a_frozen_copy_names_its_commit(tmp_path):
    """Long runs train from a copy made by ``git archive``, outside any checkout: the commit it came from is what
    ``git archive`` substituted into REVISION; the file as it stands in a checkout names none."""
    import subprocess

    from reasonlab.store import _archived_revision, git_revision

    commit = "0123456789abcdef0123456789abcdef01234567"
    (tmp_path / "REVISION").write_text(commit + "\n")
    assert _archived_revision(tmp_path) == commit
    (tmp_path / "REVISION").write_text("$Format:%H$\n")
    assert _archived_revision(tmp_path) is None
    assert _archived_revision(tmp_path / "missing") is None
    repo = Path(__file__).resolve().parents[2]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True)
    if head.returncode == 0:  # a checkout (CI clones one): the checkout's own commit wins
        assert git_revision().split("+")[0] == head.stdout.strip()


def test_snapshots_at_fractions_of_training_leave_the_run_unchanged(tmp_path):
    """Weights saved at chosen fractions of training, mid-epoch if need be: the same run id and numbers as without
    them, never a resume point, loadable by name, and at an epoch's end bitwise the epoch checkpoint's weights."""
    from safetensors.torch import load_file

    from reasonlab.analysis.loading import load_at_fraction, load_trained
    from reasonlab.checkpoint import resumable_steps, snapshot_steps

    plain = resolve(tiny_run_dict())
    snap = resolve(tiny_run_dict(train={"snapshot_fractions": [0.1, 0.25]}))  # 60 steps: steps 6 and 15 (epoch 1)
    assert snap.run_id() == plain.run_id()
    a, summary_a = train_run(plain, tmp_path / "a", progress=False)
    b, summary_b = train_run(snap, tmp_path / "b", progress=False)
    assert summary_a["final"] == summary_b["final"]
    ckpt = b / "checkpoints"
    assert snapshot_steps(ckpt) == {6: 0.1, 15: 0.25}
    assert 6 not in resumable_steps(ckpt) and not (ckpt / "snapshot-6.optim.pt").exists()
    assert load_file(ckpt / "snapshot-15.safetensors").keys() == load_file(ckpt / "step-15.safetensors").keys()
    assert all(torch.equal(load_file(ckpt / "snapshot-15.safetensors")[k], v)
               for k, v in load_file(ckpt / "step-15.safetensors").items())
    early = load_trained(b, "snapshot-6")[1]
    final = load_trained(b, "final")[1]
    assert any(not torch.equal(p, q) for p, q in zip(early.parameters(), final.parameters(), strict=True))
    epoch, model = load_at_fraction(b, 0.1)
    assert epoch == 1 and all(torch.equal(p, q) for p, q in zip(model.parameters(), early.parameters(), strict=True))
    with pytest.raises(Exception, match="snapshot-6"):
        load_trained(b, "snapshot-7")
    with pytest.raises(Exception, match="snapshot_fractions"):
        resolve(tiny_run_dict(train={"snapshot_fractions": [1.5]}))


def test_snapshots_at_absolute_steps_skip_steps_past_the_end(tmp_path):
    """snapshot_steps keeps the weights at the same step whatever the run's length (a statistic read at step
    500 of a long and of a short run); steps past the last are skipped; the run id and numbers do not change."""
    from safetensors.torch import load_file

    from reasonlab.checkpoint import snapshot_steps

    plain = resolve(tiny_run_dict())
    snap = resolve(tiny_run_dict(train={"snapshot_steps": [7, 30, 1000]}))  # 60 steps in all
    assert snap.run_id() == plain.run_id()
    a, summary_a = train_run(plain, tmp_path / "a", progress=False)
    b, summary_b = train_run(snap, tmp_path / "b", progress=False)
    assert summary_a["final"] == summary_b["final"]
    ckpt = b / "checkpoints"
    assert snapshot_steps(ckpt) == {7: 7 / 60, 30: 0.5}
    assert all(torch.equal(load_file(ckpt / "snapshot-30.safetensors")[k], v)
               for k, v in load_file(ckpt / "step-30.safetensors").items())
    with pytest.raises(Exception, match="snapshot_steps"):
        resolve(tiny_run_dict(train={"snapshot_steps": [0]}))


def test_training_loss_on_scored_positions_equals_the_full_pass():
    """Per-token targets scored at one position in three: the loss and its gradients (the final block computing
    the scored positions alone) equal cross-entropy over the full pass's logits with the rest ignored."""
    cfg = ModelConfig(d_model=24, depth=2, n_heads=2, d_k=6, d_v=6, d_ff=32, norm="pre", final_norm=True,
                      positions="rope", max_positions=11, block_bias=False, head_bias=False, tied_head=True)
    model = Transformer(cfg, 13)
    apply_init_rate(model, 0.3, generator=torch.Generator().manual_seed(0))
    gen = torch.Generator().manual_seed(1)
    x, y = torch.randint(13, (6, 11), generator=gen), torch.randint(13, (6, 11), generator=gen)
    y[:, torch.arange(11) % 3 != 1] = IGNORE
    y[2, 4] = IGNORE  # a scored column some rows skip
    assert not isinstance(scored_positions(y), str) and scored_positions(y).tolist() == [1, 4, 7, 10]

    def grads(loss: torch.Tensor) -> list[torch.Tensor]:
        return list(torch.autograd.grad(loss, list(model.parameters())))

    fast = training_loss(model, x, y)
    plain = F.cross_entropy(model(x, "all").flatten(0, 1), y.flatten(), ignore_index=IGNORE)
    assert torch.allclose(fast, plain, rtol=1e-5, atol=1e-6)
    for g_fast, g_plain in zip(grads(fast), grads(plain), strict=True):
        assert torch.allclose(g_fast, g_plain, rtol=1e-4, atol=1e-6)
    assert scored_positions(torch.zeros(2, 5, dtype=torch.long)) == "all"


def test_a_trainer_just_built_trains(tmp_path):
    """Trainer state (optimizer, counters, the pace of checkpoints and progress) is created in ``__init__``;
    ``begin`` only restores a checkpoint's. So an epoch trains on a trainer just built, as the benchmarks do, from
    step 0 with a fresh optimizer."""
    trainer = Trainer(tiny_run(train={"epochs": 1}), tmp_path, progress=False, log=quiet)
    assert (trainer.epoch, trainer.step, trainer.saved_step, trainer.diverged) == (0, 0, 0, None)
    assert not trainer.opt.state and trainer.pace.total == STEPS_PER_EPOCH
    step, loss = trainer._epoch(0, 0, loop.Progress.silent())
    assert step == STEPS_PER_EPOCH and math.isfinite(loss) and trainer.diverged is None
    assert all(s["step"] == STEPS_PER_EPOCH for s in trainer.opt.state.values())
