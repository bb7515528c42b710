"""What a benchmark's runs show: one row per run (``runs_table``), the settings compared size by size under the
study's rule (``comparison``, ``verdict``), the report's lines and the benchmark's figure."""

from __future__ import annotations

import re
from pathlib import Path
from statistics import mean

from reasonlab.plots.benchmarks import plot_benchmark
from reasonlab.report.markdown import document, header
from reasonlab.report.markdown import table as md_table
from reasonlab.studies.base import Study
from reasonlab.studies.benchmarks.plan import SETTINGS, Plan
from reasonlab.sweep.runner import SweepReport

SAME = 0.02  # accuracy differences below this are called "no difference"


def runs_table(rows: list[dict], plan: Plan) -> list[dict]:
    """One dict per run: setting, size, seed, the headline and the other figures, categories, steps."""
    names = {tuple(v): k for k, v in plan.settings().items()}
    out = []
    for r in rows:
        setting = names.get((r["init.gamma"], r["train.weight_decay"]))
        if setting is None:
            continue
        head = _headline(r)
        cats = {k.split(".", 2)[2]: v for k, v in r.items() if k.startswith(f"final.{head.split('_')[0]}.")
                and v is not None}
        out.append({"setting": setting, "n": r["task.n_train"], "seed": r["seed"], "headline": head,
                    "value": r[f"final.{head}"], "train": r["final.train_exact"], "id": r.get("final.id_exact"),
                    "ood": r.get("final.ood_exact"), "fit_step": r.get("best.fit_step"),
                    "converge_step": r.get(f"best.{head}_step"), "categories": cats, "label": r["label"],
                    "run": r["run_id"]})
    return out


def _headline(row: dict) -> str:
    """The figure the label reads (``evaluate.sequence.headline``), from a results row."""
    for name in ("ood_exact", "id_judgement", "id_exact"):
        if row.get(f"final.{name}") is not None:
            return name
    raise KeyError("no headline figure in the results row")


def cell(table: list[dict], setting: str, n: int, key: str) -> float | None:
    """Mean of ``key`` over seeds for one (setting, size); None when no run has it."""
    values = [t[key] for t in table if t["setting"] == setting and t["n"] == n and t[key] is not None]
    return mean(values) if values else None


def category_means(table: list[dict], n: int) -> tuple[list[str], dict[str, dict[str, float | None]]]:
    """(categories in natural order, setting → category → mean exact match over seeds) at training size ``n``;
    None where a setting has no run with that category."""
    cats = sorted({c for t in table if t["n"] == n for c in t["categories"]}, key=natural)
    means = {}
    for s in SETTINGS:
        means[s] = {}
        for c in cats:
            got = [t["categories"][c] for t in table if t["setting"] == s and t["n"] == n and c in t["categories"]]
            means[s][c] = mean(got) if got else None
    return cats, means


def comparison(table: list[dict], a: str, b: str) -> list[tuple[int, float, float, str]]:
    """Per size: (n, headline of a, headline of b — each the mean over its seeds —, what they say for a, by
    ``RULE``: not testable / better / worse / no difference / mixed across seeds; where a side has several seeds, in
    how many of the seeds both ran a was better on its own, and the seed counts when the sides differ; and which
    side did not fit its training data)."""
    out = []
    for n in sorted({t["n"] for t in table}):
        va, vb = cell(table, a, n, "value"), cell(table, b, n, "value")
        if va is None or vb is None:
            continue
        notes = []
        seeds = {s: _seeds(table, s, n) for s in (a, b)}
        paired = sorted(seeds[a] & seeds[b])
        by_seed = [_compare(_value(table, a, n, seed), _value(table, b, n, seed)) for seed in paired]
        if max(map(len, seeds.values())) > 1:
            notes.append(f"seed by seed better in {by_seed.count('better')} of {len(paired)}")
            if seeds[a] != seeds[b]:
                notes.append(f"seeds {len(seeds[a])} vs {len(seeds[b])}")
        unfitted = False
        for s in (a, b):
            runs = [t for t in table if t["setting"] == s and t["n"] == n]
            if unfit := sum(t["label"] == "not-fitted" for t in runs):
                notes.append(f"{s} did not fit" + (f" in {unfit} of {len(runs)} seeds" if len(runs) > 1 else ""))
                unfitted = unfitted or 2 * unfit > len(runs)
        word = _compare(va, vb)
        if unfitted:
            word = "not testable"
        elif word != "no difference" and len(paired) > 1 and by_seed.count(word) < len(paired):
            word = "mixed across seeds"
        out.append((n, va, vb, "; ".join([word, *notes])))
    return out


# When a comparison calls one setting better (``comparison``): both sides fitted their training data in most of
# their seeds (else the gap says nothing about generalization: "not testable"), the means differ by SAME or more,
# and every seed both ran goes the same way (else "mixed across seeds").
RULE = (f"better or worse: the means differ by {SAME} or more and every seed both ran agrees; not testable: a side "
        "did not fit its training data in most of its seeds")


def _compare(va: float, vb: float) -> str:
    return "no difference" if abs(va - vb) < SAME else "better" if va > vb else "worse"


def _seeds(table: list[dict], setting: str, n: int) -> set[int]:
    """The seeds of one (setting, size) that have the headline."""
    return {t["seed"] for t in table if t["setting"] == setting and t["n"] == n and t["value"] is not None}


def _value(table: list[dict], setting: str, n: int, seed: int) -> float:
    return next(t["value"] for t in table if (t["setting"], t["n"], t["seed"]) == (setting, n, seed))


def natural(name: str) -> tuple:
    """Sort key that orders the numbers inside category names by value (``out_len:≤8`` before ``≤16``)."""
    return tuple(int(part) if i % 2 else part for i, part in enumerate(re.split("([0-9]+)", name)))


def _fmt(v: float | None, digits: int = 3) -> str:
    return "—" if v is None else f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def summary_markdown(study: Study, profile: str, label: str, table: list[dict],
                     report: SweepReport) -> str:
    return document(header(study.name, profile, label, report.timing(), study.about),
                    [f"![{study.name}](figures/{study.name}.png)", ""], report_lines(table))


def report_lines(table: list[dict], level: int = 2) -> list[str]:
    """What a benchmark sweep showed (its summary's body, and the docs' section, whose headings are at ``level``):
    the headline, every run, the categories at the largest size and, per size, whether small initialization
    generalized better."""
    h = "#" * level
    head = table[0]["headline"] if table else "ood_exact"
    lines = [f"Headline figure: `{head}` (exact match of the greedy decoding"
             + (", read as the true/false judgement" if head.endswith("judgement") else "") + ").", "",
             f"{h} Runs", "",
             *md_table(["setting", "n_train", "seed", "train exact", "id exact", "ood exact", "headline", "fit step",
                        "headline ≥ fit step", "label", "run"],
                       [(t["setting"], t["n"], t["seed"], _fmt(t["train"]), _fmt(t["id"]), _fmt(t["ood"]),
                         _fmt(t["value"]), _fmt(t["fit_step"]), _fmt(t["converge_step"]), t["label"], t["run"])
                        for t in sorted(table, key=lambda t: (SETTINGS.index(t["setting"]), t["n"], t["seed"]))])]
    sizes = sorted({t["n"] for t in table})
    if sizes:
        n = sizes[-1]
        cats, means = category_means(table, n)
        present = [s for s in SETTINGS if any(t["setting"] == s for t in table)]
        lines += ["", f"{h} Per category (`{head.split('_')[0]}` set, exact match, n_train = {n}, mean over seeds)",
                  "", *md_table(["category", *present], [(c, *(_fmt(means[s][c]) for s in present)) for c in cats])]
    lines += ["", f"{h} Did small initialization generalize better at this scale?", ""]
    lines += [f"- {line}" for a, b in ((SETTINGS[1], SETTINGS[0]), (SETTINGS[2], SETTINGS[0]))
              if (line := verdict(table, a, b, bold=True))]
    return lines


def verdict(table: list[dict], a: str, b: str, bold: bool = False) -> str | None:
    """Setting ``a`` against ``b`` on the headline figure, size by size, and at how many sizes ``a`` was better:
    the report's sentence and (unbold) the results tables' cell; None when no size has both."""
    comp = comparison(table, a, b)
    if not comp:
        return None
    better = sum(w.startswith("better") for *_, w in comp)
    counts = {len(_seeds(table, s, n)) for n, *_ in comp for s in (a, b)}
    seeds = ("1 seed" if counts == {1} else f"means over {counts.pop()} seeds" if len(counts) == 1
             else "means over each side's seeds")
    mark = "**" if bold else ""
    return (f"{mark}{a}{mark} vs {mark}{b}{mark}: " + "; ".join(
        f"n {n}: {va:.3f} vs {vb:.3f} ({w})" for n, va, vb, w in comp)
        + f". Better at {better} of {len(comp)} sizes ({seeds}; {RULE}).")


def benchmark_figure(table: list[dict], name: str, out_base: Path, caption: str) -> list[Path]:
    """The study's figure (``plots.benchmarks.plot_benchmark``) from its runs table, aggregated over seeds."""
    sizes = sorted({t["n"] for t in table})
    settings = []
    for s in SETTINGS:
        xs = [n for n in sizes if cell(table, s, n, "value") is not None]
        if xs:
            settings.append({
                "name": s, "sizes": xs, "values": [cell(table, s, n, "value") for n in xs],
                "runs": [(t["n"], t["value"]) for t in table if t["setting"] == s and t["value"] is not None],
                "unfit": [n for n in xs if all(t["label"] == "not-fitted" for t in table
                                               if t["setting"] == s and t["n"] == n)],
                "converge": [(n, cell(table, s, n, "converge_step")) for n in xs],
                "fit": [(n, cell(table, s, n, "fit_step")) for n in xs]})
    per_category = None
    if sizes:
        cats, means = category_means(table, sizes[-1])
        per_category = {"n": sizes[-1], "categories": cats,
                        "means": {s: [means[s][c] for c in cats] for s in SETTINGS}}
    head = table[0]["headline"] if table else ""
    return plot_benchmark(settings, sizes, head, per_category, f"{name} — profile: {caption}", out_base)
