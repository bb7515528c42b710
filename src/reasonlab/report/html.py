"""The HTML report of a run or a sweep: one page, every figure embedded as a data URI, no script, no external
request. Every string from a config, summary or file goes through Jinja's autoescaping, its control characters
dropped (``html_text``).

A run section holds the run's config (its fields away from their defaults), outcome, final figures (each by its
label, its stored name beside it: ``reasonlab.vocabulary``), training curves and every analysis saved under
``analysis/`` (with its one-line numbers). A sweep page adds the sweep's own figures (its phase diagrams), its
``summary.md`` and a phase table over the sweep's first two axes whose cells link to the run sections.
"""

from __future__ import annotations

import base64
import glob
import re
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import matplotlib.pyplot as plt
from markdown_it import MarkdownIt
from markupsafe import Markup

from reasonlab.config import ConfigError, changed_yaml
from reasonlab.errors import StoreError
from reasonlab.files import atomic_write_text, read_bounded, warn
from reasonlab.plots import figure_bytes
from reasonlab.plots.phase import axis_name
from reasonlab.records import check_metrics, finished_runs, load_record, read_analysis, within
from reasonlab.registry import task_kinds
from reasonlab.sweep.results import read_results, sweep_axes
from reasonlab.terminal import counted, printable
from reasonlab.vocabulary import label, labelled

# C0 and C1 control characters but tab and line feed, and DEL: a page shows none of them, and ESC sequences
# copied from one would reach a terminal
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def html_text(value: Any) -> str:
    """What one of the page's expressions prints, before Jinja escapes it (its ``finalize``): the value as text, its
    control characters dropped (ESC from a stored label or config string among them); markup the page builds
    itself (the rendered ``summary.md``) stays markup."""
    text = CONTROLS.sub("", str(value))
    return Markup(text) if isinstance(value, Markup) else text


def label_colour(label: str) -> str:
    """A run's or cell's label in its kind's colour (``Kind.palette``); grey for a label no kind names."""
    return next((c for kind in task_kinds().values() if (c := kind.palette.get(label))), "#eeeeee")


def _uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


# Readable names of analyses and their figures (and each kind's probe_titles); set and figure names are worded by
# ``reasonlab.vocabulary``
ANALYSES = {"accuracy": "Accuracy", "dynamics": "Across training"}
IMAGE_LINE = re.compile(r"!\[[^\]]*\]\([^)]*\)")  # a summary line that is an image alone
FIGURES = {"run": "Training loss, accuracies over training and the held-out answers at the end",
           "phase": "Phase diagram"}


def checkpoint_name(folder: str) -> str:
    return {"final": "final checkpoint", "best": "best checkpoint (early stopping)"}.get(
        folder, folder.replace("step-", "step ").replace("-", " "))


def figure_caption(stem: str, titles: dict[str, str] = ANALYSES) -> str:
    """A figure file's stem as words: ``grid-ood`` -> ``k-shot grids ... · out-of-distribution``."""
    head, _, rest = stem.partition("-")
    if stem in FIGURES:
        return FIGURES[stem]
    if stem.startswith("phase"):
        return f"Phase diagram ({stem.removeprefix('phase-').replace('-', ' ')})"
    name = titles.get(head, head.replace("_", " ").capitalize())
    return f"{name} · {label(rest)}" if rest else name


def _images(root: Path, paths: list[Path], titles: dict[str, str] = ANALYSES) -> list[dict[str, str]]:
    """The PNG files among ``paths`` that stay inside ``root`` (a link out of it is reported and not read), each
    with its caption (a file name that is not UTF-8 shown with its bytes escaped); one that is not a regular file
    (a FIFO, a folder) or is over the size of a record is said in one line and left out."""
    images = []
    for path in within(root, sorted(paths)):
        try:
            png = read_bounded(path, "figure")
        except StoreError as e:
            warn(f"{e}; left out of the report")
            continue
        images.append({"caption": printable(figure_caption(path.stem, titles)), "uri": _uri(png)})
    return images


def _run_figures(run_dir: Path) -> list[dict[str, str]]:
    """The run's figures: ``figures/run.png`` (drawn in memory from the run's metrics when the run has none: a
    sweep's runs), then any other figure it holds. The run figure holds the training curves, so they are shown
    once."""
    from reasonlab.plots.run import run_figure

    folder = run_dir / "figures"
    images = _images(run_dir, list(folder.glob("*.png")))
    if not (folder / "run.png").exists():
        fig = run_figure(run_dir)
        images.insert(0, {"caption": FIGURES["run"], "uri": _uri(figure_bytes(fig, "png", dpi=90))})
        plt.close(fig)
    return sorted(images, key=lambda i: i["caption"] != FIGURES["run"])


def _figures(final: dict[str, float | None], kind: str) -> list[tuple[str, str]]:
    """The final figures, each by its label with its stored name beside it."""
    return [(labelled(k, kind), f"{v:.4f}" if isinstance(v, float) else str(v)) for k, v in sorted(final.items())
            if isinstance(v, int | float | str)]


def _analyses(run_dir: Path, kind: str | None) -> list[dict[str, Any]]:
    """Every saved analysis: a readable title (its kind's probes name it), its one-line headline, its figures
    with readable captions."""
    from reasonlab.analysis.probes import headline

    entry = task_kinds().get(str(kind))
    titles = {**ANALYSES, **(entry.probe_titles if entry is not None else {})}
    out = []
    for folder in within(run_dir, sorted(p for p in (run_dir / "analysis").glob("*") if p.is_dir())):
        if folder.name == "dynamics":  # figures across checkpoints; their numbers are the checkpoints' own
            images = _images(run_dir, list(folder.glob("*.png")), titles)
            out.append({"name": ANALYSES["dynamics"], "headline": "", "images": images})
            continue
        for numbers in within(run_dir, sorted(folder.glob("*.json"))):
            try:
                data = read_analysis(numbers)
            except StoreError as e:
                warn(f"{e}; left out of the report")
                continue
            name = f"{titles.get(numbers.stem, numbers.stem)} ({checkpoint_name(folder.name)})"
            out.append({"name": printable(name), "headline": printable(headline(kind, numbers.stem, data)),
                        "images": _images(run_dir, list(folder.glob(f"{glob.escape(numbers.stem)}*.png")), titles)})
    return out


def run_section(run_dir: Path, axes: list[str] | None = None) -> dict[str, Any]:
    """A run's section; its header is the run in one line (``describe_run``), the sweep's ``axes`` among its
    fields. A run whose metrics file does not read as its own (missing, a FIFO, damaged) has no section: a one-line
    StoreError naming the file, as it is in no table."""
    _, record = load_record(run_dir)
    check_metrics(run_dir)
    kind = record.config["task"]["kind"]
    return {"id": record.run_id, "label": record.label, "header": record.describe(axes or []),
            "profile": record.profile, "figures": _figures(record.final, kind), "images": _run_figures(run_dir),
            "analyses": _analyses(run_dir, kind),
            "config": changed_yaml(record.run_config())}


def sweep_cells(rows: list[dict[str, Any]], x: str, y: str) -> dict[tuple, dict[str, Any]]:
    """Runs grouped by (x, y), each cell labelled with its most common run label."""
    cells: dict[tuple, dict[str, Any]] = {}
    for r in sorted(rows, key=lambda r: r["run_id"]):
        cell = cells.setdefault((r.get(x), r.get(y)), {"runs": []})
        cell["runs"].append({"id": r["run_id"], "label": r.get("label", "?")})
    for cell in cells.values():
        label = Counter(run["label"] for run in cell["runs"]).most_common(1)[0][0]
        cell.update(label=label, colour=label_colour(label))
    return cells


def _sweep_part(sweep_dir: Path, rows: list[dict[str, Any]], axes: list[str]) -> dict[str, Any]:
    """The sweep's figures and summary, and one phase table over its first two axes (seeds share a cell, which
    shows their most common label; a one-axis sweep gets seeds as its second axis) per combination of its other
    axes."""
    axes = [a for a in axes if a != "seed"]
    x, y, rest = (axes + ["seed", "seed"])[0], (axes[1:] + ["seed"])[0], axes[2:]
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(r.get(a) for a in rest), []).append(r)
    tables = []
    for key, members in sorted(groups.items(), key=lambda kv: str(kv[0])):
        cells = sweep_cells(members, x, y)
        title = ", ".join(f"{axis_name(a)} = {v}" for a, v in zip(rest, key, strict=True))
        tables.append({"title": title, "cells": cells,
                       "xs": sorted({k[0] for k in cells}, key=str), "ys": sorted({k[1] for k in cells}, key=str)})
    return {"x": axis_name(x), "y": axis_name(y), "tables": tables,
            "figures": _images(sweep_dir, list((sweep_dir / "figures").glob("*.png"))),
            "summary": _summary_text(sweep_dir / "summary.md")}


def _summary_text(path: Path) -> str:
    """A study's ``summary.md`` (UTF-8 text inside the sweep) as HTML, or nothing, said in one line. Its images are
    the sweep's figures, which the page embeds on its own; raw HTML in it is shown as text."""
    if not path.exists() or not within(path.parent, [path]):
        return ""
    try:
        text = read_bounded(path, "sweep summary").decode("utf-8")
    except StoreError as e:
        warn(f"{e}; left out of the report")
        return ""
    except UnicodeDecodeError as e:
        warn(f"{path}: not UTF-8 text (byte {e.start}); left out of the report")
        return ""
    kept = "\n".join(line for line in text.splitlines() if not IMAGE_LINE.fullmatch(line.strip()))
    return MarkdownIt("commonmark", {"html": False}).enable("table").render(kept)


def _section_or_skip(run_dir: Path, axes: list[str]) -> dict[str, Any] | None:
    """A sweep's run section; a run whose files do not read (its metrics, say) is reported in one line and left
    out, so the rest of the sweep's report is written."""
    try:
        return run_section(run_dir, axes)
    except StoreError as e:
        warn(f"{e}; run left out of the report")
        return None


def write_report(target: Path) -> Path:
    """Write ``target/report.html`` for a run or sweep directory and return its path."""
    target = Path(target)
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, finalize=html_text)
    template = env.from_string((resources.files("reasonlab") / "report" / "template.html").read_text())
    if (target / "summary.json").exists():
        section = run_section(target)
        page = template.render(title=f"run {section['id']}", subtitle="", profile=section["profile"], sweep=None,
                               runs=[section])
    elif (target / "results.parquet").exists() or finished_runs(target):
        rows = read_results(target)
        axes = sweep_axes(target, rows)
        runs = [section for d in finished_runs(target) if (section := _section_or_skip(d, axes)) is not None]
        profiles = {r["profile"] for r in runs}
        shared = profiles.pop() if len(profiles) == 1 else None  # then stated once, at the top
        page = template.render(title=f"sweep {target.name}", sweep=_sweep_part(target, rows, axes), runs=runs,
                               subtitle=counted(len(runs), "finished run"), profile=shared)
    else:
        raise ConfigError(f"{target}: neither a finished run (summary.json) nor a sweep (results.parquet)")
    out = target / "report.html"
    atomic_write_text(out, page)
    return out
