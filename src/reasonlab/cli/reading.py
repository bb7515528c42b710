"""The commands that read a store and train nothing: ``show``, ``results``, ``phase``, ``report``, ``export``,
``pack`` and ``restore``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from reasonlab.cli.common import console, line, print_results
from reasonlab.cli.registered import given, refuse_foreign
from reasonlab.config import ConfigError
from reasonlab.sweep.sql_query import SQL_MEMORY_GIB, SQL_ROWS, SQL_SECONDS


def show(run_dir: Annotated[Path, typer.Argument(help="a run directory, finished or not (`<run_id>.partial`), or "
                                                     "a sweep directory (to list its runs)")]
         ) -> None:
    """A run's card: a finished run's summary; an unfinished one's progress (its last evaluation, and its escape
    points or plateau exits so far) and the command that resumes it; a sweep's runs, finished or not."""
    from reasonlab.report.card import run_card

    console.print(run_card(run_dir))


def results(
    target: Annotated[Path, typer.Argument(help="a sweep directory, or a store root holding sweeps")],
    sql: Annotated[str | None, typer.Option(help='one DuckDB SELECT over the tables runs, metrics, offsets')] = None,
    csv: Annotated[Path | None, typer.Option(help="also write the table (or the query result) as CSV; - prints the "
                                             "CSV alone on standard output")] = None,
    markdown: Annotated[Path | None, typer.Option(help="also write it as a Markdown table (for a doc); - prints it "
                                                  "alone on standard output")] = None,
    show_all: Annotated[bool, typer.Option("--all", help="every column, not just the axes and outcomes")] = False,
    timeout: Annotated[float, typer.Option(min=0.001, max=1e6, help="--sql: seconds before the query is stopped")]
    = SQL_SECONDS,
    memory_limit: Annotated[float, typer.Option(min=0.01, max=1024, help="--sql: GiB the query may hold")] \
    = SQL_MEMORY_GIB,
    max_rows: Annotated[int, typer.Option(min=1, help="--sql: most rows returned")] = SQL_ROWS,
) -> None:
    """Print a sweep's results table, or the result of SQL over all runs' tables and metrics."""
    print_results(target, sql, show_all, csv, markdown, (timeout, memory_limit, max_rows))


def phase(
    ctx: typer.Context,
    sweep_dir: Annotated[Path, typer.Argument(help="a finished (or partly finished) sweep directory")],
    x: Annotated[str | None, typer.Option(help="column on the x axis (default: the task kind's rule's)")] = None,
    y: Annotated[str | None, typer.Option(help="column on the y axis (default: the task kind's rule's)")] = None,
    where: Annotated[list[str] | None, typer.Option(help="keep only runs with COLUMN=VALUE, repeatable "
                                                         "(e.g. --where model.depth=2)")] = None,
) -> None:
    """Draw the phase diagram of any sweep, by its task kind's phase rule (cells, labels and figures of the kind's
    own); a kind without a rule gets a results column's mean and the most common label per cell. The rules'
    options are the flags after --where."""
    from reasonlab.report.phase import phase_rule
    from reasonlab.sweep.results import read_results

    rows = _where(read_results(sweep_dir), where or [])
    kind = rows[0].get("task.kind") if rows else None
    rule = phase_rule(kind)
    refuse_foreign(given(ctx), rule.options, f"the phase rule of task kind {kind!r}")
    x, y = x or rule.axes[0], y or rule.axes[1]
    _numeric_axes(rows, {"--x": x, "--y": y})
    profiles = "; ".join(sorted({str(r.get("profile")) for r in rows}))
    options = {**given(ctx), "profiles": f"Profile: {profiles}. "}
    selected = "".join(f"-{w.replace('=', '')}" for w in where or [])
    caption = f" Runs with {', '.join(where)}." if where else ""
    paths, lines = rule.draw(rows, sweep_dir / "figures" / f"{rule.name(options)}{selected}", x, y, options, caption)
    for text in lines:
        console.print(text, highlight=False)
    console.print("figures: " + ", ".join(map(str, paths)))


def _numeric_axes(rows: list[dict], axes: dict[str, str]) -> None:
    """Refuse an axis whose column holds anything but numbers: a phase diagram orders its cells by value."""
    for flag, column in axes.items():
        text = sorted({repr(r[column]) for r in rows if column in r and
                       (isinstance(r[column], bool) or not isinstance(r[column], int | float))})
        if text:
            raise ConfigError(f"{flag} {column}: holds values that are not numbers ({', '.join(text[:3])}); a phase "
                              f"diagram's axes are numeric (e.g. init.gamma); keep one value with --where "
                              f"{column}=VALUE")


def _where(rows: list[dict], conditions: list[str]) -> list[dict]:
    """The rows whose column equals the value of every ``COLUMN=VALUE`` (values read as YAML: 2 == 2.0)."""
    from reasonlab.config import parse_value

    for text in conditions:
        column, sep, raw = text.partition("=")
        if not sep or not column:
            raise ConfigError(f"--where: {text!r} is not COLUMN=VALUE (e.g. --where model.depth=2)")
        if rows and column not in rows[0]:
            raise ConfigError(f"--where: no column {column!r} in the results table")
        value = parse_value(raw)
        rows = [r for r in rows if r.get(column) == value]
        if not rows:
            raise ConfigError(f"--where: no run has {column}={raw}")
    return rows


def report(target: Annotated[Path, typer.Argument(help="a finished run or a sweep directory")]) -> None:
    """One self-contained HTML page (figures embedded, no external requests): config, outcome, curves and
    analyses of each run; for a sweep also its phase diagram, with each cell linking to its runs."""
    from reasonlab.report.html import write_report

    console.print(f"report: {write_report(target)}")


def export(
    run_dir: Annotated[Path, typer.Argument(help="a finished run directory")],
    to: Annotated[Literal["tensorboard", "wandb"], typer.Option(
        "--to", help="the format: tensorboard (event files) or wandb (an offline W&B run)")] = "tensorboard",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="where (default: RUN_DIR/<format>)")] = None,
) -> None:
    """Write a finished run's metrics for another tool: TensorBoard event files (tensorboard --logdir DIR) or an
    offline W&B run (wandb sync DIR/offline-run-* uploads it)."""
    from reasonlab.train.loggers import HINTS
    from reasonlab.train.loggers import export as write_export

    path = write_export(run_dir, to, out)
    console.print(f"{to}: {path}  ({HINTS[to].format(path=path)})", highlight=False, soft_wrap=True)


def pack(
    source: Annotated[Path, typer.Argument(help="a run directory (finished or .partial), or a sweep folder (a run "
                                                "that cannot be packed is named and skipped)")],
    dest: Annotated[Path, typer.Argument(help="the results folder to write the packs into")],
) -> None:
    """Copy runs' records into a results folder to commit, with an unfinished run's newest resume checkpoint
    (≤ 10 MB) under resume/, replacing the earlier pack: a new machine resumes from it (`reasonlab restore`)."""
    from reasonlab.train.packs import pack_runs

    for path in pack_runs(source, dest, log=line):  # a signal unwinds it (the boundary's): its staging folder goes
        console.print(f"packed {path}", highlight=False, markup=False, soft_wrap=True)


def restore(
    packs: Annotated[list[Path], typer.Argument(help="packs of runs: unfinished (results/.../<run_id>.partial) or "
                                                     "finished (results/.../<run_id>)")],
    root: Annotated[Path, typer.Option("--into", help="the folder that holds the runs: OUT/NAME of `train`, or "
                                                        "OUT/<sweep name> of `sweep`")],
) -> None:
    """Seed a store with committed packs, so the runs' own train or sweep command resumes the unfinished ones where
    the packs were taken (a checkpoint the store already holds that is as new is kept) and skips the finished."""
    from reasonlab.train.packs import restore_pack

    for path in packs:  # a signal unwinds it (the boundary's): its staging folder goes
        console.print(restore_pack(path, root), highlight=False, markup=False, soft_wrap=True)
