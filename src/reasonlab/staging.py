"""Folders written as one transaction: built under a staging name, published by one rename, never through a link.

``pack`` and ``restore`` copy whole folders (a run's record and checkpoint into a results folder, a pack into a
store). Each builds its folder as ``.<name>.tmp-<pid>`` beside where it goes (``staging``), copying every file
with ``copy_below``: no symbolic link is followed on the way (a link, a FIFO or a device in a run, a pack or a
store is refused in one line naming it, and so is a file with other names — hard links, one perhaps outside: its
content is not the run's to copy), every file is fsynced and its size is checked before it is read. Once
complete and checked, ``publish`` renames it into place. A folder already there is first renamed aside
(``.<name>.aside-<pid>``), then the new one in, then the old one deleted: at every moment one of them is whole.
What a killed process leaves is found by the next ``clean_stale`` in that folder (and only once that process is
gone): a staging folder is deleted, and an aside folder whose place is empty is put back once it checks as what
it is named (one that does not is left, and said), so a kill at any point keeps the old folder or the new one. On
the command line SIGINT and SIGTERM unwind ``pack`` and ``restore`` at once (``signals.unwinding``), so their
staging folder goes with them.

Layer: store.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import takewhile
from pathlib import Path

from reasonlab.arguments import ascii_int
from reasonlab.errors import StoreError, UserError
from reasonlab.files import TMP, alive, link_error, remove_temps, warn
from reasonlab.store import LOCKS

ASIDE = ".aside-"  # a folder being replaced is ".<name>.aside-<pid>" until its replacement is in place
CHUNK = 2**20


def refuse_links(folder: Path) -> None:
    """A run's or sweep's folder about to be written into: none of its own entries (``checkpoints/``,
    ``events.log``, ``figures/``, ``analysis/``, records) may be a link, which the write would go through."""
    for entry in sorted(Path(folder).iterdir()):
        if entry.is_symlink():
            raise link_error(entry)


def _special_error(path: Path) -> StoreError:
    return StoreError(f"{path}: not a regular file or folder; remove it from the run, pack or store")


def refuse_overlap(source: Path, dest: Path) -> None:
    """A destination inside the folder it is written from, or holding it, is refused: its pack (or restored run)
    would replace what it is made of."""
    a, b = Path(os.path.realpath(source)), Path(os.path.realpath(dest))
    if b.is_relative_to(a):
        raise UserError(f"{dest}: inside {source}; write into a folder outside the one read from")
    if a.is_relative_to(b):
        raise UserError(f"{dest}: holds {source}, which the copy would replace; write into a folder outside it")


def open_below(root: Path, relative: Path) -> int:
    """A read-only descriptor of the regular file ``root/relative``, no link followed below ``root`` (a link there
    is refused, naming it: the check is the open itself, so a link put in place meanwhile is refused too)."""
    parts = Path(relative).parts
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            flags = (os.O_RDONLY | os.O_NONBLOCK) if last else (os.O_RDONLY | os.O_DIRECTORY)
            try:
                new = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(root.joinpath(*parts[:i + 1])):
                    raise link_error(root.joinpath(*parts[:i + 1])) from None
                raise
            os.close(fd)
            fd = new
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _special_error(root / relative)
        return fd
    except BaseException:
        os.close(fd)
        raise


def _size_within(fd: int, path: Path, limit: int | None, bound: str) -> int:
    """The size of the open file ``fd`` (at ``path``), refused before any of it is read when over ``limit`` bytes
    (``bound`` says whose limit it is)."""
    size = os.fstat(fd).st_size
    if limit is not None and size > limit:
        raise StoreError(f"{path}: {size / 2**20:.1f} MB, over the {limit / 2**20:.0f} MB {bound}; not read")
    return size


def copy_below(root: Path, relative: Path | str, dest: Path, limit: int | None = None) -> None:
    """Copy the file ``root/relative`` to the new file ``dest`` (its folder made), fsynced, without following a
    link below ``root``; a file over ``limit`` bytes, or one with other names (hard links: its content may be a
    file's outside the store), is refused before any of it is read."""
    src = open_below(root, Path(relative))
    try:
        _size_within(src, root / relative, limit, "a pack may hold")
        refuse_other_names(root / relative, os.fstat(src))
        dest.parent.mkdir(parents=True, exist_ok=True)
        with open(dest, "xb", opener=lambda p, flags: os.open(p, flags | os.O_NOFOLLOW, 0o644)) as out:
            copied = 0
            while chunk := os.read(src, CHUNK):
                copied += len(chunk)
                if limit is not None and copied > limit:  # it grew while read
                    raise StoreError(f"{root / relative}: grew past {limit / 2**20:.0f} MB while copied; not taken")
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
    finally:
        os.close(src)


def refuse_other_names(path: Path, info: os.stat_result) -> None:
    """The file ``path`` (of status ``info``) is refused, naming it, when it has other names (hard links, one
    perhaps outside the run, pack or store): neither a copy nor a new name of it is the run's own."""
    if info.st_nlink > 1:
        raise StoreError(f"{path}: a file with {info.st_nlink} names (hard links), one perhaps outside the run, pack "
                         "or store; not taken (replace it by a copy of its own: cp FILE COPY && mv COPY FILE)")


def file_sha256(root: Path, relative: Path | str, limit: int | None = None) -> tuple[int, str]:
    """(size, SHA-256) of ``root/relative``, read in chunks without following a link below ``root``, after a
    check that it is not over ``limit`` bytes."""
    fd = open_below(root, Path(relative))
    try:
        size = _size_within(fd, root / relative, limit, "allowed")
        digest = hashlib.sha256()
        while chunk := os.read(fd, CHUNK):
            digest.update(chunk)
        return size, digest.hexdigest()
    finally:
        os.close(fd)


def plain_files(folder: Path) -> list[Path]:
    """The files below ``folder`` (paths relative to it), sorted, after a check that every entry is a regular file
    or a folder: a link (never followed) or anything else is refused, naming it."""
    mode = folder.lstat().st_mode
    if stat.S_ISLNK(mode):
        raise link_error(folder)
    if not stat.S_ISDIR(mode):
        raise StoreError(f"{folder}: not a folder; remove it from the run, pack or store")
    found = []
    for dirpath, dirnames, filenames in os.walk(folder):  # never into a link
        for name in (*dirnames, *filenames):
            path = Path(dirpath) / name
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                raise link_error(path)
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                raise _special_error(path)
            if stat.S_ISREG(mode):
                found.append(path.relative_to(folder))
    return sorted(found)


def remove(path: Path) -> None:
    """Delete a file, a link (not what it points to) or a folder; nothing if there is none."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink(missing_ok=True)
    elif path.is_dir():
        shutil.rmtree(path)


@contextmanager
def made_for(folder: Path) -> Iterator[None]:
    """Within: ``folder`` exists (made with its parents if need be). The folders made here are removed again if
    what is done within fails while they hold nothing but lock files: a refused input leaves no folder behind, nor
    an empty parent of one."""
    made = list(takewhile(lambda p: not os.path.lexists(p), (folder, *folder.parents)))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        yield
    except BaseException:
        if made:
            for lock in (folder / LOCKS).glob("*.lock"):
                lock.unlink(missing_ok=True)
            for empty in (folder / LOCKS, *made):
                try:
                    empty.rmdir()
                except OSError:  # missing, or it holds something now: kept
                    pass
        raise


@contextmanager
def staging(parent: Path, name: str) -> Iterator[Path]:
    """A fresh, empty ``parent/.<name>.tmp-<pid>`` to build a folder in, deleted on the way out unless it was
    published (or unless this process is killed: then the next ``clean_stale`` in ``parent`` deletes it)."""
    folder = parent / f".{name}{TMP}{os.getpid()}"
    remove(folder)  # this process's own, from an earlier call that failed
    folder.mkdir()
    try:
        yield folder
    finally:
        remove(folder)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def publish(staged: Path, target: Path) -> None:
    """Rename the complete folder ``staged`` to ``target``, its folders fsynced first. A file, link or folder at
    ``target`` is renamed aside first and deleted once the new one is in place; if this process is stopped in
    between, the old one is put back (here on an exception, by the next ``clean_stale`` after a kill)."""
    for dirpath, _, _ in os.walk(staged):
        _fsync_dir(Path(dirpath))
    aside = target.with_name(f".{target.name}{ASIDE}{os.getpid()}")
    had = os.path.lexists(target)
    if had:
        remove(aside)
        os.replace(target, aside)
    try:
        os.replace(staged, target)
    except BaseException:
        if had and not os.path.lexists(target):
            os.replace(aside, target)
        raise
    _fsync_dir(target.parent)
    if had:
        remove(aside)


def clean_stale(folder: Path, check: Callable[[Path, str], None]) -> None:
    """Undo in ``folder`` what killed ``staging``/``publish`` calls left (of processes no longer running): a folder
    set aside whose place is empty goes back once ``check(aside, name)`` passes (it reads as what it is named: a
    folder of that name may have been put there by other hands), else it is left and said in one line; one whose
    replacement is in place goes; staging folders go."""
    if not folder.is_dir():
        return
    for aside in sorted(folder.glob(f".*{ASIDE}*")):
        name, _, pid_text = aside.name[1:].rpartition(ASIDE)
        pid = ascii_int(pid_text)
        if pid is None or alive(pid):
            continue
        if os.path.lexists(folder / name):
            remove(aside)
            continue
        try:
            check(aside, name)
        except UserError as e:
            warn(f"{aside}: left as it is, not put back as {name} (look at it, then remove it): {e}")
            continue
        os.replace(aside, folder / name)
    remove_temps(folder)
