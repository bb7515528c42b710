"""Figures (matplotlib, headless): every figure is written as PNG and SVG, each by atomic rename."""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from reasonlab.files import atomic_write_bytes, link_error  # noqa: E402


def figure_bytes(fig: plt.Figure, ext: str, dpi: int = 130) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format=ext, dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


def save_figure(fig: plt.Figure, base: Path) -> list[Path]:
    """Write ``base.png`` and ``base.svg`` and close the figure; a figures folder that is a link is refused (the
    write would land wherever it points)."""
    if base.parent.is_symlink():
        plt.close(fig)
        raise link_error(base.parent)
    base.parent.mkdir(parents=True, exist_ok=True)
    out = []
    for ext in ("png", "svg"):
        path = base.parent / f"{base.name}.{ext}"  # not with_suffix: names like "cosine-g0.8" hold dots
        atomic_write_bytes(path, figure_bytes(fig, ext))
        out.append(path)
    plt.close(fig)
    return out
