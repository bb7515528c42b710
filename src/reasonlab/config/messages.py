"""One-line messages of a failed validation: its first error, naming the dotted field, with what an unknown field
most likely meant.

Layer: config; imports the ``registry`` alone, so that the schema itself (``RunConfig``) and the readers of
configs, profiles and sweep files (``config.io``, ``sweep.grid``) word every validation the same way.
"""

from __future__ import annotations

import difflib
import typing
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from reasonlab import registry


def _unions() -> dict[str, set[str]]:
    """The tagged sections and their members' tags (a member's tag is dropped from an error's location)."""
    return {"task": set(registry.task_kinds()), "model": set(registry.model_kinds())}


def validation_message(err: ValidationError, schema: type[BaseModel]) -> str:
    """The first error of a validation as one line naming the field (``schema``: the model validated)."""
    e = err.errors()[0]
    unions = _unions()
    parts = [str(x) for x in e["loc"] if not str(x).startswith("function-")]
    if len(parts) > 1 and parts[0] in unions and parts[1] in unions[parts[0]]:
        del parts[1]  # the union member's tag: "task.mixture.q" is the field task.q
    loc = ".".join(parts) or "config"
    msg = e["msg"].removeprefix("Value error, ")
    field, sep, rest = msg.partition(": ")
    if sep and all(p.isidentifier() for p in field.split(".")):  # a check names its own field: task.seq_len: ...
        loc, msg = f"{loc}.{field}" if loc != "config" else field, rest
    if e["type"] == "union_tag_invalid":
        ctx = e.get("ctx", {})
        return f"{loc}.kind: {ctx.get('tag')!r} is unknown; choose one of {ctx.get('expected_tags')}"
    if e["type"] == "extra_forbidden":
        return f"{loc}: unknown field ({_field_hint(str(e['loc'][-1]), loc, _sibling_fields(e['loc'], schema))})"
    return f"{loc}: {msg}"


# Where every field of a run config is described (its default, meaning and role), named by an unknown field's hint.
FIELDS_PAGE = "docs/config.md"
_MEANING_CHARS = 80  # a field's meaning, as an unknown field's hint quotes it


def _field_hint(name: str, loc: str, siblings: dict[str, FieldInfo]) -> str:
    """What an unknown field most likely meant, among the fields beside it: the one spelt closest (``gama``: did you
    mean init.gamma?); or, for a name that is a word of other fields (``lr``), those fields with their meanings
    (``train.lr_multiplier (peak lr = multiplier x base_lr)``), since the name is a habit of other tools rather than
    a slip; else every field beside it. The last two name the page that describes every field."""
    section = loc.rsplit(".", 1)[0] + "." if "." in loc else ""
    if words := word_matches(name, siblings):
        said = [f"{section}{w}" + (f" ({_meaning(siblings[w])})" if siblings[w].description else "") for w in words]
        listed = f"{', '.join(said[:-1])} or {said[-1]}" if len(said) > 1 else said[0]
        return f"did you mean {listed}? every field: {FIELDS_PAGE}"
    if close := difflib.get_close_matches(name, list(siblings), n=1):
        return f"did you mean {section}{close[0]}?"
    where = f"the fields of {section.rstrip('.')}" if section else "the fields of a run config"
    return f"check the spelling; {where}: {', '.join(siblings)}; every field: {FIELDS_PAGE}"


def _meaning(info: FieldInfo) -> str:
    """A field's meaning in a few words: its description up to any aside in parentheses, at most a short line."""
    text = " ".join(str(info.description).split(" (", 1)[0].split())
    return text if len(text) <= _MEANING_CHARS else text[:_MEANING_CHARS].rsplit(" ", 1)[0] + " …"


def word_matches(name: str, choices: typing.Iterable[str]) -> list[str]:
    """The choices that hold ``name`` as one of the words of their last dotted part (``lr``: ``train.base_lr``,
    ``train.lr_multiplier``; ``gamma``: ``init.gamma``), those named exactly first; at most three. A name used in
    other tools for what a few of reasonlab's fields say between them."""
    last = {c: c.rsplit(".", 1)[-1] for c in choices}
    return sorted((c for c in last if name in last[c].split("_")), key=lambda c: last[c] != name)[:3]


def _sibling_fields(loc: tuple, schema: type[BaseModel]) -> dict[str, FieldInfo]:
    """The fields beside the last element of a validation error's location (for did-you-mean), by name."""
    model: Any = schema
    for part in loc[:-1]:
        if isinstance(model, type) and issubclass(model, BaseModel) and part in model.model_fields:
            annotation = model.model_fields[part].annotation
            kinds = {"task": registry.task_kinds, "model": registry.model_kinds}
            members = ([k.config for k in kinds[part]().values()] if part in kinds and model is schema
                       else [a for a in typing.get_args(annotation) if isinstance(a, type)] or [annotation])
            model = members[0] if len(members) == 1 else {m.model_fields["kind"].default: m for m in members
                                                          if issubclass(m, BaseModel) and "kind" in m.model_fields}
        elif isinstance(model, dict):  # a union: the location names the member by its kind
            model = model.get(part)
        else:
            return {}
    return dict(model.model_fields) if isinstance(model, type) and issubclass(model, BaseModel) else {}
