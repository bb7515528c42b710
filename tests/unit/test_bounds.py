"""Hostile input, second pass (issue 39): every resource has a bound, nothing is accepted silently, the Python API
checks its arguments, and neither the environment nor a test hook decides what a command does. Each refusal is
one ``error:`` line naming the field, file or option, exit code 2, nothing written."""

from __future__ import annotations

import json
import math
import os
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from conftest import served_as_stored
from typer.testing import CliRunner

from reasonlab.cli import app
from reasonlab.config import ConfigError, raw_config, resolve

runner = CliRunner()
TINY = {"seed": 1, "task": {"kind": "anchor", "n_train_per_pair": 32, "n_test_per_pair": 8},
        "model": {"d_model": 8, "d_k": 4, "d_v": 4, "d_ff": 16},
        "train": {"epochs": 1, "batch_size": 64, "warmup_epochs": 0, "device": "cpu", "threads": 1}}


def _refused(args: list[str], *needles: str) -> str:
    """Run the command line; it must fail with exit 2 and one error line that holds every needle."""
    result = runner.invoke(app, args)
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code == 2 and len(errors) == 1 and "Traceback" not in result.output, result.output
    assert all(n in errors[0] for n in needles), errors[0]
    return errors[0]


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# ---- config files and overrides ----------------------------------------------------------------------------------
def test_config_files_are_bounded_in_size_and_nesting(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("seed: " + "[" * 3000 + "]" * 3000 + "\n")
    _refused(["train", str(deep), "--dry-run"], "deep.yaml", "nested deeper than")
    _refused(["train", "--dry-run", "--set", "init.overrides=" + "[" * 3000 + "]" * 3000],
             "override value", "nested deeper than")
    if Path("/dev/zero").exists():  # read to its end, it would exhaust memory
        _refused(["train", "/dev/zero", "--dry-run"], "/dev/zero", "larger than 1 MiB")
    big = tmp_path / "big.yaml"
    big.write_text("# padding\n" * 200_000)
    _refused(["train", str(big), "--dry-run"], "big.yaml", "larger than")


@pytest.mark.parametrize(("text", "key", "line"), [("seed: 1\ntrain:\n  epochs: 3\nseed: 2\n", "'seed'", "line 4"),
                                                   ("train:\n  epochs: 3\n  epochs: 4\n", "'epochs'", "line 3"),
                                                   ("model: {depth: 2, depth: 3}\n", "'depth'", "line 1")])
def test_a_duplicate_yaml_key_is_an_error_naming_it(tmp_path, text, key, line):
    path = tmp_path / "dup.yaml"
    path.write_text(text)
    _refused(["train", str(path), "--dry-run"], "dup.yaml", f"duplicate key {key}", line)
    sweep = tmp_path / "sweep.yaml"
    sweep.write_text("name: s\ngrid:\n  seed: [1]\ngrid:\n  seed: [2]\n")
    _refused(["sweep", str(sweep), "--dry-run"], "sweep.yaml", "duplicate key 'grid'", "line 4")


def test_an_empty_profile_name_is_refused(tmp_path):
    from reasonlab.api import make_config

    _refused(["train", "--profile", "", "--dry-run"], "--profile ''", "unknown")
    sweep = tmp_path / "s.yaml"
    sweep.write_text("profile: ''\ngrid:\n  seed: [1, 2]\n")
    _refused(["sweep", str(sweep), "--dry-run"], "--profile ''")
    with pytest.raises(ConfigError, match="make_config profile: empty"):
        make_config("")


@pytest.mark.parametrize(("study", "override", "field"), [
    ("anchor", "task.vocab_size=10000000000", "task.vocab_size"),
    ("anchor", "task.seq_len=100000000", "task.seq_len"),  # its default key positions are not listed
    ("anchor", "task.n_train_per_pair=1000000000000", "task.n_train_per_pair"),
    ("anchor", "model.max_positions=100000000000", "model.max_positions"),
    ("mixture", "task.n_samples=1000000000000", "task.n_samples"),
    ("modular", "task.n_shots=10000000", "task.n_shots"),
])
def test_the_memory_check_names_the_field_that_makes_a_run_too_big(study, override, field):
    profile = {"anchor": "cpu", "mixture": "transformer-cpu", "modular": "cpu"}[study]
    with pytest.raises(ConfigError, match="GiB") as caught:
        resolve(raw_config(None, profile, [override], study))
    assert str(caught.value).startswith(f"{field}:") and "\n" not in str(caught.value)
    # and the short sequence whose attention scores alone exceed memory
    if field == "task.seq_len":
        with pytest.raises(ConfigError, match="^task.seq_len: "):
            resolve(raw_config(None, "cpu", ["task.seq_len=1000000", "task.n_train_per_pair=1"], "anchor"))


def test_every_built_in_profile_passes_the_memory_check():
    from reasonlab.config import families, family_profiles

    for family in families():
        for profile in family_profiles(family):
            resolve(raw_config(None, profile, [], family))


# ---- grids -------------------------------------------------------------------------------------------------------
def test_a_huge_grid_is_refused_before_it_is_built(tmp_path):
    axis = ",".join(map(str, range(1, 10_001)))
    started = _cpu_seconds()
    _refused(["sweep", "--dry-run", "--profile", "anchor-cpu", "--grid", f"seed={axis}", "--grid",
              f"train.base_lr={','.join(f'{i}e-5' for i in range(1, 10_001))}", "--out", str(tmp_path / "s")],
             "100,000,000 points", "--max-runs")
    assert _cpu_seconds() - started < 10  # CPU time, on a loaded machine: parsing the axes, not 10^8 configs
    _refused(["sweep", "--dry-run", "--profile", "anchor-cpu", "--grid", "seed=1,2,3", "--max-runs", "2"],
             "3 points", "--max-runs 3")
    listed = runner.invoke(app, ["sweep", "--dry-run", "--profile", "anchor-cpu", "--grid", "seed=1,2,3", "--max-runs",
                                 "3", "--out", str(tmp_path / "s")])
    assert listed.exit_code == 0 and "3 runs" in listed.output
    assert not (tmp_path / "s").exists()


def test_a_run_config_given_to_sweep_is_named_as_one(tmp_path):
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(TINY))
    line = _refused(["sweep", str(path), "--dry-run"], "run.yaml", "a field of a run config", "reasonlab train")
    assert "did you mean" not in line
    path.write_text("name: s\ngird:\n  seed: [1]\n")  # a sweep file's own typo still gets its did-you-mean
    _refused(["sweep", str(path), "--dry-run"], "gird: unknown field (did you mean grid?)")


# ---- SQL -----------------------------------------------------------------------------------------------------------
@pytest.fixture
def results_only(tmp_path, monkeypatch) -> Path:
    """A sweep directory holding only a results table: what SQL reads."""
    served_as_stored(monkeypatch)
    sweep = tmp_path / "sw"
    sweep.mkdir()
    pq.write_table(pa.table({"run_id": ["a" * 12, "b" * 12], "label": ["inferential", "symmetric"],
                             "init.gamma": [0.3, 0.8]}), sweep / "results.parquet")
    return sweep


def test_sql_is_bounded_in_time_memory_and_rows(results_only):
    ok = runner.invoke(app, ["results", str(results_only), "--sql", "SELECT count(*) AS n FROM runs"])
    assert ok.exit_code == 0 and "2" in ok.output
    cross = "SELECT count(*) FROM range(1000000) a, range(1000000) b, range(1000000) c"
    _refused(["results", str(results_only), "--sql", cross, "--timeout", "0.5"], "stopped after 0.5 s", "--timeout")
    _refused(["results", str(results_only), "--sql", "SELECT list(range) FROM range(100000000)",
              "--memory-limit", "0.05"], "more than 0.05 GiB", "--memory-limit")
    _refused(["results", str(results_only), "--sql", "SELECT * FROM range(1000)", "--max-rows", "999"],
             "more than 999 rows", "--max-rows")
    assert runner.invoke(app, ["results", str(results_only), "--sql", "SELECT * FROM range(1000)", "--max-rows",
                               "1000"]).exit_code == 0
    _refused(["results", str(results_only), "--sql", "SELECT 1", "--timeout", "-1"], "--timeout")
    assert sorted(p.name for p in results_only.parent.rglob("*")) == ["results.parquet", "sw"]  # nothing spilled


@pytest.mark.slow  # a command line in a subprocess, ended by its own watchdog 2 s past the bound
def test_a_statement_duckdb_does_not_stop_still_ends_at_its_bound(results_only):
    """DuckDB looks for an interrupt between chunks of rows, not while it builds one value (``unnest(range(3e9))``
    ran on, past 18 GB, until killed): a statement still running 2 s past --timeout ends the command with the
    bound's one line. Here the interrupt is made to do nothing, as it does then."""
    script = ("import sys, duckdb; duckdb.DuckDBPyConnection.interrupt = lambda self: None; "
              "from reasonlab.cli import main; main()")
    cross = "SELECT count(*) FROM range(1000000) a, range(1000000) b, range(1000000) c"
    result = subprocess.run([sys.executable, "-c", script, "results", str(results_only), "--sql", cross, "--timeout",
                             "0.5"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and result.stdout == "", (result.stdout, result.stderr)
    assert result.stderr == ("error: --sql: stopped after 0.5 s; narrow the query, or pass --timeout with more "
                             "seconds\n"), result.stderr


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


# ---- numeric options ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("args", "option"), [
    (["sweep", "--dry-run", "--grid", "seed=1", "--workers", "-3"], "--workers"),
    (["sweep", "--dry-run", "--grid", "seed=1", "--threads", "-1"], "--threads"),
    (["sweep", "--dry-run", "--grid", "seed=1", "--max-runs", "0"], "--max-runs"),
    (["demo", "--dry-run", "--workers", "0"], "--workers"),
    (["demo", "--dry-run", "--seed", "-1"], "--seed"),
    (["reproduce", "anchor-phase", "--dry-run", "--threads", "0"], "--threads"),
    (["analyze", ".", "--threshold", "nan"], "--threshold"),
    (["analyze", ".", "--threshold", "1.5"], "--threshold"),
    (["analyze", ".", "--key", "-1"], "--key"),
    (["results", ".", "--max-rows", "0"], "--max-rows"),
])
def test_numeric_options_are_checked_by_range(args, option):
    _refused(args, option)


# ---- paper scale without a profile -------------------------------------------------------------------------------
def test_a_paper_scale_config_without_a_profile_asks_for_yes(tmp_path, monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    out = tmp_path / "store"
    kind_only = tmp_path / "kind.yaml"
    kind_only.write_text("task:\n  kind: anchor\n")
    seed_only = tmp_path / "seed.yaml"
    seed_only.write_text("seed: 3\ntask: {kind: anchor}\n")
    anchor = ["--set", "task.kind=anchor"]
    for args in (["train", *anchor], ["train", str(kind_only)], ["train", str(seed_only)],
                 ["sweep", "--grid", "seed=1,2", *anchor]):
        _refused([*args, "--out", str(out)], "paper", "--yes", "a reduced (cpu) profile")
    _refused(["train", "--profile", "anchor-paper", "--out", str(out)], "paper", "--yes", "--profile anchor-cpu")
    _refused(["train", "--family", "mixture", "--profile", "emb-mlp-paper", "--out", str(out)], "paper",
             "--profile mixture-emb-mlp-cpu")
    warned = runner.invoke(app, ["train", str(kind_only), "--dry-run", "--out", str(out)])
    assert warned.exit_code == 0 and "warning:" in warned.output and "paper scale" in warned.output
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text(yaml.safe_dump(TINY))
    assert runner.invoke(app, ["train", str(tiny), "--dry-run", "--out", str(out)]).exit_code == 0
    assert not out.exists()


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
