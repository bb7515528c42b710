"""Training progress: a rich bar on a terminal, plain lines elsewhere (a log file, nohup, a batch job: one after
the first step, then one every ``LINE_EVERY_S`` at most and one per epoch), or nothing. The bar's label is short
(``γ0.5 d2 s1``) and its status (epoch, loss, last evaluation) sits on a line under it, so that step count, elapsed
time and ETA stay on screen at 80 columns; the run's profile is printed once above it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Literal

from rich.console import RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress
from rich.text import Text

from reasonlab.config import RunConfig

Mode = Literal["bar", "lines", "off"]
LINE_EVERY_S = 10.0  # plain lines inside an epoch: at most one this often


def run_label(cfg: RunConfig) -> str:
    """A run in a few characters (``γ0.5 d2 s1``): what tells runs of one sweep apart on a progress line."""
    start = "gpt" if cfg.init.scheme == "gpt" else f"γ{cfg.init.gamma:g}"
    depth = f" d{cfg.model.depth}" if cfg.model.kind == "transformer" else ""
    return f"{start}{depth} s{cfg.seed}"


class Progress:
    def __init__(self, total: int, done: int, label: str, mode: Mode = "bar", log: Callable[[str], None] = print):
        self.total, self.done, self.label, self.log = total, done, label, log
        self._started, self._start_done = time.perf_counter(), done
        self._bar = None
        if mode == "bar":
            self._bar = _Bar(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                             TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(), transient=False)
            self._task = self._bar.add_task(label, total=total, completed=done, status=[])
        self._lines = mode == "lines"
        self._last_line = float("-inf")  # the first step's line comes at once

    @classmethod
    def silent(cls) -> Progress:
        return cls(0, 0, "", "off")

    def __enter__(self) -> Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def advance(self) -> None:
        self.done += 1
        if self._bar is not None:
            self._bar.advance(self._task)
        elif self._lines and time.perf_counter() - self._last_line >= LINE_EVERY_S:
            self._line([])

    def show(self, epoch: int, epochs: int, loss: float, figures: list[str]) -> None:
        """The status after an epoch: ``figures``, the short parts of the task kind's progress line."""
        parts = [f"ep {epoch}/{epochs}", f"loss {loss:.3f}", *figures]
        if self._bar is not None:
            self._bar.update(self._task, status=parts)
        elif self._lines:
            self._line(parts)

    def _line(self, parts: list[str]) -> None:
        now = time.perf_counter()
        self._last_line, elapsed = now, now - self._started
        rate = (self.done - self._start_done) / elapsed if elapsed > 0 else 0.0
        eta = (self.total - self.done) / rate if rate > 0 else float("nan")
        self.log(f"{self.label} step {self.done}/{self.total} {' '.join([*parts, ''])}· {rate:.2f} steps/s, "
                 f"{_clock(elapsed)} elapsed, ETA {_clock(eta)}")


class _Bar(RichProgress):
    """Rich's progress bar with the run's status (epoch, loss, last evaluation) on lines of its own under it: in a
    terminal of 80 or 100 columns the bar keeps its step count, elapsed time and ETA, and the status wraps between
    its parts (``reasoning_test_acc 0.70`` stays on one line) rather than being cut."""

    def get_renderables(self) -> Iterable[RenderableType]:
        yield self.make_tasks_table(self.tasks)
        for task in self.tasks:
            for line in status_lines(task.fields["status"], self.console.width):
                yield Text(line, no_wrap=True, overflow="ellipsis")


def status_lines(parts: list[str], width: int, indent: str = "  ") -> list[str]:
    """The status parts packed into lines of at most ``width`` characters, broken only between parts."""
    lines: list[str] = []
    for part in parts:
        if lines and len(lines[-1]) + 1 + len(part) <= width:
            lines[-1] += f" {part}"
        else:
            lines.append(f"{indent}{part}")
    return lines


def _clock(seconds: float) -> str:
    if seconds != seconds:  # NaN: no rate yet
        return "?"
    minutes, s = divmod(int(seconds), 60)
    h, m = divmod(minutes, 60)
    return f"{h}:{m:02d}:{s:02d}"
