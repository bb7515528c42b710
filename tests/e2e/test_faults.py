"""The crash-consistency harness (tests/faults.py) at a few kill points per scenario: a training run and a sweep
(its runs one by one, as stacked pairs, and as Ray tasks) are SIGKILLed at random moments — a sweep's whole
process group or its own process alone — and halfway through random atomic writes, resumed, and checked against
an uninterrupted run (same final figures and metrics rows, one results row per run, every file parses, no worker
left running)."""

from __future__ import annotations

import pytest
from faults import harness, input_harness

pytestmark = pytest.mark.slow  # the harnesses: many runs killed and resumed, many CLI invocations


@pytest.mark.parametrize(("scenario", "kills", "seed"), [
    ("run", 4, 1), ("sweep", 2, 2), ("ensemble", 2, 3),
    pytest.param("ray", 1, 2, marks=pytest.mark.xdist_group("ray")),  # one local Ray instance at a time
])
def test_killed_and_resumed_equals_uninterrupted(scenario, kills, seed, tmp_path):
    if scenario == "ray":
        pytest.importorskip("ray", reason="the ray extra is not installed: pip install -e '.[ray]'")
    figures = harness(scenario, kills, seed, work=tmp_path)
    assert figures.kill_points >= kills and figures.timed_kills + figures.write_kills == figures.kill_points
    assert figures.problems == []
    assert figures.resumes_completed == figures.trials
    assert figures.mismatches == 0 and figures.rows_lost == 0 and figures.rows_duplicated == 0
    assert figures.unparseable_files == 0 and figures.temp_files_left == 0 and figures.orphans_left == 0


def test_random_bad_input_is_rejected_in_one_line_and_writes_nothing(tmp_path):
    figures = input_harness(150, seed=3, work=tmp_path)
    assert figures["inputs_tried"] == 150 and figures["rejected"] > 100
    assert figures["tracebacks"] == 0 and figures["multi_line_errors"] == 0 and figures["wrote_something"] == 0
    assert figures["problems"] == []


def test_damaged_copied_linked_and_hostile_store_files_never_give_a_traceback(tmp_path):
    """The store scenario: each class of store damage in turn (files of the wrong shape, copied run directories,
    links out of the store, foreign Parquet tables, names and texts not in UTF-8, markup and escapes in stored
    strings, unfinished runs), each followed by every command that reads the store."""
    from faults import STORE_DAMAGES, store_harness

    figures = store_harness(STORE_DAMAGES, seed=2, work=tmp_path)
    assert figures["cases_tried"] >= 9 * STORE_DAMAGES and figures["rejected"] > 0
    assert figures["tracebacks"] == 0 and figures["multi_line_errors"] == 0
    assert figures["unescaped_output"] == 0 and figures["read_outside"] == 0
    assert figures["problems"] == []


def _killed_cli(args: list[str], cwd, **faults: str) -> int:
    """The exit code of ``reasonlab ARGS`` run with the fault hook and ``faults`` (its variables)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    hook = str(Path(__file__).parents[1] / "fault_hook")
    env = {**os.environ, **faults, "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join(filter(None, [hook, os.environ.get("PYTHONPATH")]))}
    cli = str(Path(sys.executable).with_name("reasonlab"))
    return subprocess.run([cli, *args], cwd=cwd, env=env, capture_output=True).returncode


def _whole_pack_or_run(folder, checkpoints: str, run_id: str) -> None:
    """``folder`` holds a run's record and a checkpoint whose files are whole."""
    from reasonlab.checkpoint import complete_steps
    from reasonlab.checkpoint_checks import check_checkpoint

    assert (folder / "config.yaml").is_file() and (folder / "metrics.parquet").is_file()
    check_checkpoint(folder / checkpoints, complete_steps(folder / checkpoints)[-1], run_id)


def test_pack_and_restore_killed_at_each_step_lose_nothing_and_leave_nothing(tmp_path, monkeypatch):
    """SIGKILL and SIGTERM at each rename and at file writes of `pack` (over an earlier pack of the run) and of
    `restore` (into an empty store): afterwards the earlier pack or the new one is whole, never neither, and a
    restored run is whole or absent; a SIGTERM leaves no staging folder (exit 130), and after a SIGKILL the next
    command clears what was left and completes. Git ignores staging folders and folders set aside."""
    import subprocess
    from pathlib import Path

    from conftest import killed_after, tiny_run

    from reasonlab.staging import clean_stale
    from reasonlab.train.packs import check_named, pack_run, restore_pack

    cfg = tiny_run()
    rid = cfg.run_id()
    run = killed_after(cfg, tmp_path / "runs", 2, monkeypatch)  # its newest checkpoint: step 30
    results = tmp_path / "results"
    pack = pack_run(run, results)
    # pack: renames 1 (the earlier pack aside) and 2 (the new one in); writes: the staged files
    for faults in [{"REASONLAB_KILL_AT_RENAME": str(k)} for k in (1, 2)] + \
                  [{"REASONLAB_KILL_AT_WRITE": str(k)} for k in (1, 4, 7)]:
        for signal in ("KILL", "TERM"):
            code = _killed_cli(["pack", str(run), str(results)], tmp_path, REASONLAB_KILL_WITH=signal, **faults)
            assert code == (-9 if signal == "KILL" else 130), (faults, signal, code)
            if signal == "KILL":
                clean_stale(results, check_named)  # as the next command in the folder does
            assert sorted(p.name for p in results.iterdir()) == [pack.name], (faults, signal)
            _whole_pack_or_run(pack, "resume", rid)
    assert pack_run(run, results) == pack and sorted(p.name for p in results.iterdir()) == [pack.name]

    # restore: renames 1 (resume/ to checkpoints/ in the staging folder) and 2 (the run in); writes: staged files
    for i, faults in enumerate([{"REASONLAB_KILL_AT_RENAME": str(k)} for k in (1, 2)] +
                               [{"REASONLAB_KILL_AT_WRITE": str(k)} for k in (1, 4, 7)]):
        for signal in ("KILL", "TERM"):
            store = tmp_path / f"store-{i}-{signal}"
            code = _killed_cli(["restore", str(pack), "--into", str(store)], tmp_path, REASONLAB_KILL_WITH=signal,
                               **faults)
            assert code == (-9 if signal == "KILL" else 130), (faults, signal, code)
            if signal == "TERM":  # the store it made is removed again, or holds nothing staged
                assert not store.exists() or not [p for p in store.iterdir() if ".tmp-" in p.name], faults
            restored = store / f"{rid}.partial"
            if restored.exists():  # published whole, or not at all
                _whole_pack_or_run(restored, "checkpoints", rid)
            assert "restored at step 30" in restore_pack(pack, store)
            assert sorted(p.name for p in store.iterdir() if p.name != ".locks") == [restored.name]
            _whole_pack_or_run(restored, "checkpoints", rid)

    repo = Path(__file__).parents[2]
    for name in (f".{rid}.partial.tmp-123", f".{rid}.aside-123"):
        ignored = subprocess.run(["git", "check-ignore", "--no-index", "-q", f"results/sw/{name}"], cwd=repo)
        assert ignored.returncode == 0, name
