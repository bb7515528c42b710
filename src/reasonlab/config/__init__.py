"""Run configuration, split by concern; every public name is importable from here.

- ``base``: the strict base model and each field's role (``roles``, ``fields_with``)
- ``schema``: model, init, train, thresholds and ``RunConfig`` (its ``task:`` and ``model:`` validated through the
  registry; the task kinds' own sections live in ``reasonlab/kinds/<kind>/config.py``)
- ``identity``: the run id (a hash of the resolved config without the execution fields)
- ``io``: YAML, dotted overrides
- ``messages``: one-line validation messages (every config, profile and sweep file, and ``RunConfig`` itself)
- ``profiles``: profiles found by name in the registered folders (each kind's ``profiles/``)

Layer: config sits above ``errors`` and ``registry`` and below everything else (see ``reasonlab.layers``).
"""

from reasonlab.config.base import Role, StrictModel, nested_fields, role_fields, roles
from reasonlab.config.identity import run_id
from reasonlab.config.io import (
    EXECUTION_FIELDS,
    MAX_OVERRIDE,
    apply_overrides,
    changed_yaml,
    deep_merge,
    fields_with,
    label_changes,
    load_yaml,
    parse_value,
    parse_yaml,
    resolve,
    set_dotted,
    to_yaml,
    unknown_name,
)
from reasonlab.config.messages import validation_message, word_matches
from reasonlab.config.profiles import (
    families,
    family_profiles,
    find_profile,
    load_profile,
    profile_about,
    profile_text,
    raw_config,
)
from reasonlab.config.schema import (
    EmbMLPConfig,
    InitConfig,
    ModelConfig,
    RunConfig,
    ThresholdConfig,
    TrainConfig,
    check_memory,
    validate_task,
)
from reasonlab.errors import ConfigError

__all__ = [
    "EXECUTION_FIELDS", "MAX_OVERRIDE", "ConfigError", "EmbMLPConfig", "InitConfig", "ModelConfig",
    "Role", "RunConfig", "StrictModel", "ThresholdConfig", "TrainConfig", "apply_overrides", "changed_yaml",
    "check_memory", "deep_merge", "families", "family_profiles", "fields_with", "find_profile", "label_changes",
    "load_profile", "load_yaml", "nested_fields", "parse_value", "parse_yaml", "profile_about", "profile_text",
    "role_fields", "raw_config", "resolve", "roles", "run_id", "set_dotted", "to_yaml", "unknown_name",
    "validate_task", "validation_message", "word_matches",
]
