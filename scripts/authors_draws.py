"""The anchor study authors' seed-1 realization, made again with their own code (for replay_authors_draws.py).

Their data (``get_data`` after their ``setup_seed(1)``), their initial weights (``myGPT_specific`` at ``std_rate``
γ) with the global torch RNG state right after them, the row order of each of their epochs (replayed from that
state as their DataLoaders draw from it) and their parameter names in reasonlab's Transformer. Only their
``data.py``, ``model.py`` and ``utils/seed.py`` are loaded, by path, after checking their git blob ids.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

import numpy as np
import torch
from torch import Tensor

from reasonlab.files import atomic_write_bytes, write_npz

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
DATA_FILE = "authors_data_seed1.npz"


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


def their_draw(code: SimpleNamespace, gamma: str, seed: int) -> tuple[dict[str, np.ndarray], dict, Tensor]:
    """Their data and initial weights at ``seed``, made by their code in their order (``setup_seed``, ``get_data``,
    ``myGPT_specific``), with the global torch RNG state right after the model's construction (where their
    ``train`` goes on to draw its DataLoader seeds)."""
    args = SimpleNamespace(**AUTHORS_ARGS, data_mode=GROUPS, data_name=GROUPS, std_rate=float(gamma))
    code.seed.setup_seed(seed)
    with contextlib.redirect_stdout(io.StringIO()):  # get_data prints every group
        datas = code.data.get_data(args)
    model = code.model.myGPT_specific(args, torch.device("cpu"))
    rng = torch.get_rng_state()
    return {k: np.asarray(v, dtype=np.int64) for k, v in datas.items()}, model.state_dict(), rng


def save_init(path: Path, state: dict, rng: Tensor) -> None:
    buf = io.BytesIO()
    torch.save({"state": state, "torch_rng": rng}, buf)
    atomic_write_bytes(path, buf.getvalue())


def generate_draws(code: SimpleNamespace, gamma: str, out: Path) -> tuple[Path, Path]:
    """Stage 1: their seed-1 data and initial weights (``their_draw``). Cached: files already in ``out`` are
    reused."""
    data_path, init_path = out / DATA_FILE, out / f"authors_init_g{gamma}.pt"
    if data_path.is_file() and init_path.is_file():
        return data_path, init_path
    arrays, state, rng = their_draw(code, gamma, SEED)
    if data_path.is_file():  # made with another γ: the data do not depend on it
        with np.load(data_path) as old:
            if set(old.files) != set(arrays) or any(not np.array_equal(old[k], v) for k, v in arrays.items()):
                sys.exit(f"{data_path}: differs from the data just generated; remove it or use another --out")
        made = f"{init_path.name} (their data, already in {out}, generated again and equal)"
    else:
        made = f"{data_path.name} and {init_path.name}"
        write_npz(data_path, arrays)
    save_init(init_path, state, rng)
    print(f"stage 1: wrote {made} with the authors' code", flush=True)
    return data_path, init_path


def authors_init_at(code: SimpleNamespace, gamma: str, seed: int, out: Path) -> Path:
    """Their initial weights at another seed (``their_draw``; its data are not kept), for telling one draw's luck
    from the law of their init. Cached."""
    path = out / f"authors_init_g{gamma}_seed{seed}.pt"
    if not path.is_file():
        _, state, rng = their_draw(code, gamma, seed)
        save_init(path, state, rng)
        print(f"stage 1: wrote {path.name} with the authors' code", flush=True)
    return path


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
