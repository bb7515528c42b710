"""docs/config.md: every config field — its section, type, default, meaning and role — generated from the schema
(the generic sections and every registered task and model kind), so the page cannot drift from the code
(``scripts/regenerate_docs.py`` writes and checks it)."""

from __future__ import annotations

import inspect
import types
import typing

from pydantic import BaseModel
from pydantic_core import PydanticUndefined

from reasonlab import registry
from reasonlab.config import InitConfig, RunConfig, ThresholdConfig, TrainConfig
from reasonlab.config.base import field_roles

ROLES = {"execution": "not in the run id (how a run executes)", "member": "may differ inside a stacked ensemble",
         "late": "in the run id only when set away from its default"}
INTRO = """# Every config field

Generated from the schema by `python scripts/regenerate_docs.py` (do not edit by hand). A run is one YAML file or a
profile with `--set section.field=value` overrides; a sweep adds `--grid section.field=v1,v2`. The learning rate has
no single field: warm-up starts at `train.base_lr`, peaks at `train.base_lr × train.lr_multiplier` and ends the
cosine at `train.floor_lr` (default `train.base_lr`). Every field enters the run id (the hash that names a run's
folder) unless its role says otherwise. Roles: """ + "; ".join(f"**{k}**: {v}" for k, v in ROLES.items()) + ".\n"


def _type(annotation: object) -> str:
    """A field's type as a reader writes it: no module paths, no validation metadata."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type(args[0])
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type(a) for a in args)
    if origin is typing.Literal:
        return "Literal[" + ", ".join(repr(a) for a in args) + "]"
    if origin is not None:
        return f"{getattr(origin, '__name__', str(origin))}[{', '.join(_type(a) for a in args)}]"
    return "None" if annotation is type(None) else getattr(annotation, "__name__", str(annotation))


def _default(info: object) -> str:
    value = info.default  # type: ignore[attr-defined]
    if value is PydanticUndefined:
        return "required"
    if isinstance(value, BaseModel):
        return "(section)"
    return f"`{value!r}`".replace("|", "\\|")


def _rows(model: type[BaseModel], prefix: str) -> list[str]:
    rows = []
    for name, info in model.model_fields.items():
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            continue  # a nested section has its own table
        meaning = (info.description or "").replace("|", "\\|").replace("\n", " ")
        roles = ", ".join(field_roles(info))
        kind = _type(info.annotation).replace("|", "\\|")
        rows.append(f"| `{prefix}{name}` | {kind} | {_default(info)} | {meaning} | {roles} |")
    return rows


def _section(title: str, model: type[BaseModel], prefix: str) -> list[str]:
    doc = " ".join(inspect.cleandoc(model.__doc__ or "").split("\n\n")[0].split())  # one line, no indentation
    return [f"## {title}", "", doc, "", "| field | type | default | meaning | role |", "|---|---|---|---|---|",
            *_rows(model, prefix), ""]


def config_reference() -> str:
    """The whole page: the run's fields, each generic section's, then each model kind's and task kind's."""
    lines = [INTRO, *_section("The run", RunConfig, "")]
    for title, model, prefix in (("`train:`", TrainConfig, "train."), ("`init:`", InitConfig, "init."),
                                 ("`thresholds:`", ThresholdConfig, "thresholds.")):
        lines += _section(title, model, prefix)
    for name, kind in sorted(registry.model_kinds().items()):
        lines += _section(f"`model:` kind `{name}`", kind.config, "model.")
    for name, kind in sorted(registry.task_kinds().items()):
        lines += _section(f"`task:` kind `{name}`", kind.config, "task.")
    return "\n".join(lines)

