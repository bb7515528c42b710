"""The parity run's card rows: the accuracy on seen and held-out strings, the gap between them, and the best
held-out accuracy over the run.

Layer: report (by its file name).
"""

from __future__ import annotations

from reasonlab.report.card import num


def card(summary: dict) -> list[tuple[str, str]]:
    final, best = summary["final"], summary.get("best", {})
    return [("seen bit strings", f"accuracy {num(final.get('seen_acc'))}"),
            ("held-out bit strings", f"accuracy {num(final.get('held_out_acc'))}"),
            ("generalization gap", num(summary["outcome"].get("gap"))),
            ("best held-out accuracy", f"{num(best.get('held_out_acc'))} at epoch {best.get('epoch', '—')}")]
