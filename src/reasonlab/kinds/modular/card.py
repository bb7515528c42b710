"""The modular run's history rows on its card: its plateau exits.

Layer: report (by its file name).
"""

from __future__ import annotations

from reasonlab.kinds.modular.evaluate import PLATEAU_LEVELS
from reasonlab.report.card import num


def history(summary: dict) -> list[tuple[str, str]]:
    """Where the training loss first fell to a fraction of chance, and the last-shot accuracies there."""
    rows = []
    for key, e in (summary.get("plateau") or {}).items():
        level = f"{PLATEAU_LEVELS[key]:g}·ln p" if key in PLATEAU_LEVELS else key
        if not e:
            rows.append((f"plateau: loss ≤ {level}", "not reached"))
            continue
        accs = ", ".join(f"{k} {v:.2f}" for k, v in e.get("last_shot", {}).items())
        rows.append((f"plateau: loss ≤ {level}", f"epoch {e['epoch']}, step {e['step']}, Σlr "
                                                 f"{num(e['lr_sum'], '.3g')}, loss {e['loss']:.3f}; last shot: {accs}"))
    return rows
