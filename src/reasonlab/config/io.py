"""Config IO: YAML (safe, no aliases) and dotted ``--set`` overrides.

Layer: config; imports ``config.base``, ``config.schema`` and the ``registry``.
"""

from __future__ import annotations

import difflib
import json
import typing
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from reasonlab.config.base import Role, role_fields
from reasonlab.config.schema import RunConfig
from reasonlab.errors import ConfigError


def fields_with(role: Role, model: type[BaseModel] | None = None) -> frozenset[str]:
    """The dotted names of the fields of a run config (or of ``model``) that declare ``role``."""
    return role_fields(role, model or RunConfig)


# Dotted fields that say how a run executes, not what it computes.
EXECUTION_FIELDS = fields_with("execution")


MAX_CONFIG_BYTES = 1 << 20  # a config file: real ones are a few kB; /dev/zero must not be read to the end
MAX_DEPTH = 32  # nesting of YAML collections: real configs nest 4 deep; 3,000 would exhaust Python's stack
MAX_OVERRIDE = 10_000  # characters in one --set item: far beyond any real value, far below a harmful one


class RefusedYAML(yaml.MarkedYAMLError):
    """YAML that parses but that a config refuses: an alias, nesting deeper than ``MAX_DEPTH``, a duplicate key."""


class _Loader(yaml.SafeLoader):
    """Safe YAML without aliases (nested aliases expand exponentially), nested at most ``MAX_DEPTH`` deep, and
    without duplicate keys (the later would silently win: a second ``train:`` would drop the first)."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            raise RefusedYAML(None, None, "aliases (*name) are not allowed in configs", self.peek_event().start_mark)
        if self._depth >= MAX_DEPTH:
            raise RefusedYAML(None, None, f"nested deeper than {MAX_DEPTH} levels; a config needs a few",
                              self.peek_event().start_mark)
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            try:
                first = seen.get(key)
                seen.setdefault(key, key_node.start_mark.line)
            except TypeError:  # an unhashable key: the base class refuses it
                continue
            if first is not None:
                raise RefusedYAML(None, None, f"duplicate key {key!r} (also on line {first + 1}); keep one",
                                  key_node.start_mark)
        return super().construct_mapping(node, deep)


def _load(text: str) -> Any:
    return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass


def parse_value(text: str) -> Any:
    """Parse an override value as YAML so that '0.5', '[1,2]' and 'true' get their natural types."""
    try:
        return _load(text)
    except RefusedYAML as e:
        raise ConfigError(f"override value {text[:40]!r}: {e.problem}") from None
    except (yaml.YAMLError, ValueError):  # ValueError: an integer of more than 4,300 digits
        return text


def set_dotted(data: dict[str, Any], key: str, value: Any) -> None:
    parts = key.split(".")
    if not all(parts):
        raise ConfigError(f"override {key!r}: empty field name; use e.g. model.depth=3")
    node = data
    for p in parts[:-1]:
        child = node.setdefault(p, {})
        if not isinstance(child, dict):
            raise ConfigError(f"override {key!r}: {p} is not a section")
        node = child
    node[parts[-1]] = value


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply 'a.b=value' strings to a raw config dict (before validation)."""
    for item in overrides:
        if len(item) > MAX_OVERRIDE:
            raise ConfigError(f"override {item[:40]!r}...: longer than {MAX_OVERRIDE} characters; use a YAML file")
        key, sep, raw = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"override {item!r}: expected key=value, e.g. init.gamma=0.8")
        set_dotted(data, key.strip(), parse_value(raw.strip()))
    return data


def load_yaml(path: Path) -> dict[str, Any]:
    """A config file the user names (a pipe too: ``<(...)``), at most ``MAX_CONFIG_BYTES``, as a mapping
    (``parse_yaml``)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read ({e.strerror}); pass an existing YAML file") from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES >> 20} MiB; a config file is a few kB")
    return parse_yaml(raw, path)


def parse_yaml(raw: bytes, path: Path) -> dict[str, Any]:
    """The bytes of the config file ``path`` as a mapping of config sections: UTF-8, safe YAML (no tags that build
    objects, no key given twice), or a one-line ConfigError naming the file."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path}: not UTF-8 text (byte {e.start}); save it as UTF-8") from None
    try:
        data = _load(text)
    except ValueError as e:  # not a YAML error: an integer of more than 4,300 digits
        raise ConfigError(f"{path}: {str(e).split(';')[0]}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        problem = e.problem if isinstance(e, RefusedYAML) else None
        raise ConfigError(f"{path}:{where} {problem or 'invalid YAML; fix the syntax'}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: top level must be a mapping of config sections")
    return data


def deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k, v in top.items():
        out[k] = deep_merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out



def _leaves(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        out.update(_leaves(v, key + ".") if isinstance(v, dict) else {key: v})
    return out


def label_changes(profile_data: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the settings it changes from its built-in profile appended to the profile's label.

    A profile's label states its settings ("wd 0.01"); a run given ``--set train.weight_decay=0.28`` must not
    carry that label unqualified. Execution fields are left out: they do not change a run's numbers.
    """
    label = profile_data.get("profile")
    if not label or data.get("profile") != label:
        return data  # no built-in profile, or the user named the run's profile themselves
    before, after = _leaves(profile_data), _leaves(data)
    changed = [f"{k}={json.dumps(v, default=str)}" for k, v in after.items()  # default: a YAML date, for its error
               if k not in EXECUTION_FIELDS and (k not in before or before[k] != v)]
    return {**data, "profile": f"{label}; changed: {', '.join(changed)}"} if changed else data


def unknown_name(what: str, name: str, choices: typing.Iterable[str]) -> ConfigError:
    """The one-line refusal of ``name`` (``what`` names it in the message: "--family 'anchr'"), which is none of
    ``choices``, suggesting the closest."""
    choices = list(choices)
    close = difflib.get_close_matches(name, choices, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    return ConfigError(f"{what}: unknown; {hint}choose one of {', '.join(choices)}")


def resolve(data: dict[str, Any]) -> RunConfig:
    """Validate a raw dict into a RunConfig (a one-line ConfigError naming the first field that fails)."""
    return RunConfig.model_validate(data)


def to_yaml(cfg: RunConfig) -> str:
    return yaml.safe_dump(cfg.model_dump(mode="json"), sort_keys=False)


def changed_yaml(cfg: RunConfig) -> str:
    """The fields of ``cfg`` set away from their defaults, as YAML, and the task and model kinds always: the few
    lines that tell a run apart, which resolve to the same run (docs/config.md lists every default)."""
    changed = cfg.model_dump(mode="json", exclude_defaults=True)
    for section in ("task", "model"):
        changed[section] = {"kind": getattr(cfg, section).kind, **changed.get(section, {})}
    return yaml.safe_dump(changed, sort_keys=False, width=1000, allow_unicode=True)

