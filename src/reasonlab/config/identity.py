"""Run identity: the run id is a short hash of the resolved config, without the fields that say only how a run
executes (their role ``execution``, declared once on the field in the schema).

Layer: config; imports only ``config.base``. It takes the config's class from the config itself, so the schema
may call it without a circle.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import Any

from pydantic import BaseModel

from reasonlab.config.base import field_roles, nested_fields, role_fields


@cache
def late_defaults(model: type[BaseModel]) -> dict[str, Any]:
    """A config section's ``late`` fields with their defaults as they stand in a JSON dump, derived once per
    class (run ids are computed often)."""
    return {name: json.loads(json.dumps(info.default)) for name, info in model.model_fields.items()
            if "late" in field_roles(info)}


@cache
def unhashed(model: type[BaseModel]) -> dict[str, Any]:
    """run_id's exclusions for a config class, derived once (run ids are computed often)."""
    return nested_fields(role_fields("execution", model))


def run_id(cfg: BaseModel) -> str:
    """Short hash of the resolved config: same numbers, same directory.

    Not hashed: the fields whose role is ``execution`` (the profile label, threads, the checkpoint cadence),
    so that any executor, with any split of cores, finds and resumes the same run; nor a ``late`` field at its
    default, so that the runs stored before it existed keep their ids. Sections are read by the class each one
    holds (a task's kind declares its own late fields).
    """
    data = cfg.model_dump(mode="json", exclude=unhashed(type(cfg)))
    for section, value in cfg:
        if isinstance(value, BaseModel) and isinstance(data.get(section), dict):
            for name, default in late_defaults(type(value)).items():
                if data[section].get(name) == default:
                    data[section].pop(name, None)
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:12]
