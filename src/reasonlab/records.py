"""The store read back: each file a reader relies on checked against its schema on every read, and runs known by
their id.

The schemas are ``reasonlab.record_schemas``. A run directory is a run when the id inside it — the hash of its
config — is its name (``<id>`` or ``<id>.partial``); a run is printed in one line by ``describe.describe_run``,
wherever it is printed.

A single file asked for by name (``show RUN``, ``train`` of a finished run) that fails is a one-line StoreError
naming the file and what is wrong; in a listing (a sweep's runs for ``results``, ``report``, ``phase`` or a sweep
rerun) it is reported in one line on stderr and skipped, so the rest of the store still reads.

Layer: records, just above the store: it reads the config schema to check run identity, which the store itself
may not.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from reasonlab.config import RunConfig, parse_yaml, resolve
from reasonlab.config.io import MAX_CONFIG_BYTES
from reasonlab.errors import StoreError
from reasonlab.files import inside, read_bounded, read_json, warn, write_json
from reasonlab.record_schemas import PROGRESS_FIELDS, ProgressRecord, RunSummary, SweepRecord, checked, valid, validated
from reasonlab.store import PARTIAL, RUN_ID, MetricRow, check_metrics_columns, read_metrics


def write_progress(run_dir: Path, *, epoch: int, epochs: int, step: int, loss: float | None, wall_time_s: float,
                   steps: int | None = None, steps_per_s: float | None = None, eta_s: float | None = None,
                   diverged_step: int | None = None, evaluated_epoch: int | None = None,
                   figures: dict[str, float] | None = None) -> None:
    """Where a training run stands, rewritten every few seconds while it trains (read by ``load_progress``, the
    sweep's live table and ``show``): ``epoch`` epochs done, ``step`` of ``steps``, the speed (steps per second)
    and the run's ETA so far, the mean loss of the epoch so far (else the last one's); a diverged run records its
    step, any other its last evaluation's epoch and figures."""
    record: dict[str, Any] = {"epoch": epoch, "epochs": epochs, "step": step, "loss": loss, "wall_time_s": wall_time_s}
    record |= {k: v for k, v in (("steps", steps), ("steps_per_s", steps_per_s), ("eta_s", eta_s)) if v is not None}
    if diverged_step is not None:
        record["diverged_step"] = diverged_step
    else:
        record |= {"evaluated_epoch": evaluated_epoch, **(figures or {})}
    write_json(Path(run_dir) / "progress.json", valid(ProgressRecord, record))


def progress_figures(progress: dict) -> dict[str, float]:
    """The last evaluation's figures in a ``progress.json`` record (everything that is not a progress field)."""
    return {k: v for k, v in progress.items() if k not in PROGRESS_FIELDS and v is not None}


def read_summary(path: Path, name: str | None = None) -> dict[str, Any]:
    """A run's ``summary.json`` as stored (what the kinds' methods and the results rows read), checked against
    ``RunSummary``; with ``name`` (its directory's run id) also that the run it holds is that run."""
    return _read_summary(path, name)[0]


def _read_summary(path: Path, name: str | None) -> tuple[dict[str, Any], RunSummary]:
    """(the summary as stored, its typed record), read and checked once."""
    data = read_json(path, "run summary")
    record = validated(RunSummary, data, path, "run summary", "delete its run directory and rerun it")
    if name is not None and record.run_id != name:
        raise StoreError(f"{path.parent}: holds run {record.run_id}, not the run its name says (a copied or "
                         "renamed run directory: move it away)")
    return data, record


def load_run(run_dir: Path) -> tuple[dict, dict]:
    """(summary, config dict) of a finished run, or a one-line error naming the directory."""
    summary, _ = load_record(run_dir)
    return summary, summary["config"]


def load_record(run_dir: Path) -> tuple[dict[str, Any], RunSummary]:
    """(the summary as stored, for the kinds' methods; its typed record: ``record.label``, ``record.final``)
    of a finished run, or a one-line error naming the directory."""
    run_dir = Path(run_dir)
    summary_path = run_dir / "summary.json"
    if not summary_path.exists():  # a FIFO or device in its place is named by the read
        hint = " (unfinished: run `reasonlab train` again to resume)" if run_dir.name.endswith(PARTIAL) else ""
        raise StoreError(f"{run_dir}: not a finished run directory, no summary.json{hint}")
    _inside_or_refuse(summary_path, run_dir)
    name = run_dir.resolve().name
    return _read_summary(summary_path, name if RUN_ID.fullmatch(name) else None)


def _inside_or_refuse(path: Path, root: Path) -> None:
    if not inside(path, root):
        raise StoreError(f"{path}: a symbolic link out of {root}; not read")


def load_progress(run_dir: Path) -> dict:
    """An unfinished run's ``progress.json``: where its trainer last wrote it (epoch, step, loss, the last
    evaluation's figures); a one-line error if it is not as reasonlab writes it."""
    path = Path(run_dir) / "progress.json"
    _inside_or_refuse(path, Path(run_dir))
    return checked(ProgressRecord, read_json(path, "progress file"), path, "progress file",
                   "resume the run to rewrite it")


def read_config(run_dir: Path) -> RunConfig:
    """An unfinished run's ``config.yaml`` resolved: the run's own (not a link out of it), a regular file of at most
    ``MAX_CONFIG_BYTES``, or a one-line error naming it."""
    path = Path(run_dir) / "config.yaml"
    _inside_or_refuse(path, Path(run_dir))
    return resolve(read_yaml(path, "run config"))


def read_yaml(path: Path, what: str) -> dict[str, Any]:
    """A YAML file the store or a committed result holds (a run's ``config.yaml`` as written, a pins file): a
    regular file of at most ``MAX_CONFIG_BYTES`` parsed as a mapping, or a one-line error naming it — never a wait
    on a FIFO in its place (``files.read_bounded``)."""
    return parse_yaml(read_bounded(path, what, MAX_CONFIG_BYTES), path)


def check_identity(run_dir: Path, cfg: RunConfig) -> None:
    """An unfinished run's directory is named by its config's id (``<id>.partial``), or a one-line error."""
    name = Path(run_dir).resolve().name.removesuffix(PARTIAL)
    if RUN_ID.fullmatch(name) and cfg.run_id() != name:
        raise StoreError(f"{run_dir}: holds run {cfg.run_id()} (its config's hash), not the run its name says; "
                         "ignored (a copied or renamed run directory: move it away)")


def finished_runs(root: Path) -> list[Path]:
    """The finished runs directly under ``root``, sorted by run id: directories named by a run id whose summary
    is a run summary of that very run. Any other such directory — a damaged summary, a run copied under another
    id, a link out of ``root`` — is reported in one line (stderr) and skipped. A ``.partial`` directory is not
    listed (it holds its summary for a moment before the rename that finishes it) nor is a copy (``<id>.bak``)."""
    return [run_dir for run_dir, _ in finished_summaries(root)]


def finished_summaries(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    """(directory, summary) of each of ``finished_runs(root)``."""
    out = []
    for run_dir in run_dirs(root):
        try:
            out.append((run_dir, load_run(run_dir)[0]))
        except StoreError as e:
            warn(f"{e}; skipped")
    return out


def run_dirs(root: Path) -> list[Path]:
    """The directories under ``root`` that claim to be finished runs (named by a run id, with a summary), checked
    or not: what a sweep must not train again."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p for p in within(root, root.iterdir()) if RUN_ID.fullmatch(p.name) and (p / "summary.json").exists())


def run_metrics(run_dir: Path) -> list[MetricRow]:
    """A run's metric rows from its own ``metrics.parquet`` (not a link out of the run), or a one-line StoreError."""
    path = Path(run_dir) / "metrics.parquet"
    _inside_or_refuse(path, Path(run_dir))
    return read_metrics(path)


def check_metrics(run_dir: Path) -> None:
    """The run's ``metrics.parquet`` is its own (not a link out of the run) and a metrics table by the columns in
    its footer (a file cut short has none), read without its rows; else a one-line StoreError naming it."""
    path = Path(run_dir) / "metrics.parquet"
    _inside_or_refuse(path, Path(run_dir))
    check_metrics_columns(path)


def within(root: Path, paths: Iterable[Path]) -> list[Path]:
    """The ``paths`` that stay inside ``root`` once links are followed; each one that leaves it is reported in one
    line and left out (a report or a table never embeds a file from elsewhere through a link)."""
    kept = []
    for p in paths:
        if inside(p, root):
            kept.append(p)
        else:
            warn(f"{p}: a symbolic link out of {root}; not read")
    return kept


def read_sweep(sweep_dir: Path) -> dict[str, Any] | None:
    """The sweep's ``sweep.json``, or None when there is none or it is not one (reported in one line)."""
    path = Path(sweep_dir) / "sweep.json"
    if not path.exists():
        return None
    try:
        _inside_or_refuse(path, Path(sweep_dir))
        return checked(SweepRecord, read_json(path, "sweep file"), path, "sweep file",
                       "rerun the sweep to rewrite it")
    except StoreError as e:
        warn(f"{e}; its axes are read from the runs instead")
        return None


def read_analysis(path: Path) -> dict[str, Any]:
    """An analysis result (``analysis/<checkpoint>/<name>.json``): a JSON object, or a one-line StoreError."""
    data = read_json(path, "analysis result")
    if not isinstance(data, dict):
        raise StoreError(f"{path}: not an analysis result as reasonlab writes it (a JSON object; got "
                         f"{type(data).__name__}); run `reasonlab analyze` again")
    return data
