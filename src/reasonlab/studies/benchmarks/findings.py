"""The benchmarks' rows of the results tables, read from a repository's committed records: each benchmark's claim
(small init + large wd against large init + small wd, size by size) and the one finding the four share (their
committed ``cpu`` arms, counted together)."""

from __future__ import annotations

from collections.abc import Iterable

from reasonlab.report.markdown import seeds_text
from reasonlab.studies.anchor import PAPER
from reasonlab.studies.base import Study
from reasonlab.studies.benchmarks.docs import ARM, DOC, LARGE, SMALL, committed
from reasonlab.studies.benchmarks.report import SAME, comparison
from reasonlab.studies.claims import Claim, Finding
from reasonlab.studies.sections import Repository, counts

HEADLINES = {"ood_exact": "o.o.d. exact match", "id_judgement": "true/false judgement", "id_exact": "i.d. exact match"}
LINK = f"[benchmarks]({DOC}#what-the-cpu-profiles-show-in-one-paragraph)"


def claim(repo: Repository, study: Study) -> Claim:
    """The paper's claim on one benchmark (a ``BenchmarkStudy``: its ``title`` and ``claim``), per training size."""
    table = committed(study, repo).measured()
    comp = comparison(table, SMALL, LARGE)
    units = [None if w.startswith("not testable") else w.startswith("better") for *_, w in comp]
    sizes = "; ".join(f"{n:,} rows: " + ("not testable" if u is None else f"{va:.2f} vs {vb:.2f} ({w.split(';')[0]})")
                      for (n, va, vb, w), u in zip(comp, units, strict=True))
    return Claim(
        ARM, f"anchor composition, {study.title}", PAPER, study.claim,
        f"{HEADLINES[table[0]['headline']]}, small vs large init: {sizes}; {seeds_text({t['seed'] for t in table})}",
        f"a training size of the `cpu` sweep: held when small init + large wd is better by {SAME} or more "
        "in the mean and in every seed; not testable when a side did not fit its training data in most seeds",
        units, None, LINK)


def shared_finding(repo: Repository, studies: Iterable[Study]) -> Finding:
    """The benchmarks' one row: their committed ``cpu`` arms and each one's headline (computed once per reading of
    the repository, though each benchmark gives it)."""
    def read() -> Finding:
        sweeps = [committed(study, repo) for study in studies]
        return Finding("cpu", "addition, SCAN, COGS, PrOntoQA (`reproduce addition|scan|cogs|prontoqa`)", "`cpu`",
                       counts(repo, [sweep.folder for sweep in sweeps]), "; ".join(sweep.found() for sweep in sweeps),
                       LINK)

    return repo.once(("benchmarks", "finding"), read)
