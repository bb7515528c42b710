"""What an evaluation yields, independent of how it was scored: one set's counts (``SetScore``), the offset
histogram's bins and pooled accuracies, and a task kind's report of the whole evaluation (``Evaluation``). Both
scorers (``scoring``, ``sequence``) build on it, so neither imports the other's callers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

HIST_MIN, HIST_MAX = -20, 20


@dataclass
class SetScore:
    n: int
    correct: dict[str, int]
    histogram: list[int] | None  # bins: "<-20", -20..20, ">20"
    loss: float | None = None  # mean cross-entropy against the "designated" target, when the set has one
    counts: dict[str, int] | None = None  # denominators of kinds not counted over all n (e.g. one shot of n)

    def acc(self, kind: str) -> float:
        return self.correct[kind] / (self.counts or {}).get(kind, self.n)


@dataclass(frozen=True)
class Evaluation:
    """A task kind's report of one evaluation (``Kind.summarize``).

    label: the run's outcome label at this evaluation.
    final: the figures the run summary keeps (``final.*`` results columns).
    pooled: the figures logged as metric rows (split ``pooled``) at every evaluation.
    figures: the figures the progress line and ``progress.json`` show.
    outcome: the summary's ``outcome``: its label and the kind's own fields (typed by the kind's ``Report``).
    histograms: each held-out set's offset histogram (``histogram_bins``), kept by the summary.
    select: the early-stopping score, higher is better (the trainer keeps the best checkpoint); None: no early
        stopping.
    """

    label: str
    final: dict[str, float | None]
    pooled: dict[str, float | None] = field(default_factory=dict)
    figures: dict[str, float | None] = field(default_factory=dict)
    outcome: dict[str, Any] = field(default_factory=dict)
    histograms: dict[str, list[int]] = field(default_factory=dict)
    select: float | None = None


def histogram_bins() -> list[str]:
    return [f"<{HIST_MIN}", *(str(i) for i in range(HIST_MIN, HIST_MAX + 1)), f">{HIST_MAX}"]


def pooled(scores: dict[str, SetScore], prefix: str, kind: str = "designated") -> float | None:
    chosen = [s for name, s in scores.items() if name.startswith(prefix)]
    if not chosen:
        return None
    return sum(s.correct[kind] for s in chosen) / sum(s.n for s in chosen)
