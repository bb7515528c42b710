"""Stopping gracefully, and what else falls due between two training steps.

A stop is asked for by the first SIGINT or SIGTERM to a process inside ``stop_on_signals`` (the ``train`` command,
a sweep's own process), or, in a sweep's pool worker, by the sweep setting the event ``share`` was given. The
trainer looks at ``stop_requested()`` between steps only, so the stop always lands on a whole step: the model and
the optimizer state are consistent there and a resume checkpoint can be written. A second signal does not wait.

``Pace`` tells the trainer, with one clock reading per step, when a stop, a wall-time checkpoint or a progress
record is due. This module imports no torch: the sweep's workers import it in their initializer.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Literal, Protocol

from reasonlab.errors import Interrupted
from reasonlab.signals import handled_by

PROGRESS_EVERY_S = 2.0  # progress.json is rewritten at most this often (one write costs an fsync)
_asked = False  # set by the first signal in this process
_shared: _Event | None = None  # a sweep worker's stop event, set by the sweep's own process


class _Event(Protocol):
    def is_set(self) -> bool: ...


def stop_requested() -> bool:
    """Whether this process was asked to stop at the end of its current step."""
    return _asked or (_shared is not None and _shared.is_set())


def request_stop(*_: object) -> None:
    """Ask this process to stop at the end of its current step (also a signal handler: extra arguments ignored)."""
    global _asked
    _asked = True


def share(event: _Event) -> None:
    """In a sweep's worker: stop when the sweep sets ``event`` (a multiprocessing Event)."""
    global _shared
    _shared = event


def _on_signal(signum: int, _frame: object) -> None:
    global _asked
    if _asked:  # the second: at once, whatever was not saved is lost
        raise Interrupted("stopped at once by a second signal; run the same command to resume from the last "
                          "checkpoint")
    _asked = True


@contextmanager
def stop_on_signals() -> Iterator[None]:
    """Within: the first SIGINT or SIGTERM asks for a stop between steps (``stop_requested``), a second one raises
    ``Interrupted`` at once. The previous handlers come back afterwards. Outside the main thread, where Python
    delivers no signal, nothing changes."""
    global _asked
    with handled_by(_on_signal) as installed:
        try:
            yield
        finally:
            if installed:
                _asked = False


Due = Literal["stop", "checkpoint", "progress"]


class Pace:
    """What is due before the next training step: the stop asked for, a resume checkpoint (``checkpoint_minutes``
    of wall time since the last, so a kill -9 loses at most that), or a progress record (every
    ``PROGRESS_EVERY_S``, the first at once); and the speed so far, for the progress record's rate and ETA."""

    def __init__(self, checkpoint_minutes: float, step: int, total: int):
        self.every_s, self.total = checkpoint_minutes * 60, total
        self.start(step)

    def start(self, step: int) -> None:
        """Restart the clocks at ``step``, where this process's training begins (after a resume, the restored
        step): the first progress record at once, the first wall-time checkpoint ``checkpoint_minutes`` on."""
        now = time.monotonic()
        self.saved_at, self.reported_at = now, float("-inf")
        self.first_step, self.started = step, now

    def due(self) -> Due | None:
        if stop_requested():
            return "stop"
        now = time.monotonic()
        if now - self.saved_at >= self.every_s:
            self.saved_at = now
            return "checkpoint"
        if now - self.reported_at >= PROGRESS_EVERY_S:
            self.reported_at = now
            return "progress"
        return None

    def speed(self, step: int) -> tuple[float | None, float | None]:
        """(steps per second, seconds left) over this process's training so far, evaluation included; None
        before the first step."""
        elapsed = time.monotonic() - self.started
        if step <= self.first_step or elapsed <= 0:
            return None, None
        rate = (step - self.first_step) / elapsed
        return rate, (self.total - step) / rate
