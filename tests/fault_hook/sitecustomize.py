"""Fault injection for the crash-consistency harness (tests/faults.py), installed only there: the harness puts this
folder on PYTHONPATH of the commands it runs, so every Python process they start (the command, its pool workers,
Ray tasks) imports this module at start-up. reasonlab itself never reads the variable.

With ``REASONLAB_KILL_AT_WRITE=N`` a process SIGKILLs itself halfway through its N-th atomic write: at the fsync of
the N-th temp file (``.<name>.tmp-<pid>``, written whole and flushed), the file is cut to half its length first,
so what is left is what a writer killed in mid-write leaves.
"""

from __future__ import annotations

import os
import signal

_KILL_AT = int(os.environ.get("REASONLAB_KILL_AT_WRITE") or 0)
_writes = 0
_fsync = os.fsync


def _fsync_or_die(fd: int) -> None:
    global _writes
    if ".tmp-" in os.path.basename(os.readlink(f"/proc/self/fd/{fd}")):
        _writes += 1
        if _writes == _KILL_AT:
            os.ftruncate(fd, os.fstat(fd).st_size // 2)
            os.kill(os.getpid(), signal.SIGKILL)
    _fsync(fd)


if _KILL_AT:
    os.fsync = _fsync_or_die
