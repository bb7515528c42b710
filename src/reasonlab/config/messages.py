"""One-line messages of a failed validation: its first error, naming the dotted field, with what an unknown field
most likely meant.

Layer: config; imports the ``registry`` alone, so that the schema itself (``RunConfig``) and the readers of
configs, profiles and sweep files (``config.io``, ``sweep.grid``) word every validation the same way.
"""

from __future__ import annotations

import difflib
import json
import types
import typing
from typing import Any

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from reasonlab import registry


def _unions() -> dict[str, set[str]]:
    """The tagged sections and their members' tags (a member's tag is dropped from an error's location)."""
    return {"task": set(registry.task_kinds()), "model": set(registry.model_kinds())}


def validation_message(err: ValidationError, schema: type[BaseModel], run: bool = False) -> str:
    """The first error of a validation as one line naming the field (``schema``: the model validated). ``run``: the
    schema is the run config's, whose fields take ``--set`` and ``--grid``, so a value of the wrong form is shown in
    the form it takes."""
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
        hint = _field_hint(str(e["loc"][-1]), loc, _sibling_fields(e["loc"], schema), lambda: _every_field(schema))
        return f"{loc}: unknown field ({hint})"
    return f"{loc}: {msg}{_form_hint(e, loc, schema) if run else ''}"


# Errors of a field that takes one value (a number, a word, a choice): given a list, it was meant as a sweep's axis.
_ONE_VALUE = {"float_type", "float_parsing", "int_type", "int_parsing", "int_from_float", "bool_type", "bool_parsing",
              "string_type", "literal_error", "enum"}


_HINT_CHARS = 60  # the value a form hint repeats, at most (an override may be 10,000 characters)


def _spelt(*values: Any) -> str:
    """Values as an override spells them, joined by commas (``0.3,0.8``; ``true``, ``tensorboard``, ``[4,3]``), cut
    short past ``_HINT_CHARS``."""
    text = ",".join(json.dumps(v, separators=(",", ":"), default=str) if isinstance(v, list | dict | bool | int | float)
                    or v is None else str(v) for v in values)
    return text if len(text) <= _HINT_CHARS else text[:_HINT_CHARS] + "…"


def _form_hint(e: Any, loc: str, schema: type[BaseModel]) -> str:
    """How to write a value given in the wrong form: a list for a field of one value is a sweep's axis (``--grid
    init.gamma=0.3,0.8``); one value for a list field goes in brackets (``train.loggers=[tensorboard]``)."""
    value = e.get("input")
    if not e["loc"] or not isinstance(e["loc"][-1], str):  # an item of a list (task.anchors.0) has no override
        return ""
    if e["type"] in _ONE_VALUE and isinstance(value, list) and value:
        return f"; a run takes one value; to train one run per value, sweep them: --grid {loc}={_spelt(*value)}"
    if isinstance(value, list | dict | tuple) or value is None:
        return ""
    if e["type"] in ("list_type", "set_type"):
        return f"; a list is written in brackets: {loc}=[{_spelt(value)}]"
    if e["type"] == "tuple_type":
        info = _sibling_fields(e["loc"], schema).get(str(e["loc"][-1]))
        example = info.default if info is not None else None
        if isinstance(example, tuple) and example:
            return f"; give its {len(example)} values in brackets, e.g. {loc}={_spelt(list(example))}"
    return ""


# Where every field of a run config is described (its default, meaning and role), named by an unknown field's hint.
FIELDS_PAGE = "docs/config.md"
_MEANING_CHARS = 80  # a field's meaning, as an unknown field's hint quotes it


def _field_hint(name: str, loc: str, siblings: dict[str, FieldInfo],
                elsewhere: typing.Callable[[], dict[str, FieldInfo]] = dict) -> str:
    """What an unknown field most likely meant, among the fields beside it: the one spelt closest (``gama``: did you
    mean init.gamma?); or, for a name that is a word of other fields (``lr``), those fields with their meanings
    (``train.lr_multiplier (peak lr = multiplier x base_lr)``), since the name is a habit of other tools rather than
    a slip; or a field of that name (or word) in another section (``gamma`` or ``train.gamma``: did you mean
    init.gamma?, the section left out or mistaken); else every field beside it. All but a slip name the page that
    describes every field. ``elsewhere``: every dotted field of the schema, asked for only when needed."""
    section = loc.rsplit(".", 1)[0] + "." if "." in loc else ""
    if words := word_matches(name, siblings):
        return _did_you_mean({f"{section}{w}": siblings[w] for w in words})
    if close := difflib.get_close_matches(name, list(siblings), n=1):
        return f"did you mean {section}{close[0]}?"
    others = {k: v for k, v in elsewhere().items() if k.rsplit(".", 1)[0] + "." != section}
    if moved := [k for k in others if k.rsplit(".", 1)[-1] == name][:3] or word_matches(name, others):
        return _did_you_mean({k: others[k] for k in moved})
    where = f"the fields of {section.rstrip('.')}" if section else "the fields of a run config"
    return f"check the spelling; {where}: {', '.join(siblings)}; every field: {FIELDS_PAGE}"


def _did_you_mean(fields: dict[str, FieldInfo]) -> str:
    """``did you mean A (its meaning), B (...) or C (...)? every field: docs/config.md``."""
    said = [name + (f" ({_meaning(info)})" if info.description else "") for name, info in fields.items()]
    listed = f"{', '.join(said[:-1])} or {said[-1]}" if len(said) > 1 else said[0]
    return f"did you mean {listed}? every field: {FIELDS_PAGE}"


def _every_field(schema: type[BaseModel]) -> dict[str, FieldInfo]:
    """Every settable field of ``schema`` by its dotted name (``init.gamma``), through its sections: those of a run
    config's ``task:`` and ``model:`` are every registered kind's (a name two kinds share is listed once)."""
    kinds = {"task": registry.task_kinds, "model": registry.model_kinds}
    out: dict[str, FieldInfo] = {}

    def walk(model: type[BaseModel], prefix: str) -> None:
        for name, info in model.model_fields.items():
            sections = ([k.config for k in kinds[name]().values()] if not prefix and name in kinds
                        and model is schema else _section_of(info.annotation))
            for section in sections:
                walk(section, f"{prefix}{name}.")
            if not sections:
                out.setdefault(f"{prefix}{name}", info)

    walk(schema, "")
    return out


def _section_of(annotation: Any) -> list[type[BaseModel]]:
    """The section a field holds (``InitConfig``; ``DecaySwitch | None``), whose fields are set by dotted names; none
    for a value or a list of them (``list[MemoryGroup]``: its items have no dotted name)."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [a for a in typing.get_args(annotation) if isinstance(a, type) and issubclass(a, BaseModel)][:1]
    return [annotation] if isinstance(annotation, type) and issubclass(annotation, BaseModel) else []


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
