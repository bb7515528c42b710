"""What an evaluation yields, independent of how it was scored: one set's counts (``SetScore``), the offset
histogram's bins and pooled accuracies. Both scorers (``scoring``, ``sequence``) build on it, so neither imports
the other's callers.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def histogram_bins() -> list[str]:
    return [f"<{HIST_MIN}", *(str(i) for i in range(HIST_MIN, HIST_MAX + 1)), f">{HIST_MAX}"]


def pooled(scores: dict[str, SetScore], prefix: str, kind: str = "designated") -> float | None:
    chosen = [s for name, s in scores.items() if name.startswith(prefix)]
    if not chosen:
        return None
    return sum(s.correct[kind] for s in chosen) / sum(s.n for s in chosen)
