"""glibc's allocator kept from mapping, zeroing and returning a step's large tensors, for the duration of a run.

glibc serves an allocation above its mmap threshold (at most 32 MiB) with a fresh mapping and unmaps it when freed,
and gives the top of its heap back to the kernel above its trim threshold. A training step allocates and frees the
same large activations every step (at the modular cell: 256 × 95 × 512 fp32 hidden units, 50 MB), so each one is
mapped and page-faulted in again: a tenth of a step's CPU time there (docs/performance.md). ``keep_freed_memory``
turns both off while a run trains, so freed memory stays in the heap and the next step reuses it; the process then
holds its largest step's memory until the run ends. Nothing computed changes.

The settings are process-wide, so they are undone when the run ends: glibc's default limits are set again and the
kept memory is returned (``malloc_trim``). glibc's thresholds then stay at those values instead of adapting to the
sizes freed, as they do in a process that never set them. Elsewhere than on glibc (musl, macOS) this does nothing.
"""

from __future__ import annotations

import ctypes
import platform
from collections.abc import Iterator
from contextlib import contextmanager

M_TRIM_THRESHOLD, M_MMAP_MAX = -1, -4  # mallopt's parameters (malloc.h)
KEPT = {M_MMAP_MAX: 0, M_TRIM_THRESHOLD: 2**31 - 1}  # no mappings; trim only above 2 GiB (mallopt takes an int)
DEFAULTS = {M_MMAP_MAX: 65536, M_TRIM_THRESHOLD: 128 * 1024}  # glibc's own
_depth = 0  # runs inside one another (a run trained within another's scope) undo the settings once, at the last


def _libc() -> ctypes.CDLL | None:
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return None
    try:
        return ctypes.CDLL("libc.so.6")
    except OSError:
        return None


def _set(libc: ctypes.CDLL, settings: dict[int, int]) -> None:
    for param, value in settings.items():
        libc.mallopt(param, value)


@contextmanager
def keep_freed_memory() -> Iterator[None]:
    global _depth
    libc = _libc()
    if libc is None:
        yield
        return
    _set(libc, KEPT)
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if not _depth:
            _set(libc, DEFAULTS)
            libc.malloc_trim(0)
