"""Train with reasonlab's own step on the anchor study authors' own seed-1 random draws (spec §6b).

Why this exists: reasonlab's paper-scale γ 0.8 run, on *its* seed-1 draws, leaves the plateau sooner than the
authors' log and answers (4,3) differently. That is either the code or the draws. This script checks that
reasonlab's training step follows the authors' own random draws: it regenerates, with the authors' code, the exact
realization behind their log — their data (``get_data`` after their ``setup_seed(1)``), their initial weights
(``myGPT_specific`` at ``std_rate`` γ) and their batch order (the seeds their DataLoaders draw from the global torch
generator, in the order their ``train.py`` iterates them) — and trains on it with reasonlab's ``Trainer._epoch`` /
``train_step`` (AdamW, the per-batch schedule, clipping, last-token cross-entropy) at the `paper` profile with the
log's settings. Losses and evaluations are written beside the log's (``reasonlab/data/anchor_trajectory``).

The authors' code, at the commit the shipped log names (src/reasonlab/data/anchor_trajectory/NOTICE.md)::

    git clone https://github.com/xuzhiqin1990/understanding_dl
    git -C understanding_dl checkout 3bc8533cf019d8bec78325ee572ab624d69137f6

Only their ``data.py``, ``model.py`` and ``utils/seed.py`` are loaded (by path, in ``authors_draws.py`` beside this
script; they need torch and NumPy alone), so neither their ``utils`` package (pytz, matplotlib) nor
``warmup_scheduler`` (their ``train.py``) is needed, and nothing uses the network. Then, one thread as for the
numbers in docs/anchor-composition.md (2.5-4 s per step, 15-25 min per epoch, on a shared 2-core CPU)::

    OMP_NUM_THREADS=1 python scripts/replay_authors_draws.py \\
        --authors understanding_dl/code/book_jupyter_composition_task --out replay-work --epochs 24

``--draws`` swaps one part of the realization for reasonlab's own seed-1 draw, to tell which part carries our run's
fast escape: ``their-data-our-init`` trains on their data in their batch order from the initial weights ``Trainer``
builds for the trajectory run; ``our-data-their-init`` trains on the ``Trainer``'s own data in its own batch order
(``epoch_order``, untouched) from their initial weights; ``ours`` (a control) is the trajectory run's own draws
through this script. The config trained is checked to draw what ``--profile trajectory`` draws (same data, initial
weights, batch order and schedule). On their data the evaluation is on their groups (``Evaluator``); on ours it is on
reasonlab's own evaluation sets, scored by the package (``score_sets``), with the same figures (offsets beyond ±20
fall in the package's histogram end bins, ``<-20`` and ``>20``). ``--init-seed S`` takes the initial weights, on
whichever side they come from, at seed S instead (their code after ``setup_seed(S)``; or a trajectory run of seed S),
the data and batch order staying seed 1's: several draws of each init law on the same data tell one draw's luck
from a difference between the laws (folder suffix ``-init{S}``).

Stage 1, cached in ``--out``: ``authors_data_seed1.npz`` (their 32 data groups) and ``authors_init_g{γ}.pt`` (their
initial state dict and the global torch RNG state right after their model was built). Stage 2, in ``--out/g{γ}/``
(``--out/g{γ}-{draws}/`` with ``--draws`` other than ``theirs``): a checkpoint per epoch (the last one, and those of
evaluation epochs, are kept; a rerun resumes from the newest), ``replay.json`` rewritten after every epoch, and one
printed line per epoch. Training runs with flush-to-zero on, as reasonlab's ``train_run`` does (and as the trainer
did when the replay the docs cite ran). ``--max-steps K`` trains only the first K steps of epoch 1 from the initial
weights and prints their losses and digests of the initial weights, of the batches seen and of the weights after
them (to check in a minute that two versions of the code compute the same numbers, and which draws two modes share);
it writes no checkpoint.

Over 400 lines: one procedure with its checks: the authors' draws loaded and checked against reasonlab's, trained by
reasonlab's step in the authors' batch order, and scored as their log is.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import hashlib
import io
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import torch
from authors_draws import (  # beside this script
    AUTHORS_COMMIT,
    AUTHORS_EPOCHS,
    BATCH,
    GROUPS,
    PAIRS,
    SEED,
    STEPS_PER_EPOCH,
    TRAINED,
    authors_init_at,
    batch_orders,
    generate_draws,
    load_authors,
    reasonlab_names,
)
from torch import Tensor, nn

import reasonlab
from reasonlab.config import RunConfig, raw_config, resolve
from reasonlab.evaluate.scoring import score_sets
from reasonlab.evaluate.set_score import histogram_bins, pooled
from reasonlab.files import atomic_write_bytes, write_json
from reasonlab.kinds.anchor.config import Pair
from reasonlab.kinds.anchor.data import AnchorTask
from reasonlab.numerics import flush_denormals, machine
from reasonlab.store import git_revision
from reasonlab.studies.anchor.trajectory import authors_log
from reasonlab.train import loop

OVERRIDES = ["train.lr_multiplier=20", "task.split_modulus=9", "train.cosine_epochs=200", f"seed={SEED}"]
TOP_OFFSETS, EVAL_CHUNK = 4, 4096
# --draws: whose data (with its batch order) and whose initial weights -> (their data, their init, description)
DRAWS = {"theirs": (True, True, "the authors' seed-1 draws (their data, initial weights and batch order)"),
         "their-data-our-init": (True, False, "the authors' seed-1 data and batch order with reasonlab's own seed-1 "
                                 "initial weights"),
         "our-data-their-init": (False, True, "reasonlab's own seed-1 data and batch order with the authors' seed-1 "
                                 "initial weights"),
         "ours": (False, False, "reasonlab's own seed-1 draws, those of the trajectory run (a control)")}
WHAT = "reasonlab's training step (Trainer._epoch) on {}, beside their log; made by scripts/replay_authors_draws.py"
# the only fields in which the config trained here differs from `--profile anchor-trajectory`: none draws anything
EXECUTION_ONLY = {"epochs", "eval_every", "eval_max_per_set", "checkpoint_every", "threads"}


# ---- reasonlab's side ----------------------------------------------------------------------------------------
def check_trajectory(cfg: RunConfig) -> None:
    """The config trained here draws what ``reasonlab train --profile anchor-trajectory`` draws at the same γ (data,
    initial weights, batch order, schedule): the two differ only in ``EXECUTION_ONLY`` fields."""
    ref = resolve(raw_config(None, "anchor-trajectory", [f"init.gamma={cfg.init.gamma}", f"seed={cfg.seed}"]))
    dumps = [c.model_dump(mode="json", exclude={"profile"}) for c in (cfg, ref)]
    for d in dumps:
        d["train"] = {k: v for k, v in d["train"].items() if k not in EXECUTION_ONLY}
    if dumps[0] != dumps[1]:
        sys.exit("the paper profile with the log's settings no longer draws what the trajectory profile draws")


def build_trainer(gamma: str, threads: int, run_dir: Path, arrays: dict[str, np.ndarray] | None,
                  init: dict | None, init_seed: int = SEED) -> loop.Trainer:
    """reasonlab's trainer at the `paper` profile with the log's settings, its training rows replaced by theirs
    (in their loader's order) when ``arrays`` are given and its weights by their initial ones when ``init`` is;
    otherwise its own, exactly as ``Trainer`` builds them for the trajectory run (at ``init_seed``: the weights a
    trajectory run of that seed starts from)."""
    cfg = resolve(raw_config(None, "anchor-paper", [f"init.gamma={gamma}", *OVERRIDES, f"train.threads={threads}"]))
    check_trajectory(cfg)
    trainer = loop.Trainer(cfg, run_dir, progress=False)
    if init is None and init_seed != SEED:
        other = loop.Trainer(cfg.model_copy(update={"seed": init_seed}), run_dir, progress=False)
        trainer.model.load_state_dict(other.model.state_dict())
    if arrays is not None:
        rows = torch.from_numpy(np.concatenate([arrays[g] for g, t in zip(GROUPS, TRAINED, strict=True) if t]))
        if len(rows) != trainer.n_train:
            sys.exit(f"the paper profile trains on {trainer.n_train} rows, theirs on {len(rows)}")
        trainer.x, trainer.y = rows[:, :-1].contiguous(), rows[:, -1].contiguous()
    if trainer.steps_per_epoch != STEPS_PER_EPOCH:
        sys.exit(f"the paper profile takes {trainer.steps_per_epoch} steps per epoch, theirs {STEPS_PER_EPOCH}")
    if init is not None:
        names = reasonlab_names(cfg.model.depth)
        trainer.model.load_state_dict({names[k]: v for k, v in init["state"].items()})
    return trainer


def check_labels(task: AnchorTask, arrays: dict[str, np.ndarray]) -> None:
    """Every label of their data is what reasonlab's task law gives for the row's key and pair, so the
    evaluation can take its targets (the held-out pair's symmetric answer) from the package."""
    for name, rows in arrays.items():
        x = torch.from_numpy(rows)
        if not torch.equal(task.designated(row_keys(task, x), Pair(int(name[0]), int(name[1]))), x[:, -1]):
            sys.exit(f"group {name}: reasonlab's task law does not give the authors' labels")


def held_out_pair(task: AnchorTask) -> Pair:
    theirs = [Pair(int(p[0]), int(p[1])) for p, t in zip(PAIRS, TRAINED[16:], strict=True) if not t]
    if task.held_out != theirs:
        sys.exit(f"the paper profile holds out {task.held_out}, their data {theirs}")
    return theirs[0]


def row_keys(task: AnchorTask, rows: Tensor) -> Tensor:
    """The key of each row: the item just before its anchor pair (noise items are never anchors)."""
    is_anchor = torch.isin(rows[:, :-1], torch.tensor(task.cfg.anchors))
    first = is_anchor.int().argmax(1)
    return rows[torch.arange(len(rows)), first - 1]


@contextlib.contextmanager
def authors_batch_order(orders: list[Tensor], seed: int) -> Iterator[None]:
    """``Trainer._epoch`` draws epoch e's order from ``epoch_order(n, subseed(seed, "shuffle:e"), ...)``; inside
    this block it gets their epoch e's order instead."""
    by_seed = {loop.subseed(seed, f"shuffle:{e}"): order for e, order in enumerate(orders)}
    original = loop.epoch_order

    def their_order(n: int, seed: int, batch_size: int, lengths: Tensor | None = None) -> Tensor:
        assert batch_size == BATCH and lengths is None and n >= len(by_seed[seed])
        return by_seed[seed]

    loop.epoch_order = their_order
    try:
        yield
    finally:
        loop.epoch_order = original


# ---- evaluation ----------------------------------------------------------------------------------------------
class Evaluator:
    """The log's figures on the first ``rows`` sequences of their groups (all with 0): seen-pair test-key
    accuracy (mean over the 15 trained pairs' ``xm0`` groups), the held-out pair's train-key inferential accuracy,
    its symmetric share (answers equal to its mirror's label, as the package defines it: offset +4 for (4,3)) and
    its most frequent offsets from the inferential answer."""

    def __init__(self, task: AnchorTask, arrays: dict[str, np.ndarray], rows: int):
        self.held = held_out_pair(task)
        self.held_name = f"{self.held[0]}{self.held[1]}"
        self.sets = {g: torch.from_numpy(arrays[g][:rows] if rows else arrays[g])
                     for g in GROUPS if g.endswith("_xm0") or g == self.held_name + "_xel"}
        spec = task.held_out_targets(self.held)
        if spec.symmetric != "defined":
            sys.exit(f"the paper profile's {self.held.caption} has no symmetric answer ({spec.symmetric})")
        held = self.sets[self.held_name + "_xel"]
        self.symmetric = task.designated(row_keys(task, held), spec.mirror)

    @torch.no_grad()
    def __call__(self, model: nn.Module) -> dict:
        model.eval()
        preds = {g: torch.cat([model(x[i : i + EVAL_CHUNK, :-1]).argmax(-1) for i in range(0, len(x), EVAL_CHUNK)])
                 for g, x in self.sets.items()}
        model.train()
        acc = {g: float((preds[g] == x[:, -1]).float().mean()) for g, x in self.sets.items()}
        seen = [acc[g] for g in acc if g.endswith("_xm0") and not g.startswith(self.held_name)]
        name = self.held_name + "_xel"
        offsets = collections.Counter((preds[name] - self.sets[name][:, -1]).tolist()).most_common(TOP_OFFSETS)
        return {"seen_test_acc": float(np.mean(seen)), "heldout_inferential": acc[name],
                "heldout_symmetric": float((preds[name] == self.symmetric).float().mean()),
                "top_offsets": [[o, n / len(preds[name])] for o, n in offsets],
                "heldout_test_keys": acc[self.held_name + "_xm0"],
                "test_acc_per_pair": {g[:2]: acc[g] for g in acc if g.endswith("_xm0")}}


class PackageEvaluator:
    """The same figures on reasonlab's own evaluation sets (its own data), scored by the package (``score_sets``,
    as the trainer scores them) on the first ``rows`` sequences per set: the pooled accuracy of the trained pairs'
    test-key sets (equal sizes: the mean over pairs), the held-out pair's train-key inferential and symmetric
    shares and its commonest offsets, read from the package's offset histogram (beyond ±20 in its end bins)."""

    def __init__(self, trainer: loop.Trainer, task: AnchorTask, rows: int):
        self.held, self.device, self.rows = held_out_pair(task), trainer.device, rows or None
        self.sets = {k: v for k, v in trainer.data.eval_sets.items() if k.startswith(("test/", "heldout/"))}
        if "symmetric" not in self.sets[self.held.eval_set()].targets:
            sys.exit(f"the paper profile's {self.held.caption} has no symmetric answer")

    def __call__(self, model: nn.Module) -> dict:
        scores = score_sets(model, self.sets, self.rows, self.device)
        held, held_test = (scores[self.held.eval_set(keys)] for keys in ("train_keys", "test_keys"))
        bins = histogram_bins()
        tops = sorted((i for i, n in enumerate(held.histogram) if n), key=lambda i: -held.histogram[i])
        per_pair = {k.removeprefix("test/"): s.acc("designated") for k, s in scores.items() if k.startswith("test/")}
        return {"seen_test_acc": pooled(scores, "test/"), "heldout_inferential": held.acc("inferential"),
                "heldout_symmetric": held.acc("symmetric"),
                "top_offsets": [[int(bins[i]) if bins[i].lstrip("-").isdigit() else bins[i],
                                 held.histogram[i] / held.n] for i in tops[:TOP_OFFSETS]],
                "heldout_test_keys": held_test.acc("inferential"),
                "test_acc_per_pair": {k.replace("-", ""): v for k, v in per_pair.items()}
                | {self.held.key.replace("-", ""): held_test.acc("inferential")}}


def evaluation_line(epoch: int, pair: Pair, ours: dict, log: dict | None) -> str:
    tops = ", ".join(f"{o:+d}: {s:.3f}" if isinstance(o, int) else f"{o}: {s:.3f}" for o, s in ours["top_offsets"])
    line = (f"  after {epoch} epochs: seen-pair test-key acc {ours['seen_test_acc']:.3f}, {pair.caption} inferential "
            f"{ours['heldout_inferential']:.3f}, symmetric {ours['heldout_symmetric']:.3f}; offsets {tops}")
    if log:
        line += (f"\n    authors' log: seen {log['seen_test_acc']:.3f}, inferential {log['heldout_inferential']:.3f},"
                 f" symmetric {log['heldout_symmetric']:.3f}, modal offset {log['modal_deviation']:+d} "
                 f"({log['modal_share']:.3f})")
    return line


# ---- the replay ----------------------------------------------------------------------------------------------
class Steps:
    """The progress object ``Trainer._epoch`` advances once per step; with ``limit``, it stops the epoch there."""

    class Stop(Exception):
        pass

    def __init__(self, limit: int | None = None):
        self.limit, self.n = limit, 0

    def advance(self) -> None:
        self.n += 1
        if self.limit is not None and self.n >= self.limit:
            raise Steps.Stop


def digest(tensors: dict[str, Tensor]) -> str:
    h = hashlib.sha256()
    for name, v in tensors.items():
        h.update(name.encode())
        h.update(v.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def first_steps(trainer: loop.Trainer, k: int) -> None:
    """``--max-steps``: the first ``k`` steps of epoch 1 through ``Trainer._epoch``, each step's loss recorded,
    with digests of the initial weights, of the batches those steps saw and of the weights after them (to compare
    draws across ``--draws`` and with a plain ``Trainer``)."""
    losses: list[float] = []
    batches = hashlib.sha256()
    step = trainer.train_step
    print(f"initial weights: sha256 {digest(trainer.model.state_dict())}")

    def recorded(x: Tensor, y: Tensor) -> Tensor:
        batches.update(digest({"x": x, "y": y}).encode())
        loss = step(x, y)
        losses.append(float(loss))
        return loss

    trainer.train_step = recorded
    started = time.perf_counter()
    with contextlib.suppress(Steps.Stop):
        trainer._epoch(0, 0, Steps(k))
    seconds = time.perf_counter() - started
    print(f"first {k} steps: losses {[repr(v) for v in losses]}; batches: sha256 {batches.hexdigest()}")
    print(f"weights after them: sha256 {digest(trainer.model.state_dict())}  ({seconds / k:.2f} s per step)",
          flush=True)


def init_stats(model: nn.Module) -> None:
    """``--init-stats``: per parameter, the statistics of the initial weights that tell two init laws apart — mean,
    std, the largest |w| in stds, and for a matrix its top singular value over the random-matrix edge
    std·(√rows + √cols) (≈ 1 for i.i.d. entries)."""
    print(f"{'parameter':28s} {'shape':>12s} {'mean':>9s} {'std':>8s} {'max/std':>8s} {'σ1/edge':>8s}")
    for name, w in model.state_dict().items():
        w = w.double()
        std = w.std().item() if w.numel() > 1 else 0.0
        line = f"{name:28s} {'x'.join(map(str, w.shape)):>12s} {w.mean().item():+9.5f} {std:8.5f}"
        if std > 0:
            line += f" {w.abs().max().item() / std:8.2f}"
            if w.dim() == 2:
                edge = std * (w.shape[0] ** 0.5 + w.shape[1] ** 0.5)
                line += f" {torch.linalg.matrix_norm(w, ord=2).item() / edge:8.3f}"
        print(line)


def checkpoints(folder: Path) -> dict[int, Path]:
    return {int(p.stem.split("-")[1]): p for p in folder.glob("epoch-*.pt") if p.stem.split("-")[1].isdigit()}


def save(folder: Path, trainer: loop.Trainer, state: dict, eval_every: int) -> None:
    """The epoch's checkpoint (model, optimizer, history), written atomically; older ones are removed unless they
    end an evaluation epoch."""
    epoch = state["epoch"]
    buf = io.BytesIO()
    torch.save({"model": trainer.model.state_dict(), "opt": trainer.opt.state_dict(), **state}, buf)
    atomic_write_bytes(folder / f"epoch-{epoch}.pt", buf.getvalue())
    for e, path in checkpoints(folder).items():
        if e < epoch and e % eval_every:
            path.unlink()


def resume(folder: Path, trainer: loop.Trainer, settings: dict) -> dict:
    """The newest checkpoint's state restored into the trainer, or a fresh state."""
    found = checkpoints(folder)
    if not found:
        what = WHAT.format(DRAWS[settings["draws"]][2])
        if settings["init_seed"] != SEED:
            what += f"; the initial weights are those of seed {settings['init_seed']} instead"
        return {"what": what, "epoch": 0, "step": 0, "settings": settings,
                "epochs": [], "evaluations": []}
    saved = torch.load(found[max(found)], weights_only=True)
    made = {"draws": "theirs", "init_seed": SEED} | saved["settings"]  # from before --draws / --init-seed
    for key in ("gamma", "eval_rows", "draws", "init_seed"):
        if made[key] != settings[key]:
            sys.exit(f"{folder}: its checkpoints were made with {key} {made[key]}; use another --out")
    trainer.model.load_state_dict(saved.pop("model"))
    trainer.opt.load_state_dict(saved.pop("opt"))
    print(f"resumed after epoch {saved['epoch']} (step {saved['step']})", flush=True)
    return saved


def replay(trainer: loop.Trainer, evaluate: Evaluator | PackageEvaluator, folder: Path, settings: dict, epochs: int,
           eval_every: int) -> None:
    reference = authors_log()["runs"][settings["gamma"]]
    log_loss = {r["epoch"]: r["loss"] for r in reference["train_loss"]}
    log_eval = {r["epoch"]: r for r in reference["evaluations"]}
    state = resume(folder, trainer, settings)
    if state["epoch"] == 0 and not state["evaluations"]:  # the initial weights
        state["evaluations"].append({"epoch": 0, "replay": evaluate(trainer.model), "log": log_eval.get(0)})
        print(evaluation_line(0, evaluate.held, state["evaluations"][0]["replay"], log_eval.get(0)), flush=True)
    for epoch in range(state["epoch"] + 1, epochs + 1):
        started = time.perf_counter()
        state["step"], loss = trainer._epoch(epoch - 1, state["step"], Steps())
        seconds = time.perf_counter() - started
        state["epoch"] = epoch
        state["epochs"].append({"epoch": epoch, "step": state["step"], "loss": loss, "log_loss": log_loss.get(epoch),
                                "seconds": round(seconds, 1), "threads": torch.get_num_threads(),
                                "git_revision": git_revision()})
        logged = log_loss.get(epoch)
        print(f"epoch {epoch}: replay {loss:.4f}   authors' log {logged if logged is None else f'{logged:.4f}'}"
              f"   ({seconds:.0f} s, step {state['step']})", flush=True)
        if epoch % eval_every == 0:
            ours = evaluate(trainer.model)
            state["evaluations"].append({"epoch": epoch, "replay": ours, "log": log_eval.get(epoch)})
            print(evaluation_line(epoch, evaluate.held, ours, log_eval.get(epoch)), flush=True)
        save(folder, trainer, state, eval_every)
        write_json(folder / "replay.json", state)
    write_json(folder / "replay.json", state)


def main(argv: list[str] | None = None) -> None:
    gammas = sorted(authors_log()["runs"])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--authors", type=Path, required=True,
                   help="the folder code/book_jupyter_composition_task of a clone at commit " + AUTHORS_COMMIT[:7])
    p.add_argument("--out", type=Path, required=True, help="work folder: draws, checkpoints, replay.json")
    p.add_argument("--epochs", type=int, default=24, help="epochs to replay (their run: 210)")
    p.add_argument("--gamma", choices=gammas, default="0.8", help="their std_rate, a run of the shipped log")
    p.add_argument("--threads", type=int, default=1, help="torch threads (the numbers differ with it)")
    p.add_argument("--eval-every", type=int, default=3, help="evaluate every N epochs (their log: 3)")
    p.add_argument("--eval-rows", type=int, default=2000, help="sequences per group evaluated; 0: all (as their log)")
    p.add_argument("--max-steps", type=int, help="debugging: only the first K steps of epoch 1, printed; no files")
    p.add_argument("--init-stats", action="store_true",
                   help="print per-parameter statistics of the initial weights trained from, and stop; no files")
    p.add_argument("--init-seed", type=int, default=SEED,
                   help="the seed of the initial weights, on either side (their code's setup_seed, or the trajectory "
                        "run's seed); data and batch order stay seed 1's. To tell one draw's luck from the init's law")
    p.add_argument("--draws", choices=DRAWS, default="theirs",
                   help="whose data (with its batch order) and initial weights: " + "; ".join(
                       f"{k}: {v[2]}" for k, v in DRAWS.items()))
    a = p.parse_args(argv)
    if not 1 <= a.epochs <= AUTHORS_EPOCHS or a.threads < 1 or a.eval_every < 1 or a.eval_rows < 0:
        p.error(f"--epochs 1..{AUTHORS_EPOCHS}, --threads >= 1, --eval-every >= 1, --eval-rows >= 0")
    if a.max_steps is not None and not 1 <= a.max_steps <= STEPS_PER_EPOCH:
        p.error(f"--max-steps 1..{STEPS_PER_EPOCH}")
    torch.set_num_threads(a.threads)
    their_data, their_init, _ = DRAWS[a.draws]
    folder = a.out / ((f"g{a.gamma}" if a.draws == "theirs" else f"g{a.gamma}-{a.draws}")
                      + ("" if a.init_seed == SEED else f"-init{a.init_seed}"))
    code = load_authors(a.authors)
    with flush_denormals():  # as reasonlab trains (train_run), and as the replay the docs cite ran
        a.out.mkdir(parents=True, exist_ok=True)  # stage 1's cache
        data_path, init_path = generate_draws(code, a.gamma, a.out)
        arrays, orders = None, None
        init = torch.load(init_path, weights_only=True)
        weights = (None if not their_init else init if a.init_seed == SEED
                   else torch.load(authors_init_at(code, a.gamma, a.init_seed, a.out), weights_only=True))
        if their_data:
            with np.load(data_path) as npz:
                arrays = {g: npz[g] for g in GROUPS}
            orders = batch_orders(code, arrays, init["torch_rng"], 1 if a.max_steps else a.epochs)
        trainer = build_trainer(a.gamma, a.threads, folder, arrays, weights, a.init_seed)
        task = AnchorTask(trainer.cfg.task)
        if arrays is not None:
            check_labels(task, arrays)
        with authors_batch_order(orders, trainer.cfg.seed) if orders else contextlib.nullcontext():
            if a.init_stats:
                init_stats(trainer.model)
                return
            if a.max_steps:
                first_steps(trainer, a.max_steps)
                return
            settings = {"gamma": a.gamma, "eval_rows": a.eval_rows, "draws": a.draws, "init_seed": a.init_seed,
                        "authors_commit": AUTHORS_COMMIT,
                        "overrides": [f"init.gamma={a.gamma}", *OVERRIDES], "profile": "paper",
                        "reasonlab": reasonlab.__version__, "torch": str(torch.__version__),
                        "threads": a.threads, "machine": machine()}  # with the threads, what decides the rounding
            evaluate = (Evaluator(task, arrays, a.eval_rows) if arrays is not None
                        else PackageEvaluator(trainer, task, a.eval_rows))
            folder.mkdir(parents=True, exist_ok=True)  # not for --init-stats / --max-steps: no files
            replay(trainer, evaluate, folder, settings, a.epochs, a.eval_every)


if __name__ == "__main__":
    main()
