"""Reliability: a run whose loss becomes NaN/inf stops, is labelled ``diverged`` with its step, keeps its sweep
going, and shows as its own cell in phase diagrams; damaged checkpoints, metrics, results and summaries are
reported in one line with their path and recovered from without touching anything else.

Over 400 lines: one test per class of bad input and damaged file, with the property-based generators they share.
"""

from __future__ import annotations

import json

import pytest
from conftest import anchor_phase_row as _row
from conftest import killed_after, tiny_run, tiny_run_dict

from reasonlab.config import resolve
from reasonlab.errors import UserError
from reasonlab.kinds.anchor.cells import phase_cells
from reasonlab.kinds.anchor.figures import plot_phase
from reasonlab.store import Metrics, read_metrics
from reasonlab.sweep.executors import LocalExecutor
from reasonlab.sweep.grid import SweepSpec, sweep_configs
from reasonlab.sweep.results import read_results
from reasonlab.sweep.runner import run_sweep
from reasonlab.train.run import train_run

# No LayerNorm, no clipping and a peak learning rate of 1000: activations overflow within a few steps.
EXPLODING = {"model": {"norm": "none"}, "train": {"base_lr": 1.0, "lr_multiplier": 1000.0, "grad_clip": None}}


def test_a_diverging_run_stops_with_its_step_and_label(tmp_path):
    cfg = resolve(tiny_run_dict(**{k: {**tiny_run_dict()[k], **v} for k, v in EXPLODING.items()}))
    run_dir, summary = train_run(cfg, tmp_path, progress=False, log=lambda _: None)
    assert summary["label"] == "diverged" and summary["status"] == "finished"
    step = summary["diverged_step"]
    assert 1 <= step <= summary["steps"] < cfg.train.epochs * (summary["steps"] // summary["epochs"])
    assert summary["final"] == {} and summary["outcome"] == {"label": "diverged", "step": step}
    losses = [v for _, v in Metrics.read(run_dir / "metrics.parquet").series("train", "loss")]
    assert losses[-1] != losses[-1] or abs(losses[-1]) == float("inf")  # NaN or inf, recorded as is
    assert "diverged: loss not finite at step" in (run_dir / "events.log").read_text()
    again = train_run(cfg, tmp_path, progress=False, log=lambda _: None)[1]
    assert again == summary  # finished: a rerun trains nothing


@pytest.mark.slow
def test_a_sweep_goes_on_past_a_diverged_run(tmp_path):
    base = tiny_run_dict(model={"norm": "none"}, train={"epochs": 2, "grad_clip": None, "base_lr": 1.0})
    base["train"].pop("threads")
    spec = SweepSpec(name="div", config=base, grid={"train.lr_multiplier": [1e-3, 1000.0]})
    cfgs, axes = sweep_configs(spec)
    report = run_sweep("div", cfgs, tmp_path, LocalExecutor(2, 1), axes)
    assert not report.failed
    rows = {r["train.lr_multiplier"]: r for r in read_results(tmp_path / "div")}
    assert rows[1000.0]["label"] == "diverged" and rows[1000.0]["diverged_step"] >= 1
    assert rows[1e-3]["label"] != "diverged" and rows[1e-3]["diverged_step"] is None
    assert json.loads((tmp_path / "div" / "sweep.json").read_text())["run_ids"]


def test_phase_cells_show_diverged_cells_distinctly(tmp_path):
    rows = [_row(0.5, 2, 1, 10, 0.2, 0.7, 0.95), {**_row(0.5, 2, 1, 20, None, None, None), "label": "diverged"},
            {**_row(0.8, 2, 1, 10, None, None, None), "label": "diverged"}]
    a, b = phase_cells(rows, "4-3")
    assert a.label == "symmetric" and a.n_diverged == 1 and a.n_runs == 2
    assert b.label == "diverged" and b.n_diverged == 1 and b.inferential != b.inferential  # NaN
    paths = plot_phase([a, b], tmp_path / "phase", "tiny", "4-3")
    assert all(p.stat().st_size > 0 for p in paths)


def test_modular_cells_show_diverged_cells():
    from reasonlab.kinds.modular.evaluate import modular_cells

    def row(n, label, values):
        return {"task.n_tasks": n, "task.alpha": 0.5, "seed": 1, "status": "finished", "label": label,
                **{f"final.{k}_last_shot": v for k, v in zip(("id_train", "id_test", "ood_train", "ood_test"),
                                                             values, strict=True)}}

    cells = modular_cells([row(8, "id-memorization", (1.0, 0.2, 0.1, 0.1)), row(16, "diverged", [None] * 4)])
    assert [c.label for c in cells] == ["id-memorization", "diverged"]


# ---- damaged state ---------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory):
    cfg = resolve(tiny_run_dict())
    return cfg, train_run(cfg, tmp_path_factory.mktemp("ref"), progress=False, log=lambda _: None)[1]


@pytest.mark.parametrize("damage", ["truncate-weights", "flip-optimizer", "marker", "metrics"])
def test_damaged_state_is_reported_and_the_run_still_matches(damage, uninterrupted, tmp_path, monkeypatch):
    from reasonlab.checkpoint import complete_steps

    cfg, reference = uninterrupted
    partial = killed_after(cfg, tmp_path, 3, monkeypatch)
    ckpt = partial / "checkpoints"
    last = complete_steps(ckpt)[-1]
    target = {"truncate-weights": ckpt / f"step-{last}.safetensors", "flip-optimizer": ckpt / f"step-{last}.optim.pt",
              "marker": ckpt / f"step-{last}.json", "metrics": partial / "metrics.parquet"}[damage]
    data = target.read_bytes()
    target.write_bytes(data[: len(data) // 2] if damage != "flip-optimizer"
                       else data[:-40] + bytes(b ^ 0xFF for b in data[-40:]))
    untouched = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file() and partial not in p.parents}
    messages: list[str] = []
    _, summary = train_run(cfg, tmp_path, progress=False, log=messages.append)
    warned = [m for m in messages if str(target) in m]
    assert len(warned) == 1 and "\n" not in warned[0]
    assert ("restarting" if damage == "metrics" else "falling back") in warned[0]
    assert summary["final"] == reference["final"] and summary["steps"] == reference["steps"]
    assert all(p.read_bytes() == b for p, b in untouched.items())  # nothing else in the store was touched


@pytest.mark.slow
@pytest.mark.parametrize("foreign", ["other-shape", "other-run", "no-epoch", "stray-copy"])
def test_a_checkpoint_not_of_this_run_is_skipped(foreign, uninterrupted, tmp_path, monkeypatch):
    """A checkpoint whose files are intact but which is not this run's (another model's weights and optimizer
    state under a marker without a run id, another run's of the same shape, a marker without its epoch) is
    reported in one line and skipped; a file that merely looks like a marker is ignored."""
    import shutil

    from reasonlab.checkpoint import complete_steps

    cfg, reference = uninterrupted
    partial = killed_after(cfg, tmp_path, 3, monkeypatch)
    ckpt = partial / "checkpoints"
    last = complete_steps(ckpt)[-1]
    marker = ckpt / f"step-{last}.json"
    if foreign in ("other-shape", "other-run"):
        other_cfg = resolve(tiny_run_dict(model={"d_model": 24}) if foreign == "other-shape"
                            else tiny_run_dict(init={"gamma": 0.8}))
        other = killed_after(other_cfg, tmp_path / "other", 3, monkeypatch) / "checkpoints"
        for suffix in (".safetensors", ".optim.pt", ".json"):
            shutil.copy(other / f"step-{last}{suffix}", ckpt / f"step-{last}{suffix}")
        if foreign == "other-shape":  # a marker from before run ids were recorded: only the shapes can tell
            marker.write_text(json.dumps({k: v for k, v in json.loads(marker.read_text()).items() if k != "run_id"}))
    elif foreign == "no-epoch":
        marker.write_text(json.dumps({k: v for k, v in json.loads(marker.read_text()).items() if k != "epoch"}))
    else:
        shutil.copy(marker, ckpt / f"step-{last + 1} (copy).json")
        shutil.copy(ckpt / f"step-{last}.safetensors", ckpt / f"step-{last + 1} (copy).safetensors")
    messages: list[str] = []
    _, summary = train_run(cfg, tmp_path, progress=False, log=messages.append)
    warned = [m for m in messages if f"step-{last}" in m]
    if foreign == "stray-copy":
        assert warned == []
    else:
        assert len(warned) == 1 and "\n" not in warned[0] and "falling back" in warned[0], messages
        assert {"other-shape": "another model", "other-run": "a checkpoint of run",
                "no-epoch": "epoch"}[foreign] in warned[0]
    assert summary["final"] == reference["final"] and summary["steps"] == reference["steps"]


def test_a_damaged_results_table_is_rebuilt_from_the_runs(tmp_path, capsys):
    from reasonlab.sweep.results import RESULTS, write_results

    cfg = resolve(tiny_run_dict(train={**tiny_run_dict()["train"], "epochs": 1}))
    train_run(cfg, tmp_path / "sw", progress=False, log=lambda _: None)
    write_results(tmp_path / "sw")
    good = read_results(tmp_path / "sw")
    table = tmp_path / "sw" / RESULTS
    table.write_bytes(damaged := table.read_bytes()[:50])
    assert read_results(tmp_path / "sw") == good
    err = capsys.readouterr().err
    assert f"{table}: damaged; answered from the run directories" in err and err.count("\n") == 1
    assert table.read_bytes() == damaged  # a reader writes nothing; the next sweep rewrites it
    write_results(tmp_path / "sw")
    assert read_results(tmp_path / "sw") == good and capsys.readouterr().err == ""


def test_a_damaged_summary_is_one_line_naming_the_file(tmp_path):
    cfg = resolve(tiny_run_dict(train={**tiny_run_dict()["train"], "epochs": 1}))
    run_dir, _ = train_run(cfg, tmp_path, progress=False, log=lambda _: None)
    (run_dir / "summary.json").write_text('{"label": "sym')
    with pytest.raises(UserError, match=f"{run_dir / 'summary.json'}: damaged run summary at line 1"):
        train_run(cfg, tmp_path, progress=False, log=lambda _: None)


# ---- disk ------------------------------------------------------------------------------------------------------
def test_out_of_space_keeps_the_previous_state_and_says_so(uninterrupted, tmp_path, monkeypatch):
    import errno
    import os

    import yaml
    from typer.testing import CliRunner

    from reasonlab import files
    from reasonlab.checkpoint import complete_steps
    from reasonlab.cli import app

    cfg, reference = uninterrupted
    real_fsync, writes = os.fsync, {"n": 0}

    def fsync(fd):
        writes["n"] += 1
        if writes["n"] > 12:  # after a few checkpoints the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", fsync)
    path = tmp_path / "cfg.yaml"
    path.write_text(yaml.safe_dump(cfg.model_dump(mode="json")))
    result = CliRunner().invoke(app, ["train", str(path), "--out", str(tmp_path), "--name", "s", "-q"])
    assert result.exit_code == 2 and "no space left on the device" in result.output
    assert "Traceback" not in result.output and len(result.output.strip().splitlines()) <= 2
    partial = tmp_path / "s" / f"{cfg.run_id()}.partial"
    steps = complete_steps(partial / "checkpoints")
    assert steps and not list(partial.rglob(".*.tmp-*"))
    monkeypatch.setattr(files.os, "fsync", real_fsync)
    _, summary = train_run(cfg, tmp_path / "s", progress=False, log=lambda _: None)
    assert summary["final"] == reference["final"]


# ---- hostile files ---------------------------------------------------------------------------------------------
class Payload:
    """A pickle that runs code when loaded without weights_only: it would create ``path``."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def test_a_pickle_with_a_payload_is_refused_and_never_run(uninterrupted, tmp_path, monkeypatch):
    import hashlib
    import io
    import pickle
    import warnings

    from reasonlab.checkpoint import complete_steps

    cfg, reference = uninterrupted
    partial = killed_after(cfg, tmp_path, 3, monkeypatch)
    ckpt = partial / "checkpoints"
    last = complete_steps(ckpt)[-1]
    sentinel = tmp_path / "payload-ran"
    evil = io.BytesIO()
    pickle.dump({"state": Payload(sentinel)}, evil)
    (ckpt / f"step-{last}.optim.pt").write_bytes(evil.getvalue())
    marker = json.loads((ckpt / f"step-{last}.json").read_text())  # the digest matches: only the format refuses it
    marker["sha256"]["optim"] = hashlib.sha256(evil.getvalue()).hexdigest()
    (ckpt / f"step-{last}.json").write_text(json.dumps(marker))
    messages: list[str] = []
    with warnings.catch_warnings(record=True) as warned:
        warnings.simplefilter("always")
        _, summary = train_run(cfg, tmp_path, progress=False, log=messages.append)
    assert not sentinel.exists()
    assert not [w for w in warned if "pickle" in str(w.message)]  # torch's notes on the pickle are not printed
    assert any(f"step-{last}" in m and "falling back" in m and "refused" in m for m in messages)
    assert all("\n" not in m and "weights_only" not in m for m in messages)  # one line, not torch's advice
    assert summary["final"] == reference["final"]


def test_weights_load_only_from_safetensors(tmp_path):
    import pickle

    from reasonlab.checkpoint import load_weights
    from reasonlab.train.loop import build_model, build_task

    cfg = resolve(tiny_run_dict())
    model = build_model(cfg, build_task(cfg))
    sentinel = tmp_path / "payload-ran"
    path = tmp_path / "weights.safetensors"
    path.write_bytes(pickle.dumps(Payload(sentinel)))
    with pytest.raises(Exception):  # noqa: B017, PT011 - safetensors' own header error; the point is no code runs
        load_weights(path, model)
    assert not sentinel.exists()


def test_yaml_tags_that_build_objects_are_refused(tmp_path):
    from typer.testing import CliRunner

    from reasonlab.cli import app

    sentinel = tmp_path / "payload-ran"
    path = tmp_path / "evil.yaml"
    path.write_text(f'seed: !!python/object/apply:os.system ["touch {sentinel}"]\n')
    result = CliRunner().invoke(app, ["train", str(path), "--out", str(tmp_path / "runs")])
    assert result.exit_code == 2 and "invalid YAML" in result.output and "Traceback" not in result.output
    assert not sentinel.exists() and not (tmp_path / "runs").exists()


# ---- bad input (property-based) --------------------------------------------------------------------------------
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

FIELDS = ["seed", "init.gamma", "model.depth", "model.d_model", "train.lr_multiplier", "train.epochs",
          "task.held_out_pairs", "task.kind", "model.norm", "train.precision", "task.benchmark", "task.n_train",
          "model", "init.gamma.x", "nope", "train..epochs", ""]
VALUES = st.one_of(st.integers(-5, 10**6).map(str), st.floats(allow_nan=True).map(str), st.text(max_size=12),
                   st.sampled_from(["[1,2]", "[[4,3]]", "{a: 1}", "null", "true", "seq2seq", "modular", "pre",
                                    "[", "{", "- x", "!!python/none ''"]))
ONE_LINE = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _one_line_config_error(fn) -> None:
    from reasonlab.errors import UserError

    try:
        fn()
    except UserError as e:
        assert "\n" not in str(e) and str(e).strip()


@ONE_LINE
@given(st.lists(st.tuples(st.sampled_from(FIELDS), VALUES), max_size=4))
def test_overrides_work_or_fail_in_one_line(pairs):
    from reasonlab.config import raw_config

    overrides = [f"{k}={v}" for k, v in pairs]
    _one_line_config_error(lambda: resolve(raw_config(None, None, ["task.kind=anchor", *overrides])))


@ONE_LINE
@given(st.text(max_size=40))
def test_grid_axes_parse_or_fail_in_one_line(text):
    from reasonlab.sweep.grid import parse_axis

    _one_line_config_error(lambda: parse_axis(text))


@ONE_LINE
@given(st.text(max_size=30))
def test_store_names_stay_inside_the_store(name):
    from reasonlab.errors import UserError
    from reasonlab.store import check_name

    try:
        check_name(name, "sweep name")
    except UserError as e:
        assert "\n" not in str(e)
        return
    assert "/" not in name and "\\" not in name and ".." not in name and not name.startswith((".", "-"))


@ONE_LINE
@given(st.text(max_size=80))
def test_data_lines_parse_or_name_file_and_line(line):
    from reasonlab.errors import UserError
    from reasonlab.tasks.text import cogs, scan

    for parse in (scan.parse_line, cogs.parse_line):
        try:
            parse(line, "data.txt:7")
        except UserError as e:
            assert str(e).startswith("data.txt:7: ") and "\n" not in str(e)


@ONE_LINE
@given(st.text(max_size=120))
def test_config_files_load_or_fail_in_one_line(tmp_path_factory, text):
    from reasonlab.config import load_yaml

    path = tmp_path_factory.mktemp("cfg") / "c.yaml"
    path.write_text(text)
    _one_line_config_error(lambda: resolve(load_yaml(path)))


# ---- the store reads only what it wrote --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory):
    """A finished two-run sweep (one epoch each); tests damage copies of it."""
    base = tiny_run_dict(train={**tiny_run_dict()["train"], "epochs": 1})
    base["train"].pop("threads")
    spec = SweepSpec(name="s", config=base, grid={"seed": [1, 2]})
    cfgs, axes = sweep_configs(spec)
    out = tmp_path_factory.mktemp("small")
    run_sweep("s", cfgs, out, LocalExecutor(1, 1), axes)
    return out, cfgs, axes


def _copy(small_sweep, tmp_path):
    import shutil

    out, cfgs, axes = small_sweep
    shutil.copytree(out, tmp_path / "store")
    return tmp_path / "store", cfgs, axes


def _cli(*args: str):
    from typer.testing import CliRunner

    from reasonlab.cli import app

    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.mark.slow
def test_a_copied_run_directory_is_not_a_run(small_sweep, tmp_path):
    import shutil

    from reasonlab.sweep.results import write_results
    from reasonlab.sweep.sql_query import query

    store, cfgs, _ = _copy(small_sweep, tmp_path)
    run = store / "s" / cfgs[0].run_id()
    shutil.copytree(run, run.with_name(run.name + ".bak"))
    write_results(store / "s")
    _, rows = query(store / "s", "SELECT run_id, count(*) FROM runs GROUP BY 1")
    assert sorted(rows) == sorted((c.run_id(), 1) for c in cfgs)
    _, rows = query(store / "s", "SELECT count(DISTINCT run_id), count(*) FROM metrics")
    n_metrics = sum(len(read_metrics(store / "s" / c.run_id() / "metrics.parquet")) for c in cfgs)
    assert rows == [(2, n_metrics)]


@pytest.mark.slow
@pytest.mark.parametrize("content", [b'{"label": "\xff\xfe"}', b"[]", b"{}", b'{"run_id": NaN}'])
def test_a_summary_not_written_by_the_store_is_one_line_everywhere(small_sweep, tmp_path, content):
    """Asked for by name (show), a damaged summary is a one-line error; met in a listing (report, SQL), it is one
    line on stderr and its run is skipped, so the rest of the store still reads; a sweep rerun over it is one line
    naming it, before anything is written."""
    store, cfgs, axes = _copy(small_sweep, tmp_path)
    run = store / "s" / cfgs[0].run_id()
    (run / "summary.json").write_bytes(content)
    untouched = {p: p.read_bytes() for p in store.rglob("*") if p.is_file() and run not in p.parents}
    shown = _cli("show", run)
    assert shown.exit_code == 2 and len(shown.output.strip().splitlines()) == 1 and "summary.json" in shown.output
    offsets = ["results", store / "s", "--sql", "SELECT count(*) FROM offsets"]  # reads every summary
    for args in (["report", store / "s"], offsets):
        result = _cli(*args)
        said = [x for x in result.output.splitlines() if "summary.json" in x]
        assert result.exit_code == 0 and len(said) == 1 and "skipped" in said[0], (args, result.output)
    with pytest.raises(UserError, match=f"{run / 'summary.json'}: "):  # neither trained again nor passed over
        run_sweep("s", cfgs, store, LocalExecutor(1, 1), axes)
    assert [r["run_id"] for r in read_results(store / "s")] == [cfgs[1].run_id()]
    assert _cli("show", store / "s" / cfgs[1].run_id()).exit_code == 0  # the rest of the store still reads
    assert all(p.read_bytes() == b for p, b in untouched.items() if p.name not in ("results.parquet", "report.html",
                                                                                  "sweep.json"))


@pytest.mark.slow
def test_damaged_metrics_and_analysis_files_are_one_line_in_report(small_sweep, tmp_path):
    store, cfgs, _ = _copy(small_sweep, tmp_path)
    run = store / "s" / cfgs[0].run_id()
    metrics = run / "metrics.parquet"
    metrics.write_bytes(metrics.read_bytes()[:100])
    result = _cli("report", run)
    assert result.exit_code == 2 and "metrics.parquet: damaged" in result.output and len(
        result.output.strip().splitlines()) == 1, result.output
    other = store / "s" / cfgs[1].run_id()
    (other / "analysis" / "final").mkdir(parents=True)
    (other / "analysis" / "final" / "flow.json").write_bytes(b'{"headline": "cut')
    result = _cli("report", other)  # the analysis is left out, the rest of the report written
    assert result.exit_code == 0 and "flow.json: damaged" in result.output, result.output
    result = _cli("report", store / "s")  # the run whose metrics do not read is left out
    assert result.exit_code == 0 and "metrics.parquet: damaged" in result.output, result.output


def test_a_diverged_summary_is_strict_json(tmp_path):
    cfg = resolve(tiny_run_dict(**{k: {**tiny_run_dict()[k], **v} for k, v in EXPLODING.items()}))
    run_dir, _ = train_run(cfg, tmp_path, progress=False, log=lambda _: None)

    def refuse(name):
        raise AssertionError(f"{name} in summary.json")

    json.loads((run_dir / "summary.json").read_text(), parse_constant=refuse)


STORE_FILES = ["summary.json", "metrics.parquet", "analysis.json"]
MUTATIONS = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("flip"), st.lists(st.tuples(st.floats(0, 1), st.integers(1, 255)), min_size=1, max_size=4)),
    st.tuples(st.just("replace"), st.one_of(st.binary(max_size=60), st.sampled_from(
        [b"[]", b"{}", b"null", b'{"run_id": 1}', b'{"run_id": "x", "label": "y", "config": {}, "final": {}}',
         b"NaN", b'{"a": Infinity}', b"\xef\xbb\xbf{}"]))))


@pytest.mark.slow
@ONE_LINE
@given(st.sampled_from(STORE_FILES), MUTATIONS)
def test_damaged_store_files_read_or_fail_in_one_line(small_sweep, tmp_path_factory, kind, mutation):
    """Any damage to a file the store reads (cut short, bytes flipped, replaced) gives its reader's value or one
    line naming the file: never a traceback."""
    from reasonlab.files import read_json
    from reasonlab.records import read_summary

    out, cfgs, _ = small_sweep
    run = out / "s" / cfgs[0].run_id()
    source = run / ("metrics.parquet" if kind == "metrics.parquet" else "summary.json")
    data = bytearray(source.read_bytes())
    how, arg = mutation
    if how == "truncate":
        data = data[: int(arg * len(data))]
    elif how == "flip":
        for where, bits in arg:
            data[min(int(where * len(data)), len(data) - 1)] ^= bits
    else:
        data = bytearray(arg)
    path = tmp_path_factory.mktemp("damaged") / kind
    path.write_bytes(bytes(data))
    reader = {"summary.json": read_summary, "metrics.parquet": read_metrics, "analysis.json": read_json}[kind]
    try:
        reader(path)
    except UserError as e:
        assert "\n" not in str(e) and str(path) in str(e)


def test_show_reads_an_unfinished_run_and_refuses_a_progress_file_it_did_not_write(tmp_path, monkeypatch):
    cfg = resolve(tiny_run_dict())
    partial = killed_after(cfg, tmp_path, 3, monkeypatch)  # epochs 1-3 of 4 done, each evaluated and checkpointed
    shown = _cli("show", partial)
    assert shown.exit_code == 0, shown.output
    assert "unfinished: epoch 3 of 4" in shown.output and "evaluation at epoch 3" in shown.output
    assert "escape: seen_test_acc ≥ 0.5" in shown.output  # read from the metrics written so far
    (partial / "progress.json").write_text('{"epoch": "three", "epochs": 4, "step": 9}')
    refused = _cli("show", partial)
    assert refused.exit_code == 2 and "progress.json" in refused.output and "Traceback" not in refused.output
    assert len(refused.output.strip().splitlines()) == 1


# ---- bad input and odd environments: one line or a readable answer, never a traceback ---------------------------
@pytest.mark.parametrize("text", ["²", "1,²", "١", "1,01", "1," + "9" * 5000, "-1", "", "1,,2"])
def test_seeds_are_ascii_digits_or_one_line(text):
    """``str.isdigit`` takes '²' (which ``int`` refuses, a traceback) and '١' (which ``int`` reads as 1, a seed
    nobody asked for); a seed of 5,000 digits is past Python's int conversion limit; '1,01' names seed 1 twice."""
    from reasonlab.cli.training import parse_seeds
    from reasonlab.errors import ConfigError

    with pytest.raises(ConfigError, match="^--seeds: [^\n]*distinct non-negative integers"):
        parse_seeds(text)
    assert parse_seeds(" 3, 1,20") == [3, 1, 20]


def test_a_loop_of_links_in_a_store_is_left_out_not_a_crash(tmp_path, capsys):
    from reasonlab.files import inside
    from reasonlab.records import run_dirs

    (tmp_path / "loop1").symlink_to(tmp_path / "loop2")
    (tmp_path / "loop2").symlink_to(tmp_path / "loop1")
    (tmp_path / "0123456789ab").symlink_to("0123456789ab")  # a link to itself, named as a run
    assert not inside(tmp_path / "loop1", tmp_path)
    assert run_dirs(tmp_path) == []
    assert "loop1" in capsys.readouterr().err


def test_an_ascii_terminal_gets_ascii_spellings_not_an_encoding_error(monkeypatch):
    """With ``PYTHONIOENCODING=ascii`` (or a C locale) a progress line's '×' ended the command with a
    UnicodeEncodeError; the command line's output spells it instead."""
    import io
    import sys

    from reasonlab.terminal import console, plain_encoding

    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    monkeypatch.setattr(sys, "stdout", out)
    plain_encoding()
    console().print("2 workers × 1 threads · γ ≤ 0.5 β", soft_wrap=True)
    out.flush()
    assert out.buffer.getvalue() == b"2 workers x 1 threads . gamma <= 0.5 \\u03b2\n"


@pytest.mark.parametrize("entry", ["checkpoints", "events.log"])
def test_a_resumed_run_refuses_an_entry_that_is_a_link_and_writes_nothing_through_it(tmp_path, monkeypatch, entry):
    """An unfinished run whose checkpoints/ or events.log points out of the store: the resume is refused naming it,
    and the outside target is untouched (the resume would have written its checkpoints and events there)."""
    from reasonlab.errors import StoreError
    from reasonlab.train.run import train_run

    cfg = tiny_run(train={"epochs": 3})
    partial = killed_after(cfg, tmp_path / "s", 1, monkeypatch)
    outside = tmp_path / "outside"
    (partial / entry).rename(outside)
    (partial / entry).symlink_to(outside)
    before = sorted(p.name for p in outside.iterdir()) if outside.is_dir() else outside.read_text()
    with pytest.raises(StoreError, match=f"{entry}: a symbolic link"):
        train_run(cfg, tmp_path / "s", progress=False, log=lambda _: None)
    assert (sorted(p.name for p in outside.iterdir()) if outside.is_dir() else outside.read_text()) == before


def test_a_figures_folder_that_is_a_link_is_refused_not_written_through(tmp_path):
    import matplotlib.pyplot as plt

    from reasonlab.errors import StoreError
    from reasonlab.plots import save_figure

    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "figures").symlink_to(outside)
    with pytest.raises(StoreError, match="a symbolic link"):
        save_figure(plt.figure(), tmp_path / "figures" / "run")
    assert not any(outside.iterdir())
