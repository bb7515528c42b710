"""A rich progress bar with loss, accuracies and ETA; silent when asked or when output is not a terminal."""

from __future__ import annotations

from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress


class Progress:
    def __init__(self, total: int, done: int, label: str):
        self._bar = RichProgress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[status]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
            transient=False,
        )
        self._task = self._bar.add_task(label, total=total, completed=done, status="")

    @classmethod
    def silent(cls) -> Progress:
        obj = cls.__new__(cls)
        obj._bar = None
        return obj

    def __enter__(self) -> Progress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.advance(self._task)

    def show(self, epoch: int, epochs: int, loss: float, figures: dict[str, float]) -> None:
        if self._bar is None:
            return
        parts = [f"ep {epoch}/{epochs}", f"loss {loss:.3f}"]
        short = {"train_acc": "train", "seen_test_acc": "seen"}
        for key, value in figures.items():
            if key in short:
                parts.append(f"{short[key]} {value:.2f}")
            elif key.endswith("train_keys/inferential") or key.endswith("train_keys/symmetric"):
                parts.append(f"{key.split('/')[1]} {key.rsplit('/', 1)[1][:3]} {value:.2f}")
        self._bar.update(self._task, status=" ".join(parts))
