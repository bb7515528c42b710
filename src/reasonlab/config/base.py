"""The ground of every config schema: the strict base model and each field's role, declared once.

Layer: config (above ``errors``); imports nothing else of reasonlab.
"""

from __future__ import annotations

import types
import typing
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

SEED_LIMIT = 2**63  # every seed is below it: torch's generators take 64 bits, the command line's --seed stops there
Seed = Annotated[int, Field(ge=0, lt=SEED_LIMIT)]  # a config's seed field: a whole number from 0 below SEED_LIMIT


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # no field means NaN or inf

    @field_validator("*", mode="before")
    @classmethod
    def _plain_value(cls, value: Any, info: ValidationInfo) -> Any:
        """true / false (YAML's yes / no too) where a number is asked is a mistake, not 1 / 0 as pydantic would read
        it: ``--set seed=true`` must not train seed 1. A string that is no Unicode text is refused here too, before
        anything trains."""
        field = cls.model_fields.get(info.field_name or "")
        if isinstance(value, bool) and field is not None and not _admits_bool(field.annotation):
            raise ValueError("true or false where a number (or a name) is asked; give its value")
        where = _surrogate(value)
        if where is not None:
            raise ValueError(f"{where + ': ' if where else ''}a lone surrogate (such as \\udcff) is no Unicode text: "
                             "no config.yaml, summary or report could hold it; give text")
        return value


def _surrogate(value: Any, where: str = "") -> str | None:
    """Where in ``value`` (a dotted path inside it, "" for the value itself) a string holds a lone surrogate, which
    no file can hold (a YAML or JSON escape can spell one); None when every string (a list's, a mapping's keys and
    values) is Unicode text. A section's fields are located as deep as they are named."""
    if isinstance(value, str):
        return where if any("\ud800" <= c <= "\udfff" for c in value) else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list | tuple) else ()
    for key, item in items:
        named = isinstance(key, str) and key.isidentifier()
        inner = f"{where}.{key}" if where and named else key if named else where
        if isinstance(key, str) and _surrogate(key) is not None:
            return where
        found = _surrogate(item, inner)
        if found is not None:
            return found
    return None


def _admits_bool(annotation: Any) -> bool:
    """Whether a field of this type takes true / false: bool itself, Any, a Literal of them, or a union with one."""
    if annotation is bool or annotation is Any:
        return True
    args = typing.get_args(annotation)
    if typing.get_origin(annotation) is Literal:
        return any(isinstance(a, bool) for a in args)
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) or typing.get_origin(annotation) is \
            typing.Annotated:
        return any(_admits_bool(a) for a in args)
    return False


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
#            ensemble (they share everything else); late: added after runs were stored, so it enters the run id
#            only when set away from its default (the default keeps the earlier behaviour, and the runs of an
#            existing store keep their ids).
Role = Literal["execution", "member", "late"]


def roles(*names: Role) -> dict[str, Any]:
    return {"json_schema_extra": {"roles": list(names)}}


def field_roles(info: Any) -> list[str]:
    """The roles one field (a pydantic ``FieldInfo``) declares."""
    extra = info.json_schema_extra
    return extra.get("roles", []) if isinstance(extra, dict) else []


def role_fields(role: Role, model: type[BaseModel], prefix: str = "") -> frozenset[str]:
    """The dotted names of the fields of ``model`` that declare ``role``; a section that declares it covers all
    its fields."""
    out: set[str] = set()
    for name, info in model.model_fields.items():
        if role in field_roles(info):
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

