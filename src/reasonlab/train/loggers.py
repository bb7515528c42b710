"""Optional metric loggers (``train.loggers: [tensorboard]``): a run's metric rows also go to TensorBoard event
files in ``RUN_DIR/tensorboard/`` as they are recorded, and a finished run's metrics can be exported there
(``reasonlab export RUN_DIR --to tensorboard``).

Loggers are execution-only: they never change a run's numbers or its id. Each scalar is tagged
``<split>/<metric>`` (``pooled/seen_test_acc``, ``train/loss``) at the run's optimizer step.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from reasonlab.config import ConfigError
from reasonlab.store import MetricRow, read_metrics

TENSORBOARD = "tensorboard"  # the event files' folder in a run directory


def summary_writer_class() -> type:
    """torch's ``SummaryWriter``, or a one-line error when the tensorboard package it needs is missing."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise ConfigError("train.loggers: tensorboard needs the tensorboard package; "
                          "pip install 'reasonlab[tensorboard]'") from None
    return SummaryWriter


def write_scalars(writer, rows: list[MetricRow]) -> None:  # noqa: ANN001 - a SummaryWriter
    for r in rows:
        if r.value is not None:
            writer.add_scalar(f"{r.split}/{r.metric}", r.value, global_step=r.step)


class MetricLoggers:
    """The loggers a run's config names; ``log`` sends metric rows to each, ``close`` before the run directory is
    renamed into place. The packages are checked when made, before a run touches the disk.

    The first rows a process logs start each logger's folder afresh, and a resumed run logs the rows its checkpoint
    restored again: what a killed process logged after its last checkpoint (epochs it trains once more) is
    dropped rather than logged twice."""

    def __init__(self, names: list[str], run_dir: Path):
        self.run_dir = run_dir
        self._writer_class = summary_writer_class() if TENSORBOARD in names else None
        self._writer = None

    def log(self, rows: list[MetricRow]) -> None:
        if self._writer_class is None or not rows:
            return
        if self._writer is None:
            shutil.rmtree(self.run_dir / TENSORBOARD, ignore_errors=True)
            self._writer = self._writer_class(log_dir=str(self.run_dir / TENSORBOARD))
        write_scalars(self._writer, rows)
        self._writer.flush()  # a killed run keeps what it logged

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None


def export_tensorboard(run_dir: Path, out: Path | None = None) -> Path:
    """A finished run's metrics as TensorBoard event files in ``out`` (default ``RUN_DIR/tensorboard``), written in
    a temp folder and renamed into place; an ``out`` that already holds files is refused."""
    run_dir = Path(run_dir)
    metrics = run_dir / "metrics.parquet"
    if not (run_dir / "summary.json").is_file() or not metrics.is_file():
        raise ConfigError(f"{run_dir}: not a finished run directory (no summary.json or metrics.parquet)")
    out = Path(out) if out is not None else run_dir / TENSORBOARD
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"--out {out}: already holds files (the run logged to TensorBoard while training?); "
                          "pass another --out")
    writer_class = summary_writer_class()
    rows = read_metrics(metrics)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    try:
        writer = writer_class(log_dir=str(tmp))
        write_scalars(writer, rows)
        writer.close()
        if out.exists():
            out.rmdir()
        os.replace(tmp, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out
