"""The commands that tell what the built-in profiles are: ``profiles`` (or ``profile list``) lists them, each in one
line with its cost, and ``profile show NAME`` prints one as written, its comments included."""

from __future__ import annotations

from typing import Annotated

import typer
from rich import box
from rich.table import Table

from reasonlab.cli.common import FamilyOpt, console
from reasonlab.config import (
    ConfigError,
    families,
    family_profiles,
    find_profile,
    load_profile,
    profile_about,
    profile_text,
    resolve,
)


def _flops(family: str, profile: str) -> str:
    """A run's training FLOPs (about 6 × parameters × tokens, ``RunConfig.work``) as a number of three digits, or —
    where the profile leaves the data's size to a study (the benchmarks) or does not resolve on its own."""
    try:
        work = resolve(load_profile(family, profile)).work()
    except ConfigError:
        return "—"
    return "—" if work is None else f"{6 * work:.1e}"


def list_profiles() -> None:
    """The built-in profiles (and those plug-ins register), one line each: the name --profile takes, what it is for
    and what a run costs; `reasonlab profile show NAME` prints one with its comments."""
    table = Table(title="profiles: --profile NAME (`reasonlab profile show NAME` prints one)", title_justify="left",
                  caption="FLOPs: a run's training compute, about 6 × parameters × tokens (— where a study sets the "
                          "data's size)", caption_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("profile", no_wrap=True)
    table.add_column("FLOPs", no_wrap=True, justify="right")
    table.add_column("what it is for")
    for family in families(load=True):
        for profile in family_profiles(family):
            table.add_row(f"{family}-{profile}", _flops(family, profile), profile_about(family, profile))
    console.print(table)


profile_app = typer.Typer(no_args_is_help=True, add_completion=False,
                          help="One built-in profile: `reasonlab profile show NAME` prints it with its comments; "
                               "`reasonlab profile list` (or `reasonlab profiles`) lists them all.")
# ``profile list``, what a reader of ``profile show`` types to find the names: the same list as ``profiles``
profile_app.command("list", short_help="the built-in profiles, one line each (the same as `reasonlab profiles`)"
                    )(list_profiles)


@profile_app.command("show")
def show_profile(
    name: Annotated[str, typer.Argument(help="a profile's full name (anchor-cpu), or a bare one with --family")],
    family: FamilyOpt = None,
) -> None:
    """Print a profile's YAML as written, with its comments: what it is, what it costs, why each setting.

    The config a run of it resolves to, every field: `reasonlab train --profile NAME --dry-run`."""
    console.print(profile_text(*find_profile(name, family)), end="", highlight=False, soft_wrap=True)
