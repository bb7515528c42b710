"""What reaches the terminal: stored strings (labels, profiles, paths, folder names) shown as they are, never obeyed.

A string read from a store can hold Rich markup (``cpu [reduced]``, ``[/bold]``), terminal escapes (a title, a
clear screen) or bytes that are not UTF-8 (a folder name); printed as it is, the first is eaten or crashes Rich,
the second drives the terminal and the third cannot be encoded. ``printable`` neutralises the last two;
``console`` makes a Rich console that reads no markup unless asked and passes every string through
``printable``, keeping line feeds: a line break is layout (a table's two-line header), and moves the output down
and does nothing else. Where one line is promised (a log line, an error), ``print_line`` escapes line feeds too.
An output whose encoding cannot print a character (``PYTHONIOENCODING=ascii``, a C locale) gets its ASCII
spelling (``×`` as ``x``, ``≤`` as ``<=``) or its escape instead of an error (``plain_encoding``).
``command_line`` holds the command being run, as typed, so that what it writes can name what resumes it.

Layer: ground (imports nothing of reasonlab).
"""

from __future__ import annotations

import codecs
import os
import re
import sys
from contextvars import ContextVar
from typing import Any

from rich.console import Console, ConsoleDimensions
from rich.text import Text

from reasonlab.arguments import UNSAFE, ascii_int

# The command line being run, as typed (``reasonlab demo --seed 2``): set by the command line for the duration of a
# command, None from the Python API. A sweep records it, so that an unfinished run's card names the command that
# resumes it.
command_line: ContextVar[str | None] = ContextVar("command_line", default=None)

# ``UNSAFE``: C0 and C1 control characters (ESC among them), DEL, bidirectional overrides and isolates (they reorder
# what follows them on screen), and lone surrogates (the bytes of a file name that are not UTF-8, as Python decodes
# them); the same but the line feed, for text laid out on several lines.
_UNSAFE_BUT_LF = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match[0])
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte of a file name (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: object, lines: bool = False) -> str:
    """``text`` with every control character, bidirectional override and undecodable byte written as an escape
    (``\\x1b``, ``\\u202e``, ``\\xff``): safe to print and encode, and still telling what was there. With
    ``lines``, a line feed is kept as the line break it is."""
    return (_UNSAFE_BUT_LF if lines else UNSAFE).sub(_escape, str(text))


_ASCII = {"×": "x", "·": ".", "—": "--", "–": "-", "≤": "<=", "≥": ">=", "→": "->", "←": "<-", "…": "...",
          "±": "+/-", "≈": "~", "γ": "gamma", "α": "alpha", "Σ": "sum", "σ": "sigma", "²": "^2", "✓": "ok"}


def _ascii(error: UnicodeError) -> tuple[str, int]:
    """The characters an encoding lacks in their ASCII spelling, else as escapes (``\\u03b2``)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start:error.end]
    return "".join(_ASCII.get(c) or c.encode("ascii", "backslashreplace").decode() for c in text), error.end


codecs.register_error("reasonlab-ascii", _ascii)


def plain_encoding() -> None:
    """Standard output and error spell what their encoding cannot print instead of failing on it (a command's
    progress line holds ``×``; an ASCII terminal would end it with a UnicodeEncodeError)."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure") and stream.errors == "strict":
            stream.reconfigure(errors="reasonlab-ascii")


MIN_WIDTH = 40  # the narrowest console the command line draws on


def narrowest() -> None:
    """A ``COLUMNS`` below ``MIN_WIDTH`` (0, 1, negative) is raised to it for every console this process makes,
    ``--help``'s included (its console is not ours): at a few columns they would print nothing or cut words."""
    columns = ascii_int(os.environ.get("COLUMNS", "").strip(), signed=True)
    if columns is not None and columns < MIN_WIDTH:
        os.environ["COLUMNS"] = str(MIN_WIDTH)


class SafeConsole(Console):
    """A Rich console whose strings are shown, not obeyed: no markup unless a call asks for it (``markup=True``,
    with stored parts passed through ``rich.markup.escape``) and every string through ``printable``, its line
    breaks kept."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(printable(text, lines=True), **kwargs)

    @property
    def size(self) -> ConsoleDimensions:
        """At least ``MIN_WIDTH`` columns: a terminal (or ``COLUMNS``) of 0 or a few columns would print nothing."""
        dims = Console.size.fget(self)
        return ConsoleDimensions(max(MIN_WIDTH, dims.width), dims.height)

    @size.setter
    def size(self, new_size: tuple[int, int]) -> None:
        Console.size.fset(self, new_size)


def counted(n: int, noun: str) -> str:
    """A count and its noun, in the number the count takes: ``1 run``, ``0 runs``, ``12 runs`` (a noun whose plural
    adds an s: every count printed with one, "runs" above all)."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def print_line(console: Console, text: str) -> None:
    """``text`` as one line of output, unwrapped and unstyled, a line feed in it escaped as any control character:
    a log keeps one line per event, and a stored string cannot start another."""
    console.print(printable(text), soft_wrap=True, highlight=False, markup=False)


def console(stderr: bool = False) -> SafeConsole:
    return SafeConsole(stderr=stderr, markup=False)
