"""``Kind``: the whole contract of a task kind in one class. A kind states its name, its ``task:`` section
(``config``), its data (``task``), the typed part of ``summary.json`` it writes (``Report``), its words, palette and
axes, and overrides only the methods where it has something of its own; every method has a generic default that
reads the kind's own metrics, so a kind of three attributes already trains, sweeps, tables, phase-plots and
reports.

The generic floors never import this module: they look a kind up by name in the registry and call these methods,
so the defaults sit here, above the floors whose generic figures, cards and phase diagrams they reuse.

A subclass finds its profiles in the ``profiles/`` folder beside the module that declares it (a kind's folder's
``__init__.py``; one ``<family>-<name>.yaml`` per profile), which ``register_task`` registers with the kind; a kind
may name another folder (``profiles = Path(...)``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import matplotlib.pyplot as plt
from torch import nn

from reasonlab.analysis.loading import Loaded
from reasonlab.config import RunConfig, StrictModel, ThresholdConfig
from reasonlab.evaluate.set_score import Evaluation, SetScore
from reasonlab.plots.run import metrics_figure
from reasonlab.record_schemas import KindReport, RunSummary
from reasonlab.registry import KindOption
from reasonlab.report.card import default_rows
from reasonlab.report.phase import VALUE_OPTION, Drawn, label_phase, most_common_label
from reasonlab.store import MetricRow
from reasonlab.sweep.results import flatten
from reasonlab.tasks.base import EvalSet, TaskData

Rows = list[tuple[str, str]]


class Kind:
    """One task kind. Required: ``name``, ``config`` (a ``StrictModel`` whose ``kind`` is ``Literal[name]``),
    ``task`` (``Task(config).build(seed) -> TaskData``; the instance is the law probes read) and, unless the
    generic summary suits it, ``summarize``. Everything else is optional:

    Report: the model (a ``record_schemas.KindReport``) of the kind's own ``summary.json`` fields, what
        ``summarize`` and ``extras`` add beside the generic ones; every summary of the kind is validated by it, and
        its fields are the kind's results columns unless ``columns`` says otherwise.
    words: readable names of the kind's set and metric names in the report (``seen_test_acc`` -> words).
    palette: the kind's outcome labels, in the order its phase figures stack them, each with its colour.
    axes: the kind's config fields as sweep axes: dotted field -> (short name, what it measures).
    main_columns: the results columns ``reasonlab results`` shows beside the axes (names or ``fnmatch`` patterns).
    phase_axes, phase_options: the phase diagram's default (x, y) and the options ``draw_phase`` reads
        (``KindOption``s, offered as ``reasonlab phase`` flags).
    probes, probe_titles, probe_figures, probe_options: the named analyses of ``reasonlab analyze`` (name ->
        function of a loaded run), their readable titles, the figure a strip over checkpoints shows of a probe
        with several, and the options they read from ``run.options`` (offered as ``analyze`` flags).
    profiles: the folder of the kind's built-in profiles.
    """

    name: ClassVar[str]
    config: ClassVar[type[StrictModel]]
    task: ClassVar[type]
    Report: ClassVar[type[KindReport]] = KindReport
    words: ClassVar[dict[str, str]] = {}
    palette: ClassVar[dict[str, str]] = {}
    axes: ClassVar[dict[str, tuple[str, str]]] = {}
    main_columns: ClassVar[tuple[str, ...]] = ("final.*",)
    phase_axes: ClassVar[tuple[str, str]] = ("init.gamma", "model.depth")
    phase_options: ClassVar[tuple[KindOption, ...]] = (VALUE_OPTION,)
    probes: ClassVar[dict[str, Callable[[Loaded], dict]]] = {}
    probe_titles: ClassVar[dict[str, str]] = {}
    probe_figures: ClassVar[dict[str, str]] = {}
    probe_options: ClassVar[tuple[KindOption, ...]] = ()
    profiles: ClassVar[Path | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        where = getattr(sys.modules.get(cls.__module__), "__file__", None)
        if "profiles" not in cls.__dict__ and where is not None:
            folder = Path(where).parent / "profiles"
            cls.profiles = folder if folder.is_dir() else None

    # ---- one evaluation, one run ---------------------------------------------------------------------------------
    def summarize(self, scores: dict[str, SetScore], sets: dict[str, EvalSet], th: ThresholdConfig) -> Evaluation:
        """One evaluation's report (``Evaluation``). Generic: each set's loss and the accuracy of each target it
        counts, labelled ``trained``."""
        figures: dict[str, float | None] = {}
        for name, s in scores.items():
            key = name.replace("/", "_")
            figures |= {(f"{key}_acc" if target == "designated" else f"{key}_{target}_acc"): s.acc(target)
                        for target in s.correct}
            if s.loss is not None:
                figures[f"{key}_loss"] = s.loss
        return Evaluation("trained", figures, figures, {k: v for k, v in figures.items() if k.endswith("_acc")})

    def best_of_run(self, rows: list[MetricRow], th: ThresholdConfig) -> dict:
        """Figures read over a run's whole history (the ``best`` of its summary); none by default."""
        return {}

    def extras(self, rows: list[MetricRow], cfg: RunConfig) -> dict:
        """More summary fields read over the run's history (fields of ``Report``); none by default."""
        return {}

    def progress(self, figures: dict[str, float]) -> list[str]:
        """The short parts of the progress line after an evaluation: every figure the summary shows, by its stored
        name (``reasoning_test_acc 0.47``)."""
        return [f"{k} {v:.2f}" for k, v in figures.items() if v is not None]

    def weights(self, model: nn.Module, data: TaskData) -> dict[str, float]:
        """Figures read off the weights, logged every epoch and at every snapshot (split ``weights``); none."""
        return {}

    # ---- what a reader sees -------------------------------------------------------------------------------------
    def run_figure(self, rows: list[MetricRow], summary: dict) -> plt.Figure:
        """The run's figure: its losses and its pooled accuracies over training."""
        return metrics_figure(rows, summary)

    def columns(self, summary: dict[str, Any]) -> dict[str, Any]:
        """The results columns of the kind's own summary fields: each field of ``Report`` that the summary holds,
        flattened to dotted names (``delta_L_window.train``)."""
        own = [f for f in self.Report.model_fields if f not in RunSummary.model_fields]
        return flatten({f: summary[f] for f in own if summary.get(f)})

    def card(self, summary: dict) -> Rows:
        """A finished run's figure rows on its card: its final figures, its history, its best-of-run figures."""
        return default_rows(summary, self.history(summary), self.name)

    def history(self, summary: dict) -> Rows:
        """Card rows read over a run's history (from a summary, or an unfinished run's ``extras``); none."""
        return []

    def qualify(self, part: str) -> str | None:
        """A part of a set or metric name that qualifies the part before it, as words; None: a part of its own."""
        return None

    # ---- phase diagrams -----------------------------------------------------------------------------------------
    def classify(self, cell: list[dict[str, Any]]) -> str:
        """A phase-diagram cell's label from its runs' results rows: their most common label."""
        return most_common_label(cell)

    def draw_phase(self, rows: list[dict], out_base: Path, x: str, y: str, options: dict, caption: str) -> Drawn:
        """``reasonlab phase``: per (x, y) cell the mean of one results column (``--value``) and ``classify``."""
        return label_phase(rows, out_base, x, y, options, caption, self.classify)

    def phase_name(self, options: dict) -> str:
        """The phase figure's file name (before any ``--where`` suffix)."""
        return "phase"

    # ---- analyses -----------------------------------------------------------------------------------------------
    def headline(self, probe: str, numbers: dict) -> str:
        """A probe's result in one line for the terminal and the report."""
        return ""

    def accuracy_curve(self, split: str, metric: str) -> str | None:
        """The name of a logged metric's curve on the accuracy-over-training figure, or None: not drawn. The
        pooled accuracies by default."""
        return metric if split == "pooled" and "acc" in metric else None
