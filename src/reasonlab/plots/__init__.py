"""Figures (matplotlib, headless): every figure is written as PNG and SVG, each by atomic rename."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from reasonlab.store import atomic_write_bytes  # noqa: E402


def save_figure(fig: plt.Figure, base: Path) -> list[Path]:
    """Write ``base.png`` and ``base.svg`` and close the figure."""
    base.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for ext in ("png", "svg"):
        buf = io.BytesIO()
        fig.savefig(buf, format=ext, dpi=130, bbox_inches="tight")
        path = base.parent / f"{base.name}.{ext}"  # not with_suffix: names like "cosine-g0.8" hold dots
        atomic_write_bytes(path, buf.getvalue())
        out.append(path)
    plt.close(fig)
    return out
