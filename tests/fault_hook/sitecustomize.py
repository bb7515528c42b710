"""Fault injection for the crash-consistency harness (tests/faults.py) and the pack/restore kill tests
(tests/e2e/test_faults.py), installed only there: they put this folder on PYTHONPATH of the commands they run, so
every Python process they start (the command, its pool workers, Ray tasks) imports this module at start-up.
reasonlab itself never reads the variables.

With ``REASONLAB_KILL_AT_WRITE=N`` a process kills itself halfway through its N-th atomic write: at the fsync of
the N-th file written under a temp name (``.<name>.tmp-<pid>``, or any file inside a staging folder of that
name), written whole and flushed, the file is cut to half its length first, so what is left is what a writer
killed in mid-write leaves. With ``REASONLAB_KILL_AT_RENAME=N`` it kills itself just before its N-th rename
(``os.replace`` or ``os.rename``). ``REASONLAB_KILL_WITH=TERM`` sends SIGTERM instead of SIGKILL: the process's
own handler then decides what is left.
"""

from __future__ import annotations

import os
import signal
import stat

_KILL_AT = int(os.environ.get("REASONLAB_KILL_AT_WRITE") or 0)
_KILL_AT_RENAME = int(os.environ.get("REASONLAB_KILL_AT_RENAME") or 0)
_SIGNAL = signal.SIGTERM if os.environ.get("REASONLAB_KILL_WITH") == "TERM" else signal.SIGKILL
_writes = 0
_renames = 0
_fsync, _replace, _rename = os.fsync, os.replace, os.rename


def _fsync_or_die(fd: int) -> None:
    global _writes
    if stat.S_ISREG(os.fstat(fd).st_mode) and ".tmp-" in os.readlink(f"/proc/self/fd/{fd}"):
        _writes += 1
        if _writes == _KILL_AT:
            os.ftruncate(fd, os.fstat(fd).st_size // 2)
            os.kill(os.getpid(), _SIGNAL)
    _fsync(fd)


def _counted(rename):  # noqa: ANN001, ANN202 - os.replace or os.rename
    def renamed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        global _renames
        _renames += 1
        if _renames == _KILL_AT_RENAME:
            os.kill(os.getpid(), _SIGNAL)
        return rename(*args, **kwargs)

    return renamed


if _KILL_AT:
    os.fsync = _fsync_or_die
if _KILL_AT_RENAME:
    os.replace, os.rename = _counted(_replace), _counted(_rename)
