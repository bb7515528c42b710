"""The shipped TinyStories sample (R. Eldan and Y. Li, arXiv 2305.07759; CDLA-Sharing-1.0, see
``reasonlab/data/tinystories/NOTICE.md`` and ``LICENSE``): the first 2 MiB of the training text, read offline."""

from __future__ import annotations

import gzip
from importlib import resources

SEPARATOR = "\n<|endoftext|>\n"


def load_stories() -> list[str]:
    """The complete stories of the sample: split on lines holding only ``<|endoftext|>``, dropping the last
    segment, which the 2 MiB byte cut truncated (2,316 stories)."""
    path = resources.files("reasonlab") / "data" / "tinystories" / "tinystories_sample.txt.gz"
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    return [s.strip("\n") for s in text.split(SEPARATOR)[:-1]]
