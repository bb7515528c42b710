"""Task kinds, model kinds and studies as plug-ins: the mechanism only, one entry each, looked up by name.

A task kind is a ``reasonlab.kinds.base.Kind``: everything reasonlab needs to know about a task, in one class
(built-in ones each live in one folder, ``reasonlab/kinds/<kind>/``, whose ``__init__`` declares and registers
it, beside its ``profiles/``); a study is a ``reasonlab.Study`` (``reasonlab/studies/base.py``): its kind, its arms
and what each arm draws and summarizes; a model kind is its config section and the module it builds.

Your own task registers from your own package, with no edit inside reasonlab::

    import reasonlab
    reasonlab.register_task(Reversal)      # class Reversal(reasonlab.Kind): name = "reversal"; config = ...
    reasonlab.register_study(ReversalPhase)  # class ReversalPhase(reasonlab.Study): name, kind, arms = ...

or, installed, by an entry point in the group ``reasonlab.tasks`` (or ``reasonlab.studies``, ``reasonlab.models``)
naming a callable that registers (or an entry to register); entry points are loaded on the first lookup. A kind's
probes and phase diagram declare the options they read (``KindOption``), which the command line offers as flags;
a kind's built-in profiles are a folder of YAML files registered with it (``register_profiles``).

Layer: the ground floor beside ``errors`` and ``arguments`` (what a registration's arguments must be); it imports
nothing else of reasonlab and names no module. The built-in
entries register by import from their own folders: the facade (``reasonlab/__init__.py``) installs a loader
(``add_loader``) whose body imports them, run once on the first lookup, so the arrow is a real import statement
that the layer test sees, and ``import reasonlab`` stays light.
"""

from __future__ import annotations

import importlib
import importlib.util
import math
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from reasonlab import arguments
from reasonlab.arguments import checked, flag, shown
from reasonlab.errors import ConfigError


@dataclass(frozen=True)
class KindOption:
    """One option a kind's probes or phase diagram read, which the command line offers as a flag (``--over-epochs``
    for ``over_epochs``) on ``analyze`` or ``phase``, so a kind adds options without an edit to the commands.

    parse: the flag's text -> the value the kind reads, raising ValueError that says what is wrong (``integer``,
        ``number``, ``one_of``, ``str``, or the kind's own); None for an on/off flag (True when given).
    A flag not given passes nothing, so the kind keeps its own default (the help says which). Kinds that declare
    the same name share one flag, parsed by the first kind's ``parse``.
    """

    name: str
    help: str
    parse: Callable[[str], Any] | None = None
    metavar: str = "VALUE"

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


def integer(lo: int | None = None, hi: int | None = None) -> Callable[[str], int]:
    """A ``KindOption`` parser: an integer in [lo, hi]."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise ValueError(f"{text!r} is not an integer") from None
        return _within(value, lo, hi)

    return parse


def number(lo: float | None = None, hi: float | None = None) -> Callable[[str], float]:
    """A ``KindOption`` parser: a finite number in [lo, hi]."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise ValueError(f"{text!r} is not a number") from None
        if not math.isfinite(value):
            raise ValueError(f"{text!r} is not a finite number")
        return _within(value, lo, hi)

    return parse


def one_of(*choices: str) -> Callable[[str], str]:
    """A ``KindOption`` parser: one of ``choices``."""

    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError(f"{text!r} is not one of {', '.join(map(repr, choices))}")
        return text

    return parse


def _within(value: float, lo: float | None, hi: float | None) -> Any:
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        bounds = f"[{'-∞' if lo is None else lo}, {'∞' if hi is None else hi}]"
        raise ValueError(f"{value} is not in {bounds}")
    return value


@dataclass(frozen=True)
class ModelKind:
    """One model kind: its ``model:`` section (a ``StrictModel`` whose ``kind`` is ``Literal[name]``, with
    ``footprint(vocab, vocab_field)``) and ``build(model config, vocab size, sequence length) -> torch module``."""

    name: str
    config: type
    build: Callable[..., Any]


_TASKS: dict[str, Any] = {}  # name -> its Kind
_MODELS: dict[str, ModelKind] = {}
_STUDIES: dict[str, Any] = {}  # name -> its Study
_PROFILES: dict[Path, None] = {}  # the registered folders of <family>-<name>.yaml profiles, in order
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


_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")  # a registered name: a word for folders and command lines


def _named(what: str, name: Any, replace: Any) -> None:
    """A registered name is a plain word (it names folders, a config's ``kind`` and command-line arguments: an ESC or
    a line feed in it would reach terminals and file names), and ``replace`` is True or False."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ConfigError(f"{what} name: {shown(name)} is not a name; give a letter, then letters, digits, '_', '-' "
                          "or '.', at most 64 in all")
    flag(replace, f"register {what} replace")


def _put(table: dict[str, Any], what: str, entry: Any, replace: bool) -> Any:
    if entry.name in table and not replace:
        raise ConfigError(f"{what} {entry.name!r}: already registered; pass replace=True to replace it")
    table[entry.name] = entry
    return entry


def register_task(kind: Any, replace: bool = False) -> Any:
    """Register a task kind: a ``Kind`` subclass (or an instance of one), and the folder of its profiles.

    A name already taken is refused unless ``replace``; a config class whose ``kind`` does not default to the
    kind's name is refused."""
    missing = [part for part in ("name", "config", "task", "summarize") if not hasattr(kind, part)]
    if missing:
        named = getattr(kind, "name", getattr(kind, "__name__", type(kind).__name__))
        raise ConfigError(f"task kind {named!r}: no {', '.join(missing)}; a task kind is a reasonlab.Kind that states "
                          "its name, config and task")
    entry = kind() if isinstance(kind, type) else kind
    _named("task kind", entry.name, replace)
    _check_kind("task kind", entry.name, entry.config)
    _note_source(entry.config, entry.task, type(entry))
    replaced = _TASKS.get(entry.name)
    _put(_TASKS, "task kind", entry, replace)
    if getattr(replaced, "profiles", None) is not None:
        unregister_profiles(replaced.profiles)
    if getattr(entry, "profiles", None) is not None:
        register_profiles(entry.profiles)
    return entry


def unregister_task(name: str) -> None:
    """Forget a task kind and its profiles."""
    entry = _TASKS.pop(name, None)
    if getattr(entry, "profiles", None) is not None:
        unregister_profiles(entry.profiles)


def register_model(name: str | ModelKind, replace: bool = False, **parts: Any) -> ModelKind:
    """Register a model kind: ``register_model("rnn", config=RNNConfig, build=build_rnn)`` or a ``ModelKind``."""
    _named("model kind", name.name if isinstance(name, ModelKind) else name, replace)
    if not isinstance(name, ModelKind):
        if set(parts) != {"config", "build"} or not isinstance(parts["config"], type) or not callable(parts["build"]):
            raise ConfigError(f"model kind {name!r}: give config= (its config class) and build= (a function of the "
                              "model config, vocabulary size and sequence length), and nothing else")
    entry = name if isinstance(name, ModelKind) else ModelKind(name=name, **parts)
    _check_kind("model kind", entry.name, entry.config)
    _note_source(entry.config, entry.build)
    return _put(_MODELS, "model kind", entry, replace)


def unregister_model(name: str) -> None:
    _MODELS.pop(name, None)


def register_study(study: Any, replace: bool = False) -> Any:
    """Register a study: a ``reasonlab.Study`` subclass (or an instance of one), which states its name, kind and
    arms and runs an arm with ``run``. A name already taken is refused unless ``replace``."""
    if not all(hasattr(study, part) for part in ("name", "kind", "arms", "run")):
        named = getattr(study, "name", getattr(study, "__name__", study))
        raise ConfigError(f"study {named!r}: not a reasonlab.Study (a study states its name, kind and arms, and runs "
                          "an arm with run)")
    entry = study() if isinstance(study, type) else study
    _named("study", entry.name, replace)
    if not callable(entry.run):
        raise ConfigError(f"study {entry.name!r}: run is {shown(entry.run)}, not a method that runs an arm")
    if not isinstance(entry.arms, dict) or not entry.arms:
        raise ConfigError(f"study {entry.name!r}: arms is {type(entry.arms).__name__}, not a dict of arm -> "
                          "reasonlab.studies.base.Arm")
    _note_source(type(entry))
    return _put(_STUDIES, "study", entry, replace)


def unregister_study(name: str) -> None:
    _STUDIES.pop(name, None)


@checked(folder=arguments.folder("a folder of <family>-<name>.yaml profiles"))
def register_profiles(folder: Path | str) -> None:
    """Register a folder of profiles, one ``<family>-<name>.yaml`` each, which ``--profile <family>-<name>`` (and
    ``make_config``) read like the built-in ones; ``register_task`` registers a kind's own."""
    _PROFILES[Path(folder).resolve()] = None


def unregister_profiles(folder: Path | str) -> None:
    _PROFILES.pop(Path(folder).resolve(), None)


def profile_folders(load: bool = False) -> list[Path]:
    """The registered profile folders; ``load`` first loads the built-ins and the installed plug-ins (a profile
    asked for and not found may be one of theirs)."""
    if load:
        _entry_points("reasonlab.tasks")
    return list(_PROFILES)


_REGISTER = {ModelKind: register_model}


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
        elif group == "reasonlab.studies" and hasattr(obj, "arms"):  # a Study, or its class
            register_study(obj, replace=True)
        elif group == "reasonlab.tasks" and hasattr(obj, "summarize"):  # a Kind, or its class
            register_task(obj, replace=True)
        else:
            obj()


def _lookup(table: dict[str, Any], what: str, name: str) -> Any:
    if name not in table:
        raise ConfigError(f"{what}: {name!r} is unknown; choose one of {', '.join(map(repr, table))}")
    return table[name]


def task_kinds() -> dict[str, Any]:
    _entry_points("reasonlab.tasks")
    return dict(_TASKS)


def task_kind(name: str) -> Any:
    return _lookup(task_kinds(), "task.kind", name)


def model_kinds() -> dict[str, ModelKind]:
    _entry_points("reasonlab.models")
    return dict(_MODELS)


def model_kind(name: str) -> ModelKind:
    return _lookup(model_kinds(), "model.kind", name)


def studies() -> dict[str, Any]:
    _entry_points("reasonlab.studies")
    return dict(_STUDIES)
