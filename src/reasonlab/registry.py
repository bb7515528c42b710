"""Task kinds, model kinds and studies as plug-ins: the mechanism only, one entry each, looked up by name.

A task kind is everything reasonlab needs to know about a task, in one place (built-in ones each live in one folder,
``reasonlab/kinds/<kind>/``, whose ``__init__`` registers them); a study is its arms (profiles, grids), its
``reproduce`` and the figures it draws; a model kind is its config section and the module it builds.

Your own task registers from your own package, with no edit inside reasonlab::

    import reasonlab
    reasonlab.register_task("parity", config=ParityConfig, task=ParityTask, summarize=parity_summary)

or, installed, by an entry point in the group ``reasonlab.tasks`` (or ``reasonlab.studies``, ``reasonlab.models``)
naming a callable that registers (or an entry to register); entry points are loaded on the first lookup.

Layer: the ground floor beside ``errors``; it imports nothing else of reasonlab and names no module. The built-in
entries register by import from their own folders: the facade (``reasonlab/__init__.py``) installs a loader
(``add_loader``) whose body imports them, run once on the first lookup, so the arrow is a real import statement
that the layer test sees, and ``import reasonlab`` stays light.
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

Hook = Callable[..., Any] | None


@dataclass(frozen=True)
class TaskKind:
    """One task kind. Every field but the first four is optional: without it the generic floors fall back to the
    kind's own metrics (a loss/accuracy run figure, its final figures as ``results`` columns and card rows, its
    accuracies in the progress line, the label phase diagram).

    config: pydantic model of the ``task:`` section (a ``StrictModel`` whose ``kind`` is ``Literal[name]``).
    task: ``Task(config)``: ``.build(seed) -> TaskData``; the instance is the law probes read.
    summarize: ``(scores, eval_sets, thresholds) -> report`` with ``pooled``, ``figures``, ``final``, ``label``,
        ``outcome``, ``histograms`` (and optionally ``select``: the early-stopping score, higher is better).
    best_of_run: ``(metric rows, thresholds) -> dict``: figures read over a run's whole history.
    extras: ``(metric rows, run config) -> dict`` merged into the run summary (anchor escape points, modular
        plateau exits, the language mixture's ΔL̄).
    progress: ``(figures) -> list[str]``: the short parts of the progress line after an evaluation.
    weights: ``(model, task data) -> dict[str, float]``: figures read off the weights, logged every epoch and at
        every snapshot (split ``weights``), so they outlive the weights (the text mixture's embedding cosines).
    probes: an object with ``PROBES`` (name -> function of a loaded run), ``headline(name, numbers)`` and
        optionally ``TITLES`` (name -> readable title), ``MAIN_FIGURE`` (name -> the figure a strip shows),
        ``OPTIONS`` (option name -> help: the probe options the CLI offers as flags) and ``ACCURACY_CURVE``
        (``(split, metric) -> name or None``: the kind's own curves on the accuracy-over-training figure).
    run_figure: ``(metric rows, summary) -> matplotlib Figure``: the run's figure.
    phase: ``PhaseRule``-like object: ``axes`` (default x, y), ``draw(rows, sweep_dir, x, y, options, caption)``
        and ``name(options)``.
    columns: ``(summary) -> dict``: the results columns of the summary's kind-specific fields.
    main_columns: the results columns ``reasonlab results`` shows beside the axes (prefixes end with ``.``).
    card: ``(summary) -> list[(key, text)]``: a finished run's figure rows on its card.
    history: ``(summary or extras) -> list[(key, text)]``: the card rows read over a run's history.
    words: readable names of the kind's metric and set names, for the report (``seen_test_acc`` -> words).
    qualify: ``(part of a set or metric name) -> text or None``: a part that qualifies the part before it, as words
        (the anchor kind's pair key: ``heldout/4-3`` reads ``held-out (4,3)``); without it each part is a word.
    """

    name: str
    config: type
    task: type
    summarize: Callable[..., dict]
    best_of_run: Hook = None
    extras: Hook = None
    progress: Hook = None
    weights: Hook = None
    probes: Any = None
    run_figure: Hook = None
    phase: Any = None
    columns: Hook = None
    main_columns: tuple[str, ...] | None = None
    card: Hook = None
    history: Hook = None
    words: dict[str, str] | None = None
    qualify: Hook = None


@dataclass(frozen=True)
class ModelKind:
    """One model kind: its ``model:`` section (a ``StrictModel`` whose ``kind`` is ``Literal[name]``, with
    ``footprint(vocab, vocab_field)``) and ``build(model config, vocab size, sequence length) -> torch module``."""

    name: str
    config: type
    build: Callable[..., Any]


@dataclass(frozen=True)
class Study:
    """One study: its arms and its figures.

    profiles: the profile family its arms use (``reasonlab/profiles/<profiles>-<name>.yaml``).
    grids: arm (profile name) -> grid axes, e.g. ``{"cpu": {"init.gamma": [0.3, 0.5]}}``.
    reproduce: ``(profile, out, make_executor, console, overrides) -> sweep directory``: runs the arm and writes
        its figures and ``summary.md``.
    figures: the figure names it writes under ``<sweep>/figures/`` (for listings and docs).
    what: one line for ``reasonlab studies``.
    runs_on_cpu: its paper-scale arms are meant to train on a CPU (so ``reproduce`` does not ask for ``--yes``).
    """

    name: str
    grids: dict[str, dict[str, list]]
    reproduce: Callable[..., Any]
    what: str = ""
    figures: tuple[str, ...] = ()
    profiles: str | None = None
    default_profile: str | None = None
    runs_on_cpu: bool = False

    def arms(self) -> dict[str, dict[str, list]]:
        return dict(self.grids)

    def default_arm(self) -> str:
        arms = self.arms()
        return self.default_profile or ("cpu" if "cpu" in arms else next(iter(arms)))


_TASKS: dict[str, TaskKind] = {}
_MODELS: dict[str, ModelKind] = {}
_STUDIES: dict[str, Study] = {}
_LOADERS: list[Callable[[], None]] = []
_entry_points_loaded: set[str] = set()
_PLUGINS: dict[str, str | None] = {}  # module -> its file, of each module outside reasonlab that registered here


def add_loader(loader: Callable[[], None]) -> None:
    """Run ``loader`` (which registers entries, typically by importing their modules) once, on the next lookup."""
    _LOADERS.append(loader)


def _load() -> None:
    """Run the pending loaders; each is taken off first, so a lookup made while one runs does not run it again."""
    while _LOADERS:
        _LOADERS.pop(0)()


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


def _check_kind(what: str, name: str, config: type) -> None:
    """A config class names its kind: ``kind: Literal[name] = name`` (that field is how a config picks it)."""
    kind = getattr(config, "model_fields", {}).get("kind")
    if kind is None or kind.default != name:
        raise ConfigError(f"{what} {name!r}: its config class needs a field kind: Literal[{name!r}] = {name!r}")


def _put(table: dict[str, Any], what: str, entry: Any, replace: bool) -> Any:
    if entry.name in table and not replace:
        raise ConfigError(f"{what} {entry.name!r}: already registered; pass replace=True to replace it")
    table[entry.name] = entry
    return entry


def register_task(name: str | TaskKind, replace: bool = False, **parts: Any) -> TaskKind:
    """Register a task kind: ``register_task("parity", config=..., task=..., summarize=...)`` or a ``TaskKind``.

    A name already taken is refused unless ``replace``; a config class whose ``kind`` does not default to
    ``name`` is refused."""
    entry = name if isinstance(name, TaskKind) else TaskKind(name=name, **parts)
    _check_kind("task kind", entry.name, entry.config)
    _note_source(entry.config, entry.task)
    return _put(_TASKS, "task kind", entry, replace)


def unregister_task(name: str) -> None:
    _TASKS.pop(name, None)


def register_model(name: str | ModelKind, replace: bool = False, **parts: Any) -> ModelKind:
    """Register a model kind: ``register_model("rnn", config=RNNConfig, build=build_rnn)`` or a ``ModelKind``."""
    entry = name if isinstance(name, ModelKind) else ModelKind(name=name, **parts)
    _check_kind("model kind", entry.name, entry.config)
    _note_source(entry.config, entry.build)
    return _put(_MODELS, "model kind", entry, replace)


def unregister_model(name: str) -> None:
    _MODELS.pop(name, None)


def register_study(name: str | Study, replace: bool = False, **parts: Any) -> Study:
    """Register a study: ``register_study("parity-phase", grids=..., reproduce=..., what=...)`` or a ``Study``."""
    entry = name if isinstance(name, Study) else Study(name=name, **parts)
    _note_source(entry.reproduce)
    return _put(_STUDIES, "study", entry, replace)


def unregister_study(name: str) -> None:
    _STUDIES.pop(name, None)


_REGISTER = {TaskKind: register_task, ModelKind: register_model, Study: register_study}


def _entry_points(group: str) -> None:
    """The built-ins (loaders), then the installed plug-ins of ``group`` once: each names a callable that
    registers, or an entry."""
    _load()
    if group in _entry_points_loaded:
        return
    _entry_points_loaded.add(group)
    for ep in metadata.entry_points(group=group):
        obj = ep.load()
        if type(obj) in _REGISTER:
            _REGISTER[type(obj)](obj, replace=True)
        else:
            obj()


def _lookup(table: dict[str, Any], what: str, name: str) -> Any:
    if name not in table:
        raise ConfigError(f"{what}: {name!r} is unknown; choose one of {', '.join(map(repr, table))}")
    return table[name]


def task_kinds() -> dict[str, TaskKind]:
    _entry_points("reasonlab.tasks")
    return dict(_TASKS)


def task_kind(name: str) -> TaskKind:
    return _lookup(task_kinds(), "task.kind", name)


def model_kinds() -> dict[str, ModelKind]:
    _entry_points("reasonlab.models")
    return dict(_MODELS)


def model_kind(name: str) -> ModelKind:
    return _lookup(model_kinds(), "model.kind", name)


def studies() -> dict[str, Study]:
    _entry_points("reasonlab.studies")
    return dict(_STUDIES)
