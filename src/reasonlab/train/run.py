"""A run directory's life around its ``Trainer``: skipped when finished, locked against another process training
the same run, opened as ``<run_id>.partial`` (config and task artifacts written), trained, and completed with its
``summary.json`` and renamed into place.
"""

from __future__ import annotations

import platform
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import torch

from reasonlab.allocator import keep_freed_memory
from reasonlab.checkpoint import drop_resume_points
from reasonlab.config import RunConfig, to_yaml
from reasonlab.evaluate import best_of_run, summary_extras
from reasonlab.files import atomic_write_text, remove_temps, write_json
from reasonlab.numerics import describe_machine, flush_denormals, machine
from reasonlab.record_schemas import RunSummary, valid
from reasonlab.records import read_summary
from reasonlab.staging import refuse_links
from reasonlab.store import append_event, finish_run, git_revision, run_lock, run_paths, write_metrics
from reasonlab.train.loop import Trainer
from reasonlab.train.progress import Mode
from reasonlab.version import __version__


def finished_summary(root: Path, cfg: RunConfig) -> tuple[Path, dict] | None:
    """(directory, summary) of the run if it has finished under ``root``; a summary that does not read (a FIFO in its
    place too) is a one-line error, not a run to train again."""
    final_dir = run_paths(Path(root), cfg.run_id())[0]
    path = final_dir / "summary.json"
    return (final_dir, read_summary(path, cfg.run_id())) if path.exists() else None


def train_run(
    cfg: RunConfig, root: Path, progress: bool | Mode = True, log: Callable[[str], None] = print
) -> tuple[Path, dict]:
    """Train (or resume, or skip if finished) the run of ``cfg`` under ``root``; returns its directory and summary."""
    if (done := finished_summary(root, cfg)) is not None:
        log(f"{done[0]} is finished; nothing to do")
        return done
    trainer = Trainer(cfg, run_paths(Path(root), cfg.run_id())[1], progress, log)  # validates before touching disk
    with run_lock(Path(root), cfg.run_id()):  # another sweep may be training the same run: wait for it
        if (done := finished_summary(root, cfg)) is not None:
            return done
        with run_directory(trainer), flush_denormals(), keep_freed_memory():
            trainer.begin()
            trainer.fit()
            return complete(trainer)


@contextmanager
def run_directory(trainer: Trainer) -> Iterator[None]:
    """The run's ``.partial`` directory, ready to train in (config and artifacts written); removed again if the
    run fails before it trained a step, since there is nothing in it worth keeping."""
    cfg, partial = trainer.cfg, trainer.run_dir
    fresh = not partial.exists()
    if fresh:
        partial.mkdir(parents=True)
        (partial / "checkpoints").mkdir()
    else:
        refuse_links(partial)  # a resumed run writes its checkpoints, events and records only inside itself
        remove_temps(partial, recursive=True)  # what a killed run left half-written
    try:
        atomic_write_text(partial / "config.yaml", to_yaml(cfg))
        for name, text in trainer.data.artifacts.items():
            atomic_write_text(partial / name, text)
        if fresh:
            append_event(partial, f"start run {cfg.run_id()} profile {cfg.profile} on {describe_machine()}")
        yield
    except BaseException:
        trainer.loggers.close(failed=True)  # a W&B run kept open would outlive the run in a long-lived process
        if fresh and not trainer.touched:
            shutil.rmtree(partial, ignore_errors=True)
        raise


def complete(trainer: Trainer) -> tuple[Path, dict]:
    """After the last epoch: the summary, written with the metrics; the run directory renamed into place."""
    trainer.conclude()
    summary = run_summary(trainer)
    trainer.send_rows()
    trainer.loggers.close()
    partial = trainer.run_dir
    final_dir = partial.with_name(trainer.cfg.run_id())
    drop_resume_points(partial / "checkpoints")  # a finished run keeps the checkpoints its cadence chose
    write_metrics(partial / "metrics.parquet", trainer.rows, trainer.cfg.run_id())
    write_json(partial / "summary.json", valid(RunSummary, summary))
    append_event(partial, f"finished label={summary['label']} wall={summary['wall_time_s']}s")
    finish_run(partial, final_dir)
    return final_dir, summary


def run_summary(trainer: Trainer) -> dict:
    """What a finished run's ``summary.json`` holds: its outcome and figures, where its time went, its size, the
    machine and versions it ran on, and its resolved config."""
    cfg, report = trainer.cfg, trainer.report
    return {
        "run_id": cfg.run_id(), "profile": cfg.profile, "status": "finished",
        "label": report.label, "outcome": report.outcome,
        "final": report.final, "best": best_of_run(cfg.task.kind, trainer.rows, cfg.thresholds),
        **summary_extras(cfg, trainer.rows),
        "histograms": report.histograms,
        "epochs": trainer.epoch, "steps": trainer.step, "wall_time_s": round(trainer.wall, 2),
        "diverged_step": trainer.diverged,
        "time_s": {k: float(f"{v:.3g}") for k, v in trainer.times.items()},  # 3 digits: a short part stays > 0
        "n_params": sum(p.numel() for p in trainer.model.parameters()),
        "device": str(trainer.device), "threads": torch.get_num_threads(), "machine": machine(),
        "versions": {"reasonlab": __version__, "torch": torch.__version__, "python": platform.python_version()},
        "git_revision": git_revision(), "data": trainer.data.info, "config": cfg.model_dump(mode="json"),
    }
