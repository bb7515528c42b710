# Over 400 lines: one typer command per user-facing verb, each with its options spelled out beside their help.
"""Command line: ``reasonlab train | show | demo | sweep | results | phase | reproduce | studies | analyze |
report | export``.

Every user error (bad config, override, profile or path) prints one line naming the field or file and the fix,
and exits with code 2 before anything is written.
"""

from __future__ import annotations

import gc
import re
import sys
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from reasonlab import terminal
from reasonlab.config import (
    ConfigError,
    Pair,
    RunConfig,
    raw_config,
    resolve,
    study_profiles,
    unknown_name,
)
from reasonlab.config import studies as profiled_studies
from reasonlab.errors import Interrupted, UserError
from reasonlab.studies import anchor
from reasonlab.sweep.grid import MAX_RUNS
from reasonlab.sweep.results import SQL_MEMORY_GIB, SQL_ROWS, SQL_SECONDS

# Stored strings (labels, profiles, folder names) reach these: no markup unless a call asks for it, every control
# character escaped (reasonlab.terminal).
console = terminal.console()
err = terminal.console(stderr=True)


class _Commands(TyperGroup):
    """The command group: a bad command line (an unknown option or command, a value outside a flag's choices, a
    missing argument) is one line and exit code 2, as every other input error; flags show no ``<bool>`` type."""

    def main(self, *args, standalone_mode: bool = True, **kwargs):  # noqa: ANN002, ANN003 - click's signature
        from typer._click.exceptions import ClickException

        from reasonlab.store import forget_warnings

        forget_warnings()  # each command says each of its warnings once
        try:
            code = super().main(*args, standalone_mode=False, **kwargs)
        except ClickException as e:
            if not standalone_mode:
                raise
            ctx = getattr(e, "ctx", None)
            where = f" (see {ctx.command_path} --help)" if ctx is not None else ""
            message = " ".join(e.format_message().replace("Value error, ", "").split())
            if "unexpected extra argument" in message and "=" in message:  # `--set a=1 b=2`: one value per --set
                message += "; give each override its own --set: --set a=1 --set b=2"
            _error_line(f"{message}{where}")
            sys.exit(e.exit_code)
        except typer.Abort:
            if not standalone_mode:
                raise
            err.print("aborted")
            sys.exit(1)
        if standalone_mode:
            sys.exit(code if isinstance(code, int) else 0)
        return code

    def get_params(self, ctx):  # noqa: ANN001, ANN201
        return _plain_flags(super().get_params(ctx))

    def get_command(self, ctx, cmd_name: str):  # noqa: ANN001, ANN201
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            _plain_flags(command.get_params(ctx))
        return command


def _plain_flags(params: list) -> list:
    """On/off flags (``--dry-run``, ``--help``) shown in --help without a type column."""
    for p in params:
        if getattr(p, "is_flag", False) and p.metavar is None:
            p.metavar = ""
    return params


app = typer.Typer(cls=_Commands, add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="reasonlab: when does a transformer reason, and when does it memorize?")


def _version(value: bool) -> None:
    if value:
        from reasonlab.version import __version__

        console.print(f"reasonlab {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                   help="print the version and exit")] = False) -> None:
    """reasonlab: when does a transformer reason, and when does it memorize?"""


def _line(message: str) -> None:
    """One unwrapped, unstyled line (progress in a log file must stay one line per epoch)."""
    console.print(message, soft_wrap=True, highlight=False, markup=False)


def _error_line(message: str) -> None:
    """``error: message`` on stderr, the message printed as it is (brackets in it are not markup, control
    characters are escaped)."""
    err.print(f"[bold red]error:[/] {escape(message)}", markup=True, highlight=False, soft_wrap=True)


def _fail(message: str) -> None:
    _error_line(message)
    raise typer.Exit(2)


def _resolved(config: Path | None, profile: str | None, overrides: list[str], study: str) -> RunConfig:
    if config is not None and "=" in config.name and not config.exists():  # `--set a=1 b=2`: b=2 lands here
        _fail(f"{config}: no such file, and it reads as an override: give each override its own --set "
              f"(--set {config.name})")
    try:
        return resolve(raw_config(config, profile, overrides, study))
    except UserError as e:
        _fail(str(e))
    raise AssertionError  # unreachable


Overrides = Annotated[list[str] | None, typer.Option("--set", "-s", help="override a field: model.depth=3")]
ProfileOpt = Annotated[str | None, typer.Option(
    "--profile", "-p", help="built-in profile of the study: " + "; ".join(
        f"{study}: {', '.join(study_profiles(study))}" for study in profiled_studies()))]
StudyOpt = Annotated[str, typer.Option(help="whose built-in profiles --profile names: "
                                       + ", ".join(profiled_studies()))]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="check the input and print the resolved config (or "
                                         "the sweep's runs); train nothing, write nothing")]
YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="run a paper- or GPU-scale profile (or a config as large "
                                      "as one) even without a CUDA device (days of CPU time)")]
OutOpt = Annotated[Path, typer.Option("--out", "-o", help="store root; runs land in OUT/NAME/<run_id>")]


@app.command()
def train(
    config: Annotated[Path | None, typer.Argument(help="YAML config (fields over the profile's)")] = None,
    profile: ProfileOpt = None,
    overrides: Overrides = None,
    out: OutOpt = Path("runs"),
    name: Annotated[str, typer.Option(help="group under the store root")] = "adhoc",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
    study: StudyOpt = "anchor",
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
) -> None:
    """Train one run (resuming it if it was interrupted) and print its outcome."""
    from reasonlab.api import train_and_plot
    from reasonlab.config import to_yaml
    from reasonlab.store import check_name
    from reasonlab.train.interrupt import stop_on_signals

    cfg = _resolved(config, profile, overrides or [], study)
    if (large := _paper_scale(profile, [cfg])) and dry_run:
        err.print(f"warning: {large}; pass --profile cpu for a reduced run", highlight=False, soft_wrap=True)
    elif large and not yes:
        _fail(f"{large}; pass --yes to run it anyway, --dry-run to print its config, or --profile cpu for a "
              "reduced run")
    try:
        root = out / check_name(name, "--name")
        if dry_run:
            console.print(f"# run {cfg.run_id()} -> {root / cfg.run_id()}\n{to_yaml(cfg)}", highlight=False,
                          markup=False, soft_wrap=True)
            return
        mode = "off" if quiet else "bar" if sys.stderr.isatty() else "lines"  # piped or nohup: a line per ~10 s
        with stop_on_signals():  # the first Ctrl-C saves at the end of the current step (Interrupted, exit 130)
            run_dir, summary = train_and_plot(cfg, root, progress=mode, log=_line)
    except UserError as e:
        _fail(str(e))
    from reasonlab.report.card import summary_card

    console.print(summary_card(run_dir, summary))


@app.command()
def show(run_dir: Annotated[Path, typer.Argument(help="a run directory, finished or not (`<run_id>.partial`)")]
         ) -> None:
    """A run's card: a finished run's summary; an unfinished one's progress (its last evaluation, and its escape
    points or plateau exits so far), while it trains or waits to be resumed."""
    from reasonlab.report.card import run_card

    try:
        console.print(run_card(run_dir))
    except UserError as e:
        _fail(str(e))


@app.command()
def demo(
    which: Annotated[Literal["reasoning", "anchor", "trajectory"], typer.Argument(
        help="reasoning (default: a few minutes), anchor (the anchor study in small, about 20 minutes) or "
             "trajectory (the anchor study's paper-scale runs, drawn from shipped data in seconds)")] = "reasoning",
    out: OutOpt = Path("runs"),
    seed: Annotated[int, typer.Option(min=0, help="seed of both runs")] = 1,
    workers: Annotated[int, typer.Option(min=1, help="runs trained at once")] = 2,
    overrides: Overrides = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print the two runs it would train; train nothing")]
    = False,
) -> None:
    """Initialization deciding reasoning or memorizing, in minutes (runs/demo): an Emb-MLP on the reasoning/memory
    mixture at a large and a small initialization, side by side, with a figure and a verdict from its numbers."""
    from reasonlab.studies import demo as main_demo
    from reasonlab.sweep.runner import PlannedOnly

    if which == "trajectory":
        main_demo.trajectory(out, console)
        console.print("next: reasonlab reproduce anchor-trajectory --dry-run  ·  docs/anchor-composition.md",
                      highlight=False, soft_wrap=True)
        return
    run = anchor.demo if which == "anchor" else main_demo.demo
    try:
        runs = run(out, seed, _executor_factory("local", workers, None, None, dry_run), console, overrides or [])
    except PlannedOnly:
        console.print("dry run: nothing trained, nothing written")
        return
    except UserError as e:
        _fail(str(e))
    if runs:
        sweep = runs[0].parent
        extra = (f"reasonlab analyze {runs[0]} --probe flow" if which == "anchor"
                 else "reasonlab demo trajectory (the anchor study at paper scale, drawn without training)")
        console.print(f"next: reasonlab show {runs[-1]}  ·  reasonlab report {sweep}  ·  {extra}", highlight=False,
                      soft_wrap=True)


WorkersOpt = Annotated[int | None, typer.Option(min=1, help="runs at once (default: one per core, at most one per "
                                                             "run)")]
ThreadsOpt = Annotated[int | None, typer.Option(min=1, help="torch threads per run (default: cores / workers)")]
BackendOpt = Annotated[Literal["local", "ray"], typer.Option(
    help="local, or ray: Ray tasks on the cluster at RAY_ADDRESS, else on a local Ray instance")]
EnsembleOpt = Annotated[int | None, typer.Option(
    min=1, help="most runs trained stacked as one model (default: where measured faster; 1 turns it off)")]


def _executor_factory(backend: str, workers: int | None, threads: int | None, ensemble: int | None = None,
                      dry_run: bool = False):
    """A function of the number of runs that makes the executor the command line chose (so the split fits the
    sweep); with ``dry_run`` one that only lets the sweep print its runs. The environment never chooses it: a
    RAY_ADDRESS left set must not send a plain sweep to a cluster."""
    from reasonlab.sweep.executors import DryRun, LocalExecutor, RayExecutor, default_ensemble, split_cores

    def make(n_runs: int):
        size = ensemble or default_ensemble()
        if dry_run:
            return DryRun(*split_cores(n_runs, workers, threads))
        if backend == "ray":
            return RayExecutor(threads or 1, ensemble=size)
        w, t = split_cores(n_runs, workers, threads)
        return LocalExecutor(w, t, size)

    return make


def _large_on_cpu(profile: str | None) -> bool:
    """Whether ``profile`` is a paper- or GPU-scale profile (``paper``, ``gpu``, ``*-paper``) and no CUDA device is
    visible."""
    if not profile or not re.search(r"(^|-)(paper|gpu)$", profile):
        return False
    import torch

    return not torch.cuda.is_available()


# Parameters × tokens trained (RunConfig.work) from which a run without a profile counts as paper scale: the
# reduced profiles train at most 3.4e13 (cpu-wide, 2.4e13: 16 min a run on this 2-core CPU), the paper-scale ones
# 4.8e14 and more (anchor paper, 4.6e15: about 26 h).
PAPER_SCALE = 1e14


def _paper_scale(profile: str | None, configs: list[RunConfig]) -> str | None:
    """Why these runs are paper scale on a CPU (a paper or GPU profile, or without a profile runs as large as
    one), or None."""
    if profile is not None:
        return (f"--profile {profile} is paper (or GPU) scale and no CUDA device is visible: hours to days of CPU "
                "time a run") if _large_on_cpu(profile) else None
    work = max((c.work() or 0 for c in configs), default=0)
    if work < PAPER_SCALE:
        return None
    import torch

    if torch.cuda.is_available():
        return None
    return (f"no --profile and the config resolves to a run at paper scale ({work:.1e} parameters × tokens; an anchor "
            "run of the study's defaults takes about 26 h on a 2-core CPU) and no CUDA device is visible")


def _refuse_large_on_cpu(profile: str | None, yes: bool, dry_run: bool) -> None:
    if _large_on_cpu(profile) and not (yes or dry_run):
        _fail(f"--profile {profile}: paper (or GPU) scale and no CUDA device is visible, so days of CPU time; "
              "pass --yes to run it anyway, --dry-run to list its runs, or --profile cpu for the reduced setting")


@app.command()
def sweep(
    spec_file: Annotated[Path | None, typer.Argument(help="sweep YAML (name, profile, config, set, grid)")] = None,
    grid: Annotated[list[str] | None, typer.Option("--grid", "-g", help="an axis: init.gamma=0.3,0.5,0.7")] = None,
    profile: ProfileOpt = None,
    overrides: Overrides = None,
    name: Annotated[str | None, typer.Option(help="sweep directory under --out (default: the file's name)")] = None,
    out: OutOpt = Path("runs"),
    workers: WorkersOpt = None,
    threads: ThreadsOpt = None,
    backend: BackendOpt = "local",
    ensemble: EnsembleOpt = None,
    study: Annotated[str | None, typer.Option(help="whose profiles --profile names (default: the file's, else "
                                                   "anchor)")] = None,
    max_runs: Annotated[int, typer.Option(min=1, help="most points a grid may have (counted before any is "
                                                      "built)")] = MAX_RUNS,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
) -> None:
    """Run every point of a grid (skipping finished runs, resuming unfinished ones) and write its results table."""
    from reasonlab.store import check_name
    from reasonlab.sweep.grid import SweepSpec, load_sweep, sweep_configs
    from reasonlab.sweep.runner import print_plan, run_sweep

    try:
        spec = load_sweep(spec_file) if spec_file else SweepSpec(profile=profile)
        update = {k: v for k, v in (("profile", profile), ("study", study)) if v is not None}
        spec = spec.model_copy(update=update)
        configs, axes = sweep_configs(spec, grid or [], overrides or [], max_runs)
        sweep_name = check_name(name or spec.name or "sweep-" + _digest([c.run_id() for c in configs]), "sweep name")
        if dry_run:
            print_plan(console, sweep_name, configs, axes, out / sweep_name)
            return
        if (large := _paper_scale(spec.profile, configs)) and not yes:
            _fail(f"{large}; pass --yes to run it anyway, --dry-run to list its runs, or --profile cpu for the "
                  "reduced setting")
        executor = _executor_factory(backend, workers, threads, ensemble)(len(configs))
        console.print(f"sweep {sweep_name}: {len(configs)} runs over {', '.join(axes) or 'no axes'} with "
                      f"{executor.workers} workers × {executor.threads} threads")
        report = run_sweep(sweep_name, configs, out, executor, axes, spec.model_dump(mode="json"), console)
    except UserError as e:
        _fail(str(e))
    _print_results(report.sweep_dir, None, show_all=False)
    for o in report.failed:
        err.print(f"run {o.run_id} failed: {o.error}", highlight=False)
    if report.failed:
        raise typer.Exit(1)


def _digest(items: list[str]) -> str:
    import hashlib

    return hashlib.sha256(",".join(sorted(items)).encode()).hexdigest()[:8]


@app.command()
def results(
    target: Annotated[Path, typer.Argument(help="a sweep directory, or a store root holding sweeps")],
    sql: Annotated[str | None, typer.Option(help='one DuckDB SELECT over the tables runs, metrics, offsets')] = None,
    csv: Annotated[Path | None, typer.Option(help="also write the table (or the query result) as CSV")] = None,
    markdown: Annotated[Path | None, typer.Option(help="also write it as a Markdown table (for a doc)")] = None,
    show_all: Annotated[bool, typer.Option("--all", help="every column, not just the axes and outcomes")] = False,
    timeout: Annotated[float, typer.Option(min=0.001, help="--sql: seconds before the query is stopped")]
    = SQL_SECONDS,
    memory_limit: Annotated[float, typer.Option(min=0.01, help="--sql: GiB the query may hold")] = SQL_MEMORY_GIB,
    max_rows: Annotated[int, typer.Option(min=1, help="--sql: most rows returned")] = SQL_ROWS,
) -> None:
    """Print a sweep's results table, or the result of SQL over all runs' tables and metrics."""
    try:
        _print_results(target, sql, show_all, csv, markdown, (timeout, memory_limit, max_rows))
    except UserError as e:
        _fail(str(e))


def _print_results(target: Path, sql: str | None, show_all: bool, csv: Path | None = None,
                   markdown: Path | None = None, bounds: tuple[float, float, int] = ()) -> None:
    from reasonlab.sweep.results import format_cell, query, table_view, write_csv, write_markdown

    for flag, path in (("--csv", csv), ("--markdown", markdown)):
        if path is not None and not path.parent.is_dir():
            raise ConfigError(f"{flag} {path}: no directory {path.parent}; create it or choose another path")
    columns, rows = query(target, sql, *bounds) if sql else table_view(target, show_all)
    table = Table(title=str(target) if not sql else None, title_justify="left")
    for col in columns:
        table.add_column(col, overflow="fold")
    for row in rows:
        table.add_row(*(format_cell(v) for v in row))
    console.print(table)
    for path, write in ((csv, write_csv), (markdown, write_markdown)):
        if path is not None:
            write(path, columns, rows)
            console.print(f"wrote {path}")


@app.command()
def phase(
    sweep_dir: Annotated[Path, typer.Argument(help="a finished (or partly finished) sweep directory")],
    x: Annotated[str | None, typer.Option(help="column on the x axis (default: the task kind's; init.gamma, "
                                                "task.n_tasks for modular sweeps)")] = None,
    y: Annotated[str | None, typer.Option(help="column on the y axis (default: the task kind's; model.depth, "
                                                "task.alpha for modular sweeps)")] = None,
    pair: Annotated[str | None, typer.Option(help="held-out pair, e.g. 4-3 (anchor sweeps; 4,3 also works; "
                                                   "default: the runs' first held-out pair)")] = None,
    at: Annotated[Literal["final", "t_star"], typer.Option(help="modular sweeps: final (the final evaluation) or "
                                                                "t_star (early stopping)")] = "final",
    where: Annotated[list[str] | None, typer.Option(help="keep only runs with COLUMN=VALUE, repeatable "
                                                         "(e.g. --where model.depth=2)")] = None,
    over_epochs: Annotated[bool, typer.Option("--over-epochs", help="anchor sweeps: each run's held-out "
                                              "accuracies as their max over evaluated epochs, not the final "
                                              "epoch's")] = False,
    value: Annotated[str | None, typer.Option(help="tasks without their own phase rule: the results column "
                                                    "shown per cell (default: the first final.* column)")] = None,
) -> None:
    """Draw the phase diagram of any sweep, by its task kind's rule. Anchor: best over learning rates, mean over
    seeds, shadow if not fitted. Modular ICL: last-shot accuracies averaged over seeds, classified into the four
    phases. Other kinds: a results column's mean and the most common label per cell."""
    from reasonlab.registry import task_kind
    from reasonlab.sweep.results import read_results

    held_out = _pair(pair, "--pair")
    try:
        rows = _where(read_results(sweep_dir), where or [])
        rule = task_kind(str(rows[0].get("task.kind", "anchor")) if rows else "anchor").get("phase")
        x, y = x or rule.axes[0], y or rule.axes[1]
        _numeric_axes(rows, {"--x": x, "--y": y})
        profiles = "; ".join(sorted({str(r.get("profile")) for r in rows}))
        options = dict(pair=held_out, at=at, over_epochs=over_epochs, value=value, profiles=f"Profile: {profiles}. ")
        selected = "".join(f"-{w.replace('=', '')}" for w in where or [])
        caption = f" Runs with {', '.join(where)}." if where else ""
        paths, lines = rule.draw(rows, sweep_dir / "figures" / f"{rule.name(options)}{selected}", x, y, options,
                                 caption)
    except UserError as e:
        _fail(str(e))
    for line in lines:
        console.print(line, highlight=False)
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


def _pair(text: str | None, flag: str) -> Pair | None:
    """``--pair 4-3`` (or ``4,3``) as a Pair; None when the flag is not given."""
    if text is None:
        return None
    try:
        return Pair.parse(text)
    except ValueError:
        _fail(f"{flag}: {text!r} is not two integers a-b (e.g. {flag} 4-3; 4,3 also works)")


@app.command()
def analyze(
    run_dir: Annotated[Path, typer.Argument(help="a finished run directory")],
    probe: Annotated[list[str] | None, typer.Option(
        "--probe", help="a named analysis, repeatable (default: all of the run's kind); anchor: flow, "
        "representations, fused, condensation, embedding, spectra; modular: shots, grid, attention, ov, pca, "
        "corruption, masking")] = None,
    checkpoint: Annotated[str, typer.Option(help="final, best (early stopping) or a saved step")] = "final",
    pair: Annotated[str | None, typer.Option(help="anchor: the probe pair a1-a2 (default: the held-out pair)")] = None,
    key: Annotated[int | None, typer.Option(min=0, help="anchor: the flow probe's key (default 99)")] = None,
    position: Annotated[int | None, typer.Option(min=0, help="anchor: key position of the probe inputs (default: "
                                                             "the middle one)")] = None,
    threshold: Annotated[float | None, typer.Option(min=-1, max=1, help="anchor: flow edge / condensation cosine "
                                                    "threshold, in [-1, 1]")] = None,
    task: Annotated[str | None, typer.Option(help="modular: the probe task a,b (default: the first i.d. task with "
                                                  "a, b ≠ 0)")] = None,
    head: Annotated[str | None, typer.Option(help="modular: PCA head LAYER.HEAD (default: the one with the most "
                                                  "variance in its top-2 plane)")] = None,
    shot: Annotated[int | None, typer.Option(min=0, help="modular: target shot of the OV/PCA probes (default: the "
                                                         "last)")] = None,
    max_tasks: Annotated[int | None, typer.Option(min=1, help="modular: tasks per group for grid/corruption")]
    = None,
    ablation: Annotated[Literal["zero", "mean"], typer.Option(help="modular head masking: zero or mean")] = "zero",
    seed: Annotated[int, typer.Option(min=0, help="seed of the probe inputs")] = 0,
    eval_batches: Annotated[int | None, typer.Option(
        min=1, help="modular shots/masking: batches per evaluation set (default: the run's own; more give "
        "last-shot accuracies over more distinct queries)")] = None,
    over_time: Annotated[bool, typer.Option("--over-time", help="run the analyses at every saved checkpoint and "
                                            "draw them across training (RUN_DIR/analysis/dynamics/)")] = False,
) -> None:
    """Run named analyses on a saved run; numbers, arrays and figures land in RUN_DIR/analysis/<checkpoint>/."""
    options = {k: v for k, v in dict(pair=_pair(pair, "--pair"), task=_pair(task, "--task"), key=key,
                                     position=position, threshold=threshold, head=head, shot=shot,
                                     max_tasks=max_tasks, ablation=ablation, seed=seed,
                                     eval_batches=eval_batches).items() if v is not None}
    from reasonlab.numerics import flush_denormals

    try:
        with flush_denormals():
            results = _analyze(run_dir, probe or [], checkpoint, options, over_time)
    except UserError as e:
        _fail(str(e))
    for name, numbers in results.items():
        console.print(f"[bold]{escape(name)}[/]: {escape(str(numbers['headline']))}", markup=True)
    console.print(f"written under {run_dir / 'analysis'}")


def _analyze(run_dir: Path, probes: list[str], checkpoint: str, options: dict, over_time: bool) -> dict:
    """The analyses' numbers by name: at one checkpoint, or at every one (reporting the last)."""
    from reasonlab.analysis.probes import analyze as run_probes
    from reasonlab.analysis.probes import analyze_over_time

    if not over_time:
        return run_probes(run_dir, probes, checkpoint, options)
    series = analyze_over_time(run_dir, probes, options)
    console.print(f"{len(next(iter(series.values())))} checkpoints analysed; the last:")
    return {name: by_step[max(by_step)] for name, by_step in series.items()}


@app.command()
def report(target: Annotated[Path, typer.Argument(help="a finished run or a sweep directory")]) -> None:
    """One self-contained HTML page (figures embedded, no external requests): config, outcome, curves and
    analyses of each run; for a sweep also its phase diagram, with each cell linking to its runs."""
    from reasonlab.report.html import write_report

    try:
        path = write_report(target)
    except UserError as e:
        _fail(str(e))
    console.print(f"report: {path}")


@app.command()
def export(
    run_dir: Annotated[Path, typer.Argument(help="a finished run directory")],
    to: Annotated[Literal["tensorboard", "wandb"], typer.Option(
        "--to", help="the format: tensorboard (event files) or wandb (an offline W&B run)")] = "tensorboard",
    out: Annotated[Path | None, typer.Option("--out", "-o", help="where (default: RUN_DIR/<format>)")] = None,
) -> None:
    """Write a finished run's metrics for another tool: TensorBoard event files (tensorboard --logdir DIR) or an
    offline W&B run (wandb sync DIR/offline-run-* uploads it)."""
    from reasonlab.train.loggers import HINTS, export

    try:
        path = export(run_dir, to, out)
    except UserError as e:
        _fail(str(e))
    console.print(f"{to}: {path}  ({HINTS[to].format(path=path)})", highlight=False, soft_wrap=True)


@app.command()
def pack(
    source: Annotated[Path, typer.Argument(help="a run directory (finished or .partial), or a sweep folder")],
    dest: Annotated[Path, typer.Argument(help="the results folder to write the packs into")],
) -> None:
    """Copy runs' records into a results folder to commit, with an unfinished run's newest resume checkpoint
    (≤ 10 MB) under resume/, replacing the earlier pack: a new machine resumes from it (`reasonlab restore`)."""
    from reasonlab.train.packs import pack_runs

    try:
        for path in pack_runs(source, dest, log=_line):
            console.print(f"packed {path}", highlight=False, markup=False, soft_wrap=True)
    except UserError as e:
        _fail(str(e))


@app.command()
def restore(
    packs: Annotated[list[Path], typer.Argument(help="packs of unfinished runs (results/.../<run_id>.partial)")],
    root: Annotated[Path, typer.Option("--into", help="the folder that holds the runs: OUT/NAME of `train`, or "
                                                        "OUT/<sweep name> of `sweep`")],
) -> None:
    """Seed a store with committed packs of unfinished runs, so the runs' own train or sweep command resumes
    them where the packs were taken (a checkpoint the store already holds that is as new is kept)."""
    from reasonlab.train.packs import restore_pack

    try:
        for path in packs:
            console.print(restore_pack(path, root), highlight=False, markup=False, soft_wrap=True)
    except UserError as e:
        _fail(str(e))


@app.command()
def reproduce(
    experiment: Annotated[str, typer.Argument(
        help="a study (`reasonlab studies` lists them): anchor-phase, anchor-trajectory, anchor-complexity, "
        "anchor-lr-wd, reasoning-bias, prontoqa-tinystories, modular-phase, scan, cogs, addition, prontoqa, ...")],
    profile: Annotated[str | None, typer.Option("--profile", "-p", help="cpu (reduced; the default where the "
                                                "experiment has it), gpu (modular-phase and the benchmarks: one GPU) "
                                                "or paper, seeds (anchor-trajectory: this CPU, hours a run), regime "
                                                "(prontoqa-tinystories: the spec's optimizer, hours a run)")] = None,
    out: OutOpt = Path("runs"),
    workers: WorkersOpt = None,
    threads: ThreadsOpt = None,
    backend: BackendOpt = "local",
    ensemble: EnsembleOpt = None,
    overrides: Overrides = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print the runs it would train (finished ones marked); "
                                          "train nothing, write nothing")] = False,
    yes: YesOpt = False,
) -> None:
    """Run a study's headline experiment with one command and write its figure and summary."""
    from reasonlab.registry import studies
    from reasonlab.sweep.runner import PlannedOnly

    known = studies()
    if experiment not in known:
        _fail(str(unknown_name(f"reproduce {experiment!r}", experiment, known)))
    study = known[experiment]
    profile = profile if profile is not None else study.default_arm()
    if profile not in study.arms():
        _fail(str(unknown_name(f"--profile {profile!r} of {experiment}", profile, study.arms())))
    if not study.runs_on_cpu:
        _refuse_large_on_cpu(profile, yes, dry_run)
    try:
        study.get("reproduce")(profile, out, _executor_factory(backend, workers, threads, ensemble, dry_run),
                               console, overrides or [])
    except PlannedOnly:
        console.print("dry run: nothing trained, nothing written")
    except UserError as e:
        _fail(str(e))


@app.command("studies")
def list_studies() -> None:
    """The studies `reproduce` runs (built in and registered): their arms, figures and what each shows."""
    from reasonlab.registry import studies

    table = Table(title="studies", title_justify="left")
    for col in ("study", "arms (--profile)", "figures", "what"):
        table.add_column(col, overflow="fold")
    for name, study in studies().items():
        table.add_row(name, ", ".join(study.arms()), ", ".join(study.figures) or "—", study.what)
    console.print(table)


def main() -> None:
    try:
        app()
    except Interrupted as e:  # a stop asked for by a signal: the work so far is saved
        err.print(str(e), highlight=False, markup=False, soft_wrap=True)
        gc.freeze()  # at once: the collection at exit takes seconds with torch loaded and has nothing to save
        sys.exit(130)
    except KeyboardInterrupt:
        err.print("interrupted; run the same command again to resume")
        sys.exit(130)
    except OSError as e:  # a path the user gave (a file for a directory, read-only, missing, too large): one line
        where = f"{e.filename}: " if e.filename else ""
        _error_line(f"{where}{e.strerror or e}; check the path, its permissions and free space (finished runs are "
                    "kept; an unfinished one resumes from its last checkpoint)")
        sys.exit(2)


if __name__ == "__main__":
    main()
