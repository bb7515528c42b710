"""Run the in-context modular arithmetic reference's own training script (``main(args)`` of
``pre_training/icl_grokking.py`` in ``ICL_Modular_Arithmetic``) on the CPU in fp32, one thread, at the config of the
side-by-side comparison with ``reasonlab train``, and store its history in a form the comparison reads.

    OMP_NUM_THREADS=1 python scripts/reference/modular_side_by_side.py --reference ref-icl --seed 1 --out DIR

The config (``CONFIG``): p 11, 16 rectangles made into 64 i.d. tasks by the parallelogram construction, α 0.8,
16 shots, a 4-layer RoPE decoder of width 64 with 4 heads and tied embeddings, AdamW at a constant lr 1e-3 from
step 0 (``lr_decay`` "none", no warm-up), wd 0.5, batch 64, 40,000 steps (``--steps`` shortens it). ``--seed`` sets
the reference's ``seed``, which draws the task vectors, the initial weights and the in-row order of the examples;
``data_seed`` 0 fixes the α split of pairs. The reference evaluates at step 1 and every 1,000 steps.

Nothing of the reference is edited or copied; for the duration of the call only:

- ``torch.compile`` is the identity (patched through ``ref.script.torch``): inductor on this CPU is slow to compile
  or fails, and compilation is an execution detail that changes no numbers in intent;
- the working directory is ``DIR/work/run``, because ``main`` writes its history table and checkpoints to
  ``../data/`` and ``../ckpts/`` relative to it;
- ``RANK``, ``WORLD_SIZE`` and ``SLURM_PROCID`` are removed from the environment, so that its
  ``init_distributed_mode`` takes its single-process branch instead of calling ``torch.cuda.set_device``; the
  one-process gloo group its ``DistributedSampler`` and ``DDP`` need is started beforehand;
- the float32 matmul precision it sets (``"high"``) is restored afterwards.

Its ``torch.backends.cuda.sdp_kernel(enable_flash=True, enable_math=False, ...)`` context stays: on the CPU it
selects PyTorch's CPU flash-attention kernel, the one the CPU picks anyway for its causal, unmasked attention.

It writes, into ``--out``: ``config.json`` (the reference's args as ``main`` resolved them, the commit, the command
line, the CPU, torch's version, the wall time), ``tasks.json`` (the i.d. and o.o.d. task vectors it printed) and
then ``metrics.parquet`` (the history table's columns, plus ``seed`` and ``code`` = "reference"), each to a temporary
name renamed into place, so a killed run leaves none half-written. ``DIR/work`` keeps the reference's own table and
what it printed. A run whose ``metrics.parquet`` exists is finished and is not trained again (its ``tasks.json`` is
written from its log if missing); any other is restarted from scratch (the reference cannot resume).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import json
import os
import platform
import re
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import TextIO
from unittest import mock

import pandas as pd
import torch
from modular_reference import PINNED_COMMIT, REPOSITORY, arguments, load, start_process_group

CONFIG = dict(p=11, base=11, n_tasks_pl=16, n_tasks_rd=0, parallelogram=True, data_pct=80.0, split_data=True,
              n_point_per_row=16, n_embd=64, n_layer=4, n_head=4, widen_factor=4, act_name="relu",
              model_name="rope_decoder", block_size=64, weight_tying=True, dont_decay_embd=False, optim="adamw",
              lr=1e-3, lr_decay="none", wd=0.5, beta1=0.9, beta2=0.98, clip=0.0, bs=64, eval_bs=256, n_val_step=16,
              steps_per_record=1000, warmup_steps=0, data_seed=0, n_ckpts=0)
COLUMNS = ["step", "tr_loss", "tr_acc", "tr_acc_last", "test_loss", "test_acc", "last_test_acc", "ood_train_loss",
           "ood_train_acc", "ood_train_last_acc", "ood_val_loss", "ood_val_acc", "ood_val_last_acc"]
DISTRIBUTED_ENV = ("RANK", "WORLD_SIZE", "SLURM_PROCID")
PATCHES = ["torch.compile -> identity", "cwd -> work/run (main writes ../data, ../ckpts)",
           f"environment without {', '.join(DISTRIBUTED_ENV)}", "float32 matmul precision restored after main"]


class Tee:
    """A text stream that writes to two streams, so the reference's printout is both shown and kept."""

    def __init__(self, first: TextIO, second: TextIO):
        self.streams = (first, second)

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()


@contextlib.contextmanager
def reference_surroundings(ref: SimpleNamespace, work: Path) -> Iterator[None]:
    """The run-time patches the reference's ``main`` needs on this CPU (see the module docstring), undone on exit."""
    for name in DISTRIBUTED_ENV:
        os.environ.pop(name, None)
    precision = torch.get_float32_matmul_precision()
    try:
        with (mock.patch.object(ref.script.torch, "compile", lambda model, *args, **kwargs: model),
              contextlib.chdir(work / "run"), open(work / "main.log", "w") as log,
              contextlib.redirect_stdout(Tee(sys.stdout, log))):
            yield
    finally:
        torch.set_float32_matmul_precision(precision)


def run_reference(ref: SimpleNamespace, args: argparse.Namespace, work: Path) -> float:
    """Runs the reference's ``main(args)`` in a fresh ``work`` folder and returns its wall time in seconds."""
    shutil.rmtree(work, ignore_errors=True)
    for name in ("run", "data", "ckpts"):
        (work / name).mkdir(parents=True)
    start_process_group()
    start = time.perf_counter()
    with reference_surroundings(ref, work):
        ref.script.main(args)
    return time.perf_counter() - start


def history(work: Path, seed: int) -> pd.DataFrame:
    """The reference's history table (its one ``.tab`` under ``work/data``), with ``seed`` and ``code`` added."""
    tables = sorted((work / "data").glob("*.tab"))
    if len(tables) != 1:
        sys.exit(f"expected one history table in {work / 'data'}, found {[t.name for t in tables]}")
    frame = pd.read_csv(tables[0], sep="\t", index_col=0)  # pandas' to_csv wrote its row index first
    if list(frame.columns) != COLUMNS:
        sys.exit(f"{tables[0].name}: columns {list(frame.columns)}, expected {COLUMNS}")
    return frame.reset_index(drop=True).assign(seed=seed, code="reference")


def task_vectors(log: str) -> dict[str, list[list[int]]]:
    """The i.d. and o.o.d. task vectors the reference printed into its log (``main.log``), as lists of [a, b]."""
    found = re.findall(r"with total \d+ task vectors: ?\n (\[.*?\]) ?\n", log)
    if len(found) != 2:
        sys.exit(f"expected the reference's two lists of task vectors in its log, found {len(found)}")
    return {name: [list(t) for t in ast.literal_eval(text)] for name, text in zip(("id", "ood"), found, strict=True)}


def write_tasks(out: Path) -> None:
    """``tasks.json``: the run's task vectors read from its log (what the side by side's loss levels read)."""
    tasks = task_vectors((out / "work" / "main.log").read_text())
    write_atomic(out / "tasks.json", lambda path: path.write_text(json.dumps(tasks) + "\n"))


def cpu_model() -> str:
    """The CPU's model name as ``/proc/cpuinfo`` gives it (the machine's, when that file is missing)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def write_atomic(path: Path, write: Callable[[Path], None]) -> None:
    """Writes ``path`` through ``write`` at a temporary name beside it, then renames it into place."""
    temporary = path.with_name(f".{path.name}.partial")
    write(temporary)
    os.replace(temporary, path)


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", type=Path, required=True, help="a checkout of ICL_Modular_Arithmetic")
    parser.add_argument("--seed", type=int, required=True, help="the reference's seed (tasks, weights, row order)")
    parser.add_argument("--out", type=Path, required=True, help="the run's folder")
    parser.add_argument("--steps", type=int, default=40_000, help="training steps (shorter for smoke tests)")
    return parser.parse_args()


def main() -> None:
    opts = parse()
    out = opts.out.resolve()
    metrics = out / "metrics.parquet"
    if metrics.exists():
        if not (out / "tasks.json").exists():
            write_tasks(out)
        print(f"{metrics} exists: this run is finished, nothing to train")
        return
    torch.set_num_threads(1)
    ref = load(opts.reference)
    args = arguments(ref, **CONFIG, seed=opts.seed, steps=opts.steps)
    work = out / "work"
    wall = run_reference(ref, args, work)
    frame = history(work, opts.seed)
    config = {"code": "reference", "repository": REPOSITORY, "commit": PINNED_COMMIT,
              "command": shlex.join([sys.executable, *sys.argv]), "cwd": os.getcwd(),
              "args": {k: (str(v) if isinstance(v, torch.dtype) else v) for k, v in sorted(vars(args).items())},
              "patches": PATCHES, "cpu": cpu_model(), "threads": torch.get_num_threads(), "torch": torch.__version__,
              "python": platform.python_version(), "wall_seconds": round(wall, 1)}
    write_atomic(out / "config.json", lambda path: path.write_text(json.dumps(config, indent=1) + "\n"))
    write_tasks(out)
    write_atomic(metrics, lambda path: frame.to_parquet(path, index=False))
    print(f"wrote {out / 'config.json'}, {out / 'tasks.json'} and {metrics}: {len(frame)} rows, {wall:.0f} s")


if __name__ == "__main__":
    main()
