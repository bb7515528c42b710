"""Run directories: every file written to a temp name and renamed, every run built under ``<id>.partial``.

A run directory ``<root>/<run_id>/`` exists only once its run has finished; until then the work lives in
``<root>/<run_id>.partial/``, which a later start resumes from its last checkpoint. Readers never see a
half-written file or a half-finished run.
"""

from __future__ import annotations

import errno
import fcntl
import glob
import io
import json
import math
import os
import re
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from reasonlab.errors import ConfigError, StoreError
from reasonlab.terminal import printable

PARTIAL = ".partial"
RUN_ID = re.compile(r"[0-9a-f]{12}")  # RunConfig.run_id()
LOCKS = ".locks"  # per-run and per-table lock files, hidden beside the runs
METRIC_SCHEMA = pa.schema(
    [("epoch", pa.int32()), ("step", pa.int64()), ("split", pa.string()), ("metric", pa.string()),
     ("value", pa.float64())]
)
TMP = ".tmp-"  # temp files are ".<name>.tmp-<pid>"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
# A JSON record the store reads (summary, progress, sweep, analysis result) is at most this large; the largest it
# writes are a few tens of kB. A file over it is refused by its size, before any of it is read.
MAX_RECORD_BYTES = 16 * 2**20


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temp name, fsync, rename: the old file (if any) stays whole until the new one is; what a
    killed writer of the same file left half-written is removed. Out of disk space is one clear error naming
    the file; the temp file is removed and the previous state is intact."""
    remove_temps(path.parent, name=glob.escape(path.name))
    tmp = path.with_name(f".{path.name}{TMP}{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as e:
        if e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            why = "file too large for the limit in force (ulimit -f)" if e.errno == errno.EFBIG else \
                "no space left on the device"
            raise StoreError(f"{path}: {why}; free some space or raise the limit and rerun (finished runs "
                              "are kept and an unfinished one resumes from its last checkpoint)") from None
        raise StoreError(f"{path}: cannot write ({e.strerror}); check the path and its permissions") from None
    finally:
        tmp.unlink(missing_ok=True)


def remove_temps(directory: Path, recursive: bool = False, name: str = "*") -> None:
    """Delete the temp files and staging folders (``reasonlab.staging``) that killed writers left in ``directory``
    (for target ``name``, a glob): those whose writing process (the pid in the name) no longer runs, so a live
    writer's file is never touched. A link of such a name goes, never what it points to."""
    for stale in list((Path(directory).rglob if recursive else Path(directory).glob)(f".{name}{TMP}*")):
        pid = stale.name.rpartition(TMP)[2]
        if pid.isdigit() and not alive(int(pid)):
            if stale.is_dir() and not stale.is_symlink():
                shutil.rmtree(stale, ignore_errors=True)
            else:
                stale.unlink(missing_ok=True)


def alive(pid: int) -> bool:
    """Whether process ``pid`` runs (one of another user counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def finite(obj: Any) -> Any:
    """``obj`` with NaN and ±inf floats as None, so the JSON written is strict (a diverged run has them): as
    ``write_json`` stores it, and so what the schema of a stored file must accept."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [finite(v) for v in obj]
    return obj


def write_npz(path: Path, arrays: dict[str, Any]) -> None:
    """Arrays as one compressed ``.npz``, written whole or not at all (``atomic_write_bytes``)."""
    import numpy as np

    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    atomic_write_bytes(path, buf.getvalue())


def _split(value: Any, key: str, arrays: dict[str, Any]) -> Any:
    """``value`` as JSON, each array (numpy or torch) in it moved into ``arrays`` under ``key`` and named in its
    place."""
    import numpy as np

    if isinstance(value, np.ndarray) or hasattr(value, "detach"):
        arrays[key] = np.asarray(value.detach() if hasattr(value, "detach") else value)
        return {"npz": key}
    if isinstance(value, dict):
        return {k: _split(v, f"{key}.{k}", arrays) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_split(v, f"{key}.{i}", arrays) for i, v in enumerate(value)]
    return value.item() if isinstance(value, np.generic) else value  # numpy scalars as Python numbers


def _join(value: Any, arrays: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        return arrays[value["npz"]] if set(value) == {"npz"} else {k: _join(v, arrays) for k, v in value.items()}
    return [_join(v, arrays) for v in value] if isinstance(value, list) else value


def write_with_arrays(path: Path, obj: Any) -> None:
    """A nested record holding arrays: the numbers as JSON at ``path``, the arrays in the ``.npz`` beside it. The
    JSON is written last, so its presence says the pair is whole."""
    arrays: dict[str, Any] = {}
    numbers = _split(obj, "g", arrays)
    write_npz(path.with_suffix(".npz"), arrays)
    write_json(path, numbers)


def read_with_arrays(path: Path, what: str, fix: str) -> Any:
    """What ``write_with_arrays`` wrote, or a one-line error naming the file and ``fix``."""
    import zipfile

    import numpy as np

    numbers = read_json(path, what)
    try:
        with np.load(path.with_suffix(".npz"), allow_pickle=False) as npz:
            return _join(numbers, dict(npz))
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile):
        raise StoreError(f"{path.with_suffix('.npz')}: damaged {what} arrays; {fix}") from None


def write_json(path: Path, obj: Any) -> None:
    atomic_write_text(path, json.dumps(finite(obj), indent=2, sort_keys=False, allow_nan=False) + "\n")


def read_bounded(path: Path, what: str, limit: int = MAX_RECORD_BYTES) -> bytes:
    """The bytes of the regular file ``path``, after a check of its size: one over ``limit`` bytes (a sparse file
    of terabytes in place of a record), or a FIFO or device, is a one-line StoreError naming it, none of it read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as e:
        raise StoreError(f"{path}: cannot read ({e.strerror})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise StoreError(f"{path}: not a regular file; not read as a {what} (remove it)")
        if info.st_size > limit:
            raise StoreError(f"{path}: {info.st_size / 2**20:.1f} MB, over the {limit / 2**20:g} MB a {what} may "
                             "be; not read (it was not written by reasonlab as it is: remove or replace it)")
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(limit + 1)
        if len(data) > limit:  # it grew while read
            raise StoreError(f"{path}: grew past {limit / 2**20:g} MB while read; not read as a {what}")
        return data
    except OSError as e:
        raise StoreError(f"{path}: cannot read ({e.strerror})") from None
    finally:
        os.close(fd)


def read_json(path: Path, what: str = "JSON file", limit: int = MAX_RECORD_BYTES) -> Any:
    """A JSON file the store wrote: at most ``limit`` bytes (``read_bounded``), strict UTF-8 and strict JSON, or a
    one-line error naming the file."""
    data = read_bounded(path, what, limit)
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (UnicodeDecodeError, json.JSONDecodeError, ValueError, RecursionError) as e:
        where = f" at line {e.lineno}" if isinstance(e, json.JSONDecodeError) else ""
        raise StoreError(f"{path}: damaged {what}{where}; it was not written by reasonlab as it is now") from None


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def inside(path: Path, root: Path) -> bool:
    """Whether ``path``, with every link on the way followed, stays inside ``root`` (itself resolved): a reader
    never follows a link out of the run or sweep directory it was asked to read. A loop of links leads nowhere,
    so not inside."""
    try:
        return Path(path).resolve().is_relative_to(Path(root).resolve())
    except (RuntimeError, OSError):  # RuntimeError: a loop of links (Python < 3.13)
        return False


_warned: set[str] = set()


def warn(message: str) -> None:
    """One line on stderr, made printable, said once (several readers of one command meet the same damaged file):
    once per process, or per command where the command line calls ``forget_warnings`` as each one starts."""
    if message not in _warned:
        _warned.add(message)
        print(printable(message), file=sys.stderr)


def forget_warnings() -> None:
    _warned.clear()


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


def write_metrics(path: Path, rows: Iterable[tuple]) -> None:
    rows = list(rows)
    cols = list(zip(*rows, strict=True)) if rows else [[] for _ in METRIC_SCHEMA]
    arrays = [pa.array(c, type=f.type) for c, f in zip(cols, METRIC_SCHEMA, strict=True)]
    table = pa.Table.from_arrays(arrays, schema=METRIC_SCHEMA)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, write_page_checksum=True)  # a flipped byte is then found when read
    atomic_write_bytes(path, sink.getvalue().to_pybytes())


def check_metrics_columns(path: Path) -> None:
    """A metrics file's columns (read from its footer alone) are the metrics schema's, or a one-line StoreError:
    a Parquet table of other columns would otherwise read as rows of nulls."""
    try:
        found = pq.read_schema(path)
    except (pa.ArrowException, OSError) as e:
        raise StoreError(f"{path}: damaged metrics file ({type(e).__name__}); rerun the run") from None
    for f in METRIC_SCHEMA:
        if f.name not in found.names or found.field(f.name).type != f.type:
            got = found.field(f.name).type if f.name in found.names else "missing"
            raise StoreError(f"{path}: not a metrics table (its column {f.name} is {got}, not {f.type}); rerun the run")


def read_metrics(path: Path) -> list[MetricRow]:
    """A run's metric rows (epoch, step, split, metric, value); a damaged file, or a Parquet table of other
    columns, is a one-line error."""
    try:
        check_metrics_columns(path)
        table = pq.read_table(path, schema=METRIC_SCHEMA, page_checksum_verification=True)
        columns = [table.column(f.name).to_pylist() for f in METRIC_SCHEMA]
        if any(None in c for c in columns[:4]):
            raise StoreError(f"{path}: not a metrics table (an epoch, step, split or metric is missing); rerun the run")
        return [MetricRow(*r) for r in zip(*columns, strict=False)]
    except (pa.ArrowException, OSError, ValueError) as e:  # ValueError: UnicodeDecodeError of a damaged string
        raise StoreError(f"{path}: damaged metrics file ({type(e).__name__}); rerun the run") from None


def check_name(name: str, what: str) -> str:
    """Store names are plain words: no path separators, no '..', nothing that could leave the store."""
    if not _SAFE_NAME.fullmatch(name) or ".." in name:
        raise StoreError(f"{what} {name!r}: use letters, digits, '.', '_' and '-' only (no '/' or '..')")
    return name


def run_paths(root: Path, run_id: str) -> tuple[Path, Path]:
    """(final directory, partial directory) of a run."""
    check_name(run_id, "run id")
    return root / run_id, root / f"{run_id}{PARTIAL}"


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``path``; the kernel drops it if the holder dies, so no stale locks."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


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


def own_copy(path: Path) -> None:
    """Before ``path`` is written in place (appended to): if it is a file with other names (hard links, one
    perhaps outside the store), it becomes a file of its own — its content copied to a temp name, fsynced and
    renamed over it — so the write never reaches the other names. A link (``os.O_NOFOLLOW``) is not followed."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode) or info.st_nlink < 2:
        return
    tmp = path.with_name(f".{path.name}{TMP}{os.getpid()}")
    try:
        src = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        with os.fdopen(src, "rb") as f, open(tmp, "xb") as out:
            shutil.copyfileobj(f, out, 2**20)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as e:
        raise StoreError(f"{path}: cannot make a copy of its own to write ({e.strerror}); it has other names "
                         "(hard links): replace it by a copy (cp FILE COPY && mv COPY FILE)") from None
    finally:
        tmp.unlink(missing_ok=True)


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
