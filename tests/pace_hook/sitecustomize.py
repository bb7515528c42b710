"""Pacing for the Ctrl-C tests (tests/e2e/test_interrupt.py), installed only there: the tests put this folder on
PYTHONPATH of the commands they run, so the command and its pool workers import this module at start-up.
reasonlab itself never reads the variable.

With ``REASONLAB_TEST_STEP_SECONDS=S`` every training step (one run's, or a stacked ensemble's) sleeps S seconds
after it is taken, so that a signal sent "while the runs train" lands inside them on any CPU, however fast. The
sleep changes when steps happen, never what they compute: the tests compare the numbers with unpaced runs.
"""

from __future__ import annotations

import functools
import os
import time

_PACE = float(os.environ.get("REASONLAB_TEST_STEP_SECONDS") or 0)


def _paced(method):  # noqa: ANN001, ANN202 - any method
    @functools.wraps(method)
    def step(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        result = method(*args, **kwargs)
        time.sleep(_PACE)
        return result

    return step


if _PACE:
    from reasonlab.train.ensemble import Stack
    from reasonlab.train.loop import Trainer

    Trainer.train_step = _paced(Trainer.train_step)
    Stack.train_step = _paced(Stack.train_step)
