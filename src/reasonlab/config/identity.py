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

from reasonlab.config.base import nested_fields, role_fields

# Fields added after the run-id format was fixed, with the default that keeps the earlier behaviour. They enter
# the hash only when set to something else, so the runs of an existing store keep their ids.
LATE_FIELDS: dict[tuple[str, str], object] = {("train", "weight_decay_on"): "all", ("init", "scheme"): "gamma",
                                              ("train", "precision"): "fp32", ("task", "pair_draw"): "stream",
                                              ("init", "std"): 0.02, ("task", "eval_rows"): "shared",
                                              ("task", "eval_iid"): False, ("task", "tokenizer"): "word",
                                              ("task", "curriculum_start"): None, ("task", "curriculum_steps"): 0,
                                              ("train", "weight_decay_switch"): None,
                                              ("train", "loss_mean"): "targets", ("train", "cosine_lag_steps"): 0,
                                              ("task", "split_draw"): "torch"}


@cache
def unhashed(model: type[BaseModel]) -> dict[str, Any]:
    """run_id's exclusions for a config class, derived once (run ids are computed often)."""
    return nested_fields(role_fields("execution", model))


def run_id(cfg: BaseModel) -> str:
    """Short hash of the resolved config: same numbers, same directory.

    Not hashed: the fields whose role is ``execution`` (the profile label, threads, the checkpoint cadence),
    so that any executor, with any split of cores, finds and resumes the same run.
    """
    data = cfg.model_dump(mode="json", exclude=unhashed(type(cfg)))
    for (section, name), default in LATE_FIELDS.items():
        if data.get(section, {}).get(name, default) == default:
            data.get(section, {}).pop(name, None)
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()[:12]
