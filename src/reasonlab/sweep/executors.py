"""Where a sweep's runs execute: a local process pool (default) or Ray tasks. Both call the same ``train_group``
on the same run store, so finished runs are skipped and unfinished ones resume whichever executor ran them.

A stop asked for (the sweep's first SIGINT or SIGTERM) reaches the local pool's workers through a shared event:
each stops its run at the end of the current step, saves a resume checkpoint there and reports the run
``interrupted``. The workers ignore SIGINT themselves, so that a Ctrl-C to the whole process group is handled once,
by the sweep. Ray tasks cannot be reached that way: a stop ends the sweep at once (they resume from their last
checkpoints).

The local pool uses ``workers × threads`` ≤ cores. For the study's small models one thread per run and one run
per core is fastest (measured in benchmarks/sweep_executor.py, docs/performance.md); when a sweep has fewer runs
than cores, the spare cores go to the runs' threads.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from reasonlab.config import RunConfig
from reasonlab.errors import Interrupted
from reasonlab.registry import plugin_sources
from reasonlab.train import interrupt


@dataclass(frozen=True)
class RunOutcome:
    run_id: str
    status: str  # finished | failed | interrupted (stopped as asked; step None: before it trained in this process)
    label: str | None = None
    wall_time_s: float | None = None
    error: str | None = None
    step: int | None = None  # where an interrupted run stopped, of ``steps``
    steps: int | None = None


def train_group(cfg_jsons: list[str], root: str, threads: int, plugins: list | tuple = ()) -> list[RunOutcome]:
    """Train (or resume) one run, or several stackable runs as one ensemble; any failure comes back as data so
    that the sweep goes on (a failed ensemble fails each of its members). ``plugins``: the modules that registered
    task kinds in the sweep's process (``registry.plugin_sources``), imported here first."""
    import torch

    from reasonlab.registry import load_plugins

    load_plugins(plugins)
    from reasonlab.train.ensemble import train_ensemble
    from reasonlab.train.run import train_run

    cfgs = [RunConfig.model_validate_json(c) for c in cfg_jsons]
    if interrupt.stop_requested():  # taken from the queue after the stop: not begun
        return [RunOutcome(c.run_id(), "interrupted") for c in cfgs]
    cfgs = [c.model_copy(update={"train": c.train.model_copy(update={"threads": threads})}) for c in cfgs]
    torch.set_num_threads(threads)
    try:
        if len(cfgs) == 1:
            results = [train_run(cfgs[0], Path(root), progress=False, log=lambda _: None)]
        else:
            results = train_ensemble(cfgs, Path(root))
    except Interrupted as e:
        return [RunOutcome(c.run_id(), "interrupted", step=e.step, steps=e.steps) for c in cfgs]
    except Exception as e:  # noqa: BLE001 - a failed run is recorded, the sweep continues
        message = str(e).strip().splitlines()[0] if str(e).strip() else ""
        return [RunOutcome(c.run_id(), "failed", error=f"{type(e).__name__}: {message}") for c in cfgs]
    return [RunOutcome(c.run_id(), "finished", s["label"], s["wall_time_s"])
            for c, (_, s) in zip(cfgs, results, strict=True)]


def start_worker(stop: object) -> None:
    """Pool-worker initializer: die with the sweep's process; stop between steps when the sweep sets ``stop`` (a
    multiprocessing Event) or this worker is sent SIGTERM; leave SIGINT to the sweep's process."""
    import signal

    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, interrupt.request_stop)
    interrupt.share(stop)


def die_with_parent() -> None:
    """Pool-worker initializer: on Linux the kernel kills the worker when the sweep process dies, so a sweep that
    is killed leaves no orphan training on (or taking queued runs from the pool's pipe). Killing is safe: every
    file a run writes is renamed into place whole, and the next sweep resumes from the last checkpoint."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import signal

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() == 1:  # the parent died before the request took effect
        os._exit(1)


def default_ensemble() -> int:
    """Runs stacked per task by default: only where stacking was measured faster (docs/performance.md)."""
    return 1


def split_cores(n_runs: int, workers: int | None = None, threads: int | None = None,
                cores: int | None = None) -> tuple[int, int]:
    """(workers, threads per worker): one single-threaded run per core unless told otherwise, never more
    workers than runs, spare cores given to threads, never more threads in total than cores."""
    cores = cores or os.cpu_count() or 1
    workers = max(1, min(workers or cores, max(n_runs, 1)))
    threads = threads or max(1, cores // workers)
    return workers, threads


class Executor(Protocol):
    workers: int
    threads: int

    ensemble: int  # most runs trained stacked in one task (1: every run alone)

    def submit(self, cfgs: list[RunConfig], root: Path) -> object: ...
    def wait(self, pending: set, timeout: float) -> tuple[set, set]: ...
    def result(self, handle: object) -> list[RunOutcome]: ...  # [] for a task cancelled before it began
    def stop(self, pending: set) -> None: ...  # asked to stop: running tasks save and return, queued ones never begin
    def abort(self) -> None: ...  # end at once (what the workers trained since their last checkpoint is lost)
    def close(self) -> None: ...


class LocalExecutor:
    """A spawn-based process pool: each worker imports torch once and sets its own thread count."""

    def __init__(self, workers: int, threads: int, ensemble: int = 1):
        self.workers, self.threads, self.ensemble = workers, threads, ensemble
        context = mp.get_context("spawn")
        self._stop = context.Event()
        self._pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=start_worker,
                                            initargs=(self._stop,))

    def submit(self, cfgs: list[RunConfig], root: Path) -> cf.Future:
        return self._pool.submit(train_group, [c.model_dump_json() for c in cfgs], str(root), self.threads,
                                 plugin_sources())

    def wait(self, pending: set, timeout: float) -> tuple[set, set]:
        done, rest = cf.wait(pending, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        return set(done), set(rest)

    def result(self, handle: cf.Future) -> list[RunOutcome]:
        return [] if handle.cancelled() else handle.result()

    def stop(self, pending: set) -> None:
        self._stop.set()
        for future in pending:
            future.cancel()  # only those no worker has taken

    def abort(self) -> None:
        self._stop.set()
        for process in list((self._pool._processes or {}).values()):  # no public way to reach them before 3.14
            process.kill()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class DryRun:
    """No executor: ``run_sweep`` prints the runs it would give one and stops (``--dry-run``)."""

    workers: int
    threads: int
    ensemble: int = 1
    dry_run: bool = True


class RayExecutor:
    """Runs as Ray tasks (``num_cpus`` = threads each) on the cluster at ``address`` (default ``RAY_ADDRESS``, else
    a local instance). Every node must see the store root at the same path (a shared file system)."""

    def __init__(self, threads: int, address: str | None = None, ensemble: int = 1):
        try:
            import ray
        except ImportError:
            from reasonlab.config import ConfigError

            raise ConfigError("--backend ray: ray is not installed; pip install 'reasonlab[ray]'") from None
        self._ray = ray
        if not ray.is_initialized():
            ray.init(address=address or os.environ.get("RAY_ADDRESS"), log_to_driver=False,
                     include_dashboard=False)
        self.threads, self.ensemble = threads, ensemble
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)) // threads)
        self._task = ray.remote(num_cpus=threads, max_retries=2)(train_group)

    def submit(self, cfgs: list[RunConfig], root: Path) -> object:
        return self._task.remote([c.model_dump_json() for c in cfgs], str(Path(root).resolve()), self.threads,
                                 plugin_sources())

    def wait(self, pending: set, timeout: float) -> tuple[set, set]:
        done, rest = self._ray.wait(list(pending), num_returns=1, timeout=timeout)
        return set(done), set(rest)

    def result(self, handle: object) -> list[RunOutcome]:
        return self._ray.get(handle)

    def stop(self, pending: set) -> None:
        raise Interrupted("interrupted: Ray's tasks end with this process, each run resumes from its last checkpoint; "
                          "run the same command to resume")

    def abort(self) -> None:
        pass  # the tasks belong to this process's Ray job and end with it

    def close(self) -> None:
        pass  # the connection belongs to the process; a local instance ends with it
