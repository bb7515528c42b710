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

Only their ``data.py``, ``model.py`` and ``utils/seed.py`` are loaded (by path; they need torch and NumPy alone), so
neither their ``utils`` package (pytz, matplotlib) nor ``warmup_scheduler`` (their ``train.py``) is needed, and
nothing uses the network. Then, one thread as for the numbers in docs/anchor-composition.md (2.5-4 s per step,
15-25 min per epoch, on a shared 2-core CPU)::

    OMP_NUM_THREADS=1 python scripts/replay_authors_draws.py \\
        --authors understanding_dl/code/book_jupyter_composition_task --out replay-work --epochs 24

Stage 1, cached in ``--out``: ``authors_data_seed1.npz`` (their 32 data groups) and ``authors_init_g{γ}.pt`` (their
initial state dict and the global torch RNG state right after their model was built). Stage 2, in ``--out/g{γ}/``:
a checkpoint per epoch (the last one, and those of evaluation epochs, are kept; a rerun resumes from the newest),
``replay.json`` rewritten after every epoch, and one printed line per epoch. Training runs with flush-to-zero on,
as reasonlab's ``train_run`` does (and as the trainer did when the replay the docs cite ran). ``--max-steps K``
trains only the first K steps of epoch 1 from the initial weights and prints their losses and a digest of the
weights (to check in a minute that two versions of the code compute the same numbers); it writes no checkpoint.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import hashlib
import importlib.util
import io
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType, SimpleNamespace

import numpy as np
import torch
from torch import Tensor, nn

import reasonlab
from reasonlab.config import Pair, raw_config, resolve
from reasonlab.numerics import flush_denormals
from reasonlab.store import atomic_write_bytes, git_revision, write_json
from reasonlab.studies.anchor_trajectory import authors_log
from reasonlab.tasks.anchor import AnchorTask
from reasonlab.train import loop

AUTHORS_COMMIT = "3bc8533cf019d8bec78325ee572ab624d69137f6"
# git blob ids of the files used, at that commit (computed with LF line endings, as git stores them)
AUTHORS_FILES = {"data.py": "d81cf8b43edc6a7aa03deaa21694ee3a6402fadb",
                 "model.py": "cf1239dc2e862bf76a605bb5eb768932a1715c10",
                 "utils/seed.py": "990e53d8311c4f553412862728eb8ae3ffa3f3ad"}
# Their notebook (main.ipynb) and result_{γ}/config.json: the data groups in their order ("ab_xm0": pair (a, b) on
# test keys, key ≡ position mod 9; "ab_xel": on the other keys), which of them train, and the run's settings.
PAIRS = ["13", "23", "43", "31", "32", "34", "12", "14", "21", "41", "24", "42", "11", "22", "33", "44"]
GROUPS = [p + "_xm0" for p in PAIRS] + [p + "_xel" for p in PAIRS]
TRAINED = [0] * 16 + [1, 1, 0, 1, 1, 1] + [1] * 10
AUTHORS_ARGS = dict(data_size=900000, seq_len=9, data_min=20, data_max=100, data_percent=[1] * 16 + [9] * 16,
                    n_heads=1, d_k=200, d_v=200, d_model=400, d_feedforward=1200, vocab_size=201, max_pos=20,
                    n_layers=2)
SEED, BATCH, STEPS_PER_EPOCH = 1, 2048, 370
AUTHORS_EPOCHS, AUTHORS_ACC_EVERY = 210, 3  # their n_epoch and print_acc_epoch: when their loop draws what
OVERRIDES = ["train.lr_multiplier=20", "task.split_modulus=9", "train.cosine_epochs=200", f"seed={SEED}"]
DATA_FILE, TOP_OFFSETS, EVAL_CHUNK = "authors_data_seed1.npz", 4, 4096
WHAT = ("reasonlab's training step (Trainer._epoch) on the authors' seed-1 draws (their data, initial weights and "
        "batch order), beside their log; made by scripts/replay_authors_draws.py")


# ---- the authors' code ---------------------------------------------------------------------------------------
def git_blob(path: Path) -> str:
    data = path.read_bytes().replace(b"\r\n", b"\n")
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def load_authors(folder: Path) -> SimpleNamespace:
    """Their ``data``, ``model`` and ``utils/seed`` modules, loaded by path after checking they are the files of
    ``AUTHORS_COMMIT``."""
    modules: dict[str, ModuleType] = {}
    for rel, blob in AUTHORS_FILES.items():
        path = folder / rel
        if not path.is_file():
            sys.exit(f"--authors {folder}: no {rel}; give the folder code/book_jupyter_composition_task of a clone")
        if git_blob(path) != blob:
            sys.exit(f"{path}: not the file of commit {AUTHORS_COMMIT}; check that commit out")
        name = Path(rel).stem
        spec = importlib.util.spec_from_file_location(f"authors_{name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        modules[name] = module
    return SimpleNamespace(**modules)


def generate_draws(code: SimpleNamespace, gamma: str, out: Path) -> tuple[Path, Path]:
    """Stage 1: their seed-1 data and initial weights, made by their code in their order (``setup_seed``,
    ``get_data``, ``myGPT_specific``), with the global torch RNG state right after the model's construction (where
    their ``train`` goes on to draw its DataLoader seeds). Cached: files already in ``out`` are reused."""
    data_path, init_path = out / DATA_FILE, out / f"authors_init_g{gamma}.pt"
    if data_path.is_file() and init_path.is_file():
        return data_path, init_path
    args = SimpleNamespace(**AUTHORS_ARGS, data_mode=GROUPS, data_name=GROUPS, std_rate=float(gamma))
    code.seed.setup_seed(SEED)
    with contextlib.redirect_stdout(io.StringIO()):  # get_data prints every group
        datas = code.data.get_data(args)
    model = code.model.myGPT_specific(args, torch.device("cpu"))
    rng = torch.get_rng_state()
    arrays = {k: np.asarray(v, dtype=np.int64) for k, v in datas.items()}
    if data_path.is_file():  # made with another γ: the data do not depend on it
        with np.load(data_path) as old:
            if set(old.files) != set(arrays) or any(not np.array_equal(old[k], v) for k, v in arrays.items()):
                sys.exit(f"{data_path}: differs from the data just generated; remove it or use another --out")
        made = f"{init_path.name} (their data, already in {out}, generated again and equal)"
    else:
        made = f"{data_path.name} and {init_path.name}"
        buf = io.BytesIO()
        np.savez_compressed(buf, **arrays)
        atomic_write_bytes(data_path, buf.getvalue())
    buf = io.BytesIO()
    torch.save({"state": model.state_dict(), "torch_rng": rng}, buf)
    atomic_write_bytes(init_path, buf.getvalue())
    print(f"stage 1: wrote {made} with the authors' code", flush=True)
    return data_path, init_path


def batch_orders(code: SimpleNamespace, arrays: dict[str, np.ndarray], rng: Tensor, epochs: int) -> list[Tensor]:
    """The row order of each of their epochs (370 batches of 2048, flattened), replayed from the global RNG state
    after their model's construction: each pass over a DataLoader draws from that generator (the iterator's base
    seed and the RandomSampler's seed), so every pass their ``train`` makes is made here in the same order."""
    lists = {k: arrays[k].tolist() for k in GROUPS}  # get_train_data joins Python lists
    args = SimpleNamespace(data_name=GROUPS, data_train=TRAINED, batch_size=BATCH)
    train_loader = code.data.get_train_data(args, lists)
    groups = code.data.get_data_loader_group(args, lists)
    del lists
    held_out = [g for g, t in zip(GROUPS, TRAINED, strict=True) if g.endswith("_xel") and not t][0]

    def one_pass(loader: torch.utils.data.DataLoader) -> list[list[int]]:
        return list(iter(loader)._sampler_iter)  # the batches' indices, without loading the batches

    torch.set_rng_state(rng)
    orders = []
    for epoch in range(epochs):
        if epoch % AUTHORS_ACC_EVERY == 0 or epoch == AUTHORS_EPOCHS - 1:
            for name in GROUPS:  # get_accuracy: last_word_acc over every group
                one_pass(groups[name])
            one_pass(groups[held_out])  # then last_word_devi
        batches = one_pass(train_loader)  # train_step
        if len(batches) != STEPS_PER_EPOCH:
            sys.exit(f"their training loader gives {len(batches)} batches, not {STEPS_PER_EPOCH}")
        orders.append(torch.tensor(batches).flatten())
        for name, trained in zip(GROUPS, TRAINED, strict=True):
            if not trained:  # _get_loss_of_each_data: the groups not trained on
                one_pass(groups[name])
    return orders


def reasonlab_names(depth: int) -> dict[str, str]:
    """Their parameter names -> reasonlab's Transformer's."""
    names = {"embedding.tgt_emb.weight": "embed.weight", "embedding.pos_emb.weight": "pos_embed.weight",
             "projection.weight": "head.weight", "projection.bias": "head.bias"}
    parts = {"dec_self_attn.W_Q": "attn.W_Q", "dec_self_attn.W_K": "attn.W_K", "dec_self_attn.W_V": "attn.W_V",
             "dec_self_attn.fc": "attn.W_O", "dec_self_attn.layernorm": "ln1", "pos_ffn.fc.0": "mlp.W_in",
             "pos_ffn.fc.2": "mlp.W_out", "pos_ffn.layernorm": "ln2"}
    for layer in range(depth):
        for theirs, ours in parts.items():
            for kind in ("weight", "bias"):
                names[f"decoder.layers.{layer}.{theirs}.{kind}"] = f"blocks.{layer}.{ours}.{kind}"
    return names


# ---- reasonlab's side ----------------------------------------------------------------------------------------
def build_trainer(gamma: str, threads: int, run_dir: Path, arrays: dict[str, np.ndarray],
                  init: dict) -> loop.Trainer:
    """reasonlab's trainer at the `paper` profile with the log's settings, its training rows replaced by theirs
    (in their loader's order) and its weights by their initial ones."""
    cfg = resolve(raw_config(None, "paper", [f"init.gamma={gamma}", *OVERRIDES, f"train.threads={threads}"]))
    trainer = loop.Trainer(cfg, run_dir, progress=False)
    rows = torch.from_numpy(np.concatenate([arrays[g] for g, t in zip(GROUPS, TRAINED, strict=True) if t]))
    if len(rows) != trainer.n_train or trainer.steps_per_epoch != STEPS_PER_EPOCH:
        sys.exit(f"the paper profile trains on {trainer.n_train} rows, theirs on {len(rows)}")
    trainer.x, trainer.y = rows[:, :-1].contiguous(), rows[:, -1].contiguous()
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


def evaluation_line(epoch: int, pair: Pair, ours: dict, log: dict | None) -> str:
    tops = ", ".join(f"{o:+d}: {s:.3f}" for o, s in ours["top_offsets"])
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


def weights_digest(model: nn.Module) -> str:
    h = hashlib.sha256()
    for name, v in model.state_dict().items():
        h.update(name.encode())
        h.update(v.detach().contiguous().numpy().tobytes())
    return h.hexdigest()


def first_steps(trainer: loop.Trainer, k: int) -> None:
    """``--max-steps``: the first ``k`` steps of epoch 1 through ``Trainer._epoch``, each step's loss recorded."""
    losses: list[float] = []
    step = trainer.train_step

    def recorded(x: Tensor, y: Tensor) -> Tensor:
        loss = step(x, y)
        losses.append(float(loss))
        return loss

    trainer.train_step = recorded
    started = time.perf_counter()
    with contextlib.suppress(Steps.Stop):
        trainer._epoch(0, 0, Steps(k))
    seconds = time.perf_counter() - started
    print(f"first {k} steps: losses {[repr(v) for v in losses]}")
    print(f"weights after them: sha256 {weights_digest(trainer.model)}  ({seconds / k:.2f} s per step)", flush=True)


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
        return {"what": WHAT, "epoch": 0, "step": 0, "settings": settings, "epochs": [], "evaluations": []}
    saved = torch.load(found[max(found)], weights_only=True)
    for key in ("gamma", "eval_rows"):
        if saved["settings"][key] != settings[key]:
            sys.exit(f"{folder}: its checkpoints were made with {key} {saved['settings'][key]}; use another --out")
    trainer.model.load_state_dict(saved.pop("model"))
    trainer.opt.load_state_dict(saved.pop("opt"))
    print(f"resumed after epoch {saved['epoch']} (step {saved['step']})", flush=True)
    return saved


def replay(trainer: loop.Trainer, evaluate: Evaluator, folder: Path, settings: dict, epochs: int,
           eval_every: int) -> None:
    reference = authors_log()["runs"][settings["gamma"]]
    log_loss = {r["epoch"]: r["loss"] for r in reference["train_loss"]}
    log_eval = {r["epoch"]: r for r in reference["evaluations"]}
    state = resume(folder, trainer, settings)
    if state["epoch"] == 0 and not state["evaluations"]:  # their initial weights, in our model
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
    a = p.parse_args(argv)
    if not 1 <= a.epochs <= AUTHORS_EPOCHS or a.threads < 1 or a.eval_every < 1 or a.eval_rows < 0:
        p.error(f"--epochs 1..{AUTHORS_EPOCHS}, --threads >= 1, --eval-every >= 1, --eval-rows >= 0")
    if a.max_steps is not None and not 1 <= a.max_steps <= STEPS_PER_EPOCH:
        p.error(f"--max-steps 1..{STEPS_PER_EPOCH}")
    torch.set_num_threads(a.threads)
    folder = a.out / f"g{a.gamma}"
    folder.mkdir(parents=True, exist_ok=True)
    code = load_authors(a.authors)
    with flush_denormals():  # as reasonlab trains (train_run), and as the replay the docs cite ran
        data_path, init_path = generate_draws(code, a.gamma, a.out)
        with np.load(data_path) as npz:
            arrays = {g: npz[g] for g in GROUPS}
        init = torch.load(init_path, weights_only=True)
        orders = batch_orders(code, arrays, init["torch_rng"], 1 if a.max_steps else a.epochs)
        trainer = build_trainer(a.gamma, a.threads, folder, arrays, init)
        task = AnchorTask(trainer.cfg.task)
        check_labels(task, arrays)
        with authors_batch_order(orders, trainer.cfg.seed):
            if a.max_steps:
                first_steps(trainer, a.max_steps)
                return
            settings = {"gamma": a.gamma, "eval_rows": a.eval_rows, "authors_commit": AUTHORS_COMMIT,
                        "overrides": [f"init.gamma={a.gamma}", *OVERRIDES], "profile": "paper",
                        "reasonlab": reasonlab.__version__, "torch": str(torch.__version__)}
            replay(trainer, Evaluator(task, arrays, a.eval_rows), folder, settings, a.epochs, a.eval_every)


if __name__ == "__main__":
    main()
