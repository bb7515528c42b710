"""The Python API (docs/api.md): build a config, train it, load a run, query a store.

Each function does what the command line does, with the same files and the same one-line ``ConfigError`` for
bad input: ``make_config`` is ``--profile``/``--set``, ``run`` is ``reasonlab train`` (figures included),
``load`` reads a run directory (its metrics as a ``MetricTable``, no pandas needed), ``open_store`` is the DuckDB
of ``reasonlab results --sql``. ``build_task``, ``build_model`` and ``score`` give a run's data, its initialized
model and the trainer's scores without training; ``TaskDataset`` is a task's data as a torch ``Dataset``.

pandas stays out of the base install: the chosen dependencies hold nothing a run's metrics need it for (a list of
named tuples with look-ups covers them, and ``MetricTable.columns()`` hands them to pandas, polars or numpy), and
it would add its own wheel and dependencies to every install for one conversion; ``pip install
'reasonlab[dataframe]'`` adds it for ``to_pandas()``.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reasonlab import arguments
from reasonlab.arguments import checked, flag, folder, instance, optional, real, store, whole, word
from reasonlab.config import ConfigError, RunConfig, raw_config, resolve
from reasonlab.records import load_run as _load_summary
from reasonlab.store import PARTIAL, MetricRow, Metrics, check_name
from reasonlab.tasks.dataset import TaskDataset  # noqa: F401 - public here: reasonlab.TaskDataset

MAX_SQL_MEMORY_GIB = 1024.0  # open_store's upper bound on DuckDB's memory, in GiB
_KEY = word("dotted field names as keys, e.g. {'init.gamma': 0.8}", limit=256)
_ITEM = instance(str, "'key=value' strings, e.g. ['init.gamma=0.8']")
_ITEM_KEY = word("'key=value' strings whose key is a dotted field name, e.g. ['init.gamma=0.8']", limit=256)
_ITEMS = instance((list, tuple), "a dict or a list of 'key=value' strings")
_A_CONFIG = "a RunConfig, e.g. make_config('anchor-cpu')"
_A_RUN = "a finished run directory, e.g. runs/adhoc/<run_id>"
_A_MODEL = "a model reasonlab built: run.model() or build_model(config)"


def _config(value: Any, what: str) -> RunConfig:
    """A ``RunConfig`` whose fields hold: validated again, as ``model_copy(update=...)`` and ``model_construct``
    check nothing (a seed of -5, a profile that cannot be written would fail only once training began)."""
    instance(RunConfig, _A_CONFIG)(value, what)
    try:
        RunConfig.model_validate(value.model_dump())
    except ConfigError as e:
        raise ConfigError(f"{what}: {e} (a config changed without validation, e.g. by model_copy(update=...); "
                          "make it with make_config(profile, overrides))") from None
    return value



def _group(value: Any, what: str) -> str:
    """A group name under the store: a name (``word``) that is also a plain folder name (``store.check_name``: no
    '/', no '..')."""
    return check_name(word("a group name under the store, e.g. 'adhoc'")(value, what), what)


def _finished_run(value: Any, what: str) -> str | Path:
    """A folder holding a run summary: a finished run. Any other folder is a wrong argument; a summary that does not
    read is the store's error (a StoreError, raised when it is read)."""
    path = Path(folder(_A_RUN)(value, what))
    if not (path / "summary.json").exists():
        why = "unfinished: run(config) resumes it" if path.name.endswith(PARTIAL) else "no summary.json"
        raise ConfigError(f"{what}: {path} is not a finished run ({why}); give {_A_RUN}")
    return value


def _model(value: Any, what: str) -> Any:
    """A torch module that ``build_model`` built, of any registered model kind: another module takes other inputs
    than a task's token sequences, and would fail inside torch."""
    import torch

    from reasonlab.build import built_kind

    instance(torch.nn.Module, _A_MODEL)(value, what)
    if built_kind(value) is None:
        raise ConfigError(f"{what}: expected {_A_MODEL}, got a {type(value).__name__} that reasonlab did not build")
    return value


def _override_items(overrides: Mapping[str, Any] | Sequence[str] | None) -> list[str]:
    """``overrides`` as ``key=value`` strings: from a mapping (values as JSON) or a list of strings."""
    if overrides is None:
        return []
    if isinstance(overrides, Mapping):
        items = []
        for key, value in overrides.items():
            _KEY(key, "make_config overrides")
            try:
                items.append(f"{key}={json.dumps(value, allow_nan=False)}")
            except (TypeError, ValueError, RecursionError):  # ValueError: NaN, or an int too long to print
                shown = f"an integer of {value.bit_length():,} bits" if isinstance(value, int) else \
                    repr(str(value)[:40])
                raise ConfigError(f"make_config overrides[{key!r}]: {shown} is not a config value (numbers, strings, "
                                  "booleans, None, lists and dicts of them)") from None
        return items
    _ITEMS(overrides, "make_config overrides")
    for item in overrides:
        _ITEM_KEY(_ITEM(item, "make_config overrides").partition("=")[0], "make_config overrides")  # a value: any text
    return list(overrides)


@checked(profile=optional(word("a profile name such as 'anchor-cpu', or None")),
         family=optional(word("a profile family such as 'anchor', or None")),
         file=optional(arguments.file("a path to a YAML file, or None")),
         study=optional(word("a profile family, or None")))
def make_config(profile: str | None = None, overrides: Mapping[str, Any] | Sequence[str] | None = (), *,
                family: str | None = None, file: str | Path | None = None, study: str | None = None) -> RunConfig:
    """A validated run config: a built-in ``profile`` (a full name such as 'anchor-cpu', or a bare one such as 'cpu'
    of ``family``), then a YAML ``file`` over it, then ``overrides`` ({"init.gamma": 0.8} or ["init.gamma=0.8"],
    as ``--set``). Without a profile the file or the overrides name the task kind (``task.kind``). ``study`` is the
    family's old name, kept for one release: a study is what ``reproduce`` runs."""
    if study is not None:
        warnings.warn("make_config(study=...) is deprecated: use family=", DeprecationWarning, stacklevel=2)
        family = study
    items = _override_items(overrides)
    return resolve(raw_config(Path(file) if file is not None else None, profile, items, family))


_SPLIT = word("a split's name, e.g. 'train'")
_METRIC = word("a metric's name, e.g. 'loss'")
_EPOCH = whole(0, None, "an epoch (a whole number from 0)")


class MetricTable(Metrics):
    """A run's metric rows (``MetricRow(epoch, step, split, metric, value)`` named tuples, in logged order) with the
    look-ups of ``reasonlab.store.Metrics`` (``.series(split, metric)``, ``.last(...)``, ``.at(epoch, ...)``): no
    pandas needed. ``columns()`` is the same rows as a dict of lists, which pandas, polars and numpy each take;
    ``to_pandas()`` is the DataFrame (with the ``dataframe`` extra). Each look-up checks its arguments: a split or
    metric of None, a number or an epoch of -1 is refused in one line, not answered with every row or none."""

    @checked(split=optional(_SPLIT), metric=optional(_METRIC))
    def where(self, split: str | None = None, metric: str | None = None) -> list[MetricRow]:
        """The rows of one split and/or one metric (None: every one), in logged order."""
        return super().where(split, metric)

    @checked(split=_SPLIT, metric=_METRIC, clock=word("'epoch' or 'step'"))
    def series(self, split: str, metric: str, clock: str = "epoch") -> list[tuple[int, float]]:
        """(epoch, value) of one figure over training in logged order; ``clock="step"`` gives (step, value)."""
        return super().series(split, metric, clock)

    @checked(split=optional(_SPLIT))
    def last_epoch(self, split: str | None = None) -> int | None:
        """The last epoch with a row (of ``split``, if given); None when there is none."""
        return super().last_epoch(split)

    @checked(epoch=_EPOCH, split=_SPLIT, metric=_METRIC)
    def at(self, epoch: int, split: str, metric: str) -> float | None:
        """The figure at an epoch (its first row there), or None."""
        return super().at(epoch, split, metric)

    @checked(split=_SPLIT, metric=_METRIC)
    def last(self, split: str, metric: str) -> float | None:
        """The figure at its last logged epoch, or None."""
        return super().last(split, metric)

    @checked(epoch=_EPOCH, split=_SPLIT)
    def at_epoch(self, epoch: int, split: str) -> dict[str, float]:
        """Every metric of one split at an epoch, by name."""
        return super().at_epoch(epoch, split)

    @checked(split=_SPLIT, metric=_METRIC, reaching=real(-math.inf, math.inf, "a finite value"))
    def first_epoch(self, split: str, metric: str, reaching: float) -> int | None:
        """The first epoch at which the figure is at least ``reaching``, or None."""
        return super().first_epoch(split, metric, reaching)

    def columns(self) -> dict[str, list]:
        """``{"epoch": [...], "step": [...], "split": [...], "metric": [...], "value": [...]}``."""
        return {name: [getattr(row, name) for row in self.rows] for name in MetricRow._fields}

    def to_pandas(self):  # -> pandas.DataFrame
        try:
            import pandas as pd
        except ImportError:
            raise ConfigError("Run.metrics.to_pandas(): needs pandas; pip install 'reasonlab[dataframe]' (Run.metrics "
                              "itself, its look-ups and .columns() need none)") from None
        return pd.DataFrame(self.columns())


def _checkpoint(value: Any, what: str) -> str | int:
    """'final', 'best' or a saved step: a step number from 0, or a name."""
    expected = "'final', 'best' or a saved step (a whole number from 0)"
    return (whole(0, None, expected) if isinstance(value, int) else word(expected))(value, what)


@dataclass
class Run:
    """A finished run: its directory, resolved config and summary; its metrics, task data and model on demand."""

    dir: Path
    config: RunConfig
    summary: dict
    _data: Any = field(default=None, repr=False)

    @property
    def id(self) -> str:
        return self.summary["run_id"]

    @property
    def label(self) -> str:
        """The outcome label (anchor runs: inferential, symmetric, other or not-fitted)."""
        return self.summary["label"]

    @property
    def metrics(self) -> MetricTable:
        """Every metric row the run logged, in the base install (no pandas): ``MetricRow(epoch, step, split, metric,
        value)`` named tuples with look-ups by name, ``.columns()`` (a dict of lists) and ``.to_pandas()``."""
        return MetricTable.read(self.dir / "metrics.parquet")

    def data(self):  # -> reasonlab.tasks.base.TaskData
        """The run's task data (training set and named evaluation sets), rebuilt from its config (and cached)."""
        if self._data is None:
            from reasonlab.build import build_task

            self._data = build_task(self.config)
        return self._data

    @checked(checkpoint=_checkpoint)
    def model(self, checkpoint: str | int = "final"):  # -> torch.nn.Module
        """The trained model in eval mode at ``final``, ``best`` (early stopping) or a saved step ("120" or 120)."""
        from reasonlab.analysis.loading import load_trained

        return load_trained(self.dir, str(checkpoint), self.data())[1]


@checked(config=_config)
def build_task(config: RunConfig):  # -> reasonlab.tasks.base.TaskData
    """The task data of ``config`` without training: vocabulary, training tensors and the named evaluation sets,
    as the trainer builds them (the same seed, the same sets)."""
    from reasonlab import build

    return build.build_task(config)


@checked(config=_config)
def build_model(config: RunConfig, data: Any = None):  # -> torch.nn.Module
    """The model of ``config`` initialized by its γ rule, untrained, as the trainer starts it; ``data`` (from
    ``build_task``) gives its vocabulary and sequence length, and is built from the config when not given."""
    from reasonlab import build
    from reasonlab.tasks.base import TaskData

    optional(instance(TaskData, "the TaskData of build_task(config), or None"))(data, "build_model data")
    return build.build_model(config, build.build_task(config) if data is None else data)


@checked(model=_model, limit=optional(whole(1, None, "a number of sequences from 1, or None for all")))
def score(model: Any, eval_set: Any, limit: int | None = None) -> dict[str, float]:
    """``model``'s accuracy on one evaluation set per target kind (``designated``; a kind's own such as
    ``inferential``), and its mean loss where the set has one, scored as the set declares (its ``scoring``) by
    the trainer's own scorer, on its first ``limit`` sequences (all by default); the model's mode is kept."""
    from reasonlab.evaluate.scoring import score_sets
    from reasonlab.tasks.base import EvalSet

    instance(EvalSet, "one of data.eval_sets' values, e.g. run.data().eval_sets[name]")(eval_set, "score eval_set")
    training = model.training
    device = next(model.parameters()).device
    try:
        result = score_sets(model, {"set": eval_set}, limit, device)["set"]
    finally:
        model.train(training)
    figures = {kind: result.acc(kind) for kind in result.correct}
    return figures if result.loss is None else {**figures, "loss": result.loss}


@checked(run_dir=_finished_run)
def load(run_dir: str | Path) -> Run:
    """A finished run directory (``runs/<name>/<run_id>``)."""
    summary, raw = _load_summary(Path(run_dir))
    return Run(Path(run_dir), resolve(raw), summary)


def train_and_plot(config: RunConfig, root: Path, progress: Any = False,
                   log: Callable[[str], None] = lambda _: None) -> tuple[Path, dict]:
    """Train (resume, or find finished) the run under ``root``, then draw its figure (``figures/run.png|svg``)
    where it is missing. A finished run found whole is left untouched; one without its figure in a directory that
    cannot be written (a read-only store, a committed run) is reported in one line, not redrawn: finding a run
    finished never needs to write."""
    from reasonlab.files import warn
    from reasonlab.plots.run import plot_run
    from reasonlab.train.run import train_run

    run_dir, summary = train_run(config, root, progress=progress, log=log)
    figures = run_dir / "figures"
    if not all((figures / f"run.{ext}").is_file() for ext in ("png", "svg")):
        if os.access(figures if figures.is_dir() else run_dir, os.W_OK):
            plot_run(run_dir)  # after the run finished: a failure here (a full disk) loses nothing of it
        else:
            warn(f"{figures}: run.png and run.svg not drawn, the run directory is read-only (the run is finished "
                 "and its record whole)")
    return run_dir, summary


@checked(config=_config, out=store("a store folder (made if missing), e.g. 'runs'"),
         name=_group, progress=flag)
def run(config: RunConfig, out: str | Path = "runs", name: str = "adhoc", progress: bool = False) -> Run:
    """Train ``config`` like ``reasonlab train`` (same run directory ``out/name/<run_id>``, same files, figures
    included); a finished run is loaded, an unfinished one resumed."""
    run_dir, _ = train_and_plot(config, Path(out) / name, "bar" if progress else False,
                                print if progress else (lambda _: None))
    return load(run_dir)


@checked(path=folder("a store, sweep or group folder, e.g. 'runs'"),
         memory_gib=real(0.0625, MAX_SQL_MEMORY_GIB, f"a number of GiB from 0.0625 to {MAX_SQL_MEMORY_GIB:g} (the "
                         "default is 4)"))
def open_store(path: str | Path, memory_gib: float = 4.0):  # -> duckdb.DuckDBPyConnection
    """An in-memory, read-only DuckDB connection over a store root, a sweep or a group of runs (``runs/adhoc``)
    with the views ``runs`` (one row per run), ``metrics`` (sweep, run_id, epoch, step, split, metric, value)
    and ``offsets`` (held-out offset histograms), holding at most ``memory_gib`` GiB (as ``results --sql``)."""
    from reasonlab.sweep.sql_query import connect

    return connect(Path(path), memory_gib)
