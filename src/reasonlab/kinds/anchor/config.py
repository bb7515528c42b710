"""The anchor-composition task's ``task:`` section (spec §2) and its one type for an anchor pair (``Pair``), with
the prefix of its held-out pairs' evaluation sets (``HELDOUT``): the kind's own vocabulary, which no generic module
knows.

Layer: config (by its file name); imports only ``config.base``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

from pydantic import Field, GetCoreSchemaHandler, field_validator, model_validator
from pydantic_core import core_schema

from reasonlab.config.base import StrictModel, TaskSize

_PAIR_TEXT = re.compile(r"\(?\s*(\d+)\s*[-,]\s*(\d+)\s*\)?")
HELDOUT = "heldout/"  # the prefix of a held-out pair's evaluation sets: heldout/<pair key>/<train_keys|test_keys>


class Pair(NamedTuple):
    """An ordered anchor pair (a1, a2): one type for every spelling of it.

    Parsed from any accepted spelling (``Pair.parse``): ``4-3`` and ``4,3`` (CLI ``--pair``, the config's
    ``non_inferential`` keys), ``(4,3)``, and ``[4, 3]`` / ``(4, 3)`` (config lists). Printed one way per purpose:
    ``key`` ``4-3`` (evaluation sets, metric and results-column keys), ``caption`` ``(4,3)`` (figures, tables),
    ``config_key`` ``4,3`` (the config's ``non_inferential`` keys). A tuple, so ``Pair(4, 3) == (4, 3)`` and a config
    serializes it as a two-item list (in YAML and in the run id's hash).
    """

    first: int
    second: int

    @classmethod
    def parse(cls, value: str | Sequence[int]) -> Pair:
        """A pair from ``4-3``, ``4,3``, ``(4,3)`` or a two-item sequence of integers; ValueError otherwise."""
        if isinstance(value, str):
            match = _PAIR_TEXT.fullmatch(value.strip())
            if match is None:
                raise ValueError(f"{value!r} is not a pair of anchors a1-a2 (e.g. 4-3; 4,3 also works)")
            return cls(int(match[1]), int(match[2]))
        if len(value) != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise ValueError(f"{value!r} is not a pair of anchors [a1, a2]")
        return cls(*value)

    @classmethod
    def of_eval_set(cls, name: str) -> tuple[Pair, str] | None:
        """``heldout/4-3/train_keys`` -> (Pair(4, 3), ``train_keys``); None for any other set's name."""
        parts = name.split("/")
        if len(parts) != 3 or parts[0] + "/" != HELDOUT:
            return None
        try:
            return cls.parse(parts[1]), parts[2]
        except ValueError:
            return None

    @property
    def key(self) -> str:
        return f"{self.first}-{self.second}"

    @property
    def caption(self) -> str:
        return f"({self.first},{self.second})"

    @property
    def config_key(self) -> str:
        return f"{self.first},{self.second}"

    @property
    def mirror(self) -> Pair:
        return Pair(self.second, self.first)

    def eval_set(self, keys: str = "train_keys") -> str:
        """The name of this held-out pair's evaluation set on ``train_keys`` or ``test_keys``."""
        return f"{HELDOUT}{self.key}/{keys}"

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> core_schema.CoreSchema:
        """In a config: a two-item list, or a ``4-3`` / ``4,3`` string; dumped as a plain tuple (a list
        in JSON and YAML), so configs and run ids are unchanged."""
        ints = core_schema.tuple_schema([core_schema.int_schema(), core_schema.int_schema()])
        return core_schema.no_info_before_validator_function(
            lambda v: cls.parse(v) if isinstance(v, str) else v,
            core_schema.no_info_after_validator_function(lambda t: cls(*t), ints),
            serialization=core_schema.plain_serializer_function_ser_schema(tuple))


class AnchorTaskConfig(StrictModel):
    """The anchor-composition task (spec §2); paper values are the defaults."""

    kind: Literal["anchor"] = Field("anchor", description="the task kind: anchor-function composition, a key x "
                                    "followed by two anchors (a1, a2) whose label is g(g(x; a1); a2)")
    anchors: list[int] = Field([1, 2, 3, 4], description="the anchor tokens, each an operation g(x; a) on the key: "
                               "distinct, ≥ 1 (0 is the pad) and outside item_min..item_max")
    shifts: dict[int, int] = Field({1: 5, 2: 1, 3: -2, 4: -8}, description="anchor -> its additive shift, g(x; a) "
                                   "= x + shift; a pair's composite is x + shift[a1] + shift[a2] (one per anchor)")
    single_maps: dict[int, dict[int, int]] | None = Field(
        None, description="per-anchor lookup x -> g(x; a); replaces shifts for non-additive anchors"
    )
    held_out_pairs: list[Pair] = Field([Pair(4, 3)], description="ordered anchor pairs never trained: on them a "
                                       "run shows whether it composes (inferential target) or copies its mirror "
                                       "pair's answer (symmetric target)")
    non_inferential: dict[str, int] = Field(
        {"3,4": -6}, description="'a1,a2' -> fixed offset y = x + offset replacing the composite"
    )
    complexity_k: int = Field(
        0, ge=0, description="give the first k unordered pairs of complexity_pairs symmetric non-inferential targets"
    )
    complexity_pairs: list[Pair] = Field(
        [Pair(1, 2), Pair(1, 3), Pair(1, 4), Pair(2, 3), Pair(2, 4), Pair(3, 4)], description="the unordered pairs, "
        "in order, whose first complexity_k get a fixed non-inferential target (the inferential-complexity "
        "experiment)")
    complexity_offsets: list[int] = Field([4, 1, -5, 5, -9, -6], description="the target offset of each of "
                                          "complexity_pairs, y = x + offset in both orders (one per pair)")
    item_min: int = Field(20, description="the smallest key and noise token (the items are item_min..item_max "
                          "inclusive)")
    item_max: int = Field(99, description="the largest key and noise token; below vocab_size")
    seq_len: int = Field(9, ge=3, description="input tokens per sequence: key, a1, a2 at some position among "
                         "noise items; the label is predicted at the last position")
    key_positions: list[int] | None = Field(None, description="default 0..seq_len-3")
    split_modulus: int | None = Field(None, ge=0, description="default seq_len-2 (paper text); 0 disables the split")
    split: bool = Field(True, description="split keys by residue: a train-key sequence has key mod m ≠ its key "
                        "position mod m (m = split_modulus), a test-key one equality, so generalization to unseen "
                        "(key, position) is measured; false: every key at every position in both")
    n_train_per_pair: int = Field(50_625, ge=1, description="train-key sequences per ordered pair (the paper's "
                                  "50,625): the training set of each trained pair, an evaluation set of each "
                                  "held-out one")
    n_test_per_pair: int = Field(5_625, ge=1, description="test-key sequences per ordered pair, never trained: "
                                 "their accuracy on the trained pairs decides fitted (thresholds.fit)")
    vocab_size: int = Field(201, ge=2, description="tokens 0..vocab_size-1 (0 the pad, never drawn): above every "
                            "anchor, item and target; the embedding's and head's rows")

    @field_validator("non_inferential", mode="before")
    @classmethod
    def _pair_keys(cls, v: Any) -> Any:
        if isinstance(v, dict):
            return {_config_key(k): o for k, o in v.items()}
        return v

    @model_validator(mode="after")
    def _check(self) -> AnchorTaskConfig:
        anchors = set(self.anchors)
        if len(anchors) != len(self.anchors) or not anchors:
            raise ValueError("anchors: must be a non-empty list of distinct tokens")
        if min(anchors) < 1:
            raise ValueError("anchors: tokens must be >= 1 (0 is the pad token)")
        if max(anchors) >= self.vocab_size or self.item_max >= self.vocab_size:
            raise ValueError(f"vocab_size: {self.vocab_size} must exceed every anchor and item token "
                             f"(up to {max(max(anchors), self.item_max)}); raise it")
        if self.item_min > self.item_max or self.item_min < 1:
            raise ValueError("item_min: must be >= 1 and <= item_max")
        if anchors & set(range(self.item_min, self.item_max + 1)):
            raise ValueError("anchors: must be disjoint from item_min..item_max")
        if self.single_maps is None and set(self.shifts) != anchors:
            raise ValueError("shifts: give one shift per anchor (or set single_maps)")
        if self.single_maps is not None and set(self.single_maps) != anchors:
            raise ValueError("single_maps: give one map per anchor")
        named = {"held_out_pairs": self.held_out_pairs, "complexity_pairs": self.complexity_pairs[: self.complexity_k],
                 "non_inferential": [_non_inferential_pair(k) for k in self.non_inferential]}
        for field, pairs in named.items():
            for p in pairs:
                if p[0] not in anchors or p[1] not in anchors:
                    raise ValueError(f"{field}: pair {tuple(p)} is not an ordered pair of anchors {sorted(anchors)}")
        if len(self.complexity_offsets) != len(self.complexity_pairs):
            raise ValueError("complexity_offsets: needs one offset per complexity pair")
        if self.complexity_k > len(self.complexity_pairs):
            raise ValueError(f"complexity_k: must be <= {len(self.complexity_pairs)}")
        if any(p < 0 or p + 2 > self.seq_len - 1 for p in self.key_positions or []):  # the default ones fit
            raise ValueError(f"key_positions: must lie in 0..{self.seq_len - 3} so that both anchors fit")
        if self.single_maps is None:  # every target x + offset must be a token (lookups are checked when built)
            offsets = [self.shifts[a] + self.shifts[b] for a in anchors for b in anchors]
            offsets += list(self.non_inferential.values()) + self.complexity_offsets[: self.complexity_k]
            lo, hi = self.item_min + min(offsets), self.item_max + max(offsets)
            if lo < 1 or hi > self.vocab_size - 1:
                raise ValueError(f"vocab_size: targets span {lo}..{hi}, outside the tokens 1..{self.vocab_size - 1}; "
                                 "change the item range, the shifts or vocab_size")
        return self

    def positions(self) -> list[int]:
        return list(self.key_positions) if self.key_positions is not None else list(range(self.seq_len - 2))

    def size(self) -> TaskSize:
        pairs = len(self.anchors) ** 2
        return TaskSize(self.vocab_size, "task.vocab_size", self.seq_len, "task.seq_len",
                        pairs * (self.n_train_per_pair + self.n_test_per_pair), "task.n_train_per_pair")

    def modulus(self) -> int:
        return self.split_modulus if self.split_modulus is not None else self.seq_len - 2


def _config_key(key: Any) -> str:
    """A ``non_inferential`` key in its one config spelling ``a1,a2`` (from ``4,3``, ``4-3``, ``(4,3)`` or a tuple);
    a key that is no pair is kept as given, for ``_check`` to name."""
    try:
        return Pair.parse(key if isinstance(key, str) else tuple(int(x) for x in key)).config_key
    except (TypeError, ValueError):
        return str(key)


def _non_inferential_pair(key: str) -> Pair:
    try:
        return Pair.parse(key)
    except ValueError:
        raise ValueError(f"non_inferential key {key!r} must look like 'a1,a2'") from None
