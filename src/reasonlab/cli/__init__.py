"""Command line: ``reasonlab train | show | demo | sweep | results | phase | reproduce | studies | profiles |
profile list | profile show | info | analyze | report | export | pack | restore``.

Every user error (bad config, override, profile or path) prints one line naming the field or file and the fix,
and exits with code 2 before anything is written. The commands (``training``, ``reading``, ``analyze``) raise;
the command group's ``main`` is the one boundary that turns what they raise into that line and exit code. A
SIGINT or SIGTERM at any moment is one line and exit 130 (``reasonlab.signals``): inside the boundary it unwinds
to it, so what a command was writing is cleaned up on the way.
"""

from __future__ import annotations

import gc
import inspect
import os
import shlex
import sys
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup

from reasonlab.cli import analyze, info, profiles, reading, registered, training
from reasonlab.cli.common import console, err, error_line
from reasonlab.errors import ConfigError, Interrupted, UserError
from reasonlab.signals import unwinding
from reasonlab.terminal import print_line


def _exit_for(e: BaseException) -> NoReturn:
    """Print what a command raised as one line and exit with its code: a bad command line (typer's parse errors)
    or a ``UserError`` exit 2, a stop a signal asked for 130 (its work is saved), a path the system refused 2."""
    if isinstance(e, typer.TyperException):  # an unknown option or command, a value outside a flag's choices
        ctx = getattr(e, "ctx", None)
        where = f" (see {ctx.command_path} --help)" if ctx is not None else ""
        message = " ".join(e.format_message().replace("Value error, ", "").split())
        if "unexpected extra argument" in message and "=" in message:  # `--set a=1 b=2`: one value per --set
            message += "; give each override its own --set: --set a=1 --set b=2"
        error_line(f"{message}{where}")
        sys.exit(e.exit_code)
    if isinstance(e, UserError):
        error_line(str(e))
        sys.exit(2)
    if isinstance(e, Interrupted):
        print_line(err, str(e))
        gc.freeze()  # at once: the collection at exit takes seconds with torch loaded and has nothing to save
        sys.exit(130)
    if isinstance(e, KeyboardInterrupt):  # before a command started (typer turns one inside it into exit 130)
        err.print("interrupted; run the same command again to resume")
        sys.exit(130)
    if isinstance(e, OSError):  # a path the user gave (a file for a directory, read-only, missing, too large)
        where = f"{e.filename}: " if e.filename else ""
        error_line(f"{where}{e.strerror or e}; check the path, its permissions and free space (finished runs are "
                   "kept; an unfinished one resumes from its last checkpoint)")
        sys.exit(2)
    err.print("aborted")  # typer.Abort
    sys.exit(1)


class _Commands(TyperGroup):
    """The command group and the CLI's one error boundary: whatever a command raises that the user can act on is
    one line and an exit code (``_exit_for``); a command looked up gets what the registry adds to it (its kinds'
    options as flags, its lists of probes and studies: ``registered.complete``); flags show no ``<bool>`` type."""

    def main(self, *args: Any, standalone_mode: bool = True, **kwargs: Any) -> Any:
        from reasonlab.files import forget_warnings
        from reasonlab.terminal import command_line, narrowest, plain_encoding

        forget_warnings()  # each command says each of its warnings once
        plain_encoding()  # an ASCII terminal gets 'x' for '×', not a UnicodeEncodeError
        narrowest()  # --help's own console too draws at no fewer columns than the command line's
        given = kwargs.get("args", args[0] if args else None)
        argv = [str(a) for a in (sys.argv[1:] if given is None else given)]
        typed = command_line.set(shlex.join(["reasonlab", *argv]))  # a sweep records it: what resumes its runs
        try:
            with unwinding():  # a signal from here on unwinds to this boundary: one line, exit 130
                _working_directory()
                _refuse_a_spaced_override(argv)
                code = super().main(*args, standalone_mode=False, **kwargs)
        except (typer.TyperException, typer.Abort, UserError, Interrupted, KeyboardInterrupt, OSError) as e:
            if not standalone_mode:
                raise
            _exit_for(e)
        finally:
            command_line.reset(typed)
        if standalone_mode:
            sys.exit(code if isinstance(code, int) else 0)
        return code

    def get_params(self, ctx):  # noqa: ANN001, ANN201
        return _plain_flags(super().get_params(ctx))

    def get_command(self, ctx, cmd_name: str):  # noqa: ANN001, ANN201
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            registered.complete(cmd_name, command)
            _plain_flags(command.get_params(ctx))
        return command


def _working_directory() -> None:
    """The working directory exists: a command reads relative paths from it, and torch cannot even load its
    libraries without it (MKL's "FATAL ERROR"), so a deleted one is named in one line before any of that."""
    try:
        os.getcwd()
    except FileNotFoundError:
        where = os.environ.get("PWD", "")
        raise UserError(f"the working directory {where + ' ' if where else ''}no longer exists (deleted or moved); cd "
                        "into an existing directory and run the command again") from None


def _refuse_a_spaced_override(argv: list[str]) -> None:
    """``--set init.gamma 0.5``: a field and its value given as two words would read the value as a config file, a
    demo or a study; refused, naming the override to write instead."""
    for flag, key, value in zip(argv, argv[1:], argv[2:], strict=False):
        if flag in ("--set", "-s") and "=" not in key and not key.startswith("-") and not value.startswith("-"):
            raise ConfigError(f"--set {key} {value}: a field and its value are one word joined by '='; write "
                              f"--set {key}={value}")


def _plain_flags(params: list) -> list:
    """On/off flags (``--dry-run``, ``--help``) shown in --help without a type column."""
    for p in params:
        if getattr(p, "is_flag", False) and p.metavar is None:
            p.metavar = ""
    return params


app = typer.Typer(cls=_Commands, add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="reasonlab: when does a transformer reason, and when does it memorize?")


def _version(value: bool) -> None:
    if value:
        from reasonlab.version import __version__

        console.print(f"reasonlab {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                                   help="print the version and exit")] = False) -> None:
    """reasonlab: when does a transformer reason, and when does it memorize?"""


def _short_help(doc: str | None) -> str | None:
    """A command's line in the --help list: its docstring's first paragraph as one flowing text (the rich help
    keeps a docstring's line breaks there, which cut it mid-phrase at any terminal width)."""
    return " ".join(inspect.cleandoc(doc).split("\n\n")[0].split()) if doc else None


# The commands in the order --help lists them.
for _command in (training.train, reading.show, training.demo, training.sweep, reading.results, reading.phase,
                 analyze.analyze, reading.report, reading.export, reading.pack, reading.restore, training.reproduce):
    app.command(short_help=_short_help(_command.__doc__))(_command)
app.command("studies", short_help=_short_help(training.list_studies.__doc__))(training.list_studies)
app.command("profiles", short_help=_short_help(profiles.list_profiles.__doc__))(profiles.list_profiles)
app.add_typer(profiles.profile_app, name="profile", short_help=_short_help(profiles.profile_app.info.help))
app.command("info", short_help=_short_help(info.info.__doc__))(info.info)


def main() -> None:
    """The ``reasonlab`` console script and ``python -m reasonlab``: the app, whose command group is the one error
    boundary."""
    app()
