"""What every docs generator shares: the repository's paths, and the generator records (figures and tables) and
helpers of ``reasonlab.studies.sections`` bound to this repository."""

from __future__ import annotations

import re
from pathlib import Path

from reasonlab.studies import sections
from reasonlab.studies.prontoqa_tinystories.docs import DL_SEARCH, LM, LM_REGIME  # noqa: F401 - shared here
from reasonlab.studies.reasoning_bias.docs import DEMO, MIXTURE, MIXTURE_SWEEPS, RB_CPU  # noqa: F401 - shared here
from reasonlab.studies.sections import FIGURES, Figures, Table  # noqa: F401 - shared by the generators

REPO = Path(__file__).resolve().parents[2]
DOCS = ("README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").glob("*.md")))
TABLE = re.compile(r"<!-- table: (?P<name>[\w-]+) -->\n(?P<body>.*?)<!-- /table -->", re.S)
IMAGE = re.compile(r"!\[[^\]]*\]\((?P<path>[^)\s]+\.(?:png|svg))\)")

REGIME_ANCHOR = "prontoqa--tinystories-in-the-papers-regime---profile-regime"
MODULAR = "results/modular"


def counts(folders: list[str]) -> str:
    """``sections.counts`` of folders in this repository."""
    return sections.counts(REPO, folders)
