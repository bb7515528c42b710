"""Write the anchor-composition reference fixtures: what the authors' own code (``understanding_dl``,
``code/book_jupyter_composition_task``) computes at a small config on the CPU in fp32 with one thread, for
``tests/reference/test_anchor_reference.py`` to compare reasonlab with.

    git clone https://github.com/xuzhiqin1990/understanding_dl
    git -C understanding_dl checkout 3bc8533cf019d8bec78325ee572ab624d69137f6
    pip install --no-deps warmup-scheduler==0.3        # their scheduler (optional, see below)
    OMP_NUM_THREADS=1 python scripts/reference/anchor_fixtures.py \\
        --authors understanding_dl/code/book_jupyter_composition_task

Their ``data.py``, ``model.py`` and ``utils/seed.py`` are loaded by ``scripts/authors_draws.py`` (git blob ids
checked); their ``train.py`` is loaded here the same way (blob id checked), with ``model``, ``data`` and ``utils``
bound to those modules (their ``utils`` package would pull pytz and matplotlib for plotting alone). Nothing of
theirs is copied into the fixtures' code: their functions are called. In their order (``main.ipynb``, then
``train.train``): ``setup_seed``, ``get_data``, ``get_train_data``, ``myGPT_specific``, ``get_optimizer`` (AdamW at
their defaults, ``GradualWarmupScheduler`` over ``CosineAnnealingLR``), then 50 calls of their ``train_step``, each
on one batch of their training DataLoader (its passes drawn from the global torch generator, as theirs are; the
evaluation passes their ``train`` interleaves are not made, which only shifts that generator).

The learning rates are those their scheduler set, read from the optimizer before each step. ``train.py`` imports
``GradualWarmupScheduler`` from the PyPI package ``warmup_scheduler`` (0.3, the version the project's docs name). If
it is not importable, ``--allow-formula-scheduler`` puts in its place a scheduler that sets the lr per step by that
class's formula (warm-up ``base·((m−1)·s/T + 1)``, then the wrapped cosine stepped as 0.3 steps it), and ``config.json``
says so in ``lr_source``; without the flag the script stops.

Over ``--out`` (default ``tests/reference/fixtures/anchor``) it writes ``config.json``, ``weights.npz``,
``batches.npz``, ``logits.npz`` and ``steps.json`` (``tests/reference/fixtures/anchor/README.md`` says what each
holds). Running it twice writes the same bytes.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import importlib.util
import io
import math
import platform
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace

import numpy as np
import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts/: authors_draws.py
from authors_draws import AUTHORS_COMMIT, AUTHORS_FILES, GROUPS, TRAINED, git_blob, load_authors  # noqa: E402

from reasonlab.files import write_json, write_npz  # noqa: E402

REPOSITORY = "https://github.com/xuzhiqin1990/understanding_dl"
FOLDER = "code/book_jupyter_composition_task"
TRAIN_BLOB = "8c518e6a3cc76e7e0ffafbc172f6458e5022cdae"  # git blob id of their train.py at AUTHORS_COMMIT
DEFAULT_OUT = Path(__file__).resolve().parents[2] / "tests" / "reference" / "fixtures" / "anchor"

# Their notebook's argparse defaults (main.ipynb; result_0.8/config.json is the same run at std_rate 0.8) ...
THEIR_DEFAULTS = dict(data_size=900000, seq_len=9, data_min=20, data_max=100, batch_size=2048, seed=1,
                      vocab_size=201, max_pos=20, d_model=400, d_feedforward=1200, d_k=200, d_v=200, n_layers=2,
                      n_heads=1, clip=1, lr=1e-5, optim="AdamW", scheduler="GradualWarmupScheduler_CosineAnnealingLR",
                      optim_total_epoch=10, optim_multiplier=20.0, optim_T_max=200, optim_eta_min=1e-5,
                      std_rate=0.1)
# ... and what the small config changes: width (their ratios d_k = d_v = d_model/2, d_ff = 3·d_model), data size
# (5 sequences per test-key group, 45 per train-key group: 675 training rows, 10 batches of 64 per epoch), γ, and
# the schedule's lengths in epochs (warm-up 2 epochs = 20 steps, cosine over 3 epochs = 30 steps, so the 50 steps
# recorded end where the cosine does, as their 10 + 200 epochs end at their n_epoch 210).
SMALL = dict(data_size=800, batch_size=64, d_model=32, d_k=16, d_v=16, d_feedforward=96, std_rate=0.5,
             optim_total_epoch=2, optim_T_max=3)
STEPS = 50
PROBE_ROWS = 16  # rows per probe batch (logits of every position are kept for these)


# ---- their code ----------------------------------------------------------------------------------------------
def formula_scheduler_module() -> ModuleType:
    """A stand-in ``warmup_scheduler`` module whose ``GradualWarmupScheduler`` sets, per step, the lr that
    warmup_scheduler 0.3's class gives (``--allow-formula-scheduler``; used only when the package is not
    importable): linear warm-up ``base·((m−1)·s/T + 1)`` for s ≤ T; from s = T+1 on, the wrapped scheduler, its base
    lrs raised to base·m, asked for ``get_lr()`` once (at its last_epoch 0) and then stepped once per step."""
    from torch.optim.lr_scheduler import LRScheduler

    class GradualWarmupScheduler(LRScheduler):
        def __init__(self, optimizer, multiplier, total_epoch, after_scheduler=None):
            self.multiplier, self.total_epoch, self.after_scheduler = multiplier, total_epoch, after_scheduler
            self.finished = False
            super().__init__(optimizer)

        def get_lr(self):
            if self.last_epoch > self.total_epoch:
                if not self.finished:
                    self.after_scheduler.base_lrs = [b * self.multiplier for b in self.base_lrs]
                    self.finished = True
                return self.after_scheduler.get_lr()
            return [b * ((self.multiplier - 1.0) * self.last_epoch / self.total_epoch + 1.0) for b in self.base_lrs]

        def step(self, epoch=None):
            if self.finished:
                self.after_scheduler.step(epoch)
            else:
                super().step(epoch)

    module = ModuleType("warmup_scheduler")
    module.GradualWarmupScheduler = GradualWarmupScheduler
    return module


def load_train(folder: Path, code: SimpleNamespace, formula: bool) -> tuple[ModuleType, str]:
    """Their ``train.py`` (blob id checked), its ``from model/utils/data import *`` bound to the modules
    ``load_authors`` gave, and where its scheduler comes from."""
    path = folder / "train.py"
    if not path.is_file() or git_blob(path) != TRAIN_BLOB:
        sys.exit(f"{path}: missing or not the file of commit {AUTHORS_COMMIT}; check that commit out")
    if importlib.util.find_spec("warmup_scheduler") is not None:
        try:
            version = f" {importlib.metadata.version('warmup-scheduler')}"
        except importlib.metadata.PackageNotFoundError:
            version = ""
        source = f"their scheduler: the warmup_scheduler package{version} (importable)"
        stand_in = None
    elif formula:
        source = ("formula: warmup_scheduler was not importable; a stand-in GradualWarmupScheduler set the lr per "
                  "step by warmup_scheduler 0.3's formula (anchor_fixtures.formula_scheduler_module)")
        stand_in = formula_scheduler_module()
    else:
        sys.exit("their train.py imports warmup_scheduler, which is not importable: `pip install --no-deps "
                 "warmup-scheduler==0.3` (their scheduler), or pass --allow-formula-scheduler")
    utils = ModuleType("utils")  # what train.py takes from their utils: setup_seed (the rest plots)
    utils.__dict__.update({k: v for k, v in vars(code.seed).items() if not k.startswith("__")})
    bound = {"model": code.model, "data": code.data, "utils": utils}
    if stand_in is not None:
        bound["warmup_scheduler"] = stand_in
    saved = {k: sys.modules.get(k) for k in bound}
    sys.modules.update(bound)
    try:
        spec = importlib.util.spec_from_file_location("authors_train", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return module, source


@contextlib.contextmanager
def recorded_grad_norms(norms: list[float]) -> Iterator[None]:
    """Inside, ``torch.nn.utils.clip_grad_norm_`` (which their ``train_step`` calls) also records the total
    gradient norm it measured before clipping."""
    original = torch.nn.utils.clip_grad_norm_

    def clip(*args, **kwargs):
        total = original(*args, **kwargs)
        norms.append(float(total))
        return total

    torch.nn.utils.clip_grad_norm_ = clip
    try:
        yield
    finally:
        torch.nn.utils.clip_grad_norm_ = original


def their_batches(loader, n: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The first ``n`` batches of successive passes over their training DataLoader."""
    batches: list[tuple[torch.Tensor, torch.Tensor]] = []
    while len(batches) < n:
        for x, y in loader:
            batches.append((x, y))
            if len(batches) == n:
                break
    return batches


def probes(datas: dict, train_rows: np.ndarray) -> dict[str, np.ndarray]:
    """Three batches of ``PROBE_ROWS`` full sequences: training rows (the first rows of the first training
    batch), the held-out pair (4,3) on its train keys (``43_xel``, never trained on) and one sequence of each of the
    16 test-key groups (``xm0``)."""
    return {"train": train_rows[:PROBE_ROWS],
            "heldout_43": np.asarray(datas["43_xel"][:PROBE_ROWS]),
            "test_keys": np.asarray([datas[g][0] for g in GROUPS if g.endswith("_xm0")])}


def run(folder: Path, formula: bool) -> dict:
    code = load_authors(folder)
    train, lr_source = load_train(folder, code, formula)
    args = SimpleNamespace(**(THEIR_DEFAULTS | SMALL), data_mode=list(GROUPS), data_name=list(GROUPS),
                           data_train=list(TRAINED), data_percent=[1] * 16 + [9] * 16)
    device = torch.device("cpu")
    code.seed.setup_seed(args.seed)
    with contextlib.redirect_stdout(io.StringIO()):  # get_data prints every group
        datas = code.data.get_data(args)
    loader = code.data.get_train_data(args, datas)
    args.num_batches = len(loader)
    model = train.myGPT_specific(args, device).to(device)
    init = {k: v.detach().clone().numpy() for k, v in model.state_dict().items()}
    criterion = nn.CrossEntropyLoss(ignore_index=0).to(device)
    optimizer, scheduler = train.get_optimizer(model, args)

    batches = their_batches(loader, STEPS)
    rows = np.stack([torch.cat([x, y[:, -1:]], 1).numpy() for x, y in batches])  # (steps, B, seq_len + 1)
    probe = probes(datas, rows[0])
    model.eval()
    with torch.no_grad():
        logits = {k: model(torch.from_numpy(v[:, :-1]))[0].numpy() for k, v in probe.items()}
        # their test_step: the mean last-token loss of each probe batch and of the whole first training batch
        losses = {k: train.test_step(args, model, [_pair(v)], criterion, device) for k, v in probe.items()}
        losses["train_batch_0"] = train.test_step(args, model, [batches[0]], criterion, device)

    step_losses, lrs, norms = [], [], []
    with recorded_grad_norms(norms):
        for x, y in batches:
            lrs.append(optimizer.param_groups[0]["lr"])
            step_losses.append(train.train_step(args, model, [(x, y)], optimizer, criterion, device, args.clip,
                                                scheduler=scheduler))
    final = {k: v.detach().clone().numpy() for k, v in model.state_dict().items()}
    optim = optimizer.param_groups[0]
    return {"args": args, "datas": datas, "lr_source": lr_source, "init": init, "final": final, "rows": rows,
            "probe": probe, "logits": logits, "probe_losses": losses, "losses": step_losses, "lrs": lrs,
            "grad_norms": norms, "optimizer": {k: optim[k] for k in ("betas", "eps", "weight_decay", "amsgrad",
                                                                     "maximize", "foreach", "fused")}}


def _pair(rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch as their ``MyDataSet`` gives it: (sequence[:-1], sequence[1:])."""
    t = torch.from_numpy(rows.astype(np.int64))
    return t[:, :-1], t[:, 1:]


# ---- the files -------------------------------------------------------------------------------------------------
def cpu_name() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def write(out: Path, r: dict) -> None:
    args = r["args"]
    warm, span = args.optim_total_epoch * args.num_batches, args.optim_T_max * args.num_batches
    config = {
        "what": "the anchor-composition authors' code at a small config, run by scripts/reference/anchor_fixtures.py",
        "repository": REPOSITORY, "commit": AUTHORS_COMMIT, "folder": FOLDER,
        "files": AUTHORS_FILES | {"train.py": TRAIN_BLOB},
        "args": {k: v for k, v in vars(args).items() if k not in ("data_mode", "data_name", "data_train")},
        "changed_from_their_defaults": {k: [THEIR_DEFAULTS[k], v] for k, v in SMALL.items()},
        "groups": list(GROUPS), "trained": list(TRAINED),
        "group_sizes": {g: len(r["datas"][g]) for g in GROUPS},
        "num_batches": args.num_batches, "steps": STEPS, "warmup_steps": warm, "cosine_steps": span,
        "optimizer": r["optimizer"], "criterion": "CrossEntropyLoss(ignore_index=0) on the last position",
        "lr_source": r["lr_source"],
        "probes": {"rows": PROBE_ROWS, "order": list(r["probe"]),
                   "train": "the first rows of training batch 0", "heldout_43": "the first rows of group 43_xel "
                   "(pair (4,3) on train keys; not trained on)", "test_keys": "row 0 of each xm0 group, in order"},
        "machine": {"cpu": cpu_name(), "arch": platform.machine(), "threads": torch.get_num_threads(),
                    "torch": torch.__version__.split("+")[0], "numpy": np.__version__,
                    "python": platform.python_version()},
    }
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "config.json", config)
    write_npz(out / "weights.npz", {f"init/{k}": v for k, v in r["init"].items()}
              | {f"final/{k}": v for k, v in r["final"].items()})
    token = np.uint8  # every token is below 201
    assert max(int(r["rows"].max()), *(int(v.max()) for v in r["probe"].values())) < 256
    write_npz(out / "batches.npz", {"train_rows": r["rows"].astype(token)}
              | {f"probe/{k}": v.astype(token) for k, v in r["probe"].items()})
    write_npz(out / "logits.npz", {f"probe/{k}": v.astype(np.float32) for k, v in r["logits"].items()})
    write_json(out / "steps.json", {
        "loss": r["losses"], "lr": r["lrs"], "grad_norm": r["grad_norms"],
        "probe_loss": r["probe_losses"],
        "note": "loss: their train_step's return for the batch of each step (float64 of the fp32 loss); lr: the "
                "optimizer's lr during that step; grad_norm: the total gradient norm before clipping (clip 1); "
                "probe_loss: their test_step on each probe batch and on the whole training batch 0, initial weights"})


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--authors", type=Path, required=True,
                   help=f"the folder {FOLDER} of a checkout at commit {AUTHORS_COMMIT[:7]}")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT, help="fixture folder (default: %(default)s)")
    p.add_argument("--allow-formula-scheduler", action="store_true",
                   help="if warmup_scheduler is not importable, set the lr by its formula instead of stopping")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    # warmup_scheduler 0.3 asks its cosine for get_lr() outside a step, as it always did; torch says so every step
    warnings.filterwarnings("ignore", message="To get the last learning rate computed by the scheduler")
    r = run(a.authors, a.allow_formula_scheduler)
    if not all(math.isfinite(v) for v in r["losses"]):
        sys.exit("their training produced a non-finite loss; nothing written")
    write(a.out, r)
    print(f"wrote {a.out}: {r['args'].num_batches} batches per epoch, losses {r['losses'][0]:.6f} -> "
          f"{r['losses'][-1]:.6f}, lr {r['lr_source'].split(':')[0]}")


if __name__ == "__main__":
    main()
