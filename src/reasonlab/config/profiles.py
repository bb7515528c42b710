"""Profiles: named starting configs, one YAML file each, found by name.

A profile's name is its file's name, ``<family>-<name>.yaml`` (``anchor-cpu``, ``mixture-emb-mlp-cpu``); the family,
the name's first word (no dash in it), lets a bare name stand for the full one (``--family anchor --profile cpu``).
Each kind keeps its profiles in its own folder (``reasonlab/kinds/<kind>/profiles/``), registered with it
(``registry.register_profiles``); the lookups here read every registered folder, so a plug-in kind's profiles are
found like the built-in ones. A profile that differs from another in a few fields names it as ``base:`` and lists
only those fields.

Layer: config; imports ``config.io`` and the ``registry``.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from reasonlab import registry
from reasonlab.config.io import apply_overrides, deep_merge, label_changes, load_yaml, unknown_name
from reasonlab.errors import ConfigError


def _paths(load: bool = False) -> dict[str, Path]:
    """Every profile's full name and file, over the registered folders (``load``: the plug-ins' too); a name two
    folders both hold is refused in one line, naming both files."""
    paths: dict[str, Path] = {}
    for folder in registry.profile_folders(load):
        for path in sorted(folder.glob("*.yaml")):
            other = paths.setdefault(path.stem, path)
            if other != path:
                raise ConfigError(f"profile {path.stem}: both {other} and {path} hold it; rename one")
    return dict(sorted(paths.items()))


def families(load: bool = False) -> list[str]:
    """The profile families: the first words of the profiles' names (``load``: the plug-ins' profiles too)."""
    return sorted({name.split("-", 1)[0] for name in _paths(load)})


def family_profiles(family: str) -> list[str]:
    """The profiles of a family, by their names without the family (``cpu`` of ``anchor-cpu``)."""
    return [name[len(family) + 1 :] for name in _paths() if name.startswith(f"{family}-")]


def profile_text(family: str, profile: str) -> str:
    """A profile's file as written, its comments included (``reasonlab profile show``)."""
    return _paths()[f"{family}-{profile}"].read_text(encoding="utf-8")


def profile_about(family: str, profile: str) -> str:
    """A profile in one line: its file's first comment line (every built-in profile opens with one sentence saying
    what it is for and what it costs), else its ``profile:`` label."""
    first = next(iter(profile_text(family, profile).splitlines()), "")
    if first.startswith("#"):
        return first.lstrip("#").strip()
    return str(load_profile(family, profile).get("profile") or "—")


def check_family(family: str | None) -> None:
    """Refuse a family (``--family``) that has no profile; None, no family, is fine."""
    if family is not None and family not in families() and family not in families(load=True):  # a plug-in's
        raise unknown_name(f"--family {family!r}", family, families())                        # family loads with it


def load_profile(family: str, profile: str, derived: tuple[str, ...] = ()) -> dict[str, Any]:
    """A profile's fields, over those of its ``base:`` (a profile of the same family), if it names one."""
    data = load_yaml(_paths()[f"{family}-{profile}"])
    parent = data.pop("base", None)
    if parent is None:
        return data
    chain = (*derived, profile)
    if parent in chain:
        raise ConfigError(f"profile {family}-{chain[0]}: its bases loop ({' → '.join((*chain, parent))}); "
                          "end the chain at a profile without base:")
    if parent not in family_profiles(family):
        raise unknown_name(f"profile {family}-{profile}: base {parent!r}", str(parent), family_profiles(family))
    return deep_merge(load_profile(family, parent, chain), data)


def find_profile(name: str, family: str | None = None) -> tuple[str, str]:
    """The ``(family, profile)`` a profile's name stands for. A full name (``anchor-cpu``) needs no family; a bare
    one (``cpu``) is looked up in ``family``, or, without one, in the only family that has it: most families have a
    ``cpu`` profile, so no family is the default one. A full name is read as one before a bare name."""
    check_family(family)
    full = list(_paths())
    if family is not None:
        if name in family_profiles(family):
            return family, name
        if name.startswith(f"{family}-") and name in full:
            return family, name[len(family) + 1 :]
        if name in full:
            raise ConfigError(f"--profile {name!r}: a profile of the {name.split('-', 1)[0]} family, not of "
                              f"{family}; drop --family {family}")
        raise unknown_name(f"--profile {name!r} of the {family} family", name, family_profiles(family))
    if name in full:
        owner, _, bare = name.partition("-")
        return owner, bare
    owners = [f for f in families() if name in family_profiles(f)]
    if len(owners) > 1:
        raise ConfigError(f"--profile {name!r}: ambiguous, several families have it; name one in full "
                          f"({', '.join(f'{f}-{name}' for f in owners)}) or add --family")
    if not owners:
        raise unknown_name(f"--profile {name!r}", name, full)
    return owners[0], name


def raw_config(config: Path | None, profile: str | None, overrides: list[str], family: str | None = None) -> dict:
    """Profile (``find_profile``: a full name, or a bare one of ``family``), then the user's YAML over it, then
    ``--set`` overrides over both; not yet validated. The family only finds the profile: it is no field of the run,
    so it never enters a run id."""
    data: dict[str, Any] = {}
    if profile is not None:  # an empty name is no profile of any family, not "the defaults"
        data = load_profile(*find_profile(profile, family))
    else:
        check_family(family)
    base = copy.deepcopy(data)
    if config is not None:
        data = deep_merge(data, load_yaml(config))
    return label_changes(base, apply_overrides(data, list(overrides)))
