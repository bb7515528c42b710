"""Write the modular-arithmetic batch-law fixture: the training batches the reference code (``ICL_Modular_Arithmetic``)
feeds its own training loop, for ``tests/reference/test_modular_batches.py`` to compare reasonlab's draw with.

    OMP_NUM_THREADS=1 python scripts/reference/modular_batch_fixtures.py --reference ref-icl

For each of two configs — ``small``, the config of ``modular_fixtures.py`` (16 tasks, 8 shots, batch 32: two rows
per task), and ``side_by_side``, the config of ``modular_side_by_side.py`` (64 tasks, 16 shots, batch 64: one row
per task) — the script runs the reference's ``main(args)`` of ``pre_training/icl_grokking.py`` with its training
loop ``train_tf_icl`` replaced by a recorder that does what that loop does with its data before the first update
(``train_sampler.set_epoch(0)``, then ``x[:, :-1]``, ``y[:, 1:]`` of each batch the loader yields) for ``BATCHES``
batches, and with ``prepare_data`` wrapped to note the task list ``main`` passes to it first (its i.d. tasks). The
run-time patches are those of the side-by-side driver (``torch.compile`` the identity, no distributed environment
variables, a one-process gloo group). Nothing of the reference is edited or copied.

It writes, into ``--out``, ``batches.npz`` with, per config ``c``:

- ``c/pairs`` (batches, rows, shots), uint8: the pair id x·p + y of every shot of every row;
- ``c/tasks`` (batches, rows), uint8: the row's task, as an index into ``c/id_tasks``: the one i.d. task (a, b)
  with a·x + b·y ≡ z (mod p) at every shot of the row (the script stops if a row fits none or several);
- ``c/id_tasks`` (tasks, 2) and ``c/train_pairs`` (the α split's training pair ids, the reference's order);

and ``batches.json``: the repository, the commit, and per config the reference's resolved arguments. Running it
twice writes the same bytes (the reference seeds its own generators; its sampler's seed is fixed).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from types import SimpleNamespace
from unittest import mock

import numpy as np
import torch
from modular_fixtures import CONFIG as SMALL
from modular_reference import PINNED_COMMIT, REPOSITORY, arguments, fixture_command, start_process_group
from modular_side_by_side import CONFIG as SIDE_BY_SIDE
from modular_side_by_side import reference_surroundings

BATCHES = 2000  # per config: enough rows for the law's tests to be decisive, the fixture well under 1 MB
CONFIGS = {"small": SMALL, "side_by_side": SIDE_BY_SIDE}


class Stop(Exception):
    """Raised by the recorder once it holds ``BATCHES`` batches, to leave the reference's ``main``."""


def record(ref: SimpleNamespace, config: dict, n: int) -> dict:
    """The reference's resolved arguments (``args``), its i.d. tasks (``tasks``), its training pairs
    (``train_pairs``) and the first ``n`` training batches its loop would read (``batches``)."""
    args = arguments(ref, **config)
    seen: dict = {"tasks": [], "batches": []}
    prepare = ref.script.prepare_data

    def noting(a: argparse.Namespace, ws: list) -> tuple:
        seen["tasks"].append([list(map(int, w)) for w in ws])
        return prepare(a, ws)

    def recorder(compiled, model, train_iter, val_iter, ood_train_iter, ood_val_iter, sampler, scaler, a, device,
                 **kwargs) -> None:
        data = train_iter.dataset.dataset  # (pairs, tasks, x y z): the α split's training pairs, in its order
        seen["train_pairs"] = (data[:, 0, 0] * a.p + data[:, 0, 1]).tolist()
        sampler.set_epoch(0)  # as train_tf_icl does at the start of its first (fake) epoch
        for x, y in train_iter:
            seen["batches"].append((x[:, :-1].clone(), y[:, 1:].clone()))
            if len(seen["batches"]) == n:
                raise Stop

    start_process_group()
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "run").mkdir()
        with (reference_surroundings(ref, Path(tmp)), mock.patch.object(ref.script, "train_tf_icl", recorder),
              mock.patch.object(ref.script, "prepare_data", noting)):
            try:
                ref.script.main(args)
            except Stop:
                pass
    return seen | {"args": args, "tasks": seen["tasks"][0]}


def rows_of(batches: list, args: argparse.Namespace, id_tasks: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Pair ids (batches, rows, shots) and task indices (batches, rows) of the recorded batches."""
    p, shots = args.p, args.n_point_per_row
    tokens = torch.stack([torch.cat([x, y[:, -1:]], dim=1) for x, y in batches]).view(len(batches), -1, shots, 3)
    pairs = tokens[..., 0] * p + tokens[..., 1]
    a, b = torch.tensor(id_tasks).T[..., None, None, None]
    fits = ((a * tokens[..., 0] + b * tokens[..., 1]) % p == tokens[..., 2]).all(-1)  # (tasks, batches, rows)
    if not bool((fits.sum(0) == 1).all()):
        raise SystemExit(f"{int((fits.sum(0) != 1).sum())} rows fit no i.d. task or several")
    return pairs.numpy().astype(np.uint8), fits.int().argmax(0).numpy().astype(np.uint8)


def main() -> None:
    opts, ref = fixture_command(__doc__)
    arrays: dict[str, np.ndarray] = {}
    resolved = {}
    for name, config in CONFIGS.items():
        seen = record(ref, config, BATCHES)
        args, id_tasks = seen["args"], seen["tasks"]
        pairs, tasks = rows_of(seen["batches"], args, id_tasks)
        arrays |= {f"{name}/pairs": pairs, f"{name}/tasks": tasks,
                   f"{name}/id_tasks": np.array(id_tasks, dtype=np.uint8),
                   f"{name}/train_pairs": np.array(seen["train_pairs"], dtype=np.uint8)}
        resolved[name] = {k: (str(v) if isinstance(v, torch.dtype) else v) for k, v in sorted(vars(args).items())}
        print(f"{name}: {pairs.shape[0]} batches of {pairs.shape[1]} rows × {pairs.shape[2]} shots, "
              f"{len(id_tasks)} tasks, {len(seen['train_pairs'])} training pairs")
    opts.out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(opts.out / "batches.npz", **arrays)
    (opts.out / "batches.json").write_text(json.dumps({"repository": REPOSITORY, "commit": PINNED_COMMIT,
                                                       "batches": BATCHES, "args": resolved}, indent=1) + "\n")


if __name__ == "__main__":
    main()
