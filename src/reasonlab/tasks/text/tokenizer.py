"""A word-level tokenizer trained locally (reasoning-bias spec §4, choice 10).

Tokens are words and single punctuation marks, each with the space before it if there is one, and runs of other
whitespace (newlines), so that decoding is the exact inverse of encoding for any text whose tokens are known.
Why not a BPE: the training text is about 2 MiB, so a small vocabulary keeps every embedding row trained, and whole
words keep the PrOntoQA-only and TinyStories-only token sets well defined (a BPE would split the fictional
concept names into shared pieces such as "umpus"). Deterministic, no dependency; saved as JSON with the run.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable

PATTERN = re.compile(r" ?\w+| ?[^\w\s]|\s+")
SPECIALS = ("<pad>", "<unk>", "<bos>", "<eos>")


def pieces(text: str) -> list[str]:
    return PATTERN.findall(text)


class WordTokenizer:
    def __init__(self, vocab: list[str]):
        if tuple(vocab[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(f"a vocabulary starts with the specials {SPECIALS}")
        self.vocab = list(vocab)
        self.ids = {t: i for i, t in enumerate(self.vocab)}
        self.pad, self.unk, self.bos, self.eos = range(len(SPECIALS))

    @classmethod
    def fit(cls, texts: Iterable[str], min_freq: int = 2) -> WordTokenizer:
        """Every piece seen at least ``min_freq`` times, most frequent first (ties alphabetical): deterministic."""
        counts = Counter(p for t in texts for p in pieces(t))
        kept = sorted((p for p, c in counts.items() if c >= min_freq), key=lambda p: (-counts[p], p))
        return cls([*SPECIALS, *kept])

    def __len__(self) -> int:
        return len(self.vocab)

    def encode(self, text: str, bos: bool = False, eos: bool = False) -> list[int]:
        ids = [self.ids.get(p, self.unk) for p in pieces(text)]
        return [self.bos] * bos + ids + [self.eos] * eos

    def decode(self, ids: Iterable[int]) -> str:
        return "".join(self.vocab[i] for i in ids if i >= len(SPECIALS) or i == self.unk)

    def to_json(self) -> str:
        return json.dumps({"kind": "word", "vocab": self.vocab})

    @classmethod
    def from_json(cls, text: str) -> WordTokenizer:
        data = json.loads(text)
        if data.get("kind") != "word" or not isinstance(data.get("vocab"), list):
            raise ValueError("not a reasonlab word tokenizer (expected kind 'word' and a vocab list)")
        return cls(data["vocab"])
