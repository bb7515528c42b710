"""The errors a user can cause and fix: each message is one line naming the field or file and the fix.

``UserError`` is their base: the command line prints one as a single line and exits with code 2 (``reasonlab.cli``).
``ConfigError`` is a bad config, override, profile or input; ``StoreError`` a run directory, file or disk that
cannot be read or written (damaged, missing, full). ``Interrupted`` is no error but the stop a signal asked for
(exit 130). This module is the ground floor: it imports nothing of reasonlab, and every layer may import it.
"""

from __future__ import annotations


class UserError(Exception):
    """An error the user can fix; its message is one line naming the field or file and the fix."""


class ConfigError(UserError, ValueError):
    """A bad config, override, profile or path; its message is one line naming the field and the fix."""


class StoreError(UserError):
    """A run directory or store file that cannot be read or written: missing, damaged, or a full disk."""


class Interrupted(BaseException):  # noqa: N818 - not an error: the stop the user asked for
    """A stop asked for by a signal (Ctrl-C, SIGTERM) once the work so far is saved; the command line prints its
    message as one line and exits with code 130. A BaseException, like KeyboardInterrupt, so that no ``except
    Exception`` takes it for a failed run. ``step`` and ``steps`` say where one run stopped, when it is one run's."""

    def __init__(self, message: str, step: int | None = None, steps: int | None = None):
        super().__init__(message)
        self.step, self.steps = step, steps
