"""Shared fixtures: one torch thread (the suite must stay cheap on a busy 2-core box) and tiny configs."""

from __future__ import annotations

import re

import pytest
import torch

from reasonlab.config import RunConfig, resolve
from reasonlab.kinds.anchor.config import AnchorTaskConfig


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture
def screen(monkeypatch):
    """``screen(width, tty)`` sets the command line's own consoles (``reasonlab.cli.common``, and Rich's, which draws
    a training run's bar) to what a user's shell gives them: ``width`` columns (COLUMNS), on a terminal or piped
    (TTY_COMPATIBLE), so a test renders through the consoles the user sees; ``plain(text)`` drops the styles a
    terminal gets."""
    import rich

    from reasonlab.cli import common

    def at(width: int, tty: bool) -> None:
        monkeypatch.setenv("COLUMNS", str(width))
        monkeypatch.setenv("TTY_COMPATIBLE", "1" if tty else "0")
        monkeypatch.setenv("TERM", "xterm-256color")
        monkeypatch.delenv("FORCE_COLOR", raising=False)
        for console in (common.console, common.err, rich.get_console()):  # the last: a training run's bar
            monkeypatch.setattr(console, "_width", None)  # read from COLUMNS, as a console made at start-up does

    return at


def plain(text: str) -> str:
    """Terminal output without its styles (bold headers, colours)."""
    return ANSI.sub("", text)


def figures_written(paths) -> bool:
    """Whether a figure came out as a PNG and an SVG, neither empty."""
    return [p.suffix for p in paths] == [".png", ".svg"] and all(p.stat().st_size > 0 for p in paths)


def tiny_task(**kw) -> AnchorTaskConfig:
    base = {"n_train_per_pair": 40, "n_test_per_pair": 12}
    base.update(kw)
    return AnchorTaskConfig(**base)


def tiny_run_dict(**sections) -> dict:
    data = {
        "seed": 1,
        "task": {"kind": "anchor", "n_train_per_pair": 64, "n_test_per_pair": 16},
        "model": {"d_model": 16, "d_k": 8, "d_v": 8, "d_ff": 32},
        "init": {"gamma": 0.5},
        "train": {
            "epochs": 4,
            "batch_size": 64,
            "warmup_epochs": 1,
            "checkpoint_every": 1,
            "eval_every": 1,
            "threads": 1,
            "device": "cpu",
            "base_lr": 1e-3,
            "lr_multiplier": 3.0,
        },
    }
    for name, values in sections.items():
        if isinstance(values, dict):
            data[name] = {**data.get(name, {}), **values}
        else:
            data[name] = values
    return data


def tiny_run(**sections) -> RunConfig:
    return resolve(tiny_run_dict(**sections))


# an anchor study's arm at a few seconds a run (the complexity and lr-wd studies' end-to-end tests)
TINY_ANCHOR = ["task.n_train_per_pair=32", "task.n_test_per_pair=8", "model.d_model=16", "model.d_k=8", "model.d_v=8",
               "model.d_ff=32", "train.epochs=2", "train.warmup_epochs=0", "train.batch_size=64"]


def reproduce_tiny(experiment: str, out, sets: list[str], profile: str = "cpu", seeds: str | None = None) -> str:
    """Run ``reasonlab reproduce EXPERIMENT --profile PROFILE`` with tiny ``--set`` overrides (and ``--seeds``,
    fewer than the arm's, so a test trains few runs); it must succeed. Returns what it printed."""
    from typer.testing import CliRunner

    from reasonlab.cli import app

    args = ["reproduce", experiment, "--profile", profile, "--out", str(out), "--workers", "2"]
    for item in sets:
        args += ["--set", item]
    if seeds is not None:
        args += ["--seeds", seeds]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    return result.output


def stop_after(monkeypatch, cls, method: str, calls: int) -> None:
    """Ask for a stop (as the first signal does) after ``calls`` calls of ``cls.method`` (one per step)."""
    from reasonlab.train import interrupt

    original, count = getattr(cls, method), {"n": 0}

    def counted(self, *args, **kwargs):
        count["n"] += 1
        if count["n"] == calls:
            interrupt.request_stop()
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, method, counted)

def tiny_modular(**task) -> dict:
    """A tiny in-context modular run (modular kind, packs)."""
    data = tiny_run_dict()
    data["task"] = {"kind": "modular", "p": 7, "n_shots": 4, "n_tasks": 8, "alpha": 0.6, "n_ood_tasks": 16,
                    "steps_per_epoch": 5, "eval_batches": 2, "eval_batch_size": 16, **task}
    data["model"].update(norm="pre", final_norm=True, positions="rope", tied_head=True, max_positions=16,
                         n_heads=2, head_bias=False)
    data["train"].update(batch_size=16, epochs=3, warmup_epochs=1)
    return data


def anchor_phase_row(g, d, seed, mult, inf, sym, seen, **extra) -> dict:
    """One anchor sweep's results row, as phase cells read it (the anchor and reliability tests build them)."""
    return {"init.gamma": g, "model.depth": d, "seed": seed, "train.base_lr": 1e-5, "train.lr_multiplier": mult,
            "train.weight_decay": 0.01, "outcome.4-3.inferential": inf, "outcome.4-3.symmetric": sym,
            "final.seen_test_acc": seen, "status": "finished", **extra}


def killed_after(cfg: RunConfig, root, epochs: int, monkeypatch):
    """Train ``cfg`` under ``root`` and stop it as a kill would (KeyboardInterrupt) once ``epochs`` epochs and their
    checkpoints are written; returns the unfinished run's directory."""
    from reasonlab.train.loop import Trainer
    from reasonlab.train.run import train_run

    original = Trainer._epoch

    def killed(self, epoch, step, bar):
        if epoch == epochs:
            raise KeyboardInterrupt
        return original(self, epoch, step, bar)

    monkeypatch.setattr(Trainer, "_epoch", killed)
    with pytest.raises(KeyboardInterrupt):
        train_run(cfg, root, progress=False, log=lambda _: None)
    monkeypatch.setattr(Trainer, "_epoch", original)
    return root / f"{cfg.run_id()}.partial"



class InProcess:
    """An executor that trains each run of a sweep in this process, when it is submitted: a command line test's
    sweep, demo or study without worker processes (``in_process``)."""

    workers, threads, ensemble = 1, 1, 1

    def submit(self, cfgs, root):
        from concurrent.futures import Future

        from reasonlab.sweep.executors import train_group

        done = Future()
        done.set_result(train_group([c.model_dump_json() for c in cfgs], str(root), self.threads))
        return done

    def wait(self, pending, timeout):
        return set(pending), set()

    def result(self, handle):
        return handle.result()

    def stop(self, pending):
        pass

    def abort(self):
        pass

    def close(self):
        pass


def in_process(monkeypatch) -> None:
    """The command line's sweeps (``sweep``, ``demo``, ``reproduce``) train their runs in this process."""
    from reasonlab.cli import training

    monkeypatch.setattr(training, "executor_factory", lambda *args, **kwargs: lambda n_runs: InProcess())


def served_as_stored(monkeypatch) -> None:
    """A sweep folder holding a results table and no runs serves the table's rows as stored: for tests of what is
    shown or queried, not of the table's check against its runs (which leaves out every row of no run:
    tests/unit/test_store_reading.py)."""
    import pyarrow.parquet as pq

    from reasonlab.sweep import results

    monkeypatch.setattr(results, "_current", lambda sweep_dir: (pq.read_table(sweep_dir / results.RESULTS), {}))
