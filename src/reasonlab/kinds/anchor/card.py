"""The anchor run's card rows (its accuracies, each held-out pair's outcome, and its escape points) and its words
in the report (``WORDS``, ``qualify``: ``heldout/4-3/train_keys`` reads ``held-out (4,3) · train keys``).

Layer: report (by its file name).
"""

from __future__ import annotations

import re

from reasonlab.kinds.anchor.config import HELDOUT, Pair
from reasonlab.kinds.anchor.figures import NAMES
from reasonlab.report.card import num

WORDS = {**NAMES, HELDOUT.rstrip("/"): "held-out", "train_keys": "train keys", "test_keys": "test keys",
         "seen_test_acc": "seen pairs, test keys: accuracy"}


def qualify(part: str) -> str | None:
    """A pair key (``4-3``) qualifies the part before it, as its caption: ``held-out (4,3)``."""
    return Pair.parse(part).caption if re.fullmatch(r"\d+-\d+", part) else None


def history(summary: dict) -> list[tuple[str, str]]:
    """The escape points: where seen-pair accuracy first reached each level, and what the held-out pairs did."""
    return [(f"escape: seen-pair ≥ {int(key[2:]) / 100:g}", _escape_text(point) if point else "not reached")
            for key, point in (summary.get("escape") or {}).items()]


def _escape_text(e: dict) -> str:
    pairs = ", ".join(f"{k} {v:.2f}" for k, v in e.get("heldout", {}).items() if "/train_keys/" in k)
    return f"epoch {e['epoch']}, step {e['step']}, Σlr {num(e['lr_sum'], '.3g')}; {pairs}"


def card(summary: dict) -> list[tuple[str, str]]:
    """Train and seen-pair accuracy, one row per held-out pair, then the escape points."""
    final = summary["final"]
    rows = [("train accuracy", num(final.get("train_acc"))),
            ("seen-pair test-key accuracy", num(final.get("seen_test_acc")))]
    for pair, o in (summary["outcome"].get("pairs") or {}).items():
        clean = " (clean)" if o["clean"] else ""
        rows.append((f"held-out {pair}", f"{o['label']}{clean}: inferential {num(o['inferential'])}, "
                                         f"symmetric {num(o['symmetric'])} ({o['symmetric_target']}), "
                                         f"other {num(o['other'])}"))
    return rows + history(summary)
