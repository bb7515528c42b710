"""The tables no single study owns, gathered from every registered study: the README's verdict table (their
claims), docs/results.md's account of those verdicts and its "what reproduces" (their findings), each reading the
committed paths the studies name (``Study.finding_inputs``).

Rows cross studies in a fixed order, the one the docs are read in: the README's paper by paper (``CLAIM_ORDER``),
docs/results.md's with the anchor phase diagrams and both demos first (``FINDING_ORDER``). An entry names a study
(all its rows, in its own order) or some of its rows (``<study>/<key>``, or a key's first part: ``e1`` names
``e1/emb_mlp``); rows no entry names follow in registration order.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import partial
from typing import TypeVar

from reasonlab.registry import studies
from reasonlab.studies.claims import RULE, Claim, Finding
from reasonlab.studies.reference import reference_cell
from reasonlab.studies.sections import Repository, Sections, Table
from reasonlab.sweep.results import markdown_table

CLAIM_ORDER = ("anchor-phase", "anchor-trajectory", "anchor-lr-wd", "addition", "scan", "cogs", "prontoqa",
               "modular-phase", "reasoning-bias/e1", "prontoqa-tinystories", "reasoning-bias/fig8")
FINDING_ORDER = ("anchor-phase/phase", "reasoning-bias/demo", "anchor-phase/demo")
Row = TypeVar("Row", Claim, Finding)


def in_order(rows: Iterable[tuple[str, Row]], order: Sequence[str]) -> list[Row]:
    """``rows``, each with its name ``<study>/<key>``, by the first entry of ``order`` that names them (those no
    entry names last, ties as given); a row equal to one before it (a row studies share) shows once."""
    def rank(item: tuple[str, Row]) -> int:
        name = item[0]
        return next((i for i, entry in enumerate(order) if name == entry or name.startswith(entry + "/")), len(order))

    out: list[Row] = []
    for _, row in sorted(rows, key=rank):
        if row not in out:
            out.append(row)
    return out


def _claims(repo: Repository) -> list[Claim]:
    """Every study's claims, computed once per reading of the repository: the README's table and docs/results.md's
    account both read them."""
    return repo.once("claims", lambda: in_order(
        ((f"{s.name}/{c.key}", c) for s in studies().values() for c in s.claims(repo)), CLAIM_ORDER))


def _findings(repo: Repository) -> list[Finding]:
    return in_order(((f"{s.name}/{f.key}", f) for s in studies().values() for f in s.findings(repo)), FINDING_ORDER)


def _inputs(repo: Repository) -> list[str]:
    """Every study's finding inputs, gathered once per reading of the repository: the three tables all read them."""
    return repo.once("finding inputs", lambda: list(dict.fromkeys(
        path for s in studies().values() for path in s.finding_inputs(repo))))


def _verdicts(repo: Repository) -> str:
    """The README's front table: per headline claim of the papers, what the committed runs give and the verdict
    (``claims.RULE``, stated in docs/results.md)."""
    rows = [(c.study_cell, c.claim, c.here, c.verdict, reference_cell(repo.root, c.reference), c.link)
            for c in _claims(repo)]
    return markdown_table(["study", "the paper's claim", "here", "verdict", "checked against the authors' code",
                           "details"], rows)


def _verdict_readings(repo: Repository) -> str:
    """docs/results.md's account of the README's verdicts: the rule, then per claim what one unit is, when it
    holds, and how many units held, did not hold and could not test it."""
    rows = [(c.title, c.unit, sum(u is True for u in c.units), sum(u is False for u in c.units),
             sum(u is None for u in c.units), c.verdict) for c in _claims(repo)]
    return RULE + "\n\n" + markdown_table(["claim", "one unit, and when it holds", "held", "did not hold",
                                            "could not test", "verdict"], rows)


def _what_reproduces(repo: Repository) -> str:
    """The results table: per study, what is committed under results/ (counted from it), and what it showed
    (computed from it)."""
    rows = [(f.study, f.profile, f.committed, f.showed, f.details) for f in _findings(repo)]
    table = markdown_table(["study (command)", "profile", "committed under results/", "what it showed", "details"],
                           rows)
    return table.replace("](docs/", "](")  # it lives in docs/results.md


def sections(repo: Repository) -> Sections:
    """The three tables over the records committed in ``repo``."""
    inputs = partial(_inputs, repo)
    return [("verdicts", Table("README.md", inputs, partial(_verdicts, repo))),
            ("verdict-readings", Table("docs/results.md", inputs, partial(_verdict_readings, repo))),
            ("what-reproduces", Table("docs/results.md", inputs, partial(_what_reproduces, repo)))]
