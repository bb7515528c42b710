"""What the registry adds to commands: each kind's probe options as ``analyze`` flags and its phase rule's options
as ``phase`` flags, and the lists of probes, studies and demos in the help of ``analyze``, ``reproduce`` and ``demo``.

A kind declares its options (``registry.KindOption``); the flags are added to a command when the command group
looks it up (``complete``), so the kinds load only for the commands that read them, and a kind registered by a
plug-in gets its flags like a built-in one. Each flag's text is parsed by its option's own parser (a bad value is
one line: "Invalid value for '--key': ..."); the command reads the parsed values with ``given``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

import typer

from reasonlab.errors import ConfigError
from reasonlab.registry import KindOption, studies, task_kinds

Owned = list[tuple[str, KindOption]]  # (who reads it: a kind, or the generic floor's readers; option)
_GIVEN = "reasonlab.kind_options"  # the key of the parsed values in the command context's meta


def add_flags(command: Any, owned: Owned) -> None:
    """Offer each option as a flag of ``command`` (one flag per name; its help says which kinds read it); a name
    the command already has (its own ``--seed``, or flags added before) is left to that flag."""
    by_name: dict[str, Owned] = {}
    for owner, option in owned:
        by_name.setdefault(option.name, []).append((owner, option))
    taken = {p.name for p in command.params}
    command.params.extend(_typer_flags([group for name, group in by_name.items() if name not in taken]))


def _keep(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> None:
    """A kind option's value, parsed, kept for the command (``given``) when the flag was given."""
    if value is not None and value is not False:
        ctx.meta.setdefault(_GIVEN, {})[param.name] = value


def _typer_flags(groups: list[Owned]) -> list[Any]:
    """The flags as typer builds them (so its help lists them like any other, and a value its parser refuses is
    typer's one-line "Invalid value for '--key': ..."): the parameters of a command whose signature is one keyword
    per option, none of them passed to the command itself (``given`` reads them)."""
    params = []
    for group in groups:
        option = group[0][1]
        text = "; ".join(f"{owner}: {o.help}" for owner, o in group)
        if option.parse is None:
            kind = Annotated[bool, typer.Option(option.flag, help=text, callback=_keep, expose_value=False)]
            default = False
        else:
            kind = Annotated[Any, typer.Option(option.flag, help=text, metavar=option.metavar, parser=option.parse,
                                               callback=_keep, expose_value=False, show_default=False)]
            default = None
        params.append(inspect.Parameter(option.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=kind))

    def flags(**kwargs: Any) -> None:
        """The kinds' options."""

    flags.__signature__ = inspect.Signature(params)
    app = typer.Typer(add_completion=False)
    app.command()(flags)
    return typer.main.get_command(app).params


def given(ctx: typer.Context) -> dict[str, Any]:
    """The parsed values of the kind options given on the command line of the running command."""
    return dict(ctx.meta.get(_GIVEN, {}))


def refuse_foreign(options: dict[str, Any], declared: tuple[KindOption, ...], what: str) -> None:
    """Refuse a kind option given to a run or sweep whose kind does not read it (``what``: who would read it)."""
    known = {o.name for o in declared}
    for name in options:
        if name not in known:
            flags = ", ".join(o.flag for o in declared) or "none"
            raise ConfigError(f"--{name.replace('_', '-')}: not an option of {what} (those are: {flags})")


def probe_options() -> Owned:
    return [(name, option) for name, entry in task_kinds().items() for option in entry.probe_options]


def phase_options() -> Owned:
    from reasonlab.report.phase import LABEL_PHASE

    return [*(("kinds without a phase rule of their own", option) for option in LABEL_PHASE.options),
            *((name, option) for name, entry in task_kinds().items() for option in entry.phase_options
              if option not in LABEL_PHASE.options)]


def _param(command: Any, name: str) -> Any:
    return next(p for p in command.params if p.name == name)


def _analyze(command: Any) -> None:
    add_flags(command, probe_options())
    listing = "; ".join(f"{name}: {', '.join(entry.probes)}" for name, entry in task_kinds().items()
                        if entry.probes)
    _param(command, "probe").help = f"a named analysis, repeatable (default: all of the run's kind); {listing}"


def _phase(command: Any) -> None:
    add_flags(command, phase_options())


def _reproduce(command: Any) -> None:
    known = studies()
    arms = dict.fromkeys(arm for study in known.values() for arm in study.arms)
    _param(command, "experiment").help = f"a study (`reasonlab studies` lists them): {', '.join(known)}"
    _param(command, "profile").help = (f"the study's arm (default: its default arm, cpu where it has one): "
                                       f"{', '.join(arms)}")


def _demo(command: Any) -> None:
    from reasonlab.studies.demo import demos

    _param(command, "which").help = "; ".join(f"{name}: {study.arms[arm].demo.about}"
                                              for name, (study, arm) in demos().items())


COMPLETE: dict[str, Callable[[Any], None]] = {"analyze": _analyze, "phase": _phase, "reproduce": _reproduce,
                                              "demo": _demo}


def complete(name: str, command: Any) -> None:
    """Add to the command ``name`` what the registry says of it (nothing for most commands)."""
    if name in COMPLETE:
        COMPLETE[name](command)
