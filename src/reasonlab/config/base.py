"""The ground of every config schema: the strict base model and each field's role, declared once.

Layer: config (above ``errors``); imports nothing else of reasonlab.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, GetCoreSchemaHandler
from pydantic_core import core_schema


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # no field means NaN or inf


_PAIR_TEXT = re.compile(r"\(?\s*(\d+)\s*[-,]\s*(\d+)\s*\)?")
HELDOUT = "heldout/"  # the prefix of a held-out pair's evaluation sets: heldout/<pair key>/<train_keys|test_keys>


class Pair(NamedTuple):
    """An ordered anchor pair (a1, a2): one type for every spelling of it.

    Parsed from any accepted spelling (``Pair.parse``): ``4-3`` and ``4,3`` (CLI ``--pair``, the config's
    ``non_inferential`` keys), ``(4,3)``, and ``[4, 3]`` / ``(4, 3)`` (config lists). Printed one way per purpose:
    ``key`` ``4-3`` (evaluation sets, metric and results-column keys), ``caption`` ``(4,3)`` (figures, tables),
    ``config_key`` ``4,3`` (the config's ``non_inferential`` keys). A tuple, so ``Pair(4, 3) == (4, 3)`` and a config
    serializes it as before (a list in YAML and in the run id's hash).
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
        """In a config: a two-item list as before, or a ``4-3`` / ``4,3`` string; dumped as a plain tuple (a list
        in JSON and YAML), so configs and run ids are unchanged."""
        ints = core_schema.tuple_schema([core_schema.int_schema(), core_schema.int_schema()])
        return core_schema.no_info_before_validator_function(
            lambda v: cls.parse(v) if isinstance(v, str) else v,
            core_schema.no_info_after_validator_function(lambda t: cls(*t), ints),
            serialization=core_schema.plain_serializer_function_ser_schema(tuple))

class TaskSize(NamedTuple):
    """What a task puts in memory, for the up-front memory check (``RunConfig``), each with the dotted field that
    sets it: the vocabulary (embedding and head rows), the sequence length, and the sequences held at once
    (training and evaluation sets). A task config offers it as ``size()``; one that does not is checked on its
    model alone."""

    vocab: int
    vocab_field: str
    seq_len: int
    seq_field: str
    sequences: int
    data_field: str
    epoch_steps: int = 0  # batches per epoch of a task that draws them per step; 0: an epoch is one pass


# A field's roles, declared once on the field; every list of fields is derived from them (``fields_with``).
# execution: how a run executes, not what it computes: not in the run id, not a "change" of its profile, free to
#            differ inside a phase-diagram cell (threads, checkpoint cadence, the profile's label; not the device,
#            whose kernels compute different numbers); member: may differ between the members of a stacked
#            ensemble (they share everything else).
Role = Literal["execution", "member"]


def roles(*names: Role) -> dict[str, Any]:
    return {"json_schema_extra": {"roles": list(names)}}


def role_fields(role: Role, model: type[BaseModel], prefix: str = "") -> frozenset[str]:
    """The dotted names of the fields of ``model`` that declare ``role``; a section that declares it covers all
    its fields."""
    out: set[str] = set()
    for name, info in model.model_fields.items():
        if role in ((info.json_schema_extra or {}).get("roles", []) if isinstance(info.json_schema_extra, dict)
                    else []):
            out.add(prefix + name)
        elif isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            out |= role_fields(role, info.annotation, f"{prefix}{name}.")
    return frozenset(out)


def nested_fields(dotted: frozenset[str]) -> dict[str, Any]:
    """Dotted names as a pydantic ``exclude`` (or ``include``) mapping."""
    out: dict[str, Any] = {}
    for name in dotted:
        section, _, field = name.partition(".")
        if field:
            out.setdefault(section, set()).add(field)
        else:
            out[section] = True
    return out

