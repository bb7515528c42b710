"""Wall time of 8 small anchor runs: one after another in one process vs the local executor's process pool.

    python benchmarks/sweep_executor.py [--runs 8] [--repeats 1] [--epochs 6]

Modes, measured side by side in one invocation on the same machine:
  sequential   one process, torch using every core, runs one after another (what a plain script does);
  pool N×T     the local executor with N workers of T threads each (every split with N×T = cores).
Prints one line per mode (median and spread over repeats) and the speed-up over sequential.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import torch

from reasonlab.config import resolve
from reasonlab.sweep.executors import LocalExecutor
from reasonlab.sweep.grid import expand
from reasonlab.sweep.runner import run_sweep
from reasonlab.train.run import train_run


def configs(runs: int, epochs: int):
    base = {"task": {"n_train_per_pair": 1000, "n_test_per_pair": 200},
            "model": {"d_model": 64, "d_k": 32, "d_v": 32, "d_ff": 192},
            "train": {"epochs": epochs, "batch_size": 256, "warmup_epochs": 1, "eval_every": 2,
                      "eval_max_per_set": 500, "device": "cpu", "checkpoint_every": epochs}}
    resolve(base)
    return expand(base, {"init.gamma": [0.3 + 0.1 * i for i in range(runs)]})


def sequential(cfgs, root: Path, cores: int) -> float:
    torch.set_num_threads(cores)
    start = time.perf_counter()
    for cfg in cfgs:
        train_run(cfg, root, progress=False, log=lambda _: None)
    return time.perf_counter() - start


def pooled(cfgs, root: Path, workers: int, threads: int) -> float:
    start = time.perf_counter()
    report = run_sweep("bench", cfgs, root, LocalExecutor(workers, threads), ["init.gamma"])
    assert not report.failed, report.failed
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=6)
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    cfgs = configs(args.runs, args.epochs)
    splits = [(w, cores // w) for w in range(1, cores + 1) if cores % w == 0]
    modes = {"sequential": lambda root: sequential(cfgs, root, cores)}
    modes.update({f"pool {w}x{t}": (lambda root, w=w, t=t: pooled(cfgs, root, w, t)) for w, t in splits})
    times: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(args.repeats):
        for name, fn in modes.items():  # interleaved, so drifts in machine load hit every mode alike
            with tempfile.TemporaryDirectory() as tmp:
                times[name].append(fn(Path(tmp)))
    base = statistics.median(times["sequential"])
    print(f"{args.runs} runs (d_model 64, depth 2, {args.epochs} epochs of 15,000 sequences), {cores} cores, "
          f"torch {torch.__version__}, {args.repeats} repeat(s)")
    for name, ts in times.items():
        med = statistics.median(ts)
        spread = f" (min {min(ts):.1f}, max {max(ts):.1f})" if len(ts) > 1 else ""
        print(f"{name:>12}: {med:7.1f} s{spread}  speed-up over sequential {base / med:.2f}x")


if __name__ == "__main__":
    main()
