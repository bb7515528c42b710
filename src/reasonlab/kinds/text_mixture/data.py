"""PrOntoQA + TinyStories as one next-token corpus (reasoning-bias spec §4): per-source train and eval sets."""

from __future__ import annotations

import json
import random
from collections import Counter

import torch
from torch import Tensor

from reasonlab.config import ConfigError
from reasonlab.kinds.text_mixture.config import TextMixtureTaskConfig
from reasonlab.seeds import subseed
from reasonlab.tasks.base import IGNORE, EvalSet, TaskData
from reasonlab.tasks.text import prontoqa
from reasonlab.tasks.text.bpe import BPETokenizer
from reasonlab.tasks.text.tinystories import load_stories
from reasonlab.tasks.text.tokenizer import SPECIALS, PieceTokenizer, WordTokenizer

SOURCES = ("prontoqa", "tinystories")
TOKENIZERS: dict[str, type[PieceTokenizer]] = {t.kind: t for t in (WordTokenizer, BPETokenizer)}


def load_tokenizer(text: str) -> PieceTokenizer:
    """A run's saved ``tokenizer.json``, of either kind."""
    kind = json.loads(text).get("kind")
    if kind not in TOKENIZERS:
        raise ValueError(f"not a reasonlab tokenizer (kind {kind!r}; expected one of {', '.join(TOKENIZERS)})")
    return TOKENIZERS[kind].from_json(text)


def exclusive_tokens(tok: PieceTokenizer, prontoqa: list[str], tinystories: list[str], min_count: int = 20,
                     ts_top: int = 200) -> tuple[list[int], list[int]]:
    """(PrOntoQA-only ids, TinyStories-only ids): tokens with ≥ ``min_count`` uses in one source's training text
    and none in the other's; the TinyStories set capped at its ``ts_top`` most frequent (spec §4, choice 14)."""
    def counts(docs: list[str]) -> Counter:
        return Counter(i for d in docs for i in tok.encode(d) if i >= len(SPECIALS))

    pq, ts = counts(prontoqa), counts(tinystories)
    pq_only = sorted(i for i, c in pq.items() if c >= min_count and ts[i] == 0)
    ts_only = [i for i, c in ts.most_common() if c >= min_count and pq[i] == 0][:ts_top]
    return pq_only, sorted(ts_only)


class TextMixtureTask:
    def __init__(self, cfg: TextMixtureTaskConfig):
        self.cfg = cfg

    def documents(self, seed: int) -> dict[str, tuple[list[str], list[str]]]:
        """(train, eval) documents per source; stories shuffled from the seed, PrOntoQA generated from it."""
        stories = load_stories()
        n = self.cfg.n_per_source or len(stories)
        if n > len(stories):
            raise ConfigError(f"task.n_per_source: {n} exceeds the {len(stories)} stories of the sample; lower it")
        random.Random(subseed(seed, "stories")).shuffle(stories)
        n_eval = max(1, round(n * self.cfg.eval_fraction))
        ts_train, ts_eval = stories[: n - n_eval], stories[n - n_eval : n]
        pq_train = prontoqa.generate_many(len(ts_train), subseed(seed, "prontoqa-train"), self.cfg.hops)
        seen = {e.render() for e in pq_train}
        pq_eval = prontoqa.generate_many(n_eval, subseed(seed, "prontoqa-eval"), self.cfg.hops, exclude=seen)
        return {"prontoqa": ([e.render() for e in pq_train], [e.render() for e in pq_eval]),
                "tinystories": (ts_train, ts_eval)}

    def _tensors(self, tok: PieceTokenizer, docs: list[str], length: int) -> tuple[Tensor, Tensor]:
        """(inputs, targets) of shape (n, length): bos + tokens + eos, truncated, padded; pad targets are IGNORE."""
        seq = torch.full((len(docs), length + 1), tok.pad, dtype=torch.long)
        for i, d in enumerate(docs):
            ids = tok.encode(d, bos=True, eos=True)[: length + 1]
            seq[i, : len(ids)] = torch.tensor(ids)
        targets = seq[:, 1:].clone()
        targets[targets == tok.pad] = IGNORE
        return seq[:, :-1], targets

    def build(self, seed: int, docs: dict[str, tuple[list[str], list[str]]] | None = None) -> TaskData:
        """The task's tensors; ``docs`` (from ``documents(seed)``) saves generating them again."""
        docs = docs or self.documents(seed)
        tok = TOKENIZERS[self.cfg.tokenizer].fit([d for train, _ in docs.values() for d in train], self.cfg.min_freq)
        longest = max(len(tok.encode(d)) + 1 for split in docs.values() for part in split for d in part)
        length = min(self.cfg.max_len, longest)
        sets, train_x, train_y = {}, [], []
        for source, (train, evals) in docs.items():
            x, y = self._tensors(tok, train, length)
            train_x.append(x)
            train_y.append(y)
            k = min(self.cfg.train_eval_n, len(train))
            sets[f"{source}/train"] = EvalSet(x[:k], {"designated": y[:k]}, scoring="tokens")
            ex, ey = self._tensors(tok, evals, length)
            sets[f"{source}/eval"] = EvalSet(ex, {"designated": ey}, scoring="tokens")
        info = {"vocab_size": len(tok), "seq_len": length,
                "documents": {s: [len(t), len(e)] for s, (t, e) in docs.items()},
                "train_tokens": {s: int((y != IGNORE).sum()) for s, y in zip(SOURCES, train_y, strict=True)},
                # the tokens only one source uses often enough to be learned (their embeddings' cosines: E3)
                "exclusive": dict(zip(SOURCES, exclusive_tokens(tok, docs["prontoqa"][0], docs["tinystories"][0]),
                                      strict=True))}
        return TaskData(len(tok), length, torch.cat(train_x), torch.cat(train_y), sets, info=info,
                        artifacts={"tokenizer.json": tok.to_json()})
