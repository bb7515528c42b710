"""Real benchmarks as decoder-only sequence to sequence (anchor spec §8): SCAN, COGS, addition and PrOntoQA.

Every example is one row ``<bos> source <sep> target <eos>`` (right-padded); the model is trained on the target
tokens (or on every token, ``loss_on: all``) and scored by exact match of its greedy decoding. Each benchmark
supplies a training *pool* and named test sets: ``id`` (same distribution as training) and ``ood`` (the
generalization test); where the benchmark has no i.d. test of its own, ``id`` is the pool rows the nested
training subset left out. Rows carry categories (COGS generalization case, SCAN primitive and output length,
addition carries, PrOntoQA hops) for per-category accuracy.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor

from reasonlab.config import ConfigError
from reasonlab.kinds.seq2seq.config import Seq2SeqTaskConfig
from reasonlab.seeds import subseed
from reasonlab.tasks.base import IGNORE, EvalSet, TaskData
from reasonlab.tasks.text import cogs, prontoqa, scan
from reasonlab.tasks.text.tokenizer import pieces

SPECIALS = ("<pad>", "<bos>", "<sep>", "<eos>")
PAD, BOS, SEP, EOS = range(len(SPECIALS))
ANSWER_PREFIX = (" answer", " is")  # PrOntoQA: the judgement is the token after "... answer is"
LENGTH_BINS = (8, 16, 24, 32, 48)  # SCAN output-length categories: len ≤ bin


@dataclass(frozen=True)
class Pair:
    source: tuple[str, ...]
    target: tuple[str, ...]
    categories: tuple[str, ...] = ()


@dataclass
class Benchmark:
    pool: Sequence[Pair]  # the training pool; a run trains on a nested subset of it
    tests: dict[str, list[Pair]]  # "id" and/or "ood"
    judgement: bool = False  # PrOntoQA: also score the true/false answer read from the decoding
    info: dict = field(default_factory=dict)


# ---- the benchmarks ------------------------------------------------------------------------------------------
def scan_categories(ex: scan.Example) -> tuple[str, ...]:
    """The primitives a command uses (``prim:jump``, ``prim:turn_left`` ...) and its output-length bin."""
    words = ex.command
    prims = [f"prim:{w}" for w in ("walk", "run", "jump", "look") if w in words]
    prims += [f"prim:turn_{d}" for d in ("left", "right") if any(a == "turn" and b == d
                                                                  for a, b in zip(words, words[1:], strict=False))]
    n = len(ex.actions)
    return (*prims, f"out_len:{next((f'≤{b}' for b in LENGTH_BINS if n <= b), f'>{LENGTH_BINS[-1]}')}")


def scan_benchmark(cfg: Seq2SeqTaskConfig) -> Benchmark:
    train, test = scan.load_split(cfg.split)

    def pairs(rows: list[scan.Example]) -> list[Pair]:
        return [Pair(e.command, e.actions, scan_categories(e)) for e in rows]

    return Benchmark(pairs(train), {"id" if cfg.split == "simple" else "ood": pairs(test)},
                     info={"split": cfg.split})


def cogs_benchmark(cfg: Seq2SeqTaskConfig) -> Benchmark:
    """Train on COGS train; ``id`` = its test part, ``ood`` = gen with the 21 categories."""
    def pairs(rows: list[cogs.Example], categorized: bool) -> list[Pair]:
        return [Pair(e.sentence, e.logical_form, (f"cat:{e.category}",) if categorized else ()) for e in rows]

    return Benchmark(pairs(cogs.load("train"), False), {"id": pairs(cogs.load("test"), False),
                                                        "ood": pairs(cogs.load("gen"), True)})


class AdditionPool(Sequence):
    """The (a, b) pairs outside the held-out box, in order, as Pairs built on demand (there are ~10⁶)."""

    def __init__(self, cfg: Seq2SeqTaskConfig):
        self.cfg = cfg
        lo, hi = cfg.held_out
        a, b = torch.meshgrid(torch.arange(cfg.max_operand + 1), torch.arange(cfg.max_operand + 1), indexing="ij")
        inside = (a >= lo) & (a <= hi) & (b >= lo) & (b <= hi)
        self.a, self.b = a[~inside].tolist(), b[~inside].tolist()

    def __len__(self) -> int:
        return len(self.a)

    def __getitem__(self, i):  # noqa: ANN001 - Sequence protocol
        return addition_pair(self.a[i], self.b[i], self.cfg)


def carries(a: int, b: int) -> int:
    n, carry = 0, 0
    while a or b:
        carry = int(a % 10 + b % 10 + carry >= 10)
        n += carry
        a, b = a // 10, b // 10
    return n


def addition_pair(a: int, b: int, cfg: Seq2SeqTaskConfig) -> Pair:
    """Digit tokens, operands zero-padded to the width of ``max_operand``, the sum to one digit more."""
    width = len(str(cfg.max_operand))
    answer = list(str(a + b).zfill(width + 1))
    if cfg.reverse_answer:
        answer.reverse()
    return Pair((*str(a).zfill(width), "+", *str(b).zfill(width)), tuple(answer), (f"carries:{carries(a, b)}",))


def addition_benchmark(cfg: Seq2SeqTaskConfig) -> Benchmark:
    lo, hi = cfg.held_out
    box = [addition_pair(a, b, cfg) for a in range(lo, hi + 1) for b in range(lo, hi + 1)]
    return Benchmark(AdditionPool(cfg), {"ood": box}, info={"held_out": [lo, hi]})


def prontoqa_pair(ex: prontoqa.Example, cot: bool) -> Pair:
    source = f"{' '.join(ex.context)} True or false: {ex.query}"
    target = (f"{' '.join(ex.cot)} " if cot else "") + f"The answer is {ex.answer}."
    return Pair(tuple(pieces(source)), tuple(pieces(target)), (f"hops:{ex.hops}",))


def prontoqa_benchmark(cfg: Seq2SeqTaskConfig) -> Benchmark:
    """The test set is generated first and excluded from training, so it is the same for every training size;
    the training examples are a stream whose first ``n`` items do not depend on how many are drawn (nested)."""
    if cfg.n_train is None:
        raise ConfigError("task.n_train: PrOntoQA examples are generated; set how many to train on")
    test = prontoqa.generate_many(cfg.n_test, subseed(cfg.subset_seed, "prontoqa-test"), cfg.hops)
    train = prontoqa.generate_many(cfg.n_train, subseed(cfg.subset_seed, "prontoqa-train"), cfg.hops,
                                   exclude={e.render() for e in test})
    return Benchmark([prontoqa_pair(e, cfg.cot) for e in train], {"id": [prontoqa_pair(e, cfg.cot) for e in test]},
                     judgement=True)


BENCHMARKS = {"scan": scan_benchmark, "cogs": cogs_benchmark, "addition": addition_benchmark,
              "prontoqa": prontoqa_benchmark}


# ---- subsets and tensors ---------------------------------------------------------------------------------------
def nested_subset(n_pool: int, n: int | None, seed: int) -> tuple[list[int], list[int]]:
    """(chosen, left out): pool indices in the order of one permutation from ``seed``; the first ``n`` are chosen,
    so for one seed every smaller subset lies inside every larger one."""
    if n is not None and n > n_pool:
        raise ConfigError(f"task.n_train: {n} exceeds the {n_pool} rows of the training pool; lower it")
    order = torch.randperm(n_pool, generator=torch.Generator().manual_seed(seed)).tolist()
    n = n_pool if n is None else n
    return order[:n], order[n:]


def limit(pairs: list[Pair], n: int | None, seed: int, per_category: bool = False) -> list[Pair]:
    """At most ``n`` rows (per category when asked), drawn at random and then shuffled, so that any prefix of
    the set (the trainer scores prefixes between final evaluations) mixes the categories."""
    rng = random.Random(seed)
    if per_category:
        groups: dict[str, list[Pair]] = {}
        for p in pairs:
            groups.setdefault(p.categories[0], []).append(p)
        chosen = [q for g in groups.values() for q in (rng.sample(g, n) if n is not None and len(g) > n else g)]
    else:
        chosen = rng.sample(pairs, n) if n is not None and len(pairs) > n else list(pairs)
    rng.shuffle(chosen)
    return chosen


class Seq2SeqTask:
    def __init__(self, cfg: Seq2SeqTaskConfig):
        self.cfg = cfg

    def tensors(self, pairs: list[Pair], ids: dict[str, int], loss_on: str) -> tuple[Tensor, Tensor, Tensor]:
        """(inputs, targets, prompt lengths): rows ``<bos> source <sep> target <eos>`` right-padded, inputs the
        row without its last token, targets the next token where scored and IGNORE elsewhere."""
        rows = [[BOS, *(ids[t] for t in p.source), SEP, *(ids[t] for t in p.target), EOS] for p in pairs]
        width = max(len(r) for r in rows)
        seq = torch.full((len(rows), width), PAD, dtype=torch.long)
        prompt = torch.tensor([len(p.source) + 2 for p in pairs])  # <bos> source <sep>
        for i, r in enumerate(rows):
            seq[i, : len(r)] = torch.tensor(r)
        targets = seq[:, 1:].clone()
        cols = torch.arange(width - 1)
        scored = cols[None, :] >= (prompt[:, None] - 1) if loss_on == "target" else cols[None, :] >= 0
        targets[~scored | (targets == PAD)] = IGNORE
        return seq[:, :-1], targets, prompt

    def build(self, seed: int) -> TaskData:
        """The run seed does not change the data: the subset and the evaluation rows come from ``subset_seed``
        (seeds then differ only in initialization and batch order, as in the study)."""
        cfg = self.cfg
        bench = BENCHMARKS[cfg.benchmark](cfg)
        chosen, left = nested_subset(len(bench.pool), None if cfg.benchmark == "prontoqa" else cfg.n_train,
                                     subseed(cfg.subset_seed, "subset"))
        train = [bench.pool[i] for i in chosen]
        tests = {name: limit(rows, cfg.eval_n, subseed(cfg.subset_seed, f"eval:{name}"),
                             per_category=cfg.benchmark == "cogs" and name == "ood")
                 for name, rows in bench.tests.items()}
        if "id" not in tests and left:
            k = len(left) if cfg.eval_n is None else min(cfg.eval_n, len(left))
            tests["id"] = [bench.pool[i] for i in left[:k]]
        tests["train"] = train[: cfg.eval_n or len(train)]
        vocab = sorted({t for rows in (train, *tests.values()) for p in rows for t in (*p.source, *p.target)})
        clash = set(vocab) & set(SPECIALS)
        if clash:
            raise ConfigError(f"task.benchmark: the data uses a reserved token {sorted(clash)[0]!r}")
        tokens = [*SPECIALS, *vocab]
        ids = {t: i for i, t in enumerate(tokens)}
        x, y, _ = self.tensors(train, ids, cfg.loss_on)
        sets = {name: self.eval_set(rows, ids, bench.judgement) for name, rows in tests.items()}
        seq_len = max(x.shape[1], *(s.inputs.shape[1] for s in sets.values()))
        info = {"benchmark": cfg.benchmark, "vocab_size": len(tokens), "seq_len": seq_len, "n_train": len(train),
                "n_pool": len(bench.pool), "eval_rows": {k: len(v) for k, v in sets.items()}, **bench.info}
        vocab_json = json.dumps({"kind": "seq2seq", "vocab": tokens}, ensure_ascii=False)
        return TaskData(len(tokens), seq_len, x, y, sets, info=info, artifacts={"vocab.json": vocab_json},
                        right_padded=True)

    def eval_set(self, pairs: list[Pair], ids: dict[str, int], judgement: bool) -> EvalSet:
        x, y, prompt = self.tensors(pairs, ids, "target")
        names = sorted({c for p in pairs for c in p.categories})
        categories = {c: torch.tensor([i for i, p in enumerate(pairs) if c in p.categories]) for c in names}
        info = {"prompt_len": prompt, "categories": categories, "eos": EOS}
        if judgement:
            info["answer_prefix"] = [ids[t] for t in ANSWER_PREFIX]
            info["answer"] = torch.tensor([ids[p.target[-2]] for p in pairs])  # "... is True ." → True
        return EvalSet(x, {"designated": y}, scoring="sequences", info=info)

