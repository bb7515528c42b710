"""Task kinds and studies as plug-ins: one registry entry each, looked up by name instead of dispatch tables.

A task kind is everything reasonlab needs to know about a task, in one place: its config class (the ``task:``
section, whose ``kind`` field names it), its ``Task`` class (``Task(config).build(seed)`` gives the data; the
instance is also the task's law that probes read), its evaluation summary, its best-of-run rule, optional extra
summary fields, its probes, its run figure and its phase rule. A study is its arms (profiles, grids), its
``reproduce`` and the figures it draws.

Your own task registers from your own package, with no edit inside reasonlab::

    import reasonlab
    reasonlab.register_task("parity", config=ParityConfig, task=ParityTask, summarize=parity_summary)

or, installed, by an entry point in the group ``reasonlab.tasks`` (or ``reasonlab.studies``) naming a callable
that registers (or a ``TaskKind``/``Study`` to register); entry points are loaded on the first lookup.

Layer: the ground floor beside ``errors``; it imports nothing else of reasonlab. Entries name the code of higher
layers by ``"module:attribute"`` strings, imported on first use (as entry points do), so the registry adds no
import arrow and no circle.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from reasonlab.errors import ConfigError

Ref = Callable[..., Any] | type | str | None  # an object, or "module:attribute" / "module" to import on use


def load(ref: Ref) -> Any:
    """The object a reference names: itself, or ``module:attribute`` / ``module`` imported."""
    if not isinstance(ref, str):
        return ref
    module, _, attr = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else []:
        obj = obj[part] if isinstance(obj, dict) else getattr(obj, part)
    return obj


class _Entry:
    def get(self, part: str) -> Any:
        """The named part, imported if given by reference."""
        return load(getattr(self, part))


@dataclass(frozen=True)
class TaskKind(_Entry):
    """One task kind. Every field but the first four has a default that suits a task scored by eval sets.

    config: pydantic model of the ``task:`` section (a ``StrictModel`` whose ``kind`` is ``Literal[name]``).
    task: ``Task(config)``: ``.build(seed) -> TaskData``; the instance is the law probes read.
    summarize: ``(scores, eval_sets, thresholds) -> report`` with ``pooled``, ``figures``, ``final``, ``label``,
        ``outcome``, ``histograms`` (and optionally ``select``: the early-stopping score, higher is better).
    best_of_run: ``(metric rows, thresholds) -> dict``: figures read over a run's whole history.
    extras: ``(metric rows, run config) -> dict`` merged into the run summary (anchor escape points, modular
        plateau exits, the language mixture's ΔL̄).
    probes: a module with ``PROBES`` (name -> function of a loaded run) and ``headline(name, numbers)``.
    run_figure: ``(metric rows, summary) -> matplotlib Figure``: the run's figure.
    phase: ``PhaseRule``-like object: ``axes`` (default x, y) and ``draw(rows, sweep_dir, x, y, options)``.
    """

    name: str
    config: Ref
    task: Ref
    summarize: Ref
    best_of_run: Ref = "reasonlab.evaluate:max_heldout"
    extras: Ref = None
    probes: Ref = None
    run_figure: Ref = "reasonlab.plots.run:anchor_figure"
    phase: Ref = "reasonlab.report.phase:LABEL_PHASE"


@dataclass(frozen=True)
class Study(_Entry):
    """One study: its arms and its figures.

    profiles: the study whose built-in profiles its arms use (``reasonlab/profiles/<profiles>-<name>.yaml``).
    grids: arm (profile name) -> grid axes, e.g. ``{"cpu": {"init.gamma": [0.3, 0.5]}}``.
    reproduce: ``(profile, out, make_executor, console, overrides) -> sweep directory``: runs the arm and writes
        its figures and ``summary.md``.
    figures: the figure names it writes under ``<sweep>/figures/`` (for listings and docs).
    what: one line for ``reasonlab studies``.
    runs_on_cpu: its paper-scale arms are meant to train on a CPU (so ``reproduce`` does not ask for ``--yes``).
    """

    name: str
    grids: Ref
    reproduce: Ref
    what: str = ""
    figures: tuple[str, ...] = ()
    profiles: str | None = None
    default_profile: str | None = None
    runs_on_cpu: bool = False

    def arms(self) -> dict[str, dict[str, list]]:
        return dict(load(self.grids))

    def default_arm(self) -> str:
        arms = self.arms()
        return self.default_profile or ("cpu" if "cpu" in arms else next(iter(arms)))


_TASKS: dict[str, TaskKind] = {}
_STUDIES: dict[str, Study] = {}
_entry_points_loaded: set[str] = set()
_PLUGINS: dict[str, str | None] = {}  # module -> its file, of each module outside reasonlab that registered here


def _note_source(*objs: Any) -> None:
    """Remember the module outside reasonlab that registered an entry, so that worker processes (a spawned pool,
    Ray) can import it again before they read a config of its kind."""
    for obj in objs:
        module = getattr(obj, "__module__", None)
        if isinstance(module, str) and module != "__main__" and not module.startswith("reasonlab"):
            _PLUGINS[module] = getattr(sys.modules.get(module), "__file__", None)


def plugin_sources() -> list[tuple[str, str | None]]:
    """(module, file) of every module outside reasonlab that registered a task or study in this process."""
    return sorted(_PLUGINS.items())


def load_plugins(sources: list[tuple[str, str | None]] | tuple = ()) -> None:
    """Import the modules of ``plugin_sources()`` (in a worker process): by name, else from their file."""
    for name, path in sources:
        if name in sys.modules:
            continue
        try:
            importlib.import_module(name)
        except ImportError:
            if path is None:
                raise
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)


def register_task(name: str | TaskKind, replace: bool = False, **parts: Any) -> TaskKind:
    """Register a task kind: ``register_task("parity", config=..., task=..., summarize=...)`` or a ``TaskKind``.

    A name already taken is refused unless ``replace``; a config class whose ``kind`` does not default to
    ``name`` is refused (the ``kind`` field is how a config names its task)."""
    entry = name if isinstance(name, TaskKind) else TaskKind(name=name, **parts)
    if entry.name in _TASKS and not replace:
        raise ConfigError(f"task kind {entry.name!r}: already registered; pass replace=True to replace it")
    if not isinstance(entry.config, str):
        kind = getattr(entry.config, "model_fields", {}).get("kind")
        if kind is None or kind.default != entry.name:
            raise ConfigError(f"task kind {entry.name!r}: its config class needs a field "
                              f"kind: Literal[{entry.name!r}] = {entry.name!r}")
    _TASKS[entry.name] = entry
    _note_source(entry.config, entry.task)
    return entry


def unregister_task(name: str) -> None:
    _TASKS.pop(name, None)


def register_study(name: str | Study, replace: bool = False, **parts: Any) -> Study:
    """Register a study: ``register_study("parity-phase", grids=..., reproduce=..., what=...)`` or a ``Study``."""
    entry = name if isinstance(name, Study) else Study(name=name, **parts)
    if entry.name in _STUDIES and not replace:
        raise ConfigError(f"study {entry.name!r}: already registered; pass replace=True to replace it")
    _STUDIES[entry.name] = entry
    _note_source(entry.reproduce)
    return entry


def unregister_study(name: str) -> None:
    _STUDIES.pop(name, None)


def _entry_points(group: str) -> None:
    """Load the installed plug-ins of ``group`` once: each names a callable that registers, or an entry."""
    if group in _entry_points_loaded:
        return
    _entry_points_loaded.add(group)
    for ep in metadata.entry_points(group=group):
        obj = ep.load()
        if isinstance(obj, TaskKind):
            register_task(obj, replace=True)
        elif isinstance(obj, Study):
            register_study(obj, replace=True)
        else:
            obj()


def task_kinds() -> dict[str, TaskKind]:
    _entry_points("reasonlab.tasks")
    return dict(_TASKS)


def task_kind(name: str) -> TaskKind:
    kinds = task_kinds()
    if name not in kinds:
        raise ConfigError(f"task.kind: {name!r} is unknown; choose one of {', '.join(map(repr, kinds))}")
    return kinds[name]


def studies() -> dict[str, Study]:
    _entry_points("reasonlab.studies")
    return dict(_STUDIES)


# ---- the built-in task kinds ---------------------------------------------------------------------------------
_C, _E = "reasonlab.config.tasks", "reasonlab.evaluate"
for _entry in (
    TaskKind("anchor", f"{_C}:AnchorTaskConfig", "reasonlab.tasks.anchor:AnchorTask",
             f"{_E}.outcome:anchor_summary", extras=f"{_E}.outcome:escape_summary",
             probes="reasonlab.analysis.anchor_probes", phase="reasonlab.report.phase:ANCHOR_PHASE"),
    TaskKind("mixture", f"{_C}:MixtureTaskConfig", "reasonlab.tasks.mixture:MixtureTask",
             f"{_E}.mixture:mixture_summary", run_figure="reasonlab.plots.run:mixture_figure"),
    TaskKind("text_mixture", f"{_C}:TextMixtureTaskConfig", "reasonlab.tasks.text.mixture:TextMixtureTask",
             f"{_E}.mixture:text_summary", extras=f"{_E}.language:delta_l_summary"),
    TaskKind("modular", f"{_C}:ModularTaskConfig", "reasonlab.tasks.modular:ModularTask",
             f"{_E}.modular:modular_summary", best_of_run=f"{_E}.modular:best_of_run",
             extras=f"{_E}.modular:plateau_summary",
             probes="reasonlab.analysis.modular_probes", phase="reasonlab.report.phase:MODULAR_PHASE"),
    TaskKind("seq2seq", f"{_C}:Seq2SeqTaskConfig", "reasonlab.tasks.seq2seq:Seq2SeqTask",
             f"{_E}.sequence:seq2seq_summary", best_of_run=f"{_E}.sequence:best_of_run"),
):
    register_task(_entry)

# ---- the built-in studies ------------------------------------------------------------------------------------
_S = "reasonlab.studies"
for _study in (
    Study("anchor-phase", f"{_S}.anchor_phase:GRIDS", f"{_S}.anchor_phase:reproduce", "γ × depth phase diagram "
          "of the anchor task (paper Fig. 2a,b)", ("phase",), "anchor"),
    Study("anchor-trajectory", f"{_S}.anchor_trajectory:GRIDS", f"{_S}.anchor_trajectory:reproduce",
          "two paper-scale anchor runs beside the authors' logged trajectory", ("trajectory",), "anchor",
          runs_on_cpu=True),
    Study("anchor-complexity", f"{_S}.anchor_complexity:GRIDS", f"{_S}.anchor_complexity:reproduce",
          "anchor outcomes as more pairs get symmetric non-inferential targets", ("complexity",), "anchor"),
    Study("anchor-lr-wd", f"{_S}.anchor_lr_wd:GRIDS", f"{_S}.anchor_lr_wd:reproduce",
          "anchor outcomes over learning rate × weight decay", ("lr-wd",), "anchor"),
    Study("reasoning-bias", f"{_S}.reasoning_bias:GRIDS", f"{_S}.reasoning_bias:reproduce",
          "reasoning vs memory anchors in one training set, transformer and Emb-MLP",
          ("label-distribution", "curves", "cosine-*", "pca-*", "profile-*"), "mixture"),
    Study("prontoqa-tinystories", f"{_S}.prontoqa_tinystories:GRIDS", f"{_S}.prontoqa_tinystories:reproduce",
          "PrOntoQA reasoning text mixed with TinyStories, next-token training", ("delta-l", "cosine"), "mixture"),
    Study("modular-phase", f"{_S}.modular_phase:GRIDS", f"{_S}.modular_phase:reproduce",
          "in-context modular arithmetic: the four phases over tasks × data fraction", ("phase-L*", "shots"),
          "modular"),
    *(Study(b, f"{_S}.benchmarks:STUDIES.{b}.GRIDS", f"{_S}.benchmarks:STUDIES.{b}.reproduce",
            f"{b}: initialization and weight decay over nested training sizes", (b,), b)
      for b in ("scan", "cogs", "addition", "prontoqa")),
):
    register_study(_study)
