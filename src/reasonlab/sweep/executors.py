"""Where a sweep's runs execute: a local process pool (default) or Ray tasks. Both call the same ``train_one``
on the same run store, so finished runs are skipped and unfinished ones resume whichever executor ran them.

The local pool uses ``workers × threads`` ≤ cores. For the study's small models one thread per run and one run
per core is fastest (measured in benchmarks/sweep_executor.py, docs/performance.md); when a sweep has fewer runs
than cores, the spare cores go to the runs' threads.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing as mp
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from reasonlab.config import RunConfig


@dataclass(frozen=True)
class RunOutcome:
    run_id: str
    status: str  # finished | failed
    label: str | None = None
    wall_time_s: float | None = None
    error: str | None = None


def train_one(cfg_json: str, root: str, threads: int) -> RunOutcome:
    """Train (or resume) one run; any failure comes back as data so that the sweep goes on."""
    import torch

    from reasonlab.train.loop import train_run

    cfg = RunConfig.model_validate_json(cfg_json)
    cfg = cfg.model_copy(update={"train": cfg.train.model_copy(update={"threads": threads})})
    torch.set_num_threads(threads)
    try:
        _, summary = train_run(cfg, Path(root), progress=False, log=lambda _: None)
    except Exception as e:  # noqa: BLE001 - a failed run is recorded, the sweep continues
        message = str(e).strip().splitlines()[0] if str(e).strip() else ""
        return RunOutcome(cfg.run_id(), "failed", error=f"{type(e).__name__}: {message}")
    return RunOutcome(cfg.run_id(), "finished", summary["label"], summary["wall_time_s"])


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

    def submit(self, cfg: RunConfig, root: Path) -> object: ...
    def wait(self, pending: set, timeout: float) -> tuple[set, set]: ...
    def result(self, handle: object) -> RunOutcome: ...
    def close(self) -> None: ...


class LocalExecutor:
    """A spawn-based process pool: each worker imports torch once and sets its own thread count."""

    def __init__(self, workers: int, threads: int):
        self.workers, self.threads = workers, threads
        self._pool = cf.ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"))

    def submit(self, cfg: RunConfig, root: Path) -> cf.Future:
        return self._pool.submit(train_one, cfg.model_dump_json(), str(root), self.threads)

    def wait(self, pending: set, timeout: float) -> tuple[set, set]:
        done, rest = cf.wait(pending, timeout=timeout, return_when=cf.FIRST_COMPLETED)
        return set(done), set(rest)

    def result(self, handle: cf.Future) -> RunOutcome:
        return handle.result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class RayExecutor:
    """Runs as Ray tasks (``num_cpus`` = threads each) on the cluster at ``address`` (default ``RAY_ADDRESS``, else
    a local instance). Every node must see the store root at the same path (a shared file system)."""

    def __init__(self, threads: int, address: str | None = None):
        try:
            import ray
        except ImportError:
            from reasonlab.config import ConfigError

            raise ConfigError("--backend ray: ray is not installed; pip install 'reasonlab[ray]'") from None
        self._ray = ray
        if not ray.is_initialized():
            ray.init(address=address or os.environ.get("RAY_ADDRESS"), log_to_driver=False,
                     include_dashboard=False)
        self.threads = threads
        self.workers = max(1, int(ray.cluster_resources().get("CPU", 1)) // threads)
        self._task = ray.remote(num_cpus=threads, max_retries=2)(train_one)

    def submit(self, cfg: RunConfig, root: Path) -> object:
        return self._task.remote(cfg.model_dump_json(), str(Path(root).resolve()), self.threads)

    def wait(self, pending: set, timeout: float) -> tuple[set, set]:
        done, rest = self._ray.wait(list(pending), num_returns=1, timeout=timeout)
        return set(done), set(rest)

    def result(self, handle: object) -> RunOutcome:
        return self._ray.get(handle)

    def close(self) -> None:
        pass  # the connection belongs to the process; a local instance ends with it
