"""Write the modular-arithmetic reference fixtures: what the reference code (``ICL_Modular_Arithmetic``) computes at
a small config on the CPU in fp32, for ``tests/reference/test_modular_reference.py`` to compare reasonlab with.

    git clone https://github.com/ablghtianyi/ICL_Modular_Arithmetic ref-icl
    git -C ref-icl checkout d520c0cb8dfa0cbde5d8c80eb7448330ded4b7f7
    pip install rotary_embedding_torch schedulefree pandas tqdm
    OMP_NUM_THREADS=1 python scripts/reference/modular_fixtures.py --reference ref-icl

The script runs the reference's own functions in the order its training script (``pre_training/icl_grokking.py``)
calls them: seeds, task vectors (rectangular "parallelogram" construction), o.o.d. tasks, the α split of pairs, its
data loaders, its model, then its training loop (``train_tf_icl``) for 50 steps of a 100-step schedule, recording
every batch it is fed. It writes, into ``--out``:

- ``config.json``: the reference's arguments, the vocabulary, the task lists, the pair split (pair id = x·p + y);
- ``law.json``: the task draw's law — how often each id-task set came out over 20,000 seeds at p 5 with 2 rectangles;
- ``arrays.npz``: initial and trained weights (``init/<name>``, ``trained/<name>``), the 50 training batches, the
  logits of the initial model on two batches, per-step losses and learning rates, the whole schedule, the
  decayed / not-decayed parameter names, evaluation batches and the reference's evaluation of them.

Running it twice writes the same files.
"""

from __future__ import annotations

import copy
import itertools
import json
import random
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from modular_reference import PINNED_COMMIT, REPOSITORY, arguments, fixture_command, start_process_group

CONFIG = dict(p=11, base=11, n_tasks_pl=4, n_tasks_rd=0, n_point_per_row=8, data_pct=80.0, data_seed=0, seed=1,
              n_embd=32, n_head=4, n_layer=2, widen_factor=4, act_name="relu", block_size=64, lr=1e-3, wd=0.5,
              steps=100, warmup_steps=10, bs=32, eval_bs=16, n_val_step=4, steps_per_record=1, fake_epochs=1)
STEPS = 50  # optimizer steps recorded (of the 100-step schedule)
LAW = dict(p=5, n_tasks_pl=2, draws=20_000)  # the task draw's law at a size where its rejection step acts


class Recorded:
    """The first ``n`` batches of a data loader, recorded as they are handed out; then it ends for good."""

    def __init__(self, loader, n: int):
        self.loader, self.n, self.batches = loader, n, []

    def __iter__(self):
        for x, y in itertools.islice(iter(self.loader), self.n):
            self.batches.append((x.clone(), y.clone()))
            yield x, y


def task_lists(ref, args) -> tuple[list, list]:
    """The reference script's task draw: its seeds, then id tasks (rectangles), random extras and o.o.d. tasks."""
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    random.seed(args.seed)
    pl = ref.tasks.generate_all_unique_sublists(args, n_tasks=args.n_tasks_pl)
    pl = ref.tasks.parallelogram_tasks_with_shared_components(pl, args)
    args.n_tasks_pl = len(pl)
    pre = pl + ref.tasks.generate_all_unique_sublists_givenWs(pl, args, n_tasks=args.n_tasks_rd)
    args.n_tasks, args.max_ood_tasks = len(pre), 256
    ood = ref.tasks.get_ood_lists(pre, args)[: args.eval_bs]
    args.n_ood_tasks = len(ood) // 8 * 8
    ood = ood[: args.n_ood_tasks]
    args.ood_bs = len(ood)
    return pre, ood


def law(ref) -> dict:
    """How often each id-task set (sorted) is drawn over ``draws`` seeds at p 5 with 2 rectangles."""
    args = arguments(ref, p=LAW["p"], base=LAW["p"], n_tasks_pl=LAW["n_tasks_pl"])
    counts: Counter = Counter()
    for seed in range(LAW["draws"]):
        random.seed(seed)
        pl = ref.tasks.generate_all_unique_sublists(args, n_tasks=LAW["n_tasks_pl"])
        counts[json.dumps(sorted(map(list, ref.tasks.parallelogram_tasks_with_shared_components(pl, args))))] += 1
    return {**LAW, "counts": dict(sorted(counts.items()))}


def pair_ids(rows: torch.Tensor, p: int) -> list[int]:
    """Pair ids x·p + y of one task's examples (rows of ``x y z``)."""
    return (rows[:, 0] * p + rows[:, 1]).tolist()


def main() -> None:
    opts, ref = fixture_command(__doc__)
    start_process_group()
    args = arguments(ref, **CONFIG)
    pre, ood = task_lists(ref, args)
    train_set, val_set, tokenizer = ref.datasets.prepare_data(args, pre)
    ood_train_set, ood_val_set, _ = ref.datasets.prepare_data(args, ood)
    args.vocab_size, args.max_digits = len(tokenizer), tokenizer.max_digits
    args.dim = args.max_digits * (len(pre[0]) + 1)
    train_set = train_set.view(args.n_tasks, len(train_set) // args.n_tasks, -1)
    val_set = val_set.view(args.n_tasks, len(val_set) // args.n_tasks, -1)
    ood_val_set = ood_val_set.view(args.n_ood_tasks, len(ood_val_set) // args.n_ood_tasks, -1)
    train_iter, sampler = ref.script.get_train_dataloader(train_set, args.bs, args)
    val_iter, _ = ref.script.get_eval_dataloader(val_set, args.eval_bs, args)
    ood_val_iter, _ = ref.script.get_ood_dataloader(ood_val_set, args.ood_bs, args)
    model = ref.models.RoPETransformer(ref.models.RoPEFlashAttention, args)
    arrays: dict[str, np.ndarray] = {f"init/{k}": v.numpy().copy() for k, v in model.state_dict().items()}

    # the schedule over all its steps, and the weight-decay groups, from the reference's own builder
    optimizer, scheduler = ref.scheduler.build_optim_sched(model, args.steps, args.warmup_steps, args)
    lrs = []
    for _ in range(args.steps):
        lrs.append(optimizer.param_groups[0]["lr"])
        scheduler.step()
    names = {id(p): n for n, p in model.named_parameters()}
    no_decay, decay = ([names[id(p)] for p in g["params"]] for g in optimizer.param_groups)

    initial = copy.deepcopy(model)
    batches = Recorded(train_iter, STEPS)
    with tempfile.TemporaryDirectory() as tmp:
        history = ref.train.train_tf_icl(model, model, batches, val_iter, ood_val_iter, ood_val_iter, sampler,
                                         torch.cuda.amp.GradScaler(enabled=False), args, "cpu",
                                         data_prefix=str(Path(tmp) / "run"))
    eval_id = list(itertools.islice(iter(val_iter), args.n_val_step))
    eval_ood = list(itertools.islice(iter(ood_val_iter), args.n_val_step))
    id_scores = ref.train.val_loss_acc_icl(model, eval_id, args, "cpu", n_val_step=args.n_val_step)
    ood_scores = ref.train.ood_loss_acc(model, eval_ood, args, "cpu", n_val_step=args.n_val_step)

    train_x = torch.stack([x[:, :-1] for x, _ in batches.batches])
    train_y = torch.stack([y[:, 1:] for _, y in batches.batches])
    with torch.no_grad():  # the initial model on the first training batch and the first i.d. evaluation batch
        logits, logits_eval = initial(train_x[0]), initial(eval_id[0][0][:, :-1])
        per_token = F.cross_entropy(logits.flatten(0, 1), train_y[0].flatten(), ignore_index=-100,
                                    reduction="none")
    arrays |= {f"trained/{k}": v.numpy().copy() for k, v in model.state_dict().items()}
    arrays |= {"train_x": train_x.numpy().astype(np.int8), "train_y": train_y.numpy().astype(np.int8),
               "losses": np.array([row[1] for row in history], dtype=np.float64),
               "lrs": np.array(lrs, dtype=np.float64), "logits_train": logits.numpy(),
               "logits_eval": logits_eval.numpy(),
               "loss0": np.float64(per_token[per_token > 0].mean().item())}
    for name, batches_, scores in (("id_test", eval_id, id_scores), ("ood_test", eval_ood, ood_scores)):
        arrays[f"eval/{name}/x"] = np.stack([x[:, :-1].numpy() for x, _ in batches_]).astype(np.int8)
        arrays[f"eval/{name}/y"] = np.stack([y[:, 1:].numpy() for _, y in batches_]).astype(np.int8)
        for key, value in zip(("loss", "acc", "last_acc"), scores, strict=True):
            arrays[f"eval/{name}/{key}"] = value
    opts.out.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(opts.out / "arrays.npz", **arrays)
    config = {"repository": REPOSITORY, "commit": PINNED_COMMIT,
              "args": {k: (str(v) if isinstance(v, torch.dtype) else v) for k, v in sorted(vars(args).items())},
              "id_tasks": pre, "ood_tasks": ood, "no_decay": no_decay, "decay": decay,
              "train_pairs": pair_ids(train_set[0], args.p), "test_pairs": pair_ids(val_set[0], args.p)}
    (opts.out / "config.json").write_text(json.dumps(config, indent=1) + "\n")
    (opts.out / "law.json").write_text(json.dumps(law(ref), indent=0) + "\n")
    print(f"wrote {opts.out}: {', '.join(p.name for p in sorted(opts.out.iterdir()))}")


if __name__ == "__main__":
    main()
