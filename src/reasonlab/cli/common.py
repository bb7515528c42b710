"""What the command modules share: the consoles, the options several commands spell the same way, and the few
parsers and printers more than one command uses.

A command never catches a ``UserError``: it raises one, and the app's one boundary (``reasonlab.cli``) prints it
as one line and exits with code 2.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Literal, NoReturn

import typer
from rich.markup import escape

from reasonlab import terminal
from reasonlab.config import ConfigError, families, family_profiles

# Stored strings (labels, profiles, folder names) reach these: no markup unless a call asks for it, every control
# character escaped (reasonlab.terminal).
console = terminal.console()
err = terminal.console(stderr=True)


def error_line(message: str) -> None:
    """``error: message`` on stderr, the message printed as it is, on one line (brackets in it are not markup,
    control characters, a line feed among them, are escaped)."""
    err.print(f"[bold red]error:[/] {escape(terminal.printable(message))}", markup=True, highlight=False,
              soft_wrap=True)


def end_now(message: str) -> NoReturn:
    """``message`` as the command's error line, then exit code 2 at once, from any thread: for a statement that
    went on past its bound and cannot be stopped from inside (``sweep.sql_query.query``'s ``overrun``)."""
    error_line(message)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(2)


def line(message: str) -> None:
    """One unwrapped, unstyled line (progress in a log file must stay one line per epoch)."""
    terminal.print_line(console, message)


def family_of(family: str | None, study: str | None) -> str | None:
    """``--family``, or ``--study``, its old name (a study is what ``reproduce`` runs), kept for one release with a
    one-line notice; None when neither is given."""
    if study is None:
        return family
    if family is not None and family != study:
        raise ConfigError(f"--study {study} and --family {family}: --study is the old name of --family; give "
                          "--family only")
    err.print("warning: --study is deprecated: a profile family is named with --family (`reasonlab studies` lists "
              "the studies)", highlight=False, soft_wrap=True)
    return study


def print_results(target: Path, sql: str | None, show_all: bool, csv: Path | None = None,
                  markdown: Path | None = None, bounds: tuple[float, float, int] = ()) -> None:
    """A sweep's results table (or an SQL query's result) on the console, and in the files asked for: ``results``
    prints it, and ``sweep`` once its runs are done."""
    from reasonlab.files import atomic_write_text
    from reasonlab.report.table import plain_view, results_view
    from reasonlab.sweep.results import csv_text, markdown_table, table_view
    from reasonlab.sweep.sql_query import query

    outputs = {flag: path for flag, path in (("--csv", csv), ("--markdown", markdown)) if path is not None}
    for flag, path in outputs.items():
        _check_output(flag, path)
    if list(map(str, outputs.values())).count(STDOUT) > 1:
        raise ConfigError(f"--csv {STDOUT} and --markdown {STDOUT}: only one of them can go to standard output")
    columns, rows = query(target, sql, *bounds, overrun=end_now) if sql else table_view(target, show_all)
    texts = {"--csv": csv_text, "--markdown": markdown_table}
    if STDOUT not in map(str, outputs.values()):
        if console.is_terminal:
            console.print(results_view(columns, rows, console.width, str(target) if not sql else None))
        else:  # piped: every run on its own line, nothing folded
            sys.stdout.write(plain_view(columns, rows))
    for flag, path in outputs.items():
        if str(path) == STDOUT:  # the table alone, as plain text a pipe can take
            sys.stdout.write(texts[flag](columns, rows))
        else:
            atomic_write_text(path, texts[flag](columns, rows))
            console.print(f"wrote {path}")


STDOUT = "-"  # --csv - / --markdown -: the table on standard output instead of a file


def _check_output(flag: str, path: Path) -> None:
    """An output file is a new or a regular file in an existing folder: writing replaces it whole by a rename, which
    would replace a device, a pipe or a link (and not write through it) and cannot replace a folder."""
    if str(path) == STDOUT:
        return
    if not path.parent.is_dir():
        raise ConfigError(f"{flag} {path}: no directory {path.parent}; create it or choose another path")
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise ConfigError(f"{flag} {path}: exists and is not a regular file; give a new file name, or {STDOUT} for "
                          "standard output")


def _profile_help() -> str:
    """--profile's help: the two ways to name a profile, then each profile family with its built-in profiles."""
    family = families()[0]
    bare = family_profiles(family)[0]
    listing = "; ".join(f"{f}: {', '.join(family_profiles(f))}" for f in families())
    return (f"built-in profile: its full name ({family}-{bare}), or a bare one ({bare}) with --family or of one "
            f"family only: {listing}")


# The example is a field every profile and every demo has (model.depth is no field of the demo's Emb-MLP).
Overrides = Annotated[list[str] | None, typer.Option("--set", "-s", help="override a field, e.g. train.epochs=20 "
                                                     "(one --set per field; every field: docs/config.md)")]
ProfileOpt = Annotated[str | None, typer.Option(
    "--profile", "-p", help=_profile_help())]
FamilyOpt = Annotated[str | None, typer.Option(
    "--family", help="the profile family in which --profile's bare name is looked up (no default): "
    + ", ".join(families()))]
StudyAlias = Annotated[str | None, typer.Option("--study", hidden=True, help="deprecated: the old name of --family")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="check the input and print the resolved config (or "
                                         "the sweep's runs); train nothing, write nothing")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="run a paper- or GPU-scale profile (or a config as large "
                                      "as one) even without a CUDA device (days of CPU time)")]
OutOpt = Annotated[Path, typer.Option("--out", "-o", help="store root; runs land in OUT/NAME/<run_id>")]
WorkersOpt = Annotated[int | None, typer.Option(min=1, help="runs at once (default: one per core, at most one per "
                                                             "run)")]
ThreadsOpt = Annotated[int | None, typer.Option(min=1, help="torch threads per run (default: cores / workers)")]
BackendOpt = Annotated[Literal["local", "ray"], typer.Option(
    help="local, or ray: Ray tasks on the cluster at RAY_ADDRESS, else on a local Ray instance")]
EnsembleOpt = Annotated[int | None, typer.Option(
    min=1, help="most runs trained stacked as one model (default: where measured faster; 1 turns it off)")]
