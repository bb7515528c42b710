"""reasonlab: when does a transformer learn a reasoning solution, and when does it memorize?

The public API (docs/api.md): ``make_config``, ``run``, ``load``, ``Run``, ``MetricTable``, ``open_store``,
``build_task``, ``build_model``, ``score``, ``TaskDataset``, ``apply_init_rate``, ``RunConfig`` and ``ConfigError``;
``Kind`` and ``Study`` with ``register_task``, ``register_model`` and ``register_study`` for one's own task, model
or study (docs/extending.md).

The built-in kinds and studies register from their own folders when imported; this facade installs the loader
that imports them on the registry's first lookup, so ``import reasonlab`` stays light. The built-in kinds'
profile folders (``kinds/<kind>/profiles/``) are registered here by path, so finding or listing a profile
imports no kind.

Run as the command line, the package first makes SIGINT and SIGTERM end the process in one line (``signals``): its
imports take a second, before the command line's own boundary exists.
"""

from reasonlab import signals

if signals.launched_as_command():
    signals.end_at_once()

from pathlib import Path  # noqa: E402 - after the signals are answered

from reasonlab import registry  # noqa: E402
from reasonlab.registry import register_model, register_study, register_task  # noqa: E402
from reasonlab.version import __version__  # noqa: E402

__all__ = ["ConfigError", "Kind", "MetricTable", "Run", "RunConfig", "Study", "TaskDataset", "__version__",
           "apply_init_rate", "build_model", "build_task", "load", "make_config", "open_store", "register_model",
           "register_study", "register_task", "run", "score"]
_API = {"make_config", "run", "load", "Run", "MetricTable", "open_store", "build_task", "build_model", "score",
        "TaskDataset"}


def __getattr__(name: str):  # noqa: ANN202 - the API, imported on first use (``import reasonlab`` stays light)
    if name in _API:
        from reasonlab import api

        return getattr(api, name)
    if name == "Kind":
        from reasonlab.kinds.base import Kind

        return Kind
    if name == "Study":
        from reasonlab.studies.base import Study

        return Study
    if name in ("RunConfig", "ConfigError"):
        from reasonlab import config

        return getattr(config, name)
    if name == "apply_init_rate":  # it imports torch
        from reasonlab.init import apply_init_rate

        return apply_init_rate
    raise AttributeError(f"module 'reasonlab' has no attribute {name!r}")


def _builtins() -> None:
    """Register the built-in model kinds, task kinds and studies: each registers itself when imported."""
    import reasonlab.kinds  # noqa: F401
    import reasonlab.models  # noqa: F401
    import reasonlab.studies  # noqa: F401


def _builtin_profiles() -> None:
    """Register the built-in kinds' profile folders by path (the kinds register them again when imported)."""
    for folder in sorted(Path(__file__).parent.glob("kinds/*/profiles")):
        registry.register_profiles(folder)


registry.add_loader(_builtins)
_builtin_profiles()
