"""The store's files one at a time: each written to a temp name and renamed, each read after a check of its size.

A reader never sees a half-written file: a write goes to ``.<name>.tmp-<pid>``, is fsynced and renamed over the
old file, and what a killed writer left behind is removed once its process is gone. A reader reads only a regular
file of at most the bytes its kind of record may hold (``read_bounded``), never follows a link out of the folder it
was asked to read (``inside``), and reports a damaged file in one line, once (``warn``).
"""

from __future__ import annotations

import errno
import glob
import io
import json
import math
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any, BinaryIO

from reasonlab.arguments import ascii_int
from reasonlab.errors import StoreError
from reasonlab.terminal import printable

TMP = ".tmp-"  # temp files are ".<name>.tmp-<pid>"
# A JSON record the store reads (summary, progress, sweep, analysis result) is at most this large; the largest it
# writes are a few tens of kB. A file over it is refused by its size, before any of it is read.
MAX_RECORD_BYTES = 16 * 2**20


def link_error(path: Path) -> StoreError:
    return StoreError(f"{path}: a symbolic link; reasonlab neither reads nor writes through a link inside a run, a "
                      "pack or a store (replace it by the file it points to, or remove it)")


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
        pid = ascii_int(stale.name.rpartition(TMP)[2])
        if pid is not None and not alive(pid):
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


def open_regular(path: Path, what: str) -> BinaryIO:
    """``path`` opened for reading (binary) when it is a regular file; a FIFO, device, socket or folder is a
    one-line StoreError naming it, never read. A reader of a store file opens it through here: a FIFO with no
    writer would block a plain open for ever, and no signal ends that wait. The kind is checked before the open and
    again on the descriptor, which is opened without waiting (``O_NONBLOCK``), so a FIFO swapped in between is
    found too."""
    try:
        regular = stat.S_ISREG(os.stat(path).st_mode)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK) if regular else None
    except OSError as e:
        raise StoreError(f"{path}: cannot read ({e.strerror})") from None
    if fd is None or not stat.S_ISREG(os.fstat(fd).st_mode):
        if fd is not None:
            os.close(fd)
        raise StoreError(f"{path}: not a regular file; not read as a {what} (remove it)")
    return os.fdopen(fd, "rb")


def read_bounded(path: Path, what: str, limit: int = MAX_RECORD_BYTES) -> bytes:
    """The bytes of the regular file ``path`` (``open_regular``), after a check of its size: one over ``limit``
    bytes (a sparse file of terabytes in place of a record), or a FIFO or device, is a one-line StoreError naming
    it, none of it read."""
    with open_regular(path, what) as f:
        try:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                raise StoreError(f"{path}: {size / 2**20:.1f} MB, over the {limit / 2**20:g} MB a {what} may be; "
                                 "not read (it was not written by reasonlab as it is: remove or replace it)")
            data = f.read(limit + 1)
        except OSError as e:
            raise StoreError(f"{path}: cannot read ({e.strerror})") from None
    if len(data) > limit:  # it grew while read
        raise StoreError(f"{path}: grew past {limit / 2**20:g} MB while read; not read as a {what}")
    return data


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
