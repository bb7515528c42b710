"""Run directories: every run built under ``<id>.partial`` and renamed into place, its metrics, its lock.

A run directory ``<root>/<run_id>/`` exists only once its run has finished; until then the work lives in
``<root>/<run_id>.partial/``, which a later start resumes from its last checkpoint. Readers never see a
half-written file (each is written whole, ``reasonlab.files``) or a half-finished run.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import subprocess
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from reasonlab.errors import ConfigError, StoreError
from reasonlab.files import atomic_write_bytes, link_error, own_copy, read_bounded
from reasonlab.terminal import printable

PARTIAL = ".partial"
RUN_ID = re.compile(r"[0-9a-f]{12}")  # RunConfig.run_id()
LOCKS = ".locks"  # per-run and per-table lock files, hidden beside the runs
METRIC_SCHEMA = pa.schema(
    [("epoch", pa.int32()), ("step", pa.int64()), ("split", pa.string()), ("metric", pa.string()),
     ("value", pa.float64())]
)
# A metrics file's Parquet metadata holds the id of the run whose rows it holds: read back, rows of another run
# (a metrics file copied between run folders) are refused. A file written before it was recorded has none and is
# read as the rows of the run its folder names, as a checkpoint marker without a run id is read.
RUN_ID_KEY = b"reasonlab.run_id"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


class MetricRow(NamedTuple):
    """One logged figure: at ``epoch`` (after optimizer ``step``), evaluation set or stream ``split`` (``train``,
    ``weights``, ``pooled`` or a task's named set such as ``heldout/4-3/train_keys``), ``metric`` = ``value``."""

    epoch: int
    step: int
    split: str
    metric: str
    value: float


CLOCKS = ("epoch", "step")  # what a figure's series may be read against


class Metrics:
    """A run's metric rows, in the order they were logged, with the look-ups readers need (rather than each
    unpacking 5-tuples). ``Metrics.read(run_dir / "metrics.parquet")`` or ``Metrics(rows)``."""

    def __init__(self, rows: Iterable[tuple]) -> None:
        self.rows: list[MetricRow] = [r if isinstance(r, MetricRow) else MetricRow(*r) for r in rows]

    @classmethod
    def read(cls, path: Path) -> Metrics:
        return cls(read_metrics(path))

    def __iter__(self) -> Iterator[MetricRow]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def where(self, split: str | None = None, metric: str | None = None) -> list[MetricRow]:
        """The rows of one split and/or one metric, in logged order."""
        return [r for r in self.rows if (split is None or r.split == split) and (metric is None or r.metric == metric)]

    def series(self, split: str, metric: str, clock: str = "epoch") -> list[tuple[int, float]]:
        """(epoch, value) of one figure over training in logged order; ``clock="step"`` gives (step, value)."""
        if clock not in CLOCKS:
            raise ConfigError(f"series clock: {str(clock)[:40]!r} is not a clock; choose {' or '.join(CLOCKS)}")
        return [(getattr(r, clock), r.value) for r in self.where(split, metric)]

    def last_epoch(self, split: str | None = None) -> int | None:
        """The last epoch with a row (of ``split``, if given); None when there is none."""
        return max((r.epoch for r in self.where(split)), default=None)

    def at(self, epoch: int, split: str, metric: str) -> float | None:
        """The figure at an epoch (its first row there), or None."""
        return next((r.value for r in self.where(split, metric) if r.epoch == epoch), None)

    def last(self, split: str, metric: str) -> float | None:
        """The figure at its last logged epoch, or None."""
        rows = self.where(split, metric)
        return self.at(max(r.epoch for r in rows), split, metric) if rows else None

    def at_epoch(self, epoch: int, split: str) -> dict[str, float]:
        """Every metric of one split at an epoch, by name."""
        return {r.metric: r.value for r in self.where(split) if r.epoch == epoch}

    def first_epoch(self, split: str, metric: str, reaching: float) -> int | None:
        """The first epoch at which the figure is at least ``reaching``, or None."""
        return min((e for e, v in self.series(split, metric) if v >= reaching), default=None)


def write_metrics(path: Path, rows: Iterable[tuple], run_id: str) -> None:
    """Run ``run_id``'s metric rows as its metrics file, written whole (``atomic_write_bytes``), with page checksums
    and the run's id in the file's metadata (``RUN_ID_KEY``)."""
    rows = list(rows)
    cols = list(zip(*rows, strict=True)) if rows else [[] for _ in METRIC_SCHEMA]
    arrays = [pa.array(c, type=f.type) for c, f in zip(cols, METRIC_SCHEMA, strict=True)]
    table = pa.Table.from_arrays(arrays, schema=METRIC_SCHEMA.with_metadata({RUN_ID_KEY: run_id.encode()}))
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, write_page_checksum=True)  # a flipped byte is then found when read
    atomic_write_bytes(path, sink.getvalue().to_pybytes())


def _check_schema(path: Path, found: pa.Schema, run_id: str | None) -> None:
    """A metrics file's schema (its footer) holds the metrics columns and, when it records one, ``run_id`` (by
    default the run ``path``'s folder is named by); else a one-line StoreError. A Parquet table of other columns
    would read as rows of nulls, another run's rows as this run's."""
    for f in METRIC_SCHEMA:
        if f.name not in found.names or found.field(f.name).type != f.type:
            got = found.field(f.name).type if f.name in found.names else "missing"
            raise StoreError(f"{path}: not a metrics table (its column {f.name} is {got}, not {f.type}); rerun the run")
    owner = (found.metadata or {}).get(RUN_ID_KEY)
    expected = run_id if run_id is not None else _run_of(path)
    if owner is not None and expected is not None and owner != expected.encode():
        shown = printable(owner[:40].decode("utf-8", "replace"))
        raise StoreError(f"{path}: the metrics of run {shown}, not of run {expected} (copied from another run?); "
                         "rerun the run")


def _run_of(path: Path) -> str | None:
    """The run a metrics file is of by where it lies: the id its folder is named by (``<id>`` or ``<id>.partial``,
    links followed), None in a folder of another name (a pack's staging folder names its run explicitly)."""
    name = Path(path).parent.resolve().name.removesuffix(PARTIAL)
    return name if RUN_ID.fullmatch(name) else None


def _damaged(path: Path, e: Exception) -> StoreError:
    return StoreError(f"{path}: damaged metrics file ({type(e).__name__}); rerun the run")


MAX_TABLE_BYTES = 2**30  # a Parquet table of the store (a metrics file of a million evaluations is about 20 MB)


def parquet_source(path: Path, what: str) -> pa.BufferReader:
    """The Parquet file ``path`` read whole by this thread (``read_bounded``: a regular file of at most
    ``MAX_TABLE_BYTES``) into memory Arrow owns. Arrow's reader threads release what they were handed as they end;
    a Python object (a file, or bytes) needs the GIL to be released, and a thread waiting for it while the
    interpreter exits aborts the process ("terminate called without an active exception")."""
    sink = pa.BufferOutputStream()
    sink.write(read_bounded(path, what, MAX_TABLE_BYTES))
    return pa.BufferReader(sink.getvalue())


def check_metrics_columns(path: Path, run_id: str | None = None) -> None:
    """A metrics file is a regular file whose footer alone says it is a metrics table of the run (``_check_schema``);
    else a one-line StoreError."""
    try:
        _check_schema(path, pq.read_schema(parquet_source(path, "metrics file")), run_id)
    except (pa.ArrowException, OSError) as e:
        raise _damaged(path, e) from None


def metrics_table(path: Path, run_id: str | None = None) -> pa.Table:
    """A run's metrics file as a table of the metrics columns, checked in full (its columns and run, every page's
    checksum, the text as UTF-8, no epoch, step, split or metric missing); a FIFO or device in its place, a damaged
    file, a Parquet table of other columns or another run's metrics is a one-line StoreError."""
    try:
        source = parquet_source(path, "metrics file")
        _check_schema(path, pq.read_schema(source), run_id)
        table = pq.read_table(source, schema=METRIC_SCHEMA, page_checksum_verification=True)
        table.validate(full=True)
    except (pa.ArrowException, OSError) as e:
        raise _damaged(path, e) from None
    if any(table.column(name).null_count for name in METRIC_SCHEMA.names[:4]):
        raise StoreError(f"{path}: not a metrics table (an epoch, step, split or metric is missing); rerun the run")
    return table


def read_metrics(path: Path, run_id: str | None = None) -> list[MetricRow]:
    """A run's metric rows (epoch, step, split, metric, value) from its checked table (``metrics_table``)."""
    table = metrics_table(path, run_id)
    return [MetricRow(*r) for r in zip(*(table.column(f.name).to_pylist() for f in METRIC_SCHEMA), strict=True)]


def check_name(name: str, what: str) -> str:
    """Store names are plain words: no path separators, no '..', nothing that could leave the store; another name is
    a one-line ConfigError (a name is given, as a sweep's, a group's or a run's)."""
    if not _SAFE_NAME.fullmatch(name) or ".." in name:
        raise ConfigError(f"{what} {name!r}: use letters, digits, '.', '_' and '-' only (no '/' or '..')")
    return name


def run_paths(root: Path, run_id: str) -> tuple[Path, Path]:
    """(final directory, partial directory) of a run."""
    check_name(run_id, "run id")
    return root / run_id, root / f"{run_id}{PARTIAL}"


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path``; the kernel drops it if the holder dies, so no stale locks."""
    fd = _open_lock(path)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _open_lock(path: Path) -> int:
    """A descriptor of the lock file ``path``, made if need be in a real folder, neither through a link: a link in
    place of the folder or of the file (perhaps dangling, to a place outside the store) is refused, naming it, and
    so is anything but a regular file there (a FIFO would block the open)."""
    if os.path.islink(path.parent):  # before the folder is made: through a dangling link it would be made elsewhere
        raise link_error(path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = _open_nofollow(path.parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = _open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK, folder)
    finally:
        os.close(folder)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise StoreError(f"{path}: not a regular file, as a lock file is; remove it")
    return fd


def _open_nofollow(path: Path, flags: int, folder: int | None = None) -> int:
    """``os.open`` of ``path`` (by its name in the open ``folder``, if given) that follows no link: a link there is
    refused, naming it, and any other failure is one line too."""
    try:
        return os.open(path.name if folder is not None else path, flags | os.O_NOFOLLOW, 0o644, dir_fd=folder)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(path):
            raise link_error(path) from None
        raise StoreError(f"{path}: cannot open it for a lock ({e.strerror}); check its permissions, or remove "
                         "it") from None


def run_lock(root: Path, run_id: str) -> AbstractContextManager[None]:
    """One process at a time trains a given run, however many sweeps ask for it."""
    return file_lock(root / LOCKS / f"{check_name(run_id, 'run id')}.lock")


def unfinished_runs(root: Path) -> list[Path]:
    return sorted(root.glob(f"*{PARTIAL}")) if root.is_dir() else []


def finish_run(partial: Path, final: Path) -> None:
    os.replace(partial, final)


def append_event(run_dir: Path, text: str) -> None:
    """One line of ``events.log``: ``text`` (which may hold stored strings: a profile, a path) with every control
    character escaped (``printable``), so that a log read with ``cat`` or ``tail -f`` shows it and never obeys
    it, one event a line."""
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    path = Path(run_dir) / "events.log"
    own_copy(path)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    with open(fd, "a", encoding="utf-8") as f:
        f.write(f"{stamp} {printable(text.rstrip())}\n")


def git_revision() -> str | None:
    """The source tree's commit (with '+dirty' when it has changes); outside a git checkout, the commit that
    ``git archive`` wrote into the package's REVISION file (a frozen copy of the package, installed for long
    runs), else None."""
    here = Path(__file__).resolve().parent
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5)
        if rev.returncode != 0:
            return _archived_revision(here)
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, timeout=5).stdout.strip()
        return rev.stdout.strip() + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def _archived_revision(package: Path) -> str | None:
    try:
        text = (package / "REVISION").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if re.fullmatch(r"[0-9a-f]{40}", text) else None  # unsubstituted ($Format...) in a checkout
