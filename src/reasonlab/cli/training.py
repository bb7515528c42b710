"""The commands that train: ``train`` (one run), ``sweep`` (a grid), ``reproduce`` (a study's headline
experiment), ``demo``, and ``studies`` (what ``reproduce`` runs); the executor and the paper-scale guard they
share."""

from __future__ import annotations

import hashlib
import re
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from reasonlab.arguments import ascii_int
from reasonlab.cli.common import (
    BackendOpt,
    DryRunOpt,
    EnsembleOpt,
    FamilyOpt,
    OutOpt,
    Overrides,
    ProfileOpt,
    StudyAlias,
    ThreadsOpt,
    WorkersOpt,
    YesOpt,
    console,
    err,
    family_of,
    line,
    print_results,
)
from reasonlab.config import ConfigError, RunConfig, family_profiles, find_profile, raw_config, resolve, unknown_name
from reasonlab.sweep.grid import MAX_RUNS
from reasonlab.terminal import counted

# Parameters × tokens trained (RunConfig.work) from which a run without a profile counts as paper scale: the
# reduced profiles train at most 3.4e13 (cpu-wide, 2.4e13: 16 min a run on this 2-core CPU), the paper-scale ones
# 4.8e14 and more (anchor paper, 4.6e15: about 26 h).
PAPER_SCALE = 1e14


def executor_factory(backend: str, workers: int | None, threads: int | None, ensemble: int | None = None,
                     dry_run: bool = False):  # noqa: ANN201 - returns a factory of executors of several classes
    """A function of the number of runs that makes the executor the command line chose (so the split fits the
    sweep); with ``dry_run`` one that only lets the sweep print its runs. The environment never chooses it: a
    RAY_ADDRESS left set must not send a plain sweep to a cluster."""
    from reasonlab.sweep.executors import DryRun, LocalExecutor, RayExecutor, default_ensemble, split_cores

    def make(n_runs: int):  # noqa: ANN202
        size = ensemble or default_ensemble()
        if dry_run:
            return DryRun(*split_cores(n_runs, workers, threads))
        if backend == "ray":
            return RayExecutor(threads or 1, ensemble=size)
        w, t = split_cores(n_runs, workers, threads)
        return LocalExecutor(w, t, size)

    return make


def large_on_cpu(profile: str | None) -> bool:
    """Whether ``profile`` is a paper- or GPU-scale profile (``paper``, ``gpu``, ``*-paper``) and no CUDA device is
    visible."""
    if not profile or not re.search(r"(^|-)(paper|gpu)$", profile):
        return False
    import torch

    return not torch.cuda.is_available()


def reduced(profile: str | None, family: str | None) -> str:
    """The flag of the reduced profile beside a paper- or GPU-scale one (``anchor-paper``: ``anchor-cpu``), or where
    to find one."""
    if profile is not None:
        owner, name = find_profile(profile, family)
        cpu = re.sub(r"(paper|gpu)$", "cpu", name)
        if cpu in family_profiles(owner):
            return f"--profile {owner}-{cpu}"
    return "a reduced (cpu) profile (`reasonlab train --help` lists them)"


def paper_scale(profile: str | None, configs: list[RunConfig]) -> str | None:
    """Why these runs are paper scale on a CPU (a paper or GPU profile, or without a profile runs as large as
    one), or None."""
    if profile is not None:
        return (f"--profile {profile} is paper (or GPU) scale and no CUDA device is visible: hours to days of CPU "
                "time a run") if large_on_cpu(profile) else None
    work = max((c.work() or 0 for c in configs), default=0)
    if work < PAPER_SCALE:
        return None
    import torch

    if torch.cuda.is_available():
        return None
    return (f"no --profile and the config resolves to a run at paper scale ({work:.1e} parameters × tokens; an anchor "
            "run of the study's defaults takes about 26 h on a 2-core CPU) and no CUDA device is visible")


def train(
    config: Annotated[Path | None, typer.Argument(help="YAML config (fields over the profile's)")] = None,
    profile: ProfileOpt = None,
    overrides: Overrides = None,
    out: OutOpt = Path("runs"),
    name: Annotated[str, typer.Option(help="group under the store root")] = "adhoc",
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress bar")] = False,
    family: FamilyOpt = None,
    study: StudyAlias = None,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
) -> None:
    """Train one run (resuming it if it was interrupted) and print its outcome."""
    from reasonlab.api import train_and_plot
    from reasonlab.config import to_yaml
    from reasonlab.report.card import summary_card
    from reasonlab.store import check_name
    from reasonlab.train.interrupt import stop_on_signals

    if config is not None and "=" in config.name and not config.exists():  # `--set a=1 b=2`: b=2 lands here
        raise ConfigError(f"{config}: no such file, and it reads as an override: give each override its own --set "
                          f"(--set {config.name})")
    family = family_of(family, study)
    cfg = resolve(raw_config(config, profile, overrides or [], family))
    if (large := paper_scale(profile, [cfg])) and dry_run:
        err.print(f"warning: {large}; pass {reduced(profile, family)} for a reduced run", highlight=False,
                  soft_wrap=True)
    elif large and not yes:
        raise ConfigError(f"{large}; pass --yes to run it anyway, --dry-run to print its config, or "
                          f"{reduced(profile, family)} for a reduced run")
    root = out / check_name(name, "--name")
    if dry_run:
        for text in (f"# run {cfg.run_id()} -> {root / cfg.run_id()}", *to_yaml(cfg).splitlines()):
            line(text)  # line by line: a log line escapes a line feed inside it, as any control character
        return
    mode = "off" if quiet else "bar" if sys.stderr.isatty() else "lines"  # piped or nohup: a line per ~10 s
    with stop_on_signals():  # the first Ctrl-C saves at the end of the current step (Interrupted, exit 130)
        run_dir, summary = train_and_plot(cfg, root, progress=mode, log=line)
    console.print(summary_card(run_dir, summary))


def demo(
    which: Annotated[str, typer.Argument(help="which demo")] = "reasoning",
    out: OutOpt = Path("runs"),
    seed: Annotated[int, typer.Option(min=0, help="seed of both runs")] = 1,
    workers: Annotated[int, typer.Option(min=1, help="runs trained at once")] = 2,
    overrides: Overrides = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print the two runs it would train; train nothing")]
    = False,
) -> None:
    """Initialization deciding reasoning or memorizing, in minutes (runs/demo): an Emb-MLP on the reasoning/memory
    mixture at a large and a small initialization, side by side, with a figure and a verdict from its numbers."""
    from reasonlab.studies.demo import demos
    from reasonlab.sweep.runner import PlannedOnly

    known = demos()
    if which not in known:
        raise unknown_name(f"demo {which!r}", which, known)
    study, arm = known[which]
    try:
        paths = study.run_demo(arm, out, seed, executor_factory("local", workers, None, None, dry_run), console,
                               overrides or [])
    except PlannedOnly:
        console.print("dry run: nothing trained, nothing written")
        return
    if paths:
        console.print(f"next: {study.next_step(arm, paths)}", highlight=False, soft_wrap=True)


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
    family: Annotated[str | None, typer.Option(help="the profile family in which --profile's bare name is looked "
                                                    "up (default: none; the file's family: qualifies the file's "
                                                    "own profile)")] = None,
    study: StudyAlias = None,
    max_runs: Annotated[int, typer.Option(min=1, help="most points a grid may have (counted before any is "
                                                      "built)")] = MAX_RUNS,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
) -> None:
    """Run every point of a grid (skipping finished runs, resuming unfinished ones) and write its results table."""
    from reasonlab.store import check_name
    from reasonlab.sweep.grid import SweepSpec, load_sweep, sweep_configs
    from reasonlab.sweep.runner import print_plan, run_sweep

    spec = load_sweep(spec_file) if spec_file else SweepSpec(profile=profile)
    family = family_of(family, study)
    # a --profile given here is looked up with --family alone: the file's family: names the file's own profile
    update = {"family": family} if family is not None else {}
    if profile is not None:
        update = {"profile": profile, "family": family}
    spec = spec.model_copy(update=update)
    configs, axes = sweep_configs(spec, grid or [], overrides or [], max_runs)
    ids = ",".join(sorted(c.run_id() for c in configs))
    sweep_name = check_name(name or spec.name or "sweep-" + hashlib.sha256(ids.encode()).hexdigest()[:8],
                            "sweep name")
    if dry_run:
        print_plan(console, sweep_name, configs, axes, out / sweep_name)
        return
    if (large := paper_scale(spec.profile, configs)) and not yes:
        raise ConfigError(f"{large}; pass --yes to run it anyway, --dry-run to list its runs, or "
                          f"{reduced(spec.profile, spec.family)} for the reduced setting")
    executor = executor_factory(backend, workers, threads, ensemble)(len(configs))
    console.print(f"sweep {sweep_name}: {counted(len(configs), 'run')} over {', '.join(axes) or 'no axes'} with "
                  f"{executor.workers} workers × {executor.threads} threads")
    report = run_sweep(sweep_name, configs, out, executor, axes, spec.model_dump(mode="json"), console)
    print_results(report.sweep_dir, None, show_all=False)
    for o in report.failed:
        err.print(f"run {o.run_id} failed: {o.error}", highlight=False)
    if report.failed:
        raise typer.Exit(1)


def reproduce(
    experiment: Annotated[str, typer.Argument(help="a study (`reasonlab studies` lists them)")],
    profile: Annotated[str | None, typer.Option("--profile", "-p", help="the study's arm")] = None,
    out: OutOpt = Path("runs"),
    workers: WorkersOpt = None,
    threads: ThreadsOpt = None,
    backend: BackendOpt = "local",
    ensemble: EnsembleOpt = None,
    overrides: Overrides = None,
    seeds: Annotated[str | None, typer.Option("--seeds", help="seeds in place of the arm's, e.g. 1,2,3 (runs of "
                                              "seeds it shares with the arm keep their ids)")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="print the runs it would train (finished ones marked); "
                                          "train nothing, write nothing")] = False,
    yes: YesOpt = False,
) -> None:
    """Run a study's headline experiment with one command and write its figure and summary."""
    from reasonlab.registry import studies
    from reasonlab.sweep.runner import PlannedOnly

    known = studies()
    if experiment not in known:
        raise unknown_name(f"reproduce {experiment!r}", experiment, known)
    study = known[experiment]
    profile = profile if profile is not None else study.default_arm()
    if profile not in study.arms:
        raise unknown_name(f"--profile {profile!r} of {experiment}", profile, study.arms)
    if not study.runs_on_cpu and large_on_cpu(profile) and not (yes or dry_run):
        raise ConfigError(f"--profile {profile}: paper (or GPU) scale and no CUDA device is visible, so days of CPU "
                          "time; pass --yes to run it anyway, --dry-run to list its runs, or --profile cpu for the "
                          "reduced setting")
    # only the seed axis: every study's summary reads seeds as spread, whereas another axis would fall outside its
    # tables; a study whose arms have several seed grids says so (``takes_seeds``) and is refused
    if seeds is not None and not study.takes_seeds:
        raise ConfigError(f"--seeds: reproduce {experiment} takes no --seeds; drop it, or train other seeds "
                          "with `reasonlab sweep --grid seed=...`")
    try:
        study.run(profile, out, executor_factory(backend, workers, threads, ensemble, dry_run), console,
                  overrides or [], None if seeds is None else parse_seeds(seeds))
    except PlannedOnly:
        console.print("dry run: nothing trained, nothing written")


def parse_seeds(text: str) -> list[int]:
    """``--seeds 1,2,3`` as distinct non-negative integers (``ascii_int``: ASCII digits, at most 18), in the order
    given; a one-line error otherwise."""
    parts = [t.strip() for t in text.split(",")]
    seeds = [n for t in parts if (n := ascii_int(t)) is not None]
    if len(seeds) != len(parts) or len(set(seeds)) != len(seeds):
        raise ConfigError(f"--seeds: {text!r} is not a list of distinct non-negative integers (e.g. 1,2,3)")
    return seeds


def list_studies() -> None:
    """The studies `reproduce` runs (built in and registered): their arms with each one's stated cost, figures and
    what each shows."""
    from reasonlab.registry import studies

    table = Table(title="studies", title_justify="left")
    for col in ("study", "arms (--profile): cost", "figures", "what"):
        table.add_column(col, overflow="fold")
    for name, study in studies().items():
        arms = "\n".join(f"{arm}: {a.cost}" if a.cost else arm for arm, a in study.arms.items())
        table.add_row(name, arms, ", ".join(study.figures) or "—", study.what)
    console.print(table)
