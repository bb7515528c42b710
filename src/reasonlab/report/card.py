"""A run's card (``reasonlab show``): a finished run's summary, or an unfinished run's progress read from the files
its trainer writes as it goes, as one two-column table; a sweep's card lists its runs, finished or not. Kept apart
from the CLI so that any front end (the CLI, a notebook) draws the same card from the same files. A task kind gives
its own figure rows (``Kind.card``, ``Kind.history``; by default ``default_rows``).

Layer: report; names no task kind."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from reasonlab.describe import describe_run
from reasonlab.errors import StoreError
from reasonlab.evaluate import summary_extras
from reasonlab.files import warn
from reasonlab.numerics import describe_machine
from reasonlab.record_schemas import RunSummary
from reasonlab.records import (
    check_identity,
    finished_summaries,
    load_progress,
    load_run,
    progress_figures,
    read_config,
    read_sweep,
    run_metrics,
)
from reasonlab.registry import task_kind
from reasonlab.store import PARTIAL
from reasonlab.vocabulary import labelled


def run_card(run_dir: Path) -> Table:
    """The card of a run directory, finished or not, or of a sweep (its runs); a one-line error (StoreError) for a
    folder that is none of them (naming ``reasonlab results`` for a folder of runs or of sweeps), or whose files are
    not what reasonlab wrote. Print it on a ``reasonlab.terminal``
    console: its strings are stored text, shown as they are."""
    run_dir = Path(run_dir)
    if not (run_dir / "summary.json").exists() and (run_dir / "progress.json").exists():
        return _card(run_dir, _progress_rows(run_dir))
    if not (run_dir / "summary.json").exists() and (run_dir / "sweep.json").exists():
        return _card(run_dir, _sweep_rows(run_dir))
    if not (run_dir / "summary.json").exists() and (held := _holds(run_dir)):
        run = run_dir / ("RUN_ID" if held == "runs" else "SWEEP/RUN_ID")
        tables = "their table" if held == "runs" else "their tables"
        raise StoreError(f"{run_dir}: a folder of {held}, not a run; `reasonlab results {run_dir}` prints {tables}, "
                         f"`reasonlab show {run}` one run's card")
    return summary_card(run_dir, load_run(run_dir)[0])


def _holds(folder: Path) -> str | None:
    """What a folder that is no run holds: ``runs`` (run directories, finished or not, as a sweep or a pack holds
    them), ``sweeps`` (folders of runs: a store root such as ``runs/``), or None."""
    def children(p: Path) -> list[Path]:
        try:
            return [c for c in p.iterdir() if c.is_dir()] if p.is_dir() else []
        except OSError:
            return []

    def is_run(p: Path) -> bool:
        return (p / "summary.json").exists() or (p / "progress.json").exists()

    if any(is_run(c) for c in children(folder)):
        return "runs"
    if any((c / "sweep.json").exists() or any(is_run(g) for g in children(c)) for c in children(folder)):
        return "sweeps"
    return None


def summary_card(run_dir: Path, summary: dict) -> Table:
    """A finished run's card from its summary (as ``train`` has it in hand when the run ends)."""
    return _card(Path(run_dir), _summary_rows(summary))


def _card(run_dir: Path, rows: list[tuple[str, object]]) -> Table:
    """Two columns, the run directory as the title."""
    table = Table(title=f"{run_dir}", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    for k, v in rows:
        table.add_row(k, str(v))
    return table


def _progress_rows(run_dir: Path) -> list[tuple[str, object]]:
    """An unfinished run's card, from the files its trainer writes as it goes (progress, config, metrics)."""
    progress = load_progress(run_dir)
    cfg = read_config(run_dir)
    check_identity(run_dir, cfg)
    extras = summary_extras(cfg, run_metrics(run_dir)) if (run_dir / "metrics.parquet").exists() else {}
    rows = [("run", describe_run(cfg)), ("profile", str(cfg.profile)),
            ("status", f"unfinished: epoch {progress['epoch']} of {progress['epochs']} done, step {progress['step']}"
                       f"{f' of {total}' if (total := progress.get('steps')) else ''}; {_resumed_by(run_dir)} "
                       "resumes it from its last checkpoint"),
            ("training loss (epoch mean so far)", num(progress["loss"], ".4g"))]
    at = progress.get("evaluated_epoch")
    where = f"evaluation at epoch {at}" if at is not None else "last evaluation"
    rows += [(f"{where}: {labelled(k, cfg.task.kind)}", num(v)) for k, v in progress_figures(progress).items()]
    rows += task_kind(cfg.task.kind).history(extras)
    rows.append(("wall time so far", f"{progress['wall_time_s']:.1f} s"))
    return rows


def _resumed_by(run_dir: Path) -> str:
    """What resumes an unfinished run: the command that last ran its sweep (recorded in ``sweep.json``: ``reasonlab
    demo``, ``reproduce`` or ``sweep``, which skips the finished runs), else the ``train`` command that started it."""
    sweep = read_sweep(run_dir.parent)
    if sweep is None:
        return "the same `reasonlab train` command (or `reasonlab.run`)"
    if sweep.get("command"):
        return f"its sweep's command, `{sweep['command']}`,"
    return f"the command that ran its sweep {sweep['name']!r} (run again as it was)"


def _sweep_rows(sweep_dir: Path) -> list[tuple[str, object]]:
    """A sweep's card: its name, the command that last ran it, its axes, then each of its runs in one line
    (``describe_run``): the finished ones with their label, the unfinished ones with where they stand, and the
    ones not started yet by id."""
    sweep = read_sweep(sweep_dir) or {"name": sweep_dir.name, "axes": [], "run_ids": []}
    axes = sweep["axes"]
    finished = {d.name: RunSummary.model_validate(s).describe(axes) for d, s in finished_summaries(sweep_dir)}
    unfinished = {}
    for partial in sorted(sweep_dir.glob(f"*{PARTIAL}")):
        run_id = partial.name.removesuffix(PARTIAL)
        if run_id in finished or not (partial / "progress.json").exists():
            continue
        try:
            progress = load_progress(partial)
            cfg = read_config(partial)
        except (StoreError, ValueError) as e:
            warn(f"{e}; left out of the sweep's card")
            continue
        unfinished[run_id] = (f"unfinished, epoch {progress['epoch']} of {progress['epochs']}",
                              describe_run(cfg, axes))
    waiting = [r for r in sweep.get("run_ids", []) if r not in finished and r not in unfinished]
    total = len(set(sweep.get("run_ids", [])) | set(finished) | set(unfinished))
    rows: list[tuple[str, object]] = [
        ("sweep", sweep["name"]), ("command", sweep.get("command") or "—"), ("axes", ", ".join(axes) or "—"),
        ("runs", f"{len(finished)} finished, {len(unfinished)} unfinished, {len(waiting)} not started, of {total}")]
    rows += [("finished", line) for line in finished.values()]
    rows += list(unfinished.values())
    rows += [("not started", run_id) for run_id in waiting]
    rows.append(("a run's card", f"reasonlab show {sweep_dir / '<run_id>'}"))
    return rows


def default_rows(summary: dict, history: list[tuple[str, str]], kind: str) -> list[tuple[str, str]]:
    """A finished run's figure rows when its kind has none of its own: its final figures, each by its label with
    its stored name beside it (``kind``'s words), its ``history`` rows and its best-of-run figures."""
    return [*((labelled(k, kind), num(v)) for k, v in summary["final"].items()), *history,
            *((f"best: {k}", f"{v:.3f}" if isinstance(v, float) else str(v))
              for k, v in summary.get("best", {}).items() if not isinstance(v, dict))]


def _summary_rows(summary: dict) -> list[tuple[str, object]]:
    """A finished run's card: what it was, its outcome, its figures (its kind's ``card``, which reads the summary
    as stored; by default the final figures, each by its label with its stored name beside it, the history and the
    best-of-run figures)."""
    record = RunSummary.model_validate(summary)
    cfg = record.run_config()
    shape = " / ".join(str(getattr(cfg.model, k)) for k in ("kind", "depth", "d_model") if hasattr(cfg.model, k))
    start = f"GPT-2 scheme (std {cfg.init.std})" if cfg.init.scheme == "gpt" else f"γ {cfg.init.gamma}"
    rows = [("run", record.describe()), ("profile", str(cfg.profile)),
            ("init; model kind / depth / d_model", f"{start}; {shape}"),
            ("outcome", record.label), *task_kind(cfg.task.kind).card(summary)]
    machine = f" · {describe_machine(record.machine.model_dump(), record.threads)}" if record.machine else ""
    rows += [("epochs / steps", f"{record.epochs} / {record.steps}"),
             ("wall time", f"{record.wall_time_s:.1f} s on {record.device}{machine}"),
             ("version / git", f"{record.versions.reasonlab} / {record.git_revision}")]
    return rows


def num(value: float | None, spec: str = ".3f") -> str:
    """A figure as the card shows it; a missing one (NaN stored as null) as —."""
    return "—" if value is None else format(value, spec)
