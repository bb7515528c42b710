"""Run packs: a run's record with its newest resume checkpoint, committed so that a new machine resumes the run
(`reasonlab pack`, `reasonlab restore`) and ends with the same numbers as a run never stopped."""

from __future__ import annotations

import shutil

import pytest
import torch
from conftest import killed_after, tiny_modular, tiny_run_dict
from safetensors.torch import save as st_save

from reasonlab.checkpoint import complete_steps
from reasonlab.config import resolve
from reasonlab.errors import StoreError, UserError
from reasonlab.store import read_metrics
from reasonlab.train.packs import pack_run, pack_runs, restore_pack
from reasonlab.train.run import train_run


def quiet(_msg: str) -> None:
    pass


@pytest.fixture(scope="module")
def cfg():
    """A modular run: its early-stopping checkpoint (best.*) must travel with the pack too."""
    data = tiny_modular()
    data["train"].update(epochs=4)
    return resolve(data)


@pytest.fixture(scope="module")
def reference(cfg, tmp_path_factory):
    return train_run(cfg, tmp_path_factory.mktemp("reference"), progress=False, log=quiet)


def test_a_pack_restored_on_a_new_store_resumes_to_the_same_numbers(cfg, reference, tmp_path, monkeypatch):
    ref_dir, ref_summary = reference
    killed_after(cfg, tmp_path / "old", 2, monkeypatch)
    partial = tmp_path / "old" / f"{cfg.run_id()}.partial"
    pack = pack_run(partial, tmp_path / "results")
    assert pack.name == f"{cfg.run_id()}.partial"
    assert sorted(p.name for p in (pack / "resume").iterdir()) == [
        "best.json", "best.safetensors", "step-10.json", "step-10.optim.pt", "step-10.safetensors"]
    assert not (pack / "checkpoints").exists()  # only the newest checkpoint is committed
    shutil.rmtree(tmp_path / "old")  # the machine is gone

    new = tmp_path / "new"
    assert "restored at step 10" in restore_pack(pack, new)
    run_dir, summary = train_run(cfg, new, progress=False, log=quiet)
    assert summary["final"] == ref_summary["final"] and summary["best"] == ref_summary["best"]
    assert read_metrics(run_dir / "metrics.parquet") == read_metrics(ref_dir / "metrics.parquet")
    assert "restored from the pack" in (run_dir / "events.log").read_text()

    # packing the finished run replaces the unfinished pack: one folder per run, no checkpoint
    finished = pack_run(run_dir, tmp_path / "results")
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == [cfg.run_id()]
    assert not (finished / "resume").exists() and (finished / "summary.json").is_file()
    assert "is finished; nothing to restore" in restore_pack(pack_run(partial_of(cfg, tmp_path, monkeypatch),
                                                                      tmp_path / "again"), new)

    # a finished pack seeds a new store with the finished record: the run is skipped there, not trained again,
    # and a stale unfinished copy of it goes
    fresh = tmp_path / "fresh"
    shutil.copytree(tmp_path / "third", fresh)  # an unfinished copy, as a store may hold
    assert "restored as a finished run" in restore_pack(finished, fresh)
    assert sorted(p.name for p in fresh.iterdir() if not p.name.startswith(".")) == [cfg.run_id()]
    assert not (fresh / cfg.run_id() / "checkpoints").exists()
    said: list[str] = []
    _, skipped = train_run(cfg, fresh, progress=False, log=said.append)
    assert skipped["final"] == ref_summary["final"] and "is finished; nothing to do" in said[0]
    assert "is finished; nothing to restore" in restore_pack(finished, fresh)
    forged = tmp_path / "forged" / cfg.run_id()
    shutil.copytree(finished, forged)
    (forged / "summary.json").write_text((forged / "summary.json").read_text().replace(cfg.run_id(), "0123456789ab"))
    with pytest.raises(StoreError):
        restore_pack(forged, tmp_path / "other")
    assert not (tmp_path / "other" / cfg.run_id()).exists()


def partial_of(cfg, tmp_path, monkeypatch):
    killed_after(cfg, tmp_path / "third", 1, monkeypatch)
    return tmp_path / "third" / f"{cfg.run_id()}.partial"


def test_restore_keeps_a_newer_checkpoint_of_the_store(cfg, tmp_path, monkeypatch):
    killed_after(cfg, tmp_path / "a", 1, monkeypatch)
    pack = pack_run(tmp_path / "a" / f"{cfg.run_id()}.partial", tmp_path / "results")
    killed_after(cfg, tmp_path / "b", 3, monkeypatch)
    line = restore_pack(pack, tmp_path / "b")
    assert "already holds a checkpoint at step 15" in line
    assert complete_steps(tmp_path / "b" / f"{cfg.run_id()}.partial" / "checkpoints")[-1] == 15


def test_damaged_or_foreign_packs_are_refused_in_one_line(cfg, tmp_path, monkeypatch):
    killed_after(cfg, tmp_path / "a", 2, monkeypatch)
    pack = pack_run(tmp_path / "a" / f"{cfg.run_id()}.partial", tmp_path / "results")
    renamed = pack.with_name("0123456789ab.partial")
    shutil.copytree(pack, renamed)
    with pytest.raises(StoreError, match="hashes to run"):
        restore_pack(renamed, tmp_path / "new")
    weights = pack / "resume" / "step-10.safetensors"
    weights.write_bytes(weights.read_bytes()[:-8])
    with pytest.raises(StoreError, match=r"resume/step-10.safetensors: damaged \(its SHA-256"):
        restore_pack(pack, tmp_path / "new")
    assert not (tmp_path / "new").exists()  # nothing half-restored
    with pytest.raises(UserError, match="over the 0 MB"):
        pack_run(tmp_path / "a" / f"{cfg.run_id()}.partial", tmp_path / "small", limit=10)
    skipped: list[str] = []  # in a folder, a run that cannot be packed is named and the others packed
    shutil.copytree(tmp_path / "a", tmp_path / "sweep")
    assert pack_runs(tmp_path / "sweep", tmp_path / "small", limit=10, log=skipped.append) == []
    assert len(skipped) == 1 and "over the 0 MB" in skipped[0]
    (tmp_path / "empty").mkdir()
    with pytest.raises(StoreError, match="no run directories"):
        pack_runs(tmp_path / "empty", tmp_path / "x")


def test_an_anchor_run_without_a_best_checkpoint_packs_and_restores(tmp_path, monkeypatch):
    data = tiny_run_dict()
    cfg = resolve(data)
    killed_after(cfg, tmp_path / "a", 2, monkeypatch)
    pack = pack_run(tmp_path / "a" / f"{cfg.run_id()}.partial", tmp_path / "results")
    assert not (pack / "resume" / "best.json").exists()
    assert "restored" in restore_pack(pack, tmp_path / "b")
    _, summary = train_run(cfg, tmp_path / "b", progress=False, log=quiet)
    _, ref = train_run(cfg, tmp_path / "ref", progress=False, log=quiet)
    assert summary["final"] == ref["final"]


def test_pack_and_restore_on_the_command_line(cfg, tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from reasonlab.cli import app

    killed_after(cfg, tmp_path / "old", 2, monkeypatch)
    runner = CliRunner()
    packed = runner.invoke(app, ["pack", str(tmp_path / "old"), str(tmp_path / "results")])
    assert packed.exit_code == 0, packed.output
    pack = tmp_path / "results" / f"{cfg.run_id()}.partial"
    assert f"packed {pack}" in packed.output
    restored = runner.invoke(app, ["restore", str(pack), "--into", str(tmp_path / "new")])
    assert restored.exit_code == 0 and "restored at step 10" in restored.output
    again = runner.invoke(app, ["restore", str(pack), "--into", str(tmp_path / "new")])
    assert again.exit_code == 0 and "already holds a checkpoint at step 10" in again.output
    bad = runner.invoke(app, ["restore", str(tmp_path / "results"), "--into", str(tmp_path / "new")])
    assert bad.exit_code == 2 and "Traceback" not in bad.output and len(bad.output.strip().splitlines()) == 1


def test_a_pack_over_the_limit_only_by_the_best_weights_leaves_them_out(cfg, tmp_path, monkeypatch, capsys):
    """Early stopping's best-so-far weights are what a resume can most easily do without: a pack over the limit only
    because of them is written without them (said in one line); the resume files themselves are all there."""
    killed_after(cfg, tmp_path / "a", 2, monkeypatch)
    ckpt = tmp_path / "a" / f"{cfg.run_id()}.partial" / "checkpoints"
    core = sum(p.stat().st_size for p in ckpt.glob("step-10.*"))
    (ckpt / "best.safetensors").write_bytes(st_save({"w": torch.zeros(1024)}))  # 4 kB of weights
    (ckpt / "best.json").write_text('{"epoch": 1, "step": 10, "value": 0.5}')
    pack = pack_run(ckpt.parent, tmp_path / "small", limit=core + 100)
    assert sorted(p.name for p in (pack / "resume").iterdir()) == sorted(p.name for p in ckpt.glob("step-10.*"))
    assert "best-so-far weights are left out" in capsys.readouterr().err
    with_best = pack_run(ckpt.parent, tmp_path / "large", limit=core + 10_000)
    assert {"best.json", "best.safetensors"} <= {p.name for p in (with_best / "resume").iterdir()}


def test_repacking_a_finished_run_keeps_analysis_computed_in_the_pack(cfg, reference, tmp_path):
    """An analysis file written into a finished pack (from its committed record) survives packing the run again;
    the run directory's own analysis files are taken as they are now."""
    run_dir, _ = reference
    pack = pack_run(run_dir, tmp_path / "results")
    (pack / "analysis").mkdir(exist_ok=True)
    (pack / "analysis" / "computed-here.json").write_text('{"x": 1}')
    again = pack_run(run_dir, tmp_path / "results")
    assert (again / "analysis" / "computed-here.json").read_text() == '{"x": 1}'
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == [cfg.run_id()]

