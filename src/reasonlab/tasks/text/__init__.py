"""Text tasks and the data shipped inside the package (``reasonlab/data/<dataset>/``, gzip-compressed, each
folder with its licence and a NOTICE.md naming its origin): nothing is downloaded at run time."""

from __future__ import annotations

import gzip
from importlib import resources


def shipped_lines(dataset: str, name: str) -> list[str]:
    """The lines of a shipped file ``reasonlab/data/<dataset>/<name>.gz`` (without line ends)."""
    path = resources.files("reasonlab") / "data" / dataset / f"{name}.gz"
    return gzip.decompress(path.read_bytes()).decode("utf-8").splitlines()
