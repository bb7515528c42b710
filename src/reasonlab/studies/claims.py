"""What a study puts in the results tables that cross studies (``reasonlab.studies.tables``): its claims, each a
paper's headline claim read on units with a verdict by one rule (the README's verdict table and docs/results.md's
account of it), and its findings, what each committed arm showed (docs/results.md's "what reproduces").

A claim is read on units — seeds, (depth) lines of a phase diagram, training sizes, runs — each of which held, did
not hold, or could not test the claim (None: a side did not fit its training data, or no run reached the bar the
claim is stated at). ``verdict`` turns the units into one of four words by ``RULE``.
"""

from __future__ import annotations

from dataclasses import dataclass

from reasonlab.studies.reference import Reference

VERDICTS = ("reproduced", "partly", "not reproduced", "not testable at this scale")
RULE = ("Each claim is read on units (seeds, lines of a phase diagram, training sizes or runs, as its row says); a "
        "unit held the claim, did not hold it, or could not test it — a side did not fit its training data, or no "
        "run reached the bar the claim is stated at. **not testable at this scale**: no unit could test it; "
        "**reproduced**: every unit held it; **not reproduced**: no unit held it; **partly**: some units held it "
        "and others did not, or could not test it.")


def verdict(units: list[bool | None]) -> str:
    """The verdict word of a claim from its units' outcomes (True held, False did not, None could not test), by
    ``RULE``."""
    tested = [u for u in units if u is not None]
    if not tested:
        return VERDICTS[3]
    if all(units):
        return VERDICTS[0]
    return VERDICTS[1] if any(tested) else VERDICTS[2]


@dataclass(frozen=True)
class Claim:
    """One row of the README's verdict table: its ``key`` within the study (the tables order rows by
    ``<study>/<key>``), the study part it reads (``title``) and its paper (an arXiv id), the paper's claim with its
    number, the committed runs' figure with its seeds (``here``), what one unit is and when it holds (``unit``, for
    docs/results.md), each unit's outcome, where the claim is checked against the authors' code (None: nowhere) and
    the doc that details it."""

    key: str
    title: str
    paper: str
    claim: str
    here: str
    unit: str
    units: list[bool | None]
    reference: Reference | None
    link: str

    @property
    def verdict(self) -> str:
        return verdict(self.units)

    @property
    def study_cell(self) -> str:
        return f"{self.title} ([{self.paper}](https://arxiv.org/abs/{self.paper}))"


@dataclass(frozen=True)
class Finding:
    """One row of docs/results.md's "what reproduces": its ``key`` within the study (as a claim's), the study and
    the command that trains it, the profile, what is committed under results/ (counted from it), what it showed
    (computed from it) and the doc that details it. Studies that share a row (the four benchmarks) each give it,
    and it shows once."""

    key: str
    study: str
    profile: str
    committed: str
    showed: str
    details: str
