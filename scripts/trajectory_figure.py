"""Draw the anchor-trajectory figure and summary from run folders, without training.

The committed trajectory runs (``results/anchor-trajectory/``) include snapshots of unfinished runs (``.partial``
folders: config and every metrics row so far), which ``reasonlab reproduce anchor-trajectory`` would train on
rather than draw. This draws any mix of finished and unfinished runs beside the authors' log::

    python scripts/trajectory_figure.py --out results/anchor-trajectory \\
        --replay results/anchor-trajectory/replay/g0.8-theirs-long-2026-12-03.json \\
        --replay results/anchor-trajectory/replay/g0.8-theirs-2threads-2026-12-03.json \\
        results/anchor-trajectory/eccb67ef6ca2 results/anchor-trajectory/4d2848961e74.partial \\
        results/anchor-trajectory/seeds/*.partial results/anchor-trajectory/seeds/rerun-2026-12-02/*.partial

It writes ``OUT/figures/trajectory.png`` (and ``.svg``) and ``OUT/summary.md``. ``--replay FILE`` adds the
``replay.json`` of ``scripts/replay_authors_draws.py`` (reasonlab's step on the authors' own draws) as one more
line, named after its draws (and, when several are given, after its file); its evaluations are on the first
``eval_rows`` sequences of each group. With ``--ship`` it also writes the same runs' curves (not the replay's)
into the package (``src/reasonlab/data/anchor_trajectory/reasonlab_cpu.json``), which ``reasonlab demo`` draws
beside its reduced runs; run it after committing a run's newer snapshot, with every trajectory folder.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reasonlab.errors import UserError
from reasonlab.files import write_json
from reasonlab.studies.anchor.trajectory import PAPER_SCALE_FILE, committed, draw, paper_scale_record

REPO = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run folders (with config.yaml and metrics.parquet)")
    parser.add_argument("--out", type=Path, required=True, help="folder for figures/ and summary.md")
    parser.add_argument("--ship", action="store_true", help=f"also write the package's {PAPER_SCALE_FILE}")
    parser.add_argument("--replay", type=Path, action="append", default=[],
                        help="a replay.json of scripts/replay_authors_draws.py, drawn as one more line (repeatable: "
                             "each line then named by its file)")
    args = parser.parse_args()
    try:
        for d in args.runs:
            if not (d / "config.yaml").is_file() or not (d / "metrics.parquet").is_file():
                raise UserError(f"{d}: not a run folder (needs config.yaml and metrics.parquet)")
            if args.ship and not d.resolve().is_relative_to(REPO):
                raise UserError(f"{d}: --ship takes committed run folders inside {REPO} only")
        ours, profile, note = committed(args.runs, args.replay)
        for path in draw(ours, args.out, profile, note):
            print(f"written: {path}")
        if args.ship:
            target = REPO / "src" / "reasonlab" / "data" / "anchor_trajectory" / PAPER_SCALE_FILE
            write_json(target, paper_scale_record(args.runs, REPO))
            print(f"written: {target}")
    except UserError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
