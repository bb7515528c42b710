"""FLOPs of one run of each study profile, counted, and the GPU time they imply at a stated sustained rate.

    .venv/bin/python benchmarks/profile_flops.py [--profiles anchor:paper,mixture:transformer-paper,...]
                                                 [--rate-tflops 50]

Counts one training step (forward and backward, ``torch.utils.flop_counter`` on a real batch) and one evaluation
forward pass per sequence, multiplies by the steps and evaluations the profile runs, and divides by
``--rate-tflops``. The rate is an assumption, not a measurement: it is printed beside every estimate.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F
from torch.utils.flop_counter import FlopCounterMode

from reasonlab.config import raw_config, resolve
from reasonlab.train.loop import build_model, build_task

DEFAULT = ("anchor:paper,mixture:transformer-paper,mixture:emb-mlp-paper,mixture:lm-paper,"
           "anchor:cpu,mixture:transformer-cpu,mixture:emb-mlp-cpu,mixture:lm-cpu")


def _flops(fn) -> int:
    counter = FlopCounterMode(display=False)
    with counter:
        fn()
    return counter.get_total_flops()


def run_flops(study: str, profile: str) -> dict:
    cfg = resolve(raw_config(None, profile, [], study))
    data = build_task(cfg)
    model = build_model(cfg, data)
    t = cfg.train
    x, y = data.train_inputs[: t.batch_size], data.train_targets[: t.batch_size]

    def step() -> None:
        out = model(x) if y.dim() == 1 else model(x, "all").flatten(0, 1)
        F.cross_entropy(out, y.flatten(), ignore_index=-100).backward()

    per_step = _flops(step)
    with torch.no_grad():
        per_seq = _flops(lambda: model(x[:8], "last" if y.dim() == 1 else "all")) / 8
    steps = t.epochs * (len(data.train_inputs) // t.batch_size)
    evals = t.epochs // t.eval_every + 1
    eval_seqs = sum(min(len(s), t.eval_max_per_set or len(s)) for s in data.eval_sets.values())
    total = per_step * steps + per_seq * eval_seqs * evals
    return {"study": study, "profile": profile, "steps": steps, "gflop_per_step": per_step / 1e9, "total": total}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profiles", default=DEFAULT)
    ap.add_argument("--rate-tflops", type=float, default=50.0, help="assumed sustained rate for the estimate")
    args = ap.parse_args()
    print(f"| study | profile | steps | GFLOP per step | FLOPs per run | estimated time at {args.rate_tflops:g} "
          "TFLOP/s (assumed) |")
    print("|---|---|---|---|---|---|")
    for item in args.profiles.split(","):
        study, profile = item.split(":")
        r = run_flops(study, profile)
        minutes = r["total"] / (args.rate_tflops * 1e12) / 60
        print(f"| {study} | {profile} | {r['steps']:,} | {r['gflop_per_step']:.1f} | {r['total']:.2e} | "
              f"{minutes:.1f} min |")


if __name__ == "__main__":
    main()
