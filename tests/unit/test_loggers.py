"""Optional loggers: TensorBoard event files and offline W&B runs written while training (``train.loggers``) or
exported from a finished run, read back; loggers are execution-only (same run id) and a resumed run logs each row
once; SQL over the metrics of a whole store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import tiny_run, tiny_run_dict
from typer.testing import CliRunner

from reasonlab.cli import app
from reasonlab.config import ConfigError
from reasonlab.records import finished_runs
from reasonlab.store import read_metrics
from reasonlab.train.ensemble import train_ensemble
from reasonlab.train.loggers import wandb_module
from reasonlab.train.loop import Trainer
from reasonlab.train.run import train_run

runner = CliRunner()


def _events(folder: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar in the TensorBoard event files of ``folder``: tag -> [(step, value)]."""
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    acc = accumulator.EventAccumulator(str(folder), size_guidance={accumulator.SCALARS: 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def _wandb_records(folder: Path) -> list[dict]:
    """The records of the one offline W&B run in ``folder``, as wandb's own reader of its run files prints them
    (``wandb leet inspect --json``: one JSON object per record)."""
    pytest.importorskip("wandb")
    (run,) = folder.glob("offline-run-*")
    out = subprocess.run([sys.executable, "-m", "wandb", "leet", "inspect", "--json", str(run)], capture_output=True,
                         text=True, check=True, timeout=120)
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def _history(folder: Path) -> dict[str, list[tuple[int, float]]]:
    """Every value in the history of the offline W&B run in ``folder``: key -> [(step, value)]."""
    out: dict[str, list[tuple[int, float]]] = {}
    for record in _wandb_records(folder):
        if record["type"] == "history":
            item = record["history"]["item"]
            for key, value in item.items():
                if not key.startswith("_"):  # W&B's own _step, _runtime, _timestamp
                    out.setdefault(key, []).append((item["_step"], value))
    return out


READ_BACK = {"tensorboard": _events, "wandb": _history}


@pytest.fixture
def offline(monkeypatch) -> None:
    """The W&B logger sets its process-wide settings itself; they are restored after the test."""
    for name in WANDB_SETTINGS:
        monkeypatch.setenv(name, "")  # recorded, so the test's end restores it
        monkeypatch.delenv(name)


WANDB_SETTINGS = ("WANDB_MODE", "WANDB_SILENT", "WANDB_ERROR_REPORTING")
# `reasonlab` in a process that refuses, and reports, every network name lookup to its very end (wandb reports
# usage from threads and at exit unless it is offline for the whole process).
NO_NETWORK = """import socket, sys
def refuse(*args, **kwargs):
    print("network lookup:", args[:2], file=sys.stderr)
    raise OSError("no network here")
socket.getaddrinfo = refuse
from reasonlab.cli import main
main()
"""


def _expected(run_dir: Path) -> dict[str, list[tuple[int, float]]]:
    out: dict[str, list[tuple[int, float]]] = {}
    for r in read_metrics(run_dir / "metrics.parquet"):
        out.setdefault(f"{r.split}/{r.metric}", []).append((r.step, pytest.approx(r.value, rel=1e-6, abs=1e-7)))
    return out


def _train(tmp_path: Path, *sets: str) -> Path:
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(tiny_run_dict(train={"epochs": 2})))
    args = ["train", str(config), "--out", str(tmp_path / "store"), "-q"]
    for item in sets:
        args += ["--set", item]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    return finished_runs(tmp_path / "store" / "adhoc")[0]


def test_a_logger_is_execution_only_and_off_by_default() -> None:
    base = tiny_run()
    assert base.train.loggers == []
    for loggers in (["tensorboard"], ["wandb"], ["tensorboard", "wandb"]):
        assert tiny_run(train={"loggers": loggers}).run_id() == base.run_id()


@pytest.mark.slow
def test_training_with_tensorboard_writes_event_files_that_read_back(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    run_dir = _train(tmp_path, "train.loggers=[tensorboard]")
    logged = _events(run_dir / "tensorboard")
    assert {"train/loss", "pooled/seen_test_acc", "heldout/4-3/train_keys/acc_inferential"} <= set(logged)
    assert logged == _expected(run_dir)  # every metric row, once, at its step


@pytest.mark.slow
def test_training_with_wandb_writes_an_offline_run_that_reads_back(tmp_path: Path) -> None:
    """Both loggers at once, trained in a process of its own that may not look up any network address: the W&B
    run is named by the run id, holds the resolved config and every metric row once, and nothing is written
    outside the run directory."""
    pytest.importorskip("tensorboard")
    pytest.importorskip("wandb")
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(tiny_run_dict(train={"epochs": 2})))
    env = {k: v for k, v in os.environ.items() if k not in WANDB_SETTINGS}
    done = subprocess.run([sys.executable, "-c", NO_NETWORK, "train", "tiny.yaml", "--out", "store", "-q", "--set",
                           "train.loggers=[tensorboard,wandb]"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0 and "network lookup" not in done.stderr, done.stderr
    run_dir = finished_runs(tmp_path / "store" / "adhoc")[0]
    assert _history(run_dir / "wandb") == _expected(run_dir) == _events(run_dir / "tensorboard")
    (run,) = (r["run"] for r in _wandb_records(run_dir / "wandb") if r["type"] == "run")
    assert run["run_id"] == run["display_name"] == run_dir.name and run["run_group"] == "adhoc"
    config = {k: v for k, v in run["config"]["update"].items() if k != "_wandb"}
    assert config == yaml.safe_load((run_dir / "config.yaml").read_text())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["store", "tiny.yaml"]


@pytest.mark.slow
@pytest.mark.parametrize(("to", "hint"), [("tensorboard", "tensorboard --logdir"), ("wandb", "wandb sync")])
def test_export_writes_a_finished_runs_metrics_for_either_logger(tmp_path: Path, to: str, hint: str,
                                                                 offline: None) -> None:
    pytest.importorskip(to)
    run_dir = _train(tmp_path)
    assert not (run_dir / to).exists()  # off by default
    result = runner.invoke(app, ["export", str(run_dir), "--to", to])
    assert result.exit_code == 0 and hint in result.output, result.output
    assert READ_BACK[to](run_dir / to) == _expected(run_dir)
    again = runner.invoke(app, ["export", str(run_dir), "--to", to])
    lines = [x for x in again.output.splitlines() if x.strip()]
    assert again.exit_code == 2 and len(lines) == 1 and "already holds files" in lines[0]
    elsewhere = runner.invoke(app, ["export", str(run_dir), "--to", to, "--out", str(tmp_path / "elsewhere")])
    assert elsewhere.exit_code == 0 and READ_BACK[to](tmp_path / "elsewhere") == _expected(run_dir)
    assert not list(tmp_path.glob(".elsewhere.tmp-*"))


@pytest.mark.slow
@pytest.mark.parametrize("logger", ["tensorboard", "wandb"])
def test_a_killed_and_resumed_run_logs_every_row_once(tmp_path: Path, logger: str, offline: None,
                                                      monkeypatch) -> None:
    """Killed in its fourth epoch, after the third was logged but only the second checkpointed: the rerun trains
    the third again, and its rows are not logged twice."""
    pytest.importorskip(logger)
    cfg = tiny_run(train={"loggers": [logger], "checkpoint_every": 2, "checkpoint_log": 0})
    original = Trainer._epoch

    def killed(self, epoch, step, bar):
        if epoch == 3:
            raise KeyboardInterrupt
        return original(self, epoch, step, bar)

    monkeypatch.setattr(Trainer, "_epoch", killed)
    with pytest.raises(KeyboardInterrupt):
        train_run(cfg, tmp_path, progress=False, log=lambda _: None)
    assert {r.epoch for r in read_metrics(tmp_path / f"{cfg.run_id()}.partial" / "metrics.parquet")} == {1, 2}
    monkeypatch.setattr(Trainer, "_epoch", original)
    run_dir, _ = train_run(cfg, tmp_path, progress=False, log=lambda _: None)
    assert READ_BACK[logger](run_dir / logger) == _expected(run_dir)


@pytest.mark.slow
def test_stacked_ensemble_members_each_log_their_own_wandb_run(tmp_path: Path, offline: None) -> None:
    """Members train in one process, so each keeps its own W&B run open beside the others."""
    pytest.importorskip("wandb")
    cfgs = [tiny_run(seed=seed, train={"epochs": 2, "loggers": ["wandb"]}) for seed in (1, 2)]
    for run_dir, _ in train_ensemble(cfgs, tmp_path):
        assert _history(run_dir / "wandb") == _expected(run_dir)


def test_a_wandb_too_old_for_several_runs_in_one_process_is_one_line(monkeypatch) -> None:
    wandb = pytest.importorskip("wandb")
    monkeypatch.setattr(wandb, "__version__", "0.17.9")
    with pytest.raises(ConfigError, match=r"^train.loggers: wandb 0.17.9 is too old .*reasonlab\[wandb\]'$"):
        wandb_module()


@pytest.mark.parametrize(("args", "expected"), [
    (["export", ".", "--to", "mlflow"], "'mlflow' is not one of 'tensorboard', 'wandb'"),
    (["export", "."], "not a finished run directory"),
    (["train", "--profile", "anchor-cpu", "--set", "train.loggers=[tensorbord]", "--dry-run"], "train.loggers"),
])
def test_bad_export_and_logger_input_is_one_line(args: list[str], expected: str) -> None:
    result = runner.invoke(app, args)
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and expected in lines[0], result.output


@pytest.mark.parametrize(("logger", "modules"), [("tensorboard", ("torch.utils.tensorboard", "tensorboard")),
                                                 ("wandb", ("wandb",))])
def test_a_missing_logger_package_is_one_line_before_anything_is_written(tmp_path: Path, monkeypatch, logger: str,
                                                                          modules: tuple[str, ...]) -> None:
    import builtins

    real_import = builtins.__import__

    def missing(name, *args, **kwargs):
        if name.startswith(modules):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", missing)
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(tiny_run_dict(train={"epochs": 1, "loggers": [logger]})))
    result = runner.invoke(app, ["train", str(config), "--out", str(tmp_path / "store"), "-q"])
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert result.exit_code == 2 and len(lines) == 1, result.output
    assert lines[0].endswith(f"train.loggers: {logger} needs the {logger} package; pip install 'reasonlab[{logger}]'")
    assert not (tmp_path / "store").exists()


@pytest.mark.slow
def test_sql_over_the_metrics_of_a_whole_store_with_run_ids(tmp_path: Path) -> None:
    """A store root holding a sweep and `reasonlab train`'s adhoc runs (no results table): one metrics view."""
    adhoc = _train(tmp_path)
    spec = tmp_path / "s.yaml"
    spec.write_text(json.dumps({"name": "g", "config": tiny_run_dict(train={"epochs": 1}),
                                "grid": {"seed": [1, 2]}}))
    assert runner.invoke(app, ["sweep", str(spec), "--out", str(tmp_path / "store"), "--workers", "1"]).exit_code == 0
    csv = tmp_path / "m.csv"
    result = runner.invoke(app, ["results", str(tmp_path / "store"), "--csv", str(csv), "--sql",
                                 "SELECT sweep, run_id, count(*) AS n FROM metrics GROUP BY ALL ORDER BY ALL"])
    assert result.exit_code == 0, result.output
    rows = [line.split(",") for line in csv.read_text().splitlines()[1:]]
    assert {(s, r) for s, r, _ in rows} == {("adhoc", adhoc.name), *(("g", p.name) for p in
                                                                     finished_runs(tmp_path / "store" / "g"))}
    assert int(dict(((s, n) for s, _, n in rows))["adhoc"]) == len(read_metrics(adhoc / "metrics.parquet"))
    table = tmp_path / "adhoc.csv"  # a results table for adhoc runs too
    runs = runner.invoke(app, ["results", str(tmp_path / "store" / "adhoc"), "--csv", str(table)])
    assert runs.exit_code == 0 and adhoc.name in table.read_text()
