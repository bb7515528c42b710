"""A command's answer to SIGINT and SIGTERM at any moment of its life: one line, exit code 130, nothing half-written.

A command's life has two kinds of stretch, and a signal ends each its own way:

- **at once** (``end_at_once``): start-up (reasonlab's imports, typer's, parsing the command line) until the
  command group's boundary takes over, the way out after it, and any import on the way. Nothing is being written
  there, so the process writes its line and ends (``os._exit``). An exception raised there could not reach the
  boundary: inside an import a C extension's initialisation turns it into an ``ImportError`` (matplotlib's
  ``ft2font``: "initialization failed"), and outside the boundary it is a traceback.
- **unwinding** (``unwinding``): the command's own work. ``Interrupted`` is raised where the main thread is, so
  every ``finally`` on the way runs — an atomic write removes its temp file, a staging folder goes — and the
  boundary prints the message. A second signal while unwinding ends at once.

Commands that stop more gently install their own handlers inside, through ``handled_by`` (``train`` and
``sweep`` stop at the end of a step: ``train.interrupt``). Before the first line of reasonlab runs (the
interpreter's own start-up, a few milliseconds) the system's default holds: the process ends by the signal, having
written nothing.

Layer: ground (imports only ``errors``).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from reasonlab.errors import Interrupted

SIGNALS = (signal.SIGINT, signal.SIGTERM)
EXIT_CODE = 130  # a stop asked for by a signal, the same for SIGINT and SIGTERM (errors.Interrupted)
_unwind = False  # inside ``unwinding``: raise rather than end at once


def launched_as_command() -> bool:
    """Whether this process is the command line (``reasonlab ...`` or ``python -m reasonlab ...``), not a program
    that imports reasonlab: asked while the package itself is being imported, the first thing either does."""
    if sys.argv[:1] == ["-m"]:  # python -m NAME, while NAME is being located
        argv = getattr(sys, "orig_argv", [])
        return "-m" in argv[:-1] and argv[argv.index("-m") + 1] == "reasonlab"
    main_file = getattr(sys.modules.get("__main__"), "__file__", None) or ""
    return os.path.basename(main_file) == "reasonlab"  # the installed console script


def _message(signum: int) -> str:
    return f"interrupted by {signal.Signals(signum).name}; nothing half-written is left: run the same command again"


def _end(signum: int, _frame: FrameType | None = None) -> None:
    """End the process now with the one line: nothing is being written."""
    os.write(2, (_message(signum) + "\n").encode())
    os._exit(EXIT_CODE)


def _importing(frame: FrameType | None) -> bool:
    """Whether the main thread is inside an import (a module's code run by importlib, at any depth)."""
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib"):
            return True
        frame = frame.f_back
    return False


def _answer(signum: int, frame: FrameType | None) -> None:
    global _unwind
    if not _unwind or _importing(frame):
        _end(signum)
    _unwind = False  # a second signal ends at once
    raise Interrupted(_message(signum))


def end_at_once() -> None:
    """From now on in this process, SIGINT and SIGTERM end it at once with the one line (exit 130): start-up,
    before the command group's boundary exists."""
    for s in SIGNALS:
        signal.signal(s, _end)


@contextmanager
def handled_by(handler: Callable[[int, FrameType | None], None]) -> Iterator[bool]:
    """Within: ``handler`` answers SIGINT and SIGTERM; the previous handlers come back afterwards. Yields whether
    it was installed: outside the main thread, where Python delivers no signal, nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield False
        return
    previous = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield True
    finally:
        for s, old in previous.items():
            signal.signal(s, signal.SIG_DFL if old is None else old)  # None: a handler set outside Python


@contextmanager
def unwinding() -> Iterator[None]:
    """Within (a command's work, inside its error boundary): SIGINT and SIGTERM raise ``Interrupted`` where the main
    thread is, so that clean-ups run on the way to the boundary — ``pack`` and ``restore`` remove their staging
    folder so — and inside an import they end the process at once. The previous handlers come back afterwards."""
    global _unwind
    with handled_by(_answer):
        outer, _unwind = _unwind, True
        try:
            yield
        finally:
            _unwind = outer
