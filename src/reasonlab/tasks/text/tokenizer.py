"""The text mixture's tokenizers (reasoning-bias spec §4, choice 10): a word-level one trained locally (default),
and the shared machinery of a tokenizer over a fixed vocabulary of pieces (``PieceTokenizer``), which the GPT-2
BPE of ``bpe.py`` reuses.

Word tokens are words and single punctuation marks, each with the space before it if there is one, and runs of
other whitespace (newlines), so that decoding is the exact inverse of encoding for any text whose tokens are known.
Why words by default: the training text is about 2 MiB, so a small vocabulary keeps every embedding row trained,
and whole words keep the PrOntoQA-only and TinyStories-only token sets well defined (a BPE splits the fictional
concept names into pieces such as "umpus"). Deterministic, no dependency; saved as JSON with the run.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from typing import ClassVar

PATTERN = re.compile(r" ?\w+| ?[^\w\s]|\s+")
SPECIALS = ("<pad>", "<unk>", "<bos>", "<eos>")


def pieces(text: str) -> list[str]:
    return PATTERN.findall(text)


class PieceTokenizer:
    """A vocabulary of pieces after the specials (``<pad>`` = 0, ``<unk>``, ``<bos>``, ``<eos>``), fitted as every
    piece seen at least ``min_freq`` times in the training text; a subclass says how text splits into pieces and
    how pieces join back (``split``, ``join``) and names its ``kind`` (saved with the vocabulary)."""

    kind: ClassVar[str]

    def __init__(self, vocab: list[str]):
        if tuple(vocab[: len(SPECIALS)]) != SPECIALS:
            raise ValueError(f"a vocabulary starts with the specials {SPECIALS}")
        self.vocab = list(vocab)
        self.ids = {t: i for i, t in enumerate(self.vocab)}
        self.pad, self.unk, self.bos, self.eos = range(len(SPECIALS))

    @staticmethod
    def split(text: str) -> list[str]:
        raise NotImplementedError

    def join(self, parts: list[str]) -> str:
        return "".join(parts)

    @classmethod
    def fit(cls, texts: Iterable[str], min_freq: int = 2) -> PieceTokenizer:
        """Every piece seen at least ``min_freq`` times, most frequent first (ties alphabetical): deterministic."""
        counts = Counter(p for t in texts for p in cls.split(t))
        kept = sorted((p for p, c in counts.items() if c >= min_freq), key=lambda p: (-counts[p], p))
        return cls([*SPECIALS, *kept])

    def __len__(self) -> int:
        return len(self.vocab)

    def encode(self, text: str, bos: bool = False, eos: bool = False) -> list[int]:
        ids = [self.ids.get(p, self.unk) for p in self.split(text)]
        return [self.bos] * bos + ids + [self.eos] * eos

    def decode(self, ids: Iterable[int]) -> str:
        return self.join([self.vocab[i] for i in ids if i >= len(SPECIALS) or i == self.unk])

    def to_json(self) -> str:
        return json.dumps({"kind": self.kind, "vocab": self.vocab})

    @classmethod
    def from_json(cls, text: str) -> PieceTokenizer:
        data = json.loads(text)
        if data.get("kind") != cls.kind or not isinstance(data.get("vocab"), list):
            raise ValueError(f"not a reasonlab {cls.kind} tokenizer (expected kind {cls.kind!r} and a vocab list)")
        return cls(data["vocab"])


class WordTokenizer(PieceTokenizer):
    kind = "word"
    split = staticmethod(pieces)
