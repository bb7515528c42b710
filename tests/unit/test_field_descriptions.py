"""Every config field says what it is: docs/config.md (generated from the schema) shows each field's description as
its meaning, and an unknown field's hint quotes it, so a field without one is a blank a reader cannot fill."""

from __future__ import annotations

import re
import typing

from pydantic import BaseModel

from reasonlab import registry
from reasonlab.config import RunConfig


def _models_in(annotation: object) -> list[type[BaseModel]]:
    """The config classes an annotation holds: itself, or inside ``list[...]``, ``X | None``, ``Annotated``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models_in(arg)]


def _undescribed(model: type[BaseModel], prefix: str, seen: set[type]) -> list[str]:
    if model in seen:
        return []
    seen.add(model)
    out = []
    for name, info in model.model_fields.items():
        if not (info.description or "").strip():
            out.append(f"{prefix}{name} ({model.__module__}.{model.__qualname__})")
        for inner in _models_in(info.annotation):
            out += _undescribed(inner, f"{prefix}{name}.", seen)
    return out


def _sections() -> list[tuple[str, type[BaseModel]]]:
    """RunConfig (its train, init and thresholds sections by recursion) and every built-in task and model kind's
    config (a plug-in's own kind, such as the tests' parity, is its author's to describe)."""
    kinds = [("task.", k.config) for k in registry.task_kinds().values()]
    kinds += [("model.", k.config) for k in registry.model_kinds().values()]
    return [("", RunConfig), *((p, cls) for p, cls in kinds if cls.__module__.startswith("reasonlab."))]


def test_every_field_of_every_registered_section_has_a_description():
    sections = _sections()
    assert {cls.__name__ for _, cls in sections} >= {"RunConfig", "ModelConfig", "EmbMLPConfig",
                                                     "AnchorTaskConfig", "ModularTaskConfig", "MixtureTaskConfig",
                                                     "Seq2SeqTaskConfig", "TextMixtureTaskConfig"}
    seen: set[type] = set()
    missing = [field for prefix, cls in sections for field in _undescribed(cls, prefix, seen)]
    assert not missing, "fields without a description=: " + ", ".join(missing)


def test_the_generated_config_page_gives_every_field_a_meaning_and_flowing_section_intros():
    """No row of docs/config.md has an empty meaning, and a section's intro (its class's docstring) reads as one
    flowing text, not with the docstring's indentation inside it ("A     bad field")."""
    from reasonlab.config.reference import config_reference

    page = config_reference()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert len(rows) > 100
    cells = [re.split(r"(?<!\\)\|", row) for row in rows]  # an escaped \| stays inside its cell
    assert all(len(c) == 7 for c in cells)
    empty = [c[1].strip() for c in cells if not c[4].strip()]
    assert not empty, f"rows without a meaning: {empty}"
    intros = [line for line in page.splitlines() if line and not line.startswith(("|", "#"))]
    assert not [line for line in intros if re.search(r"\S {2,}\S", line)]
    assert "A bad field, however it is validated" in page
