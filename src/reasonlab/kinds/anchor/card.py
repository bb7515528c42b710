"""The anchor run's card rows: its accuracies (each by its label and stored name), each held-out pair's outcome, and
its escape points.

Layer: report (by its file name).
"""

from __future__ import annotations

from reasonlab.report.card import num
from reasonlab.vocabulary import labelled


def history(summary: dict) -> list[tuple[str, str]]:
    """The escape points: where seen-pair accuracy (by its stored name) first reached each level, and what the
    held-out pairs did."""
    return [(f"escape: seen_test_acc ≥ {int(key[2:]) / 100:g}", _escape_text(point) if point else "not reached")
            for key, point in (summary.get("escape") or {}).items()]


def _escape_text(e: dict) -> str:
    pairs = ", ".join(f"{k} {v:.2f}" for k, v in e.get("heldout", {}).items() if "/train_keys/" in k)
    return f"epoch {e['epoch']}, step {e['step']}, Σlr {num(e['lr_sum'], '.3g')}; {pairs}"


def card(summary: dict) -> list[tuple[str, str]]:
    """Train and seen-pair accuracy, one row per held-out pair (named with its results columns: its answers' shares
    on the train keys at the end, as ``results`` and SQL give them), then the escape points."""
    final = summary["final"]
    rows = [(labelled(name, "anchor"), num(final.get(name))) for name in ("train_acc", "seen_test_acc")]
    for pair, o in (summary["outcome"].get("pairs") or {}).items():
        clean = " (clean)" if o["clean"] else ""
        rows.append((f"held-out {pair} (outcome.{pair}.*)",
                     f"{o['label']}{clean}: inferential {num(o['inferential'])}, symmetric {num(o['symmetric'])} "
                     f"({o['symmetric_target']}), other {num(o['other'])}"))
    return rows + history(summary)
