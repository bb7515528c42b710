"""The HTML report of a run or a sweep: one page, every figure embedded as a data URI, no script, no external
request. Every string from a config, summary or file goes through Jinja's autoescaping.

A run section holds the run's config, outcome, final figures, training curves and every analysis saved under
``analysis/`` (with its one-line numbers). A sweep page adds the sweep's own figures (its phase diagrams), its
``summary.md`` and a phase table over the sweep's first two axes whose cells link to the run sections.
"""

from __future__ import annotations

import base64
import json
from collections import Counter
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import matplotlib.pyplot as plt

from reasonlab.config import ConfigError
from reasonlab.plots import figure_bytes
from reasonlab.plots import phase as phase_plots
from reasonlab.plots.dynamics import accuracy_figure
from reasonlab.store import atomic_write_text, finished_runs, load_run, read_json, read_metrics
from reasonlab.sweep.results import read_results, sweep_axes

# the phase figures' colours; the mixture study's labels borrow those of the anchor labels they resemble
LABEL_COLOURS = {**dict(zip(phase_plots.LABELS, phase_plots.LABEL_COLOURS, strict=True)),
                 **dict(zip(phase_plots.PHASES, phase_plots.PHASE_COLOURS, strict=True)),
                 "reasoning": phase_plots.LABEL_COLOURS[0], "memorizing": phase_plots.LABEL_COLOURS[1]}


def _uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode()


def _image(path: Path, root: Path) -> dict[str, str]:
    return {"name": str(path.relative_to(root)), "uri": _uri(path.read_bytes())}


def _curves(run_dir: Path) -> dict[str, str] | None:
    """The run's accuracy curves, drawn in memory (nothing is written into the run)."""
    metrics = run_dir / "metrics.parquet"
    if not metrics.is_file():
        return None
    fig = accuracy_figure(read_metrics(metrics), [])
    png = figure_bytes(fig, "png", dpi=90)
    plt.close(fig)
    return {"name": "accuracy over training", "uri": _uri(png)}


def _figures(summary: dict) -> list[tuple[str, str]]:
    final = summary.get("final") or {}
    return [(k, f"{v:.4f}" if isinstance(v, float) else str(v)) for k, v in sorted(final.items())
            if isinstance(v, int | float | str)]


def run_section(run_dir: Path, axes: list[str] | None = None) -> dict[str, Any]:
    summary, cfg = load_run(run_dir)
    flat = {"seed": cfg.get("seed"), **{f"{s}.{k}": v for s, sec in cfg.items() if isinstance(sec, dict)
                                        for k, v in sec.items()}}
    analyses = []
    for folder in sorted(p for p in (run_dir / "analysis").glob("*") if p.is_dir()):
        if folder.name == "dynamics":  # figures across checkpoints; their numbers are the checkpoints' own
            analyses.append({"name": "dynamics", "headline": "", "images": [_image(p, run_dir)
                                                                            for p in sorted(folder.glob("*.png"))]})
            continue
        for numbers in sorted(folder.glob("*.json")):
            images = sorted(folder.glob(f"{numbers.stem}*.png"))
            data = read_json(numbers, "analysis result")
            headline = data.get("headline", "") if isinstance(data, dict) else ""
            analyses.append({"name": f"{folder.name}: {numbers.stem}", "headline": headline,
                             "images": [_image(p, run_dir) for p in images]})
    images = [_image(p, run_dir) for p in sorted((run_dir / "figures").glob("*.png"))]
    curves = _curves(run_dir)
    return {"id": summary.get("run_id", run_dir.name), "label": summary.get("label", "?"),
            "profile": summary.get("profile", ""), "axes": [(a, flat.get(a)) for a in axes or []],
            "figures": _figures(summary), "images": ([curves] if curves else []) + images, "analyses": analyses,
            "config": json.dumps(cfg, indent=2)}


def sweep_cells(rows: list[dict[str, Any]], x: str, y: str) -> dict[tuple, dict[str, Any]]:
    """Runs grouped by (x, y), each cell labelled with its most common run label."""
    cells: dict[tuple, dict[str, Any]] = {}
    for r in sorted(rows, key=lambda r: r["run_id"]):
        cell = cells.setdefault((r.get(x), r.get(y)), {"runs": []})
        cell["runs"].append({"id": r["run_id"], "label": r.get("label", "?")})
    for cell in cells.values():
        label = Counter(run["label"] for run in cell["runs"]).most_common(1)[0][0]
        cell.update(label=label, colour=LABEL_COLOURS.get(label, "#eeeeee"))
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
        tables.append({"title": ", ".join(f"{a} = {v}" for a, v in zip(rest, key, strict=True)), "cells": cells,
                       "xs": sorted({k[0] for k in cells}, key=str), "ys": sorted({k[1] for k in cells}, key=str)})
    summary = sweep_dir / "summary.md"
    return {"x": x, "y": y, "tables": tables,
            "figures": [_image(p, sweep_dir) for p in sorted((sweep_dir / "figures").glob("*.png"))],
            "summary": summary.read_text() if summary.is_file() else ""}


def write_report(target: Path) -> Path:
    """Write ``target/report.html`` for a run or sweep directory and return its path."""
    target = Path(target)
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string((resources.files("reasonlab") / "report" / "template.html").read_text())
    if (target / "summary.json").is_file():
        section = run_section(target)
        page = template.render(title=f"run {section['id']}", subtitle=section["profile"], sweep=None,
                               runs=[section])
    elif (target / "results.parquet").is_file() or finished_runs(target):
        rows = read_results(target)
        axes = sweep_axes(target, rows)
        runs = [run_section(d, axes) for d in sorted(finished_runs(target))]
        page = template.render(title=f"sweep {target.name}", sweep=_sweep_part(target, rows, axes), runs=runs,
                               subtitle=f"{len(runs)} finished runs")
    else:
        raise ConfigError(f"{target}: neither a finished run (summary.json) nor a sweep (results.parquet)")
    out = target / "report.html"
    atomic_write_text(out, page)
    return out
