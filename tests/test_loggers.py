"""Optional loggers: TensorBoard event files written while training (``train.loggers``) or exported from a
finished run, read back; the logger is execution-only (same run id) and a resumed run logs each row once; SQL over
the metrics of a whole store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import tiny_run, tiny_run_dict
from typer.testing import CliRunner

from reasonlab.cli import app
from reasonlab.store import finished_runs, read_metrics
from reasonlab.train.loop import Trainer, train_run

runner = CliRunner()


def _events(folder: Path) -> dict[str, list[tuple[int, float]]]:
    """Every scalar in the TensorBoard event files of ``folder``: tag -> [(step, value)]."""
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    acc = accumulator.EventAccumulator(str(folder), size_guidance={accumulator.SCALARS: 0})
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


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
    assert tiny_run(train={"loggers": ["tensorboard"]}).run_id() == base.run_id()


def test_training_with_tensorboard_writes_event_files_that_read_back(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    run_dir = _train(tmp_path, "train.loggers=[tensorboard]")
    logged = _events(run_dir / "tensorboard")
    assert {"train/loss", "pooled/seen_test_acc", "heldout/4-3/train_keys/acc_inferential"} <= set(logged)
    assert logged == _expected(run_dir)  # every metric row, once, at its step


def test_export_writes_a_finished_runs_metrics_as_event_files(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    run_dir = _train(tmp_path)
    assert not (run_dir / "tensorboard").exists()  # off by default
    result = runner.invoke(app, ["export", str(run_dir), "--to", "tensorboard"])
    assert result.exit_code == 0 and "tensorboard --logdir" in result.output, result.output
    assert _events(run_dir / "tensorboard") == _expected(run_dir)
    again = runner.invoke(app, ["export", str(run_dir)])
    lines = [x for x in again.output.splitlines() if x.strip()]
    assert again.exit_code == 2 and len(lines) == 1 and "already holds files" in lines[0]
    elsewhere = runner.invoke(app, ["export", str(run_dir), "--out", str(tmp_path / "tb")])
    assert elsewhere.exit_code == 0 and _events(tmp_path / "tb") == _expected(run_dir)
    assert not list(tmp_path.glob(".tb.tmp-*"))


def test_a_killed_and_resumed_run_logs_every_row_once(tmp_path: Path, monkeypatch) -> None:
    """Killed in its fourth epoch, after the third was logged but only the second checkpointed: the rerun trains
    the third again, and its rows are not logged twice."""
    pytest.importorskip("tensorboard")
    cfg = tiny_run(train={"loggers": ["tensorboard"], "checkpoint_every": 2, "checkpoint_log": 0})
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
    assert _events(run_dir / "tensorboard") == _expected(run_dir)


@pytest.mark.parametrize(("args", "expected"), [
    (["export", ".", "--to", "wandb"], "'wandb' is not one of 'tensorboard'"),
    (["export", "."], "not a finished run directory"),
    (["train", "--profile", "cpu", "--set", "train.loggers=[tensorbord]", "--dry-run"], "train.loggers"),
])
def test_bad_export_and_logger_input_is_one_line(args: list[str], expected: str) -> None:
    result = runner.invoke(app, args)
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and expected in lines[0], result.output


def test_a_missing_tensorboard_package_is_one_line_before_anything_is_written(tmp_path: Path, monkeypatch) -> None:
    import builtins

    real_import = builtins.__import__

    def no_tensorboard(name, *args, **kwargs):
        if name.startswith("torch.utils.tensorboard") or name.startswith("tensorboard"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tensorboard)
    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(tiny_run_dict(train={"epochs": 1, "loggers": ["tensorboard"]})))
    result = runner.invoke(app, ["train", str(config), "--out", str(tmp_path / "store"), "-q"])
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "pip install 'reasonlab[tensorboard]'" in lines[0]
    assert not (tmp_path / "store").exists()


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
