"""Optional metric loggers (``train.loggers: [tensorboard, wandb]``): a run's metric rows also go, as they are
recorded, to TensorBoard event files in ``RUN_DIR/tensorboard/`` or an offline W&B run in ``RUN_DIR/wandb/``, and a
finished run's metrics can be exported to either (``reasonlab export RUN_DIR --to tensorboard|wandb``).

Loggers are execution-only: they never change a run's numbers or its id. Each scalar is tagged
``<split>/<metric>`` (``pooled/seen_test_acc``, ``train/loss``) at the run's optimizer step. W&B runs offline
only: nothing goes over the network while training, and ``wandb sync RUN_DIR/wandb/offline-run-*`` uploads later.
"""

from __future__ import annotations

import os
import re
import shutil
from itertools import groupby
from pathlib import Path
from types import ModuleType
from typing import NamedTuple

from reasonlab.config import ConfigError, RunConfig
from reasonlab.records import read_summary
from reasonlab.store import RUN_ID, MetricRow, read_metrics

TENSORBOARD, WANDB = "tensorboard", "wandb"  # the loggers' names, and their folders in a run directory
# The first release that keeps several runs open in one process (reinit="create_new"), as stacked ensemble
# members need; older ones would fail only at a run's first log.
WANDB_MIN = (0, 19, 10)
HINTS = {TENSORBOARD: "view with: tensorboard --logdir {path}", WANDB: "upload with: wandb sync {path}/offline-run-*"}


class RunName(NamedTuple):
    """What a logger names a run by: its id, its folder of runs (the sweep, or adhoc) and its resolved config."""

    run_id: str
    sweep: str
    config: dict


def _missing(name: str) -> ConfigError:
    return ConfigError(f"train.loggers: {name} needs the {name} package; pip install 'reasonlab[{name}]'")


def summary_writer_class() -> type:
    """torch's ``SummaryWriter``, or a one-line error when the tensorboard package it needs is missing."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise _missing(TENSORBOARD) from None
    return SummaryWriter


def wandb_module() -> ModuleType:
    """The wandb package, or a one-line error when it is missing or too old."""
    try:
        import wandb
    except ImportError:
        raise _missing(WANDB) from None
    if tuple(int(n) for n in re.findall(r"\d+", wandb.__version__)[:3]) < WANDB_MIN:
        raise ConfigError(f"train.loggers: wandb {wandb.__version__} is too old (before "
                          f"{'.'.join(map(str, WANDB_MIN))}); pip install 'reasonlab[wandb]'")
    return wandb


class TensorBoardLogger:
    """Event files in ``root/tensorboard``, flushed after every batch of rows so a killed run keeps them."""

    check = staticmethod(summary_writer_class)

    def __init__(self, root: Path, run: RunName):
        self._writer = summary_writer_class()(log_dir=str(root / TENSORBOARD))

    def log(self, rows: list[MetricRow]) -> None:
        for r in rows:
            if r.value is not None:
                self._writer.add_scalar(f"{r.split}/{r.metric}", r.value, global_step=r.step)
        self._writer.flush()

    def close(self, failed: bool = False) -> None:
        self._writer.close()


class WandbLogger:
    """An offline W&B run in ``root/wandb``, named and identified by the run id, grouped by its sweep, with the
    resolved config as its config."""

    check = staticmethod(wandb_module)

    def __init__(self, root: Path, run: RunName):
        wandb = wandb_module()
        # wandb reads these once per process: offline there too, its usage and error reports are never sent.
        os.environ.update(WANDB_MODE="offline", WANDB_SILENT="true", WANDB_ERROR_REPORTING="false")
        # resume="allow" (continue this id's W&B run if the server has one): a run synced after a kill and again
        # once finished stays one W&B run.
        # create_new: stacked ensemble members each keep their own run open in one process.
        self._run = wandb.init(
            dir=root, mode="offline", project="reasonlab", group=run.sweep, id=run.run_id, name=run.run_id,
            config=run.config, resume="allow", reinit="create_new",
            settings=wandb.Settings(console="off", silent=True, x_disable_stats=True))

    def log(self, rows: list[MetricRow]) -> None:
        for step, same in groupby((r for r in rows if r.value is not None), key=lambda r: r.step):
            self._run.log({f"{r.split}/{r.metric}": r.value for r in same}, step=step)

    def close(self, failed: bool = False) -> None:
        self._run.finish(exit_code=int(failed))


LOGGERS = {TENSORBOARD: TensorBoardLogger, WANDB: WandbLogger}


class MetricLoggers:
    """The loggers a run's config names; ``log`` sends metric rows to each, ``close`` before the run directory is
    renamed into place. The packages are checked when made, before a run touches the disk.

    The first rows a process logs start each logger's folder afresh, and a resumed run logs the rows its checkpoint
    restored again: what a killed process logged after its last checkpoint (epochs it trains once more) is
    dropped rather than logged twice."""

    def __init__(self, cfg: RunConfig, run_dir: Path):
        self.cfg, self.run_dir = cfg, run_dir
        for name in cfg.train.loggers:
            LOGGERS[name].check()
        self._open: list[TensorBoardLogger | WandbLogger] | None = None  # [] once closed

    def log(self, rows: list[MetricRow]) -> None:
        if not self.cfg.train.loggers or not rows or self._open == []:
            return
        if self._open is None:
            run = RunName(self.cfg.run_id(), self.run_dir.parent.name, self.cfg.model_dump(mode="json"))
            for name in self.cfg.train.loggers:
                shutil.rmtree(self.run_dir / name, ignore_errors=True)
            self._open = [LOGGERS[name](self.run_dir, run) for name in self.cfg.train.loggers]
        for logger in self._open:
            logger.log(rows)

    def close(self, failed: bool = False) -> None:
        for logger in self._open or []:
            logger.close(failed)
        self._open = []


def export(run_dir: Path, to: str, out: Path | None = None) -> Path:
    """A finished run's metrics for logger ``to`` in ``out`` (default ``RUN_DIR/<to>``), written in a temp folder
    and renamed into place; an ``out`` that already holds files is refused."""
    run_dir = Path(run_dir)
    metrics = run_dir / "metrics.parquet"
    if not (run_dir / "summary.json").exists() or not metrics.exists():
        raise ConfigError(f"{run_dir}: not a finished run directory (no summary.json or metrics.parquet)")
    out = Path(out) if out is not None else run_dir / to
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"--out {out}: already holds files (the run logged to {to} while training?); "
                          "pass another --out")
    kind = LOGGERS[to]
    kind.check()
    summary = read_summary(run_dir / "summary.json")
    if not RUN_ID.fullmatch(summary["run_id"]):  # it names the exported run (W&B refuses /, :, # ...)
        raise ConfigError(f"{run_dir / 'summary.json'}: run_id {summary['run_id'][:40]!r} is not a run id (12 "
                          "hex digits); this is not a run reasonlab wrote")
    rows = read_metrics(metrics)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    try:
        logger = kind(tmp, RunName(summary["run_id"], run_dir.parent.name, summary["config"]))
        logger.log(rows)
        logger.close()
        if out.exists():
            out.rmdir()
        os.replace(tmp / to, out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out
