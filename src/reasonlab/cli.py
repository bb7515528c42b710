"""Command line: ``reasonlab train | show | demo``.

Every user error (bad config, override, profile or path) prints one line naming the field or file and the fix,
and exits with code 2 before anything is written.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from reasonlab.config import ConfigError, RunConfig
from reasonlab.studies import anchor

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="reasonlab: when does a transformer reason, and when does it memorize?")
console = Console()
err = Console(stderr=True)


def _fail(message: str) -> None:
    err.print(f"[bold red]error:[/] {message}", highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def _resolved(config: Path | None, profile: str | None, overrides: list[str]) -> RunConfig:
    try:
        return anchor.load_config(config, profile, overrides)
    except ConfigError as e:
        _fail(str(e))
    raise AssertionError  # unreachable


Overrides = Annotated[list[str] | None, typer.Option("--set", "-s", help="override a field: model.depth=3")]
ProfileOpt = Annotated[
    str | None, typer.Option("--profile", "-p", help=f"built-in profile: {', '.join(anchor.PROFILES)}")
]
OutOpt = Annotated[Path, typer.Option("--out", "-o", help="store root; runs land in OUT/NAME/<run_id>")]


@app.command()
def train(
    config: Annotated[Path | None, typer.Argument(help="YAML config (fields over the profile's)")] = None,
    profile: ProfileOpt = None,
    overrides: Overrides = None,
    out: OutOpt = Path("runs"),
    name: Annotated[str, typer.Option(help="group under the store root")] = "adhoc",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
) -> None:
    """Train one run (resuming it if it was interrupted) and print its outcome."""
    from reasonlab.plots.run import plot_run
    from reasonlab.store import check_name
    from reasonlab.train.loop import train_run

    cfg = _resolved(config, profile, overrides or [])
    try:
        root = out / check_name(name, "--name")
        run_dir, summary = train_run(cfg, root, progress=not quiet and sys.stderr.isatty(), log=console.print)
    except ConfigError as e:
        _fail(str(e))
    plot_run(run_dir)
    _print_summary(run_dir, summary)


@app.command()
def show(run_dir: Annotated[Path, typer.Argument(help="a finished run directory")]) -> None:
    """Summary table of a finished run."""
    from reasonlab.store import load_run

    try:
        summary, _ = load_run(run_dir)
    except ConfigError as e:
        _fail(str(e))
    _print_summary(run_dir, summary)


@app.command()
def demo(
    out: OutOpt = Path("runs"),
    seed: Annotated[int, typer.Option(help="seed of both runs")] = 1,
    workers: Annotated[int, typer.Option(help="runs trained at once")] = 2,
    overrides: Overrides = None,
) -> None:
    """The anchor study in small: depth 2 at a large and a small initialization, classified and plotted."""
    try:
        anchor.demo(out, seed, workers, console, overrides or [])
    except ConfigError as e:
        _fail(str(e))


def _print_summary(run_dir: Path, summary: dict) -> None:
    cfg = summary.get("config", {})
    table = Table(title=f"{run_dir}", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    final = summary["final"]
    rows = [
        ("run id", summary["run_id"]),
        ("profile", summary["profile"]),
        ("γ / depth / d_model", f"{cfg['init']['gamma']} / {cfg['model']['depth']} / {cfg['model']['d_model']}"),
        ("outcome", summary["label"]),
        ("train accuracy", f"{final['train_acc']:.3f}"),
        ("seen-pair test-key accuracy", f"{final['seen_test_acc']:.3f}"),
    ]
    for pair, o in summary["outcome"]["pairs"].items():
        sym = "—" if o["symmetric"] is None else f"{o['symmetric']:.3f}"
        clean = " (clean)" if o["clean"] else ""
        rows.append((f"held-out {pair}", f"{o['label']}{clean}: inferential {o['inferential']:.3f}, "
                                         f"symmetric {sym} ({o['symmetric_target']}), other {o['other']:.3f}"))
    rows += [("epochs / steps", f"{summary['epochs']} / {summary['steps']}"),
             ("wall time", f"{summary['wall_time_s']:.1f} s on {summary['device']}"),
             ("version / git", f"{summary['versions']['reasonlab']} / {summary['git_revision']}")]
    for k, v in rows:
        table.add_row(k, str(v))
    console.print(table)


def main() -> None:
    try:
        app()
    except KeyboardInterrupt:
        err.print("interrupted; run the same command again to resume")
        sys.exit(130)


if __name__ == "__main__":
    main()
