"""Hostile input, second pass (issue 39): what stray input cannot decide. The Python API checks its arguments; a
finished run is neither trained again nor redrawn, and misuse of its probes, phase diagram and export is one line;
neither the environment nor a test hook decides what a command does, and a deleted working directory is named
first. Each refusal is one ``error:`` line naming the field, file or option, exit code 2, nothing written. The
bounds on every resource are ``test_bounds.py``."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from test_bounds import TINY, _refused, runner

from reasonlab.cli import app
from reasonlab.config import ConfigError, resolve


# ---- the Python API ----------------------------------------------------------------------------------------------
def _api_cases():
    import torch
    from torch import nn

    from reasonlab.api import load, make_config, open_store, run
    from reasonlab.config import RunConfig
    from reasonlab.init import apply_init_rate
    from reasonlab.registry import register_study
    from reasonlab.store import Metrics

    return [
        (lambda: make_config(123), "profile"),
        (lambda: make_config("anchor-cpu", "init.gamma=0.8"), "overrides"),
        (lambda: make_config("anchor-cpu", [1]), "overrides"),
        (lambda: make_config("anchor-cpu", {"init.gamma": {0.5}}), "overrides['init.gamma']"),
        (lambda: make_config("anchor-cpu", {"init.gamma": math.nan}), "overrides['init.gamma']"),
        (lambda: make_config("anchor-cpu", {1: 0.5}), "overrides"),
        (lambda: make_config("anchor-cpu", family=7), "family"),
        (lambda: make_config("anchor-cpu", file=3), "file"),
        (lambda: run("anchor-cpu"), "run config"),
        (lambda: run(make_config("anchor-cpu"), out=5), "run out"),
        (lambda: load(5), "run_dir"),
        (lambda: open_store(None), "path"),
        *((lambda bad=bad: open_store(".", memory_gib=bad), "memory_gib") for bad in (math.nan, math.inf, -1, 0,
                                                                                       1e30, True)),
        (lambda: register_study(7), "study 7"),
        (lambda: register_study(type("S", (), {"name": "s", "kind": "k", "arms": [], "run": print})), "study 's'"),
        (lambda: apply_init_rate(nn.Linear(2, 2), math.nan), "gamma"),
        (lambda: apply_init_rate(nn.Linear(2, 2), "0.5"), "gamma"),
        (lambda: apply_init_rate(nn.Linear(2, 2), -0.1), "gamma"),
        (lambda: apply_init_rate(nn.Linear(2, 2), 0.5, {"mlp": "x"}), "overrides['mlp']"),
        (lambda: apply_init_rate(nn.Linear(2, 2), 0.5, fixed_std=0.0), "fixed_std"),
        (lambda: apply_init_rate(nn.Linear(2, 2), 0.5, generator=0), "generator"),
        (lambda: apply_init_rate("model", 0.5), "module"),
        (lambda: apply_init_rate(nn.Linear(2, 2), 0.5, bias="ones"), "init.bias"),
        (lambda: apply_init_rate(nn.Linear(2, 2), torch.tensor(0.5)), "gamma"),
        (lambda: RunConfig.model_validate({"task": {"kind": "anchor"}, "seed": -1}), "seed"),
        (lambda: RunConfig.model_validate({"task": {"kind": "anchor", "n_trian_per_pair": 3}}),
         "task.n_trian_per_pair: unknown field (did you mean task.n_train_per_pair?)"),
        (lambda: RunConfig.model_validate([1]), "config"),
        (lambda: RunConfig.model_validate_json('{"seed": 1}'), "task.kind: missing"),
        (lambda: RunConfig(task={"kind": "anchor"}, seed="x"), "seed"),
        (lambda: Metrics([(1, 5, "train", "loss", 2.0)]).series("train", "loss", clock="steps"), "series clock"),
        (lambda: Metrics([]).series("train", "loss", clock=None), "series clock"),
    ]


@pytest.mark.parametrize("case", range(len(_api_cases())))
def test_the_python_api_checks_its_arguments(case):
    call, name = _api_cases()[case]
    with pytest.raises(ConfigError) as caught:
        call()
    assert str(caught.value).startswith(name) or f" {name}" in str(caught.value), str(caught.value)
    assert "\n" not in str(caught.value)


def test_the_api_still_takes_what_it_documents():
    from reasonlab.api import make_config
    from reasonlab.config import RunConfig
    from reasonlab.store import Metrics

    assert make_config("anchor-cpu", None) == make_config("anchor-cpu") == make_config("anchor-cpu", [])
    assert make_config("anchor-cpu", {"init.gamma": 0.8}) == make_config("anchor-cpu", ("init.gamma=0.8",))
    cfg = make_config("anchor-cpu")
    assert RunConfig.model_validate(cfg.model_dump()) == RunConfig.model_validate_json(cfg.model_dump_json()) == cfg
    table = Metrics([(1, 5, "train", "loss", 2.0), (2, 10, "train", "loss", 1.0)])
    assert table.series("train", "loss") == [(1, 2.0), (2, 1.0)]
    assert table.series("train", "loss", clock="step") == [(5, 2.0), (10, 1.0)]


# ---- a finished sweep: runs to probe, show, export and retrain ---------------------------------------------------
@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """Two tiny finished runs (post- and pre-LN) as a sweep, trained with a RAY_ADDRESS left in the environment:
    the sweep must train them on the local pool all the same."""
    root = tmp_path_factory.mktemp("bounds")
    spec = root / "sweep.yaml"
    cfg = {**TINY, "train": {k: v for k, v in TINY["train"].items() if k != "threads"}}
    spec.write_text(yaml.safe_dump({"name": "sw", "config": cfg, "grid": {"model.norm": ["post", "pre"]}}))
    before = os.environ.get("RAY_ADDRESS")
    os.environ["RAY_ADDRESS"] = "127.0.0.1:1"  # nothing listens there: a Ray backend would fail to connect
    try:
        result = runner.invoke(app, ["sweep", str(spec), "--out", str(root / "store"), "--workers", "1",
                                     "--threads", "1"])
    finally:
        os.environ.pop("RAY_ADDRESS") if before is None else os.environ.__setitem__("RAY_ADDRESS", before)
    assert result.exit_code == 0, result.output
    assert "1 workers × 1 threads" in result.output
    return root / "store" / "sw"


@pytest.mark.slow
def test_probe_phase_and_export_misuse_is_one_line(finished, tmp_path):
    from reasonlab.records import finished_runs

    run = finished_runs(finished)[0]
    _refused(["analyze", str(run), "--probe", "flow", "--key", "5000"], "--key", "5000", "20..99")
    _refused(["phase", str(finished), "--x", "model.norm", "--y", "init.gamma"], "--x model.norm", "not numbers")
    pytest.importorskip("wandb", reason="the wandb extra is not installed")
    copy = tmp_path / "g" / run.name
    shutil.copytree(run, copy)
    summary = json.loads((copy / "summary.json").read_text())
    summary["run_id"] = "../x:y#z"
    (copy / "summary.json").write_text(json.dumps(summary))
    _refused(["export", str(copy), "--to", "wandb"], "summary.json", "run_id")  # refused when the summary is read
    assert not (copy / "wandb").exists()


@pytest.mark.slow
def test_training_a_finished_run_again_writes_nothing(finished, tmp_path):
    """Its store may be read-only: no figure redrawn, no lock file made, anywhere."""
    from reasonlab.records import finished_runs

    run = finished_runs(finished)[0]
    config = tmp_path / "config.yaml"
    shutil.copy(run / "config.yaml", config)
    store = tmp_path / "store"
    shutil.copytree(finished, store / "sw")
    first = runner.invoke(app, ["train", str(config), "--out", str(store), "--name", "sw", "-q"])
    assert first.exit_code == 0, first.output
    files = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    again = runner.invoke(app, ["train", str(config), "--out", str(store), "--name", "sw", "-q"])
    assert again.exit_code == 0 and "nothing to do" in again.output, again.output
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")} == files


def test_a_finished_run_found_in_a_read_only_store_is_reported_not_redrawn(tmp_path, monkeypatch):
    """A committed run has no figures; found again in a store that cannot be written (a read-only mount, as
    ``os.access`` reports it: root may write anywhere else), ``train`` reports it and exits 0, writing nothing."""
    from reasonlab.train.run import train_run

    config = tmp_path / "tiny.yaml"
    config.write_text(yaml.safe_dump(TINY))
    run_dir, _ = train_run(resolve(TINY), tmp_path / "store" / "adhoc", progress=False, log=lambda _: None)
    files = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")}
    writable = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: mode != os.W_OK and writable(path, mode, **kw))
    again = runner.invoke(app, ["train", str(config), "--out", str(tmp_path / "store"), "-q"])
    assert again.exit_code == 0 and "nothing to do" in again.output, again.output
    assert f"{run_dir / 'figures'}: run.png and run.svg not drawn, the run directory is read-only" in again.output
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*")} == files


# ---- the environment and test hooks --------------------------------------------------------------------------------
@pytest.mark.slow
def test_a_fault_injection_variable_changes_nothing(tmp_path):
    """The test hooks' variables are read only by their hooks (tests/fault_hook, tests/pace_hook), never by
    reasonlab."""
    src = Path(__file__).parents[2] / "src" / "reasonlab"
    assert not [p for p in src.rglob("*.py") if "KILL_AT_WRITE" in p.read_text() or "TEST_STEP_" in p.read_text()]
    env = {**os.environ, "REASONLAB_KILL_AT_WRITE": "not-a-number", "REASONLAB_TEST_STEP_SECONDS": "not-a-number"}
    result = subprocess.run([sys.executable, "-m", "reasonlab", "train", "--profile", "anchor-cpu", "--dry-run",
                             "--out", str(tmp_path / "s")], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0 and "# run" in result.stdout, result.stderr


def test_ray_address_in_the_environment_does_not_choose_the_backend(monkeypatch):
    from reasonlab.cli.training import executor_factory
    from reasonlab.sweep.executors import LocalExecutor

    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    executor = executor_factory("local", 1, 1)(1)
    try:
        assert isinstance(executor, LocalExecutor)
    finally:
        executor.close()


def test_a_deleted_working_directory_is_one_line(tmp_path):
    """torch cannot load its libraries in a deleted working directory (MKL's "FATAL ERROR"): named first."""
    gone = tmp_path / "gone"

    def in_a_deleted_directory() -> None:
        gone.mkdir()
        os.chdir(gone)
        gone.rmdir()

    for args in (["--help"], ["results", str(tmp_path)]):
        result = subprocess.run([sys.executable, "-m", "reasonlab", *args], preexec_fn=in_a_deleted_directory,
                                capture_output=True, text=True, timeout=120, env={**os.environ, "PWD": str(gone)})
        assert result.returncode == 2 and result.stdout == "", (args, result.stdout, result.stderr)
        assert result.stderr == (f"error: the working directory {gone} no longer exists (deleted or moved); cd into "
                                 "an existing directory and run the command again\n"), (args, result.stderr)


# ---- numbers spelled in other digits -------------------------------------------------------------------------------
def test_a_number_is_read_from_ascii_digits_only(tmp_path, monkeypatch):
    """'²' passes ``str.isdigit`` and fails ``int``: as ``analyze --checkpoint`` it is one line naming the option,
    exit 2; as ``COLUMNS``, the pid in a temp file's or set-aside folder's name, a ``--task`` or ``--seeds`` it is
    no number (a file so named is left alone), and a category name holding it still sorts."""
    from reasonlab.cli.training import parse_seeds
    from reasonlab.files import remove_temps
    from reasonlab.kinds.modular.probes import parse_task
    from reasonlab.staging import clean_stale
    from reasonlab.studies.benchmarks.report import natural
    from reasonlab.terminal import narrowest
    from reasonlab.train.run import train_run

    run_dir, _ = train_run(resolve(TINY), tmp_path / "store" / "adhoc", progress=False, log=lambda _: None)
    _refused(["analyze", str(run_dir), "--checkpoint", "²"], "--checkpoint: '²' is not final, best, a saved step")
    for columns, now in (("²", "²"), ("--5", "--5"), ("-5", "40"), ("12", "40")):
        monkeypatch.setenv("COLUMNS", columns)
        narrowest()
        assert os.environ["COLUMNS"] == now
    stale = [tmp_path / ".x.tmp-²", tmp_path / ".y.aside-²"]
    stale[0].write_text("x")
    stale[1].mkdir()
    remove_temps(tmp_path)
    clean_stale(tmp_path, lambda folder, name: pytest.fail(f"{folder} was taken for a stale folder of {name}"))
    assert all(p.exists() for p in stale)
    with pytest.raises(ValueError, match="is not a task a,b of two integers"):
        parse_task("²,3")
    with pytest.raises(ConfigError, match="--seeds"):
        parse_seeds("1,²")
    assert sorted(["out_len:≤16", "x²", "out_len:≤8"], key=natural) == ["out_len:≤8", "out_len:≤16", "x²"]
