"""Running a sweep: skip finished runs, execute the rest, keep the results table current, show one live table.

Per-run progress comes from each run's ``progress.json`` (rewritten by the trainer every few seconds), so the
display is the same whether the runs execute in local processes or as Ray tasks, and parallel runs never
interleave bars. Without a terminal the table becomes a plain line every ``LINE_EVERY_S`` at most.

The first SIGINT or SIGTERM asks the runs to stop at the end of their current step and save there; the sweep then
records what finished and raises ``Interrupted`` (exit 130). A second one ends it at once.
"""

from __future__ import annotations

import os
import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

from rich.cells import cell_len, set_cell_size
from rich.console import Console, Group
from rich.live import Live
from rich.text import Text

from reasonlab import terminal
from reasonlab.checkpoint import resumable_steps
from reasonlab.config import RunConfig, to_yaml
from reasonlab.describe import axis_value, describe_run
from reasonlab.errors import Interrupted, StoreError
from reasonlab.evaluate import progress_parts
from reasonlab.files import atomic_write_text, write_json
from reasonlab.record_schemas import SweepRecord, valid
from reasonlab.records import check_metrics, finished_summaries, load_progress, load_record, progress_figures, run_dirs
from reasonlab.store import PARTIAL, check_name
from reasonlab.sweep.executors import Executor, RunOutcome
from reasonlab.sweep.grid import SweepSpec, sweep_configs
from reasonlab.sweep.results import read_results, write_results
from reasonlab.train.ensemble import group_stackable
from reasonlab.train.interrupt import stop_on_signals, stop_requested
from reasonlab.train.progress import LINE_EVERY_S, run_label


@dataclass
class SweepReport:
    sweep_dir: Path
    total: int
    skipped: int
    outcomes: list[RunOutcome] = field(default_factory=list)
    wall_time_s: float = 0.0
    run_time_s: float = 0.0  # training time summed over every finished run of the sweep, this invocation or not
    workers: int = 1

    @property
    def failed(self) -> list[RunOutcome]:
        return [o for o in self.outcomes if o.status == "failed"]

    def timing(self) -> str:
        """One line for a study summary. A resumed sweep's own wall time says little about the study's cost, so
        the summed training time of all its runs is stated beside it (alone, when this invocation trained none)."""
        summed = f"training time summed over the finished runs: {self.run_time_s / 60:.1f} min."
        if self.total and self.skipped == self.total:
            return (f"{terminal.counted(self.total, 'run')}, all finished before this invocation (which trained none); "
                    f"{summed}")
        return (f"{terminal.counted(self.total, 'run')} ({self.skipped} already finished before this invocation, "
                f"{len(self.failed)} failed); this invocation took {self.wall_time_s / 60:.1f} min with "
                f"{self.workers} worker(s); {summed}")


_GAP = "  "  # between the live view's columns


def _cost(cfg: RunConfig) -> float:
    """Relative cost of a run, for the ETA: epochs × blocks (the grid rarely varies anything else that matters; a
    model without blocks, such as the Emb-MLP, counts as one)."""
    return cfg.train.epochs * max(getattr(cfg.model, "depth", 1), 1)


def _fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(seconds)
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s"


def _loss(progress: dict) -> str:
    """A run's loss as shown (the epoch's mean so far); a diverged run's progress holds none (null)."""
    loss = progress.get("loss")
    return "diverged" if progress.get("diverged_step") is not None else "—" if loss is None else f"{loss:.3f}"


def _done_share(progress: dict) -> float:
    """The share of a run's training done: by steps (epochs in files written before steps were recorded)."""
    return progress["step"] / progress["steps"] if progress.get("steps") else progress["epoch"] / progress["epochs"]


def _speed(progress: dict) -> tuple[str, str]:
    """(steps per second, the run's ETA) as shown."""
    rate = progress.get("steps_per_s")
    return ("—" if rate is None else f"{rate:.1f}"), _fmt_time(progress.get("eta_s"))


class Monitor:
    """Overall progress (runs done / total, running, elapsed, ETA) and one row per running run: a run counts as
    running once its trainer has written progress during this invocation (from its first step on)."""

    def __init__(self, name: str, root: Path, todo: list[RunConfig], axes: list[str], skipped: int, total: int,
                 console: Console):
        self.name, self.root, self.axes, self.console = name, root, axes, console
        self.todo = {c.run_id(): c for c in todo}
        self.skipped, self.total = skipped, total
        self.done: dict[str, RunOutcome] = {}
        self.start = time.monotonic()
        self.since = time.time()  # progress files older than this were left by an earlier invocation
        self.live = console.is_terminal
        self.line_every = LINE_EVERY_S  # plain-line mode: at most one line this often
        self.last_line = float("-inf")
        self.reported: dict[str, tuple] = {}  # what the last plain line showed, per run
        self.first_share: dict[str, float] = {}  # per run, its share done when this invocation first saw it train

    def _progress(self, run_id: str) -> dict | None:
        """A run's progress if its trainer wrote it during this invocation (else None, as for a file that is not
        one the store wrote)."""
        partial = self.root / f"{run_id}{PARTIAL}"
        try:
            if os.stat(partial / "progress.json").st_mtime < self.since:
                return None
            return load_progress(partial)
        except (OSError, StoreError):
            return None

    def running(self, pending: set[str]) -> dict[str, dict]:
        found = {r: p for r in sorted(pending) if (p := self._progress(r)) is not None}
        for r, p in found.items():
            self.first_share.setdefault(r, _done_share(p))
        return found

    def eta(self, running: dict[str, dict], pending: set[str]) -> float | None:
        """Seconds left: while every unfinished run trains, the slowest one's own ETA; with runs still queued, the
        elapsed time scaled by the work left (epochs × blocks per run, a running run's by its steps done). Only the
        work done in this invocation counts against its elapsed time: a run resumed half done is not half the work
        of the last few seconds."""
        if running and set(running) == pending:
            etas = [p.get("eta_s") for p in running.values()]
            return None if None in etas else max(etas)
        before = self.first_share  # a run resumed part done: that part is neither work left nor work done here
        total = sum(_cost(c) * (1.0 - before.get(r, 0.0)) for r, c in self.todo.items())
        done = sum(_cost(self.todo[r]) * (1.0 - before.get(r, 0.0)) for r in self.done)
        done += sum(_cost(self.todo[r]) * (_done_share(p) - before.get(r, 0.0)) for r, p in running.items())
        elapsed = time.monotonic() - self.start
        return None if done <= 0 else elapsed * (total - done) / done

    def _describe(self, run_id: str, label: str | None = None) -> str:
        """A run of the sweep in one line (``describe_run``), its axes among its fields."""
        return describe_run(self.todo[run_id], self.axes, label)

    def _figures(self, run_id: str, progress: dict) -> list[str]:
        """A run's last evaluation, as its task kind's progress line shows it (``seen_test_acc 0.93``, ...)."""
        return progress_parts(self.todo[run_id].task.kind, progress_figures(progress))

    def headline(self, running: dict[str, dict], pending: set[str]) -> str:
        failed = sum(o.status == "failed" for o in self.done.values())
        return (f"sweep {self.name}: {len(self.done) + self.skipped}/{terminal.counted(self.total, 'run')} done "
                f"({self.skipped} already finished, {failed} failed), {len(running)} running; elapsed "
                f"{_fmt_time(time.monotonic() - self.start)}, ETA {_fmt_time(self.eta(running, pending))}")

    def report_progress(self, pending: set[str]) -> None:
        """Without a terminal (piped, nohup): the sweep's line and each running run's step, speed, ETA, loss and
        last evaluation (its kind's progress parts), as the live table would show them; at most every
        ``line_every`` seconds and only when a run moved on, the first as soon as one trains."""
        if time.monotonic() - self.last_line < self.line_every:
            return
        running = self.running(pending)
        state = {r: (p["epoch"], p["step"], p.get("diverged_step")) for r, p in running.items()}
        if not running or all(self.reported.get(r) == v for r, v in state.items()):
            return
        self.last_line, self.reported = time.monotonic(), state
        runs = []
        for run_id, p in running.items():
            rate, eta = _speed(p)
            steps = f" step {p['step']}/{p['steps']} ({rate}/s, ETA {eta})" if p.get("steps") else ""
            runs.append(f"{self._describe(run_id)}: epoch {p['epoch']}/{p['epochs']}{steps} loss {_loss(p)}"
                        + "".join(f" {part}" for part in self._figures(run_id, p)))
        terminal.print_line(self.console, " | ".join([self.headline(running, pending), *runs]))

    def finished(self, outcome: RunOutcome) -> None:
        self.done[outcome.run_id] = outcome
        if not self.live:
            text = (self._describe(outcome.run_id, outcome.label) if outcome.status == "finished"
                    else f"{self._describe(outcome.run_id)}: FAILED {outcome.error}")
            terminal.print_line(self.console, f"[{len(self.done) + self.skipped}/{self.total}] {text}")

    def render(self, pending: set[str]) -> Group:
        """The live view: the sweep's line, then one line per running run (id, axes, epoch, step, speed, ETA, loss
        in aligned columns) with its last evaluation beside it where the screen has room, else on a line of its
        own under it, wrapped rather than cut; only the sweep's line while no run trains, so no header is left
        over once the last one ends."""
        running = self.running(pending)
        if not running:
            return Group(Text(self.headline(running, pending)))
        header = ["run", *self.axes, "epoch", "step", "steps/s", "ETA", "loss"]
        rows, figures = [], []
        for run_id, p in running.items():
            steps = f"{p['step']}/{p['steps']}" if p.get("steps") else str(p["step"])
            rows.append([run_id, *(str(axis_value(self.todo[run_id], a)) for a in self.axes),
                         f"{p['epoch']}/{p['epochs']}", steps, *_speed(p), _loss(p)])
            figures.append(" ".join(self._figures(run_id, p)) or "—")
        widths = [max(cell_len(row[i]) for row in [header, *rows]) for i in range(len(header))]

        def aligned(cells: list[str]) -> str:
            return _GAP.join(set_cell_size(c, w) for c, w in zip(cells, widths, strict=True))

        beside = cell_len(aligned(header)) + max(cell_len(f) for f in ["last evaluation", *figures]) + len(_GAP)
        if beside <= self.console.width:
            lines = [_GAP.join([aligned(header), "last evaluation"]),
                     *(_GAP.join([aligned(row), f]) for row, f in zip(rows, figures, strict=True))]
        else:
            lines = [aligned(header).rstrip(), *(line for row, f in zip(rows, figures, strict=True)
                                                 for line in (aligned(row).rstrip(), f"  last evaluation: {f}"))]
        # the axes' values are stored strings: shown, not obeyed (reasonlab.terminal)
        return Group(Text(self.headline(running, pending)), Text(terminal.printable(lines[0]), style="bold"),
                     *(Text(terminal.printable(line)) for line in lines[1:]))


class PlannedOnly(Exception):  # noqa: N818 - not an error: the dry run stopped where training would start
    """Raised by ``run_sweep`` given a ``DryRun`` executor, once it has printed the plan: nothing was written."""


def print_plan(console: Console, name: str, configs: list[RunConfig], axes: list[str], sweep_dir: Path) -> None:
    """What a sweep would run: one line per run (``describe_run``), finished ones marked as skipped."""
    finished = {p.name for p in run_dirs(sweep_dir)}
    tally = f" ({len(finished & {c.run_id() for c in configs})} finished)" if finished else ""
    terminal.print_line(console, f"sweep {name}: {terminal.counted(len(configs), 'run')} over "
                        f"{', '.join(axes) or 'no axes'} -> {sweep_dir}{tally}")
    for label in sorted({str(c.profile) for c in configs}):
        terminal.print_line(console, f"  profile {label}")
    for c in configs:
        done = "  (finished: skipped)" if c.run_id() in finished else ""
        terminal.print_line(console, f"  {describe_run(c, axes)}{done}")


def run_sweep(name: str, configs: list[RunConfig], out: Path, executor: Executor, axes: list[str],
              spec: dict | None = None, console: Console | None = None) -> SweepReport:
    """Run every config not yet finished under ``out/name`` and keep ``results.parquet`` current. A finished run
    of the grid whose record does not read (a damaged summary or metrics file, a copy under another run's name) is
    a one-line StoreError naming it, before anything is written: the sweep neither trains it again nor reports the
    grid done without it. A grid whose every run is finished, in a sweep folder that cannot be written, writes
    nothing (said in one line). With a ``DryRun`` executor: print what would run and raise ``PlannedOnly``,
    writing nothing."""
    console = console or terminal.console(stderr=True)
    if getattr(executor, "dry_run", False):
        print_plan(console, name, configs, axes, Path(out) / check_name(name, "sweep name"))
        raise PlannedOnly(name)
    sweep_dir = Path(out) / check_name(name, "sweep name")
    finished = {p.name for p in run_dirs(sweep_dir)}
    for c in configs:  # a finished run of this grid that does not read is reported, not trained again nor passed over
        if c.run_id() in finished:
            load_record(sweep_dir / c.run_id())
            check_metrics(sweep_dir / c.run_id())
    todo = [c for c in configs if c.run_id() not in finished]
    # every run finished and nothing may be written (a read-only mount, a committed store): the grid is read, not
    # recorded again, as a finished run's train writes nothing
    writes = bool(todo) or not sweep_dir.is_dir() or os.access(sweep_dir, os.W_OK)
    if writes:
        sweep_dir.mkdir(parents=True, exist_ok=True)
        write_json(sweep_dir / "sweep.json", valid(SweepRecord, {"name": name, "axes": axes, "spec": spec or {},
                                                                 "run_ids": [c.run_id() for c in configs],
                                                                 "command": terminal.command_line.get()}))
        atomic_write_text(sweep_dir / "base-config.yaml", to_yaml(configs[0]))
    else:
        terminal.print_line(console, f"{sweep_dir}: read-only; every run is finished, so nothing is written (its "
                            "sweep.json and results table are left as they are)")
    report = SweepReport(sweep_dir, len(configs), len(configs) - len(todo), workers=executor.workers)
    if report.skipped:  # said on every console: a piped rerun that trains nothing must not look like a failure
        terminal.print_line(console, f"{report.skipped} of {terminal.counted(report.total, 'run')} already finished "
                            f"in {sweep_dir}: reused, not trained again{'' if todo else '; nothing left to train'}")
    if resuming := _resume_points(sweep_dir, todo):
        terminal.print_line(console, f"resuming {len(resuming)} of {terminal.counted(len(todo), 'run')} from their "
                            "checkpoints: " + ", ".join(f"{rid} at step {step}" for rid, step in resuming[:4])
                            + (f" and {len(resuming) - 4} more" if len(resuming) > 4 else ""))
    monitor = Monitor(name, sweep_dir, todo, axes, report.skipped, report.total, console)
    started = time.monotonic()
    stopping = False
    try:
        with stop_on_signals():
            handles = {executor.submit(group, sweep_dir): [c.run_id() for c in group]
                       for group in group_stackable(todo, executor.ensemble)}
            pending = set(handles)
            with Live(monitor.render(set()), console=console, refresh_per_second=2, transient=False,
                      redirect_stdout=False, redirect_stderr=False) if monitor.live else nullcontext() as live:
                while pending:
                    if not stopping and (stop_requested() or any(o.status == "interrupted" for o in report.outcomes)):
                        stopping = True  # asked here, or a worker was sent SIGTERM: every run stops
                        executor.stop(pending)
                    done, pending = executor.wait(pending, timeout=1.0)
                    for h in done:
                        for outcome in executor.result(h):
                            report.outcomes.append(outcome)
                            if outcome.status != "interrupted":
                                monitor.finished(outcome)
                        write_results(sweep_dir)
                    running = {run_id for h in pending for run_id in handles[h]}
                    if live is not None:
                        live.update(monitor.render(running))
                    else:
                        monitor.report_progress(running)
    except BaseException:
        executor.abort()  # a second signal, or a failure of the sweep itself: its workers end with it
        raise
    if stopping:  # every run has saved and returned: no need to wait for the workers' exit (seconds of clean-up)
        executor.abort()
        write_results(sweep_dir)
        raise _interrupted(report, {c.run_id(): c for c in todo})
    executor.close()
    if writes:
        write_results(sweep_dir)
    report.wall_time_s = time.monotonic() - started
    ids = {c.run_id() for c in configs}
    report.run_time_s = sum(s["wall_time_s"] for d, s in finished_summaries(sweep_dir) if d.name in ids)
    return report


def seed_axis(seeds: list[int] | None) -> list[str]:
    """``--seeds`` as the one grid axis it replaces (none when not given); the seed is the only axis a study's
    summary reads for spread alone, so it is the only one the command line changes."""
    return [f"seed={','.join(map(str, seeds))}"] if seeds else []


def _resume_points(sweep_dir: Path, todo: list[RunConfig]) -> list[tuple[str, int]]:
    """(run id, step) of each run to do that an earlier invocation left with a resume checkpoint: said up front,
    so a rerun after Ctrl-C shows that the work was kept."""
    points = []
    for c in todo:
        steps = resumable_steps(sweep_dir / f"{c.run_id()}{PARTIAL}" / "checkpoints")
        if steps:
            points.append((c.run_id(), steps[-1]))
    return points


def _interrupted(report: SweepReport, todo: dict[str, RunConfig]) -> Interrupted:
    """The one line a stopped sweep ends with: where each run stopped mid-way, and how many finished."""
    stopped = [o for o in report.outcomes if o.status == "interrupted" and o.step is not None]
    where = ", ".join(f"step {o.step} of {o.steps} ({run_label(todo[o.run_id])})" for o in stopped[:4])
    where += f" and {terminal.counted(len(stopped) - 4, 'more run')}" if len(stopped) > 4 else ""
    finished = report.skipped + sum(o.status == "finished" for o in report.outcomes)
    return Interrupted(f"interrupted at {where or 'the start'}; {finished} of {terminal.counted(report.total, 'run')} "
                       "finished; run the same command to resume")


def run_study(spec: SweepSpec, out: Path, make_executor, console: Console, overrides: list[str] = (),
              seeds: list[int] | None = None) -> tuple[list[RunConfig], SweepReport, list[dict]]:
    """A study's grid from its spec (``seeds`` in place of its seed axis): run (or finish) it and return the
    configs, the report and the results rows of this grid's finished runs (a store may hold other runs beside
    them)."""
    configs, axes = sweep_configs(spec, grid=seed_axis(seeds), overrides=list(overrides))
    report, rows = run_configs(spec.name, configs, axes, spec.model_dump(mode="json"), out, make_executor, console)
    return configs, report, rows


def run_configs(name: str, configs: list[RunConfig], axes: list[str], spec: dict, out: Path, make_executor,
                console: Console) -> tuple[SweepReport, list[dict]]:
    """A study's runs as the sweep ``name`` (``spec``: what its ``sweep.json`` records of how they were made): say
    how many run on how many workers, run (or finish) them and return the report and the results rows of these
    configs' finished runs."""
    executor = make_executor(len(configs))
    console.print(f"{name}: {terminal.counted(len(configs), 'run')} ({' × '.join(axes)}) with "
                  f"{executor.workers} workers × {executor.threads} threads; store {Path(out) / name}")
    report = run_sweep(name, configs, out, executor, axes, spec, console)
    return report, finished_rows(configs, report.sweep_dir)


def finished_rows(configs: list[RunConfig], sweep_dir: Path) -> list[dict]:
    """The results rows of these configs' finished runs in ``sweep_dir`` (a store may hold other runs beside
    them): what a study draws, from its store or from its committed runs alike."""
    ids = {c.run_id() for c in configs}
    return [r for r in read_results(sweep_dir) if r["run_id"] in ids and r.get("status") == "finished"]
