"""A SIGINT or SIGTERM at any moment of a command — its imports, its start-up, its work, its way out — ends it
with one line and exit code 130 (or the command finishes first), never a traceback or silence, and leaves nothing
half-written.

The delays count from the moment reasonlab's own first line has run (the package answers the signals from its
first import; before it, the interpreter's own start-up of a few milliseconds, the system's default holds). The
process is run with ``-X importtime``, and the first import it reports after ``reasonlab.signals`` is that moment:
so the test holds on a loaded machine, where a fixed delay from the process's start could land anywhere.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from conftest import tiny_run, tiny_run_dict

from reasonlab.train.run import train_run

pytestmark = pytest.mark.slow  # about 30 real commands, each a second or two of imports

SRC = str(Path(__file__).parents[2] / "src")
DELAYS = (0.0, 0.1, 0.3, 0.6, 1.0, 1.5)  # seconds after reasonlab's first line
MARK = "reasonlab.signals"


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]),
            "OMP_NUM_THREADS": "1", "COLUMNS": "120"}


def signalled(args: list[str], sig: signal.Signals, delay: float, cwd: Path) -> tuple[int, str, str]:
    """Run ``python -m reasonlab ARGS``, send ``sig`` ``delay`` s after its first reasonlab line ran; return the exit
    code, stdout and stderr without the import-time lines."""
    proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "reasonlab", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(), cwd=cwd, text=True)
    lines: list[str] = []
    started = threading.Event()

    def read() -> None:
        seen = False
        for text in proc.stderr:
            lines.append(text)
            if seen and text.startswith("import time:"):
                started.set()  # an import after reasonlab.signals's: the package answers the signals
            seen = seen or text.rstrip().endswith(MARK)
        started.set()  # the process ended first

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert started.wait(120), "the command never imported reasonlab"
    time.sleep(delay)
    if proc.poll() is None:
        proc.send_signal(sig)
    out = proc.stdout.read()
    proc.wait(120)
    reader.join(30)
    err = "".join(line for line in lines if not line.startswith("import time:"))
    return proc.returncode, out, err


def assert_one_line_or_done(code: int, out: str, err: str, what: tuple, alone: bool = True) -> None:
    """Interrupted: exit 130 and its last line says so and what to do (with ``alone``, the only line on stderr);
    or the command finished (exit 0) first. Never a traceback, never an end by the signal itself with nothing
    said."""
    assert "Traceback" not in out + err, (what, out, err)
    assert code in (0, 130), (what, code, out, err)
    if code == 130:
        said = err.strip().splitlines()
        assert said and said[-1].startswith(("interrupted", "stopped")) and "run the same command" in said[-1], \
            (what, err)
        assert len(said) == 1 or not alone, (what, err)


def no_temp_files(root: Path) -> None:
    left = [p for p in root.rglob("*") if ".tmp-" in p.name or ".aside-" in p.name]
    assert not left, left


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A finished tiny run to read and report on."""
    return train_run(tiny_run(train={"epochs": 1}), tmp_path_factory.mktemp("store") / "adhoc", progress=False,
                     log=lambda _: None)[0]


@pytest.mark.parametrize("delay", DELAYS)
def test_a_signal_while_reading_or_reporting_is_one_line(delay, finished, tmp_path):
    """``profiles`` (reads), ``report`` (writes report.html into the run): each signal, each delay."""
    for args in (["profiles"], ["report", str(finished)]):
        for sig in (signal.SIGINT, signal.SIGTERM):
            code, out, err = signalled(args, sig, delay, tmp_path)
            assert_one_line_or_done(code, out, err, (args[0], sig.name, delay))
            no_temp_files(finished)


@pytest.mark.parametrize("delay", DELAYS)
def test_a_signal_while_training_is_one_line_and_leaves_a_run_whole_or_resumable(delay, tmp_path):
    """``train`` of a tiny config into an empty store, signalled once: one line, and the store holds no temp file
    and either nothing, an unfinished run that resumes, or a finished run whose summary reads."""
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(tiny_run_dict(train={"epochs": 2})))
    for sig in (signal.SIGINT, signal.SIGTERM):
        store = tmp_path / f"store-{sig.name}"
        code, out, err = signalled(["train", str(config), "--out", str(store)], sig, delay, tmp_path)
        assert_one_line_or_done(code, out, err, ("train", sig.name, delay), alone=False)
        if store.exists():
            no_temp_files(store)
            for summary in store.rglob("summary.json"):
                json.loads(summary.read_text())
