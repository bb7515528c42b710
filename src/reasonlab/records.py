"""The store read back: one schema per file a reader relies on, checked on every read, and runs known by their id.

A file can parse and still not be what reasonlab wrote: a number stored as a string, an outcome pair without its
fields, a config whose model is a list, a run directory copied under another run's name. Each file the store's
readers use has a pydantic model here, which the code that writes it validates against too: ``RunSummary``
(``summary.json``), ``SweepRecord`` (``sweep.json``), ``ProgressRecord`` (``progress.json``), analysis results
(a JSON object). A run directory is a run when the id inside it — the hash of its config — is its name
(``<id>`` or ``<id>.partial``). A run is printed in one line by ``describe_run``, wherever it is printed.

A single file asked for by name (``show RUN``, ``train`` of a finished run) that fails is a one-line StoreError
naming the file and what is wrong; in a listing (a sweep's runs for ``results``, ``report``, ``phase`` or a sweep
rerun) it is reported in one line on stderr and skipped, so the rest of the store still reads.

Layer: records, just above the store: it reads the config schema to check run identity, which the store itself
may not.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from reasonlab.config import RunConfig
from reasonlab.errors import StoreError, UserError
from reasonlab.files import finite, inside, read_json, warn, write_json
from reasonlab.registry import task_kind
from reasonlab.store import PARTIAL, RUN_ID, MetricRow, check_metrics_columns, read_metrics

Scalar = bool | int | float | str | None
Record = TypeVar("Record", bound=BaseModel)


class _Record(BaseModel):
    """Strict: a number stored as a string, or a string as a list, is not silently converted; and every string is
    Unicode text (JSON's escapes can spell a lone surrogate, which no page or table can encode)."""

    model_config = ConfigDict(strict=True, extra="allow")

    @model_validator(mode="before")
    @classmethod
    def _text(cls, data: Any) -> Any:
        for where, node in _strings(data):
            try:
                node.encode()
            except UnicodeEncodeError:
                raise ValueError(f"{where or 'a key'}: not Unicode text") from None
        return data


def _strings(node: Any, where: str = "") -> Iterable[tuple[str, str]]:
    """Every string of a JSON value (keys too), with where it is."""
    if isinstance(node, str):
        yield where, node
    elif isinstance(node, dict):
        for k, v in node.items():
            yield from _strings(k, where)
            yield from _strings(v, f"{where}.{k}" if where else str(k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _strings(v, f"{where}.{i}")


class KindReport(_Record):
    """The base of a kind's part of ``summary.json`` (``Kind.Report``): its own fields, typed; the rest of the
    summary passes through it untouched."""


class Outcome(_Record):
    """A run's outcome: its label and its kind's fields (scalars, or a kind's typed parts: the anchor pairs)."""

    __pydantic_extra__: dict[str, Scalar | dict[str, Any]]
    label: str | None = None


class Machine(_Record):
    cpu: str
    kernels: str
    extensions: list[str] = []  # SIMD and matrix extensions (AVX2, AVX-512, AVX512-BF16, AMX-BF16)


class Versions(_Record):
    reasonlab: str
    torch: str
    python: str


class RunSummary(_Record):
    """``summary.json``: what every reader of a finished run relies on (train writes it through this model)."""

    run_id: str = Field(pattern=RUN_ID.pattern)
    profile: str | None
    status: str
    label: str
    outcome: Outcome
    final: dict[str, float | None]
    best: dict[str, Scalar | dict[str, Scalar]] = {}
    histograms: dict[str, list[int]] = {}
    epochs: int
    steps: int
    wall_time_s: float
    diverged_step: int | None = None
    time_s: dict[str, float] = {}
    n_params: int
    device: str
    threads: int
    machine: Machine | None = None
    versions: Versions
    git_revision: str | None = None
    config: dict[str, Any]

    @field_validator("config")
    @classmethod
    def _a_run_config(cls, value: dict[str, Any]) -> dict[str, Any]:
        RunConfig.model_validate(value)
        return value

    @model_validator(mode="after")
    def _named_by_its_config(self) -> RunSummary:
        hashed = self.run_config().run_id()
        if hashed != self.run_id:
            raise ValueError(f"run_id {self.run_id} is not the hash of its config ({hashed})")
        return self

    @model_validator(mode="after")
    def _its_kind_part(self) -> RunSummary:
        """The kind's own fields, validated by the kind's ``Report`` (found through the registry)."""
        task_kind(self.config["task"]["kind"]).Report.model_validate(self.model_dump())
        return self

    def run_config(self) -> RunConfig:
        return RunConfig.model_validate(self.config)

    def describe(self, axes: Sequence[str] = ()) -> str:
        """The finished run in one line (``describe_run``)."""
        return describe_run(self.run_config(), axes, self.label, self.steps)


class SweepRecord(_Record):
    """``sweep.json``: the sweep's name, its axes (a linked axis as ``a+b``), the spec it ran, and the command line
    that last ran it (``reasonlab demo``; None from the Python API): what resumes its unfinished runs."""

    name: str
    axes: list[str]
    spec: dict[str, Any] = {}
    run_ids: list[str] = []
    command: str | None = None


class ProgressRecord(_Record):
    """``progress.json`` of an unfinished run: where it stands, then its last evaluation's figures (flat)."""

    __pydantic_extra__: dict[str, float | None]
    epoch: int
    epochs: int
    step: int
    steps: int | None = None  # the run's total; with the speed and ETA, written while it trains (older files lack them)
    steps_per_s: float | None = None
    eta_s: float | None = None
    loss: float | None
    wall_time_s: float
    diverged_step: int | None = None
    evaluated_epoch: int | None = None


PROGRESS_FIELDS = tuple(ProgressRecord.model_fields)  # every other key is a figure of the last evaluation


def write_progress(run_dir: Path, *, epoch: int, epochs: int, step: int, loss: float | None, wall_time_s: float,
                   steps: int | None = None, steps_per_s: float | None = None, eta_s: float | None = None,
                   diverged_step: int | None = None, evaluated_epoch: int | None = None,
                   figures: dict[str, float] | None = None) -> None:
    """Where a training run stands, rewritten every few seconds while it trains (read by ``load_progress``, the
    sweep's live table and ``show``): ``epoch`` epochs done, ``step`` of ``steps``, the speed (steps per second)
    and the run's ETA so far, the mean loss of the epoch so far (else the last one's); a diverged run records its
    step, any other its last evaluation's epoch and figures."""
    record: dict[str, Any] = {"epoch": epoch, "epochs": epochs, "step": step, "loss": loss, "wall_time_s": wall_time_s}
    record |= {k: v for k, v in (("steps", steps), ("steps_per_s", steps_per_s), ("eta_s", eta_s)) if v is not None}
    if diverged_step is not None:
        record["diverged_step"] = diverged_step
    else:
        record |= {"evaluated_epoch": evaluated_epoch, **(figures or {})}
    write_json(Path(run_dir) / "progress.json", valid(ProgressRecord, record))


def progress_figures(progress: dict) -> dict[str, float]:
    """The last evaluation's figures in a ``progress.json`` record (everything that is not a progress field)."""
    return {k: v for k, v in progress.items() if k not in PROGRESS_FIELDS and v is not None}


def valid(model: type[BaseModel], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as it will be stored, checked against the schema its readers use (a writer's own check: a
    failure here is a bug, not bad input)."""
    model.model_validate(finite(data))
    return data


def problem(e: ValidationError | UserError | ValueError) -> str:
    """What is wrong, in a few words: the first field that fails and how (``final.seen_test_acc: Input should be a
    valid number, got '0.93'``), and how many more."""
    if not isinstance(e, ValidationError):
        return str(e).splitlines()[0]
    errors = e.errors()
    first = errors[0]
    where = ".".join(str(p) for p in first["loc"]) or "the file"
    got = repr(first["input"])
    got = f", got {got[:40]}{'…' if len(got) > 40 else ''}" if first["type"] != "missing" else ""
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{where}: {first['msg'].removeprefix('Value error, ')}{got}{more}"


def validated(model: type[Record], data: Any, path: Path, what: str, fix: str) -> Record:
    """``data`` (read from ``path``) as a ``model``; else a one-line StoreError naming the file."""
    try:
        return model.model_validate(data)
    except (ValidationError, UserError, ValueError) as e:
        raise StoreError(f"{path}: not a {what} as reasonlab writes it ({problem(e)}); {fix}") from None


def checked(model: type[BaseModel], data: Any, path: Path, what: str, fix: str) -> dict[str, Any]:
    """``data`` (read from ``path``) if it is a ``model``; else a one-line StoreError naming the file."""
    validated(model, data, path, what, fix)
    return data


def read_summary(path: Path, name: str | None = None) -> dict[str, Any]:
    """A run's ``summary.json`` as stored (what the kinds' methods and the results rows read), checked against
    ``RunSummary``; with ``name`` (its directory's run id) also that the run it holds is that run."""
    return _read_summary(path, name)[0]


def _read_summary(path: Path, name: str | None) -> tuple[dict[str, Any], RunSummary]:
    """(the summary as stored, its typed record), read and checked once."""
    data = read_json(path, "run summary")
    record = validated(RunSummary, data, path, "run summary", "delete its run directory and rerun it")
    if name is not None and record.run_id != name:
        raise StoreError(f"{path.parent}: holds run {record.run_id}, not the run its name says (a copied or "
                         "renamed run directory: move it away)")
    return data, record


def load_run(run_dir: Path) -> tuple[dict, dict]:
    """(summary, config dict) of a finished run, or a one-line error naming the directory."""
    summary, _ = load_record(run_dir)
    return summary, summary["config"]


def load_record(run_dir: Path) -> tuple[dict[str, Any], RunSummary]:
    """(the summary as stored, for the kinds' methods; its typed record: ``record.label``, ``record.final``)
    of a finished run, or a one-line error naming the directory."""
    run_dir = Path(run_dir)
    summary_path = run_dir / "summary.json"
    if not summary_path.is_file():
        hint = " (unfinished: run `reasonlab train` again to resume)" if run_dir.name.endswith(PARTIAL) else ""
        raise StoreError(f"{run_dir}: not a finished run directory, no summary.json{hint}")
    _inside_or_refuse(summary_path, run_dir)
    name = run_dir.resolve().name
    return _read_summary(summary_path, name if RUN_ID.fullmatch(name) else None)


def _inside_or_refuse(path: Path, root: Path) -> None:
    if not inside(path, root):
        raise StoreError(f"{path}: a symbolic link out of {root}; not read")


def load_progress(run_dir: Path) -> dict:
    """An unfinished run's ``progress.json``: where its trainer last wrote it (epoch, step, loss, the last
    evaluation's figures); a one-line error if it is not as reasonlab writes it."""
    path = Path(run_dir) / "progress.json"
    _inside_or_refuse(path, Path(run_dir))
    return checked(ProgressRecord, read_json(path, "progress file"), path, "progress file",
                   "resume the run to rewrite it")


def check_identity(run_dir: Path, cfg: RunConfig) -> None:
    """An unfinished run's directory is named by its config's id (``<id>.partial``), or a one-line error."""
    name = Path(run_dir).resolve().name.removesuffix(PARTIAL)
    if RUN_ID.fullmatch(name) and cfg.run_id() != name:
        raise StoreError(f"{run_dir}: holds run {cfg.run_id()} (its config's hash), not the run its name says; "
                         "ignored (a copied or renamed run directory: move it away)")


def finished_runs(root: Path) -> list[Path]:
    """The finished runs directly under ``root``, sorted by run id: directories named by a run id whose summary
    is a run summary of that very run. Any other such directory — a damaged summary, a run copied under another
    id, a link out of ``root`` — is reported in one line (stderr) and skipped. A ``.partial`` directory is not
    listed (it holds its summary for a moment before the rename that finishes it) nor is a copy (``<id>.bak``)."""
    return [run_dir for run_dir, _ in finished_summaries(root)]


def finished_summaries(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    """(directory, summary) of each of ``finished_runs(root)``."""
    out = []
    for run_dir in run_dirs(root):
        try:
            out.append((run_dir, load_run(run_dir)[0]))
        except StoreError as e:
            warn(f"{e}; skipped")
    return out


def run_dirs(root: Path) -> list[Path]:
    """The directories under ``root`` that claim to be finished runs (named by a run id, with a summary), checked
    or not: what a sweep must not train again."""
    root = Path(root)
    if not root.is_dir():
        return []
    return sorted(p for p in within(root, root.iterdir()) if RUN_ID.fullmatch(p.name) and (p / "summary.json").exists())


def run_metrics(run_dir: Path) -> list[MetricRow]:
    """A run's metric rows from its own ``metrics.parquet`` (not a link out of the run), or a one-line StoreError."""
    path = Path(run_dir) / "metrics.parquet"
    _inside_or_refuse(path, Path(run_dir))
    return read_metrics(path)


def check_metrics(run_dir: Path) -> None:
    """The run's ``metrics.parquet`` is its own (not a link out of the run) and a metrics table by the columns in
    its footer (a file cut short has none), read without its rows; else a one-line StoreError naming it."""
    path = Path(run_dir) / "metrics.parquet"
    _inside_or_refuse(path, Path(run_dir))
    check_metrics_columns(path)


def within(root: Path, paths: Iterable[Path]) -> list[Path]:
    """The ``paths`` that stay inside ``root`` once links are followed; each one that leaves it is reported in one
    line and left out (a report or a table never embeds a file from elsewhere through a link)."""
    kept = []
    for p in paths:
        if inside(p, root):
            kept.append(p)
        else:
            warn(f"{p}: a symbolic link out of {root}; not read")
    return kept


def read_sweep(sweep_dir: Path) -> dict[str, Any] | None:
    """The sweep's ``sweep.json``, or None when there is none or it is not one (reported in one line)."""
    path = Path(sweep_dir) / "sweep.json"
    if not path.is_file():
        return None
    try:
        _inside_or_refuse(path, Path(sweep_dir))
        return checked(SweepRecord, read_json(path, "sweep file"), path, "sweep file",
                       "rerun the sweep to rewrite it")
    except StoreError as e:
        warn(f"{e}; its axes are read from the runs instead")
        return None


def read_analysis(path: Path) -> dict[str, Any]:
    """An analysis result (``analysis/<checkpoint>/<name>.json``): a JSON object, or a one-line StoreError."""
    data = read_json(path, "analysis result")
    if not isinstance(data, dict):
        raise StoreError(f"{path}: not an analysis result as reasonlab writes it (a JSON object; got "
                         f"{type(data).__name__}); run `reasonlab analyze` again")
    return data


def axis_value(cfg: RunConfig, key: str) -> object:
    """A field's value; for a linked axis (``a+b``) the values joined by "/"."""
    values = []
    for name in key.split("+"):
        node: object = cfg
        for part in name.split("."):
            node = getattr(node, part)
        values.append(node)
    return values[0] if len(values) == 1 else "/".join(map(str, values))


def _has(cfg: RunConfig, key: str) -> bool:
    """Whether the config has the dotted field (an Emb-MLP has no ``model.depth``)."""
    node: object = cfg
    for part in key.split("."):
        if not hasattr(node, part):
            return False
        node = getattr(node, part)
    return True


def describe_run(cfg: RunConfig, axes: Sequence[str] = (), label: str | None = None, steps: int | None = None) -> str:
    """A run in one line, the same wherever a run is printed (a sweep's plan, progress and finished lines, ``show``,
    the report's headers): its id, task kind and profile name (the label's first word: the full label is printed
    once, where a run or sweep is introduced); its key fields as ``field=value`` (the initialization, the model's
    depth or kind, the seed, its kind's phase-diagram axes, then any ``axes`` given: a sweep's); its length
    (the steps once known); and its label once finished::

        d8f6b940c81f · anchor · profile cpu · init.gamma=0.5 model.depth=2 seed=1 · 30 epochs / 1200 steps · inferential
    """
    gpt = cfg.init.scheme == "gpt"
    fields = dict.fromkeys([*(("init.scheme", "init.std") if gpt else ("init.gamma",)),
                            "model.depth" if hasattr(cfg.model, "depth") else "model.kind", "seed",
                            *(a for a in task_kind(cfg.task.kind).phase_axes
                              if _has(cfg, a) and not (gpt and a == "init.gamma")),
                            *axes])
    length = f"{cfg.train.epochs} epochs" + (f" / {steps} steps" if steps is not None else "")
    name = cfg.profile.split(maxsplit=1)[0] if cfg.profile and cfg.profile.strip() else cfg.profile
    parts = [cfg.run_id(), cfg.task.kind, f"profile {name}",
             " ".join(f"{a}={axis_value(cfg, a)}" for a in fields), length]
    return " · ".join(parts + ([label] if label is not None else []))
