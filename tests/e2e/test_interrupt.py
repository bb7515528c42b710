"""Ctrl-C keeps the work: a stop asked for by SIGINT or SIGTERM lands between two steps, saves a resume checkpoint
there (mid-epoch if need be) and exits 130 with one line; the rerun resumes and ends with the numbers of an
uninterrupted run. Wall-time checkpoints (``train.checkpoint_minutes``) bound what a kill -9 loses. Progress is
written from the first step."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import yaml
from conftest import stop_after, tiny_run, tiny_run_dict
from safetensors.torch import load_file

from reasonlab.checkpoint import complete_steps
from reasonlab.config import resolve
from reasonlab.errors import Interrupted
from reasonlab.records import load_progress
from reasonlab.store import read_metrics, unfinished_runs
from reasonlab.sweep.grid import load_sweep, sweep_configs
from reasonlab.train import interrupt, loop
from reasonlab.train.ensemble import Stack, train_ensemble
from reasonlab.train.loop import Trainer
from reasonlab.train.run import train_run

pytestmark = pytest.mark.slow  # real Ctrl-C of real commands, and runs stopped and resumed: the harness

SRC = str(Path(__file__).parents[2] / "src")
COMPARED = ("label", "final", "best", "histograms", "steps", "epochs", "outcome")


def quiet(_msg: str) -> None:
    pass


def assert_same_run(run_dir: Path, ref_dir: Path) -> None:
    """Same figures, the same metrics rows and the same final weights as the uninterrupted run."""
    summary, ref = (json.loads((d / "summary.json").read_text()) for d in (run_dir, ref_dir))
    assert {k: summary[k] for k in COMPARED} == {k: ref[k] for k in COMPARED}
    assert read_metrics(run_dir / "metrics.parquet") == read_metrics(ref_dir / "metrics.parquet")
    last = (max(complete_steps(d / "checkpoints")) for d in (run_dir, ref_dir))
    a, b = (load_file(str(d / "checkpoints" / f"step-{s}.safetensors")) for d, s in zip((run_dir, ref_dir), last,
                                                                                          strict=True))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert complete_steps(run_dir / "checkpoints") == complete_steps(ref_dir / "checkpoints")  # no resume point


PACE = str(Path(__file__).resolve().parents[1] / "pace_hook")  # its sitecustomize.py: the only reader of the variable


def env(pace: float = 0.0) -> dict[str, str]:
    """The commands' environment; ``pace`` seconds of sleep after each step (tests/pace_hook) keep a run training
    long enough for a signal to land inside it on any CPU, without changing what it computes."""
    path = os.pathsep.join([SRC, PACE, os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path, "OMP_NUM_THREADS": "1", "REASONLAB_TEST_STEP_SECONDS": str(pace)}


# ---- a sweep stopped by a signal -------------------------------------------------------------------------------
STEPS = 3 * 960 // 8  # 3 epochs of 120 steps (15 pairs x 64 sequences, batch 8)


@pytest.fixture(scope="module")
def sweep_file(tmp_path_factory) -> Path:
    base = tiny_run_dict(train={"epochs": 3, "batch_size": 8, "checkpoint_every": 100, "checkpoint_log": 0})
    base["train"].pop("threads")
    path = tmp_path_factory.mktemp("spec") / "tiny.yaml"
    path.write_text(yaml.safe_dump({"name": "tiny", "config": base, "grid": {"init.gamma": [0.3, 0.8]}}))
    return path


@pytest.fixture(scope="module")
def reference(sweep_file, tmp_path_factory) -> dict[str, Path]:
    """The sweep's runs trained uninterrupted, one thread each as in the sweep's workers."""
    root = tmp_path_factory.mktemp("reference")
    dirs = {}
    for cfg in sweep_configs(load_sweep(sweep_file))[0]:
        cfg = cfg.model_copy(update={"train": cfg.train.model_copy(update={"threads": 1})})
        dirs[cfg.run_id()] = train_run(cfg, root, progress=False, log=quiet)[0]
    return dirs


def start_sweep(sweep_file: Path, out: Path) -> tuple[subprocess.Popen, list[str]]:
    """The sweep in its own session, returned once both of its runs train (their progress shows a step)."""
    cmd = [sys.executable, "-m", "reasonlab", "sweep", str(sweep_file), "--out", str(out), "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(pace=0.02),
                            start_new_session=True, text=True)  # >= 7 s a run, whatever the CPU
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        partials = unfinished_runs(out / "tiny")
        steps = [_step(p) for p in partials]
        if len(partials) == 2 and all(s is not None and s > 0 for s in steps):
            return proc, cmd
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("the sweep's runs did not start training")


def _step(partial: Path) -> int | None:
    try:
        return load_progress(partial)["step"]
    except Exception:  # noqa: BLE001 - not written yet, or being replaced
        return None


def stop_and_check(proc: subprocess.Popen, send) -> tuple[str, float]:  # noqa: ANN001 - a function of the process
    """Send the signal(s), then: exit 130 within the deadline, one line saying where the runs stopped."""
    sent = time.monotonic()
    send(proc)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        subprocess.run(["pkill", "-9", "-g", str(proc.pid)], capture_output=True)  # whatever is left, if any
    took = time.monotonic() - sent
    assert proc.returncode == 130, err[-2000:]
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0], took


def rerun_equals_reference(cmd: list[str], out: Path, reference: dict[str, Path]) -> None:
    saved = {p.name.removesuffix(".partial"): complete_steps(p / "checkpoints")[-1]
             for p in unfinished_runs(out / "tiny")}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    said = next((line for line in (done.stdout + done.stderr).splitlines() if line.startswith("resuming ")), "")
    assert said.startswith(f"resuming {len(saved)} of {len(saved)} runs from their checkpoints: "), done.stdout[:2000]
    assert all(f"{run_id} at step {step}" in said for run_id, step in saved.items()), said
    for run_id, ref_dir in reference.items():
        assert_same_run(out / "tiny" / run_id, ref_dir)


@pytest.mark.parametrize("target", ["group", "parent"])
def test_sigint_at_a_random_point_keeps_the_work_and_the_rerun_ends_as_uninterrupted(target, sweep_file, reference,
                                                                                    tmp_path):
    """Ctrl-C as a terminal sends it (the whole process group), or SIGINT to the sweep's process alone (kill -INT,
    a scheduler): every run stops at the end of its step and saves there; nothing of it is deleted."""
    out = tmp_path / "store"
    proc, cmd = start_sweep(sweep_file, out)
    time.sleep(random.Random(os.getpid()).uniform(0, 1))
    line, took = stop_and_check(proc, lambda p: os.killpg(p.pid, signal.SIGINT) if target == "group"
                                else os.kill(p.pid, signal.SIGINT))
    stopped = re.findall(r"step (\d+) of (\d+)", line)
    assert line.startswith("interrupted at step ") and line.endswith("run the same command to resume")
    assert len(stopped) == 2 and all(int(m) == STEPS and 0 < int(n) < STEPS for n, m in stopped), line
    assert took < 20, f"{took:.1f} s from the signal to the exit"  # ~5 s here, niced, on 2 fully loaded cores
    for partial in unfinished_runs(out / "tiny"):
        steps = complete_steps(partial / "checkpoints")
        assert steps and steps[-1] in {int(n) for n, _ in stopped}  # saved where it stopped
        assert "resume checkpoint" in (partial / "events.log").read_text()
    rerun_equals_reference(cmd, out, reference)


def test_sigterm_stops_the_sweep_as_sigint_does(sweep_file, reference, tmp_path):
    out = tmp_path / "store"
    proc, cmd = start_sweep(sweep_file, out)
    line, _ = stop_and_check(proc, lambda p: os.kill(p.pid, signal.SIGTERM))
    assert len(re.findall(r"step \d+ of \d+", line)) == 2
    assert len(unfinished_runs(out / "tiny")) == 2
    rerun_equals_reference(cmd, out, reference)


def test_a_second_sigint_exits_at_once(sweep_file, tmp_path):
    out = tmp_path / "store"
    proc, _ = start_sweep(sweep_file, out)

    def twice(p: subprocess.Popen) -> None:
        os.kill(p.pid, signal.SIGINT)
        time.sleep(0.05)
        os.kill(p.pid, signal.SIGINT)

    line, _ = stop_and_check(proc, twice)
    assert line.startswith("interrupted") or line.startswith("stopped at once"), line
    assert len(unfinished_runs(out / "tiny")) == 2  # the directories stay, whatever was saved


# ---- the train command, inside its first (long) epoch ----------------------------------------------------------
def test_ctrl_c_inside_the_first_epoch_of_train_saves_mid_epoch_and_resumes_to_the_same_numbers(tmp_path):
    """A run of one epoch of 1,600 steps: the stop lands inside it; the run directory is kept with a checkpoint
    there, and the same command finishes the run as if never stopped. The interrupted command is paced (8 s for the
    epoch) so that the epoch outlasts the first progress record after step 0 (every 2 s) on any CPU."""
    data = tiny_run_dict(task={"n_train_per_pair": 320}, train={"epochs": 1, "batch_size": 3, "checkpoint_every": 100,
                                                                 "checkpoint_log": 0, "warmup_epochs": 0.5})
    cfg = resolve(data)
    per_epoch = 15 * 320 // 3
    ref_dir, _ = train_run(cfg, tmp_path / "reference", progress=False, log=quiet)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(data))
    cmd = [sys.executable, "-m", "reasonlab", "train", str(path), "--out", str(tmp_path / "store")]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(pace=0.005), text=True,
                            start_new_session=True)
    partial = tmp_path / "store" / "adhoc" / f"{cfg.run_id()}.partial"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not ((_step(partial) or 0) > 0):
        time.sleep(0.05)
    line, _ = stop_and_check(proc, lambda p: os.killpg(p.pid, signal.SIGINT))
    n, m = map(int, re.fullmatch(r"interrupted at step (\d+) of (\d+); run the same command to resume", line).groups())
    assert 0 < n < per_epoch and m == per_epoch  # inside the first epoch
    assert complete_steps(partial / "checkpoints") == [n]
    marker = json.loads((partial / "checkpoints" / f"step-{n}.json").read_text())
    assert marker["epoch"] == 0 and len(marker["epoch_losses"]) == n and marker["resume_only"]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env(), timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"from epoch 0 step {n}" in done.stdout + done.stderr
    assert_same_run(tmp_path / "store" / "adhoc" / cfg.run_id(), ref_dir)


# ---- in process: the stop, mid-epoch resume and wall-time checkpoints -------------------------------------------
@pytest.fixture(scope="module")
def tiny_reference(tmp_path_factory):
    cfg = tiny_run(train={"checkpoint_every": 2, "checkpoint_log": 0})
    return cfg, train_run(cfg, tmp_path_factory.mktemp("tiny"), progress=False, log=quiet)[0]


@pytest.mark.parametrize("at", [7, 15, 16, 31])  # inside epoch 1, at its last step, at epoch 2's first, inside 3
def test_a_stop_between_steps_resumes_to_the_same_numbers(at, tiny_reference, tmp_path, monkeypatch):
    cfg, ref_dir = tiny_reference
    stop_after(monkeypatch, Trainer, "train_step", at)
    with pytest.raises(Interrupted, match=f"interrupted at step {at} of 60"):
        train_run(cfg, tmp_path, progress=False, log=quiet)
    monkeypatch.undo()
    interrupt._asked = False
    partial = tmp_path / f"{cfg.run_id()}.partial"
    assert max(complete_steps(partial / "checkpoints")) == at
    progress = load_progress(partial)
    assert progress["step"] == at and progress["steps"] == 60
    assert_same_run(train_run(cfg, tmp_path, progress=False, log=quiet)[0], ref_dir)


def test_a_stacked_ensemble_stopped_mid_epoch_resumes_stacked_to_the_same_numbers(tmp_path, monkeypatch):
    cfgs = [tiny_run(init={"gamma": g}, train={"checkpoint_log": 0, "checkpoint_every": 2}) for g in (0.3, 0.8)]
    reference = train_ensemble(cfgs, tmp_path / "reference")
    stop_after(monkeypatch, Stack, "train_step", 20)
    with pytest.raises(Interrupted, match="interrupted at step 20 of 60"):
        train_ensemble(cfgs, tmp_path / "store")
    monkeypatch.undo()
    interrupt._asked = False
    for cfg in cfgs:
        marker = json.loads((tmp_path / "store" / f"{cfg.run_id()}.partial" / "checkpoints" / "step-20.json")
                            .read_text())
        assert marker["resume_only"] and len(marker["epoch_losses"]) == 5
    stacked = {"n": 0}
    original = Stack.train_epoch

    def counted(self, epoch, step):
        stacked["n"] += 1
        return original(self, epoch, step)

    monkeypatch.setattr(Stack, "train_epoch", counted)
    resumed = train_ensemble(cfgs, tmp_path / "store")
    assert stacked["n"] == 3  # epochs 2 (from its 6th step), 3 and 4, stacked again
    for (run_dir, _), (ref_dir, _) in zip(resumed, reference, strict=True):
        assert_same_run(run_dir, ref_dir)


def test_checkpoints_by_wall_time_bound_what_a_kill_loses(tiny_reference, tmp_path, monkeypatch):
    """With ``checkpoint_minutes`` tiny, resume checkpoints land mid-epoch as the run goes; a kill (no chance to
    save) then loses only the steps since the newest, the run resumes from it, and the finished run keeps only the
    checkpoints of its cadence."""
    cfg, ref_dir = tiny_reference
    timed = cfg.model_copy(update={"train": cfg.train.model_copy(update={"checkpoint_minutes": 0.001})})
    assert timed.run_id() == cfg.run_id()  # an execution field: the same run
    calls = {"n": 0}
    original = loop.Progress.advance

    def killed_at_step_40(self):
        calls["n"] += 1
        if calls["n"] == 40:
            raise KeyboardInterrupt
        original(self)

    slow_step = Trainer.train_step

    def step_60ms(self, x, y):
        time.sleep(0.06)
        return slow_step(self, x, y)

    monkeypatch.setattr(loop.Progress, "advance", killed_at_step_40)
    monkeypatch.setattr(Trainer, "train_step", step_60ms)
    with pytest.raises(KeyboardInterrupt):
        train_run(timed, tmp_path, progress=False, log=quiet)
    monkeypatch.undo()
    partial = tmp_path / f"{cfg.run_id()}.partial"
    saved = complete_steps(partial / "checkpoints")
    resume_points = [s for s in saved if s % 15]
    assert resume_points and 30 < max(saved) < 40, saved  # by wall time, inside epoch 3
    assert (partial / "events.log").read_text().count("resume checkpoint") >= 10
    messages: list[str] = []
    run_dir, _ = train_run(timed, tmp_path, progress=False, log=messages.append)
    assert any(f"step {max(saved)}" in m for m in messages)
    assert_same_run(run_dir, ref_dir)


def test_a_run_directory_is_kept_once_a_step_has_trained(tmp_path, monkeypatch):
    """Killed (no save) inside its first epoch, before any checkpoint: the directory stays."""
    cfg = tiny_run()
    calls = {"n": 0}
    original = loop.Progress.advance

    def killed(self):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        original(self)

    monkeypatch.setattr(loop.Progress, "advance", killed)
    with pytest.raises(KeyboardInterrupt):
        train_run(cfg, tmp_path, progress=False, log=quiet)
    partial = tmp_path / f"{cfg.run_id()}.partial"
    assert partial.is_dir() and not complete_steps(partial / "checkpoints")
    assert load_progress(partial)["step"] < 3  # written when training began


def test_progress_is_written_from_the_first_step_with_speed_and_eta(tmp_path, monkeypatch):
    cfg = tiny_run()
    seen: list[dict] = []
    original = Trainer.report_step

    def spy(self, epoch, step, losses):
        original(self, epoch, step, losses)
        seen.append(load_progress(self.run_dir))

    monkeypatch.setattr(interrupt, "PROGRESS_EVERY_S", 0.0)
    monkeypatch.setattr(Trainer, "report_step", spy)
    train_run(cfg, tmp_path, progress=False, log=quiet)
    first, later = seen[0], seen[5]
    assert first["step"] == 0 and first["steps"] == 60 and first["loss"] is None  # before the first step
    assert later["step"] == 5 and later["steps_per_s"] > 0 and later["eta_s"] > 0 and later["loss"] > 0
    assert later["epoch"] == 0 and later["evaluated_epoch"] is None


def test_train_without_a_terminal_prints_step_lines_from_the_first_step(tmp_path, monkeypatch):
    """``train`` piped: a line after the first step, then at most every LINE_EVERY_S, beside one per epoch."""
    from reasonlab.train import progress

    lines: list[str] = []
    monkeypatch.setattr(progress, "LINE_EVERY_S", 3600.0)
    train_run(tiny_run(), tmp_path, progress="lines", log=lines.append)
    steps = [line for line in lines if " step " in line]
    assert re.fullmatch(r"γ0\.5 d2 s1 step 1/60 · [\d.]+ steps/s, 0:00:\d\d elapsed, ETA \d:\d\d:\d\d", steps[0])
    assert "ep 1/4 loss" in steps[1] and "step 15/60" in steps[1]  # the epoch's line; no other within the hour
    assert len(steps) == 5
