"""The demo over seeds: does its contrast hold beyond the seed it shows, and how long does it take?

Runs ``reasonlab demo --seed S`` for each seed exactly as a user would (a fresh store, the default two workers),
timing each invocation by the wall clock, then reads the two runs of each seed and prints the verdict and the four
E1 criteria. Measure on a quiet machine (nothing else on the cores), or the wall times mean nothing; the script
records the load average before and after each seed so a reader can tell.

    python benchmarks/demo_seeds.py --seeds 1 2 3 --store /tmp/demo-seeds --out results/demo

``--out`` packs each seed's runs (record only: config, metrics, summary) under ``OUT/seed-S`` and writes
``OUT/demo-seeds.json`` with the wall times, load averages and verdicts.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

from reasonlab.kinds.mixture.evaluate import reasoning_bias_criteria
from reasonlab.numerics import machine
from reasonlab.studies.reasoning_bias.demo import CONTRAST, DEMO_GAMMAS, demo_verdict, read_demo_runs
from reasonlab.train.packs import pack_runs


def seed_result(sweep: Path) -> dict:
    runs = read_demo_runs(sweep)
    large, small = (runs[g] for g in DEMO_GAMMAS)
    criteria = reasoning_bias_criteria(small, large)
    keep = ("label", "memory_acc", "reasoning_train_acc", "reasoning_test_acc", "t50_memory", "t50_reasoning_train",
            "wall_time_s")
    return {"runs": {f"{g:g}": {"run_id": r["dir"].name, **{k: r[k] for k in keep}} for g, r in runs.items()},
            "criteria": criteria, "contrast": all(criteria[k] for k in CONTRAST), "verdict": demo_verdict(runs)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--store", type=Path, required=True, help="an empty folder for the runs (one store per seed)")
    ap.add_argument("--out", type=Path, help="a results folder for the runs' records and demo-seeds.json")
    args = ap.parse_args()
    results = {"machine": {"cpus": os.cpu_count(), "platform": platform.platform(), **machine()}, "seeds": {}}
    for seed in args.seeds:
        store = args.store / f"seed-{seed}"
        load_before = os.getloadavg()
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "reasonlab", "demo", "--seed", str(seed), "--out", str(store)],
                       check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - start
        result = {"wall_s": round(wall, 1), "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
                  **seed_result(store / "demo")}
        results["seeds"][str(seed)] = result
        print(f"seed {seed}: {wall:.0f} s wall, contrast {'shows' if result['contrast'] else 'does NOT show'}")
        print(f"  {result['verdict']}")
        if args.out:
            pack_runs(store / "demo", args.out / f"seed-{seed}")
    shown = sum(r["contrast"] for r in results["seeds"].values())
    print(f"contrast shows in {shown} of {len(results['seeds'])} seeds")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "demo-seeds.json").write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
