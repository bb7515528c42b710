"""The one set of helpers every study's ``summary.md`` is written with: a header, tables, failed runs, the page.

Layer: report; imports nothing else of reasonlab (a sweep report is passed in, read by its ``failed`` field).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def header(study: str, profile: str | None, label: str | Iterable[str], timing: str, *notes: str) -> list[str]:
    """``# study, profile `p```, the profile's label (or labels, one bullet each), any notes and the timing line."""
    title = f"# {study}, profile `{profile}`" if profile else f"# {study}"
    labels = [label] if isinstance(label, str) else [f"- {x}" for x in label]
    lines = [title, "", *labels, ""]
    for note in notes:
        lines += [note, ""]
    return lines + [timing, ""]


def table(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """A markdown table: the header, its rule and one line per row (cells as given, already formatted)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    return lines + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]


def epoch_cell(epoch: int | None) -> str:
    """An epoch (or step) in a table, "—" for never within the run."""
    return "—" if epoch is None else str(epoch)


def held_in(per_seed: dict[int, bool | None]) -> str:
    """"k of n seeds (a, b)": in how many seeds a claim held, naming them when it is some but not all; a seed where
    it could not be tested (None) is left out of n and counted apart ("no seed" when none could be)."""
    tested = {s: ok for s, ok in per_seed.items() if ok is not None}
    if per_seed and not tested:
        return f"no seed: not testable in any of {len(per_seed)}"
    held = [s for s, ok in sorted(tested.items()) if ok]
    text = f"{len(held)} of {len(tested)} seed{'s' if len(tested) != 1 else ''}"
    text += f" ({', '.join(map(str, held))})" if 0 < len(held) < len(tested) else ""
    untested = len(per_seed) - len(tested)
    return text + (f"; {untested} more not testable" if untested else "")


def seeds_text(seeds: set[int]) -> str:
    """"seeds 1–3", "seeds 1, 3" or "seed 2"."""
    s = sorted(seeds)
    if len(s) == 1:
        return f"seed {s[0]}"
    return f"seeds {s[0]}–{s[-1]}" if s == list(range(s[0], s[-1] + 1)) else f"seeds {', '.join(map(str, s))}"


def failed_runs(report: Any) -> list[str]:
    """A "Failed runs" section listing each failed run and its error, or nothing."""
    failed = getattr(report, "failed", [])
    return ["", "## Failed runs", ""] + [f"- {o.run_id}: {o.error}" for o in failed] if failed else []


def document(*parts: list[str]) -> str:
    """The page: the parts' lines joined, ending in one newline."""
    return "\n".join(line for part in parts for line in part) + "\n"
