"""Stacked ensembles against one run at a time: training throughput (member-steps per second) of M members
trained as one stacked model vs the same M runs stepped one after another, in one process, same threads.

    .venv/bin/python benchmarks/ensemble_speed.py [--shape cpu|paper] [--members 1,2,4,8] [--threads 1]
                                                  [--repeats 5] [--steps 5] [--device cpu|cuda]

Both sides run the trainers' real step code (``Trainer._epoch``'s forward, backward, clipping and AdamW for a
single run; ``Stack`` for the ensemble) on the anchor study's shapes. Prints the median and (min, max) over repeats
and the speed-up of stacking; the executor's ``ensemble`` default follows these figures (docs/performance.md).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch

from reasonlab.config import resolve
from reasonlab.train.ensemble import Stack
from reasonlab.train.loop import Trainer

SHAPES = {
    "cpu": {"model": {"d_model": 128, "d_k": 64, "d_v": 64, "d_ff": 384}, "batch": 256},
    "paper": {"model": {"d_model": 400, "d_k": 200, "d_v": 200, "d_ff": 1200}, "batch": 2048},
}


def trainers(shape: str, members: int, device: str, root: Path) -> list[Trainer]:
    s = SHAPES[shape]
    out = []
    for i in range(members):
        cfg = resolve({"seed": 1 + i, "task": {"n_train_per_pair": 800, "n_test_per_pair": 10},
                       "model": s["model"], "init": {"gamma": 0.3 + 0.1 * i},
                       "train": {"batch_size": s["batch"], "epochs": 1, "warmup_epochs": 0, "device": device}})
        run_dir = root / str(i)
        run_dir.mkdir(parents=True, exist_ok=True)  # the trainer writes its progress record there
        out.append(Trainer(cfg, run_dir, progress=False, log=lambda _: None))
    return out


def single_steps(ts: list[Trainer], steps: int) -> float:
    """Seconds per member-step, the runs stepped one after another."""
    from reasonlab.train.progress import Progress

    start = time.perf_counter()
    for t in ts:
        t.steps_per_epoch = steps
        t._epoch(0, 0, Progress.silent())
    _sync(ts[0])
    return (time.perf_counter() - start) / (steps * len(ts))


def stacked_steps(stack: Stack, steps: int) -> float:
    for t in stack.trainers:
        t.steps_per_epoch = steps
    start = time.perf_counter()
    stack.train_epoch(0, 0)
    _sync(stack.trainers[0])
    return (time.perf_counter() - start) / (steps * len(stack.trainers))


def _sync(t: Trainer) -> None:
    if t.device.type == "cuda":
        torch.cuda.synchronize()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", choices=list(SHAPES), default="cpu")
    ap.add_argument("--members", default="1,2,4,8")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--device", default="cpu")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"# shape {args.shape}, {args.threads} thread(s), device {args.device}, torch {torch.__version__}")
    print("| members | one at a time, ms per member-step | stacked, ms per member-step | speed-up |")
    print("|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for m in (int(v) for v in args.members.split(",")):
            ts = trainers(args.shape, m, args.device, Path(tmp))
            stack = Stack(ts)
            single_steps(ts, 1), stacked_steps(stack, 1)  # warm-up
            single, stacked = [], []
            for _ in range(args.repeats):  # interleaved, so drift hits both sides alike
                single.append(single_steps(ts, args.steps))
                stacked.append(stacked_steps(stack, args.steps))
            a, b = statistics.median(single), statistics.median(stacked)
            print(f"| {m} | {a * 1e3:.1f} ({min(single) * 1e3:.1f}, {max(single) * 1e3:.1f}) | "
                  f"{b * 1e3:.1f} ({min(stacked) * 1e3:.1f}, {max(stacked) * 1e3:.1f}) | {a / b:.2f}× |")


if __name__ == "__main__":
    main()
