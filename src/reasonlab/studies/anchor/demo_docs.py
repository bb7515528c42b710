"""The anchor demo's sections of docs/anchor-composition.md, read from a repository's committed records: its runs
per seed (``reasonlab demo anchor``, committed under ``results/demo-anchor/`` or, for seed 1, with the search behind
its profile under ``results/anchor-search/``), the search's table, and the results tables' line on them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path

from reasonlab.files import read_json
from reasonlab.store import read_metrics
from reasonlab.studies.anchor import STUDY_BAR
from reasonlab.studies.anchor.demo import DEMO_GAMMAS, demo_spec
from reasonlab.studies.sections import Repository, Sections, Table
from reasonlab.sweep.grid import sweep_configs
from reasonlab.sweep.results import markdown_table
from reasonlab.sweep.sql_query import query

ANCHOR_SEARCH = "results/anchor-search"
DEMO_ANCHOR = "results/demo-anchor"  # `reasonlab demo anchor --seed 2` and `--seed 3`
DEMO_SEEDS = (1, 2, 3)  # seed 1's runs are the search's search-s3 / -s3-g03 (run 89 and its partner: the same ids)
DEMO_COMMAND = ("reasonlab demo anchor --seed 2 --out ~/reasonlab-runs, the same with --seed 3, then reasonlab pack "
                f"~/reasonlab-runs/demo-anchor {DEMO_ANCHOR}")
HELD = "heldout/4-3/train_keys"


@dataclass(frozen=True)
class DemoRun:
    """One committed demo run: its end, the seen-pair accuracy that marks its escape (its config's
    ``thresholds.majority``, as its own ``escape.at50``), and per evaluation (Σlr, seen-pair test acc, (4,3)
    inferential)."""
    run_id: str
    label: str
    seen: float
    inf: float
    sym: float
    wall: float
    level: float
    evals: list[tuple[float, float, float]]

    def escape(self) -> tuple[float, float | None]:
        """Where seen-pair accuracy crossed ``level``, as evaluations bracket it: the Σlr of the last one below (0
        when none) and of the first at or above (None when it never did)."""
        below = [lr for lr, seen, _ in self.evals if seen < self.level]
        after = next((lr for lr, seen, _ in self.evals if seen >= self.level), None)
        before = max((lr for lr in below if after is None or lr < after), default=0.0)
        return before, after

    def lean(self) -> tuple[float, float]:
        """The largest (4,3) inferential share up to the escape's evaluation (all of them if it never escaped), and
        the seen-pair accuracy there: how far its answers leaned to the composite one on the way out."""
        after = self.escape()[1]
        way_out = [(inf, seen) for lr, seen, inf in self.evals if after is None or lr <= after]
        return max(way_out)


def _demo_folders(repo: Repository) -> dict[tuple[int, float], str]:
    """Each demo run's committed folder by (seed, γ), pinned by the run id the demo's config gives (a folder
    elsewhere, or another run in the same folder, is not read); a run not committed maps to where it would be."""
    def read() -> dict[tuple[int, float], str]:
        committed = {p.name: str(p.relative_to(repo.root)) for folder in (ANCHOR_SEARCH, DEMO_ANCHOR)
                     for p in repo.runs(folder)}
        return {(seed, c.init.gamma): committed.get(c.run_id(), f"{DEMO_ANCHOR}/{c.run_id()}")
                for seed in DEMO_SEEDS for c in sweep_configs(demo_spec(seed))[0]}

    return repo.once((DEMO_ANCHOR, "folders"), read)


def _demo_inputs(repo: Repository) -> list[str]:
    return [f"{folder}/{f}" for folder in _demo_folders(repo).values()
            for f in ("config.yaml", "summary.json", "metrics.parquet")]


def _demo_run(root: Path, folder: str) -> DemoRun:
    summary = read_json(root / folder / "summary.json", "run summary")
    lr_sum, by_eval = {}, {}
    for r in read_metrics(root / folder / "metrics.parquet"):
        if (r.split, r.metric) == ("train", "lr_sum"):
            lr_sum[r.step] = r.value
        elif (r.split, r.metric) in (("pooled", "seen_test_acc"), (HELD, "acc_inferential")):
            by_eval.setdefault(r.step, {})[r.metric] = r.value
    final = summary["final"]
    return DemoRun(Path(folder).name, summary["label"], final["seen_test_acc"], final[f"{HELD}/inferential"],
                   final[f"{HELD}/symmetric"], summary["wall_time_s"], summary["config"]["thresholds"]["majority"],
                   [(lr_sum[step], e["seen_test_acc"], e["acc_inferential"]) for step, e in sorted(by_eval.items())])


def _demo_pairs(repo: Repository) -> list[tuple[int, DemoRun, DemoRun]]:
    """(seed, small init, large init) per seed: the larger of the demo's γ values is the small initialization (read
    once per reading of the repository: the docs table and the results row both use them)."""
    def read() -> list[tuple[int, DemoRun, DemoRun]]:
        folders, root = _demo_folders(repo), repo.root
        large, small = DEMO_GAMMAS
        return [(seed, _demo_run(root, folders[seed, small]), _demo_run(root, folders[seed, large]))
                for seed in DEMO_SEEDS]

    return repo.once((DEMO_ANCHOR, "pairs"), read)


def _later_by(small: DemoRun, large: DemoRun) -> tuple[float, float | None] | None:
    """How many times later in Σlr the small initialization escaped, as the evaluations bracket it: (at least, at
    most; None when the evaluations give no upper bound: the small one never escaped, or the large one had by the
    first evaluation), or None when the large one never escaped."""
    (s_lo, s_hi), (l_lo, l_hi) = small.escape(), large.escape()
    if l_hi is None:
        return None
    return s_lo / l_hi, (None if s_hi is None or not l_lo else s_hi / l_lo)


def _span(later: tuple[float, float | None] | None) -> str:
    if later is None:
        return "—"
    lo, hi = later
    return f"{lo:.1f}–{hi:.1f}×" if hi is not None else f"≥ {lo:.1f}× (no upper bound from the evaluations)"


def _demo_table(repo: Repository) -> str:
    large_g, small_g = DEMO_GAMMAS

    def esc(run: DemoRun) -> str:
        lo, hi = run.escape()
        return f"{lo:.2f}–{hi:.2f}" if hi is not None else f"> {lo:.2f} (not by the end)"

    rows = [(seed, f"{small.run_id} / {large.run_id}", esc(small), esc(large), _span(_later_by(small, large)),
             "{:.2f} at {:.2f}".format(*small.lean()),
             f"{small.label} {small.inf:.3f} / {small.sym:.3f}, {small.seen:.3f}",
             f"{large.label} {large.inf:.3f} / {large.sym:.3f}, {large.seen:.3f}",
             f"{small.wall:,.0f} / {large.wall:,.0f}") for seed, small, large in _demo_pairs(repo)]
    return markdown_table(
        ["seed", f"runs (γ {small_g:g} / γ {large_g:g})", f"escape in Σlr, γ {small_g:g} (between evaluations)",
         f"the same, γ {large_g:g}", "later by", f"largest (4,3) inferential on the way out, γ {small_g:g}, at "
         "seen-pair acc", f"γ {small_g:g} at the end: label, (4,3) inf / sym, seen-pair acc",
         f"γ {large_g:g} at the end: the same", f"train time s (γ {small_g:g} / γ {large_g:g})"], rows)


def anchor_demo_headline(repo: Repository) -> str:
    """What the demo's seeds show, counted over them: the escape ordering (as the evaluations bracket it), the
    lean to the composite answer on the way out, the contrast's labels and the study's bar."""
    pairs = _demo_pairs(repo)
    n = len(pairs)
    large_g, small_g = DEMO_GAMMAS
    spans = [_later_by(small, large) for _, small, large in pairs]
    later = sum(s is not None and s[0] >= 1 for s in spans)
    leaned = sum(small.lean()[0] >= small.level for _, small, _ in pairs)
    labels = sum(small.label == "inferential" and large.label == "symmetric" for _, small, large in pairs)
    bar = sum(small.inf >= STUDY_BAR and large.sym >= STUDY_BAR for _, small, large in pairs)
    return (f"γ {small_g:g} leaves its plateau later in Σlr than γ {large_g:g} in {later} of {n} seeds as the "
            "per-epoch evaluations bracket the crossings (" + ", ".join(map(_span, spans)) + "); the inferential "
            f"answer the majority of its (4,3) answers (≥ {pairs[0][1].level}) at an evaluation on the way out in "
            f"{leaned} of {n} (largest "
            + ", ".join(f"{small.lean()[0]:.2f}" for _, small, _ in pairs) + f"); the contrast's labels (γ "
            f"{small_g:g} inferential, γ {large_g:g} symmetric) at the end in {labels} of {n}, with each at the "
            f"study's {STUDY_BAR} bar in {bar} of {n}")


def _search_table(root: Path) -> str:
    return markdown_table(*query(root / ANCHOR_SEARCH, (root / ANCHOR_SEARCH / "table.sql").read_text()))


def demo_sections(repo: Repository) -> Sections:
    """The search's table (its committed query over its folder) and the demo's runs per seed."""
    return [("anchor-search", Table("docs/anchor-composition.md", lambda: [ANCHOR_SEARCH, f"{ANCHOR_SEARCH}/table.sql"],
                                    partial(_search_table, repo.root))),
            ("anchor-demo-seeds", Table("docs/anchor-composition.md", partial(_demo_inputs, repo),
                                        partial(_demo_table, repo), command=DEMO_COMMAND))]
