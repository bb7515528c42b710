"""One schema per file the store's readers use, checked on every read and by the code that writes the file.

A file can parse and still not be what reasonlab wrote: a number stored as a string, an outcome pair without its
fields, a config whose model is a list, a run directory copied under another run's name. Each file the store's
readers use has a pydantic model here, which the code that writes it validates against too: ``RunSummary``
(``summary.json``, whose run id is the hash of its config and whose kind's part its kind's ``Report`` checks),
``SweepRecord`` (``sweep.json``), ``ProgressRecord`` (``progress.json``). A file that is not its model is one line
naming the file and the first field that fails (``validated``, ``checked``).

Layer: records, just above the store: it reads the config schema to check run identity, which the store itself
may not.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from reasonlab.config import RunConfig
from reasonlab.describe import describe_run
from reasonlab.errors import StoreError, UserError
from reasonlab.files import finite
from reasonlab.registry import task_kind
from reasonlab.store import RUN_ID

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
