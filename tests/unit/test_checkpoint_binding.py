"""A checkpoint is bound to its run: every marker (``step-N.json``, ``best.json``) names the run and the SHA-256 of
its weights, and a reader refuses weights whose marker names another run, records another checksum, or (``best``)
a step that is not a whole number from 0: one line naming the file, exit 2 from the command line, nothing
analysed. ``analyze --over-time`` analyses every checkpoint, so it refuses ``--checkpoint``."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from conftest import tiny_modular
from typer.testing import CliRunner

from reasonlab.analysis.loading import load_trained
from reasonlab.checkpoint_checks import check_best
from reasonlab.cli import app
from reasonlab.config import resolve
from reasonlab.errors import StoreError
from reasonlab.train.loop import Trainer
from reasonlab.train.run import train_run

OTHER_RUN = "0123456789ab"


@pytest.fixture(scope="module")
def cfg():
    """A modular run: its kind picks an early-stopping checkpoint (best.*) beside those of steps 5 and 10."""
    data = tiny_modular()
    data["train"].update(epochs=2)
    return resolve(data)


@pytest.fixture(scope="module")
def finished(cfg, tmp_path_factory):
    return train_run(cfg, tmp_path_factory.mktemp("binding"), progress=False, log=lambda _: None)[0]


@pytest.fixture
def run(finished, tmp_path):
    """A copy of the finished run, to damage."""
    return shutil.copytree(finished, tmp_path / finished.name)


def _edit(path, **fields) -> None:
    path.write_text(json.dumps({**json.loads(path.read_text()), **fields}))


def _analyze(run, *args: str):
    return CliRunner().invoke(app, ["analyze", str(run), "--probe", "shots", *args])


def test_best_json_names_its_run_and_the_checksum_of_its_weights(cfg, finished):
    best = json.loads((finished / "checkpoints" / "best.json").read_text())
    weights = (finished / "checkpoints" / "best.safetensors").read_bytes()
    assert best["run_id"] == cfg.run_id() and best["sha256"] == {"weights": hashlib.sha256(weights).hexdigest()}
    assert load_trained(finished, "best")[3] == "best"


BEST_DAMAGE = {
    "another run": ({"run_id": OTHER_RUN}, "best.json: a checkpoint of run 0123456789ab"),
    "a negative step": ({"step": -1}, "best.json: not a checkpoint marker as reasonlab writes it (step: Input "
                                      "should be greater than or equal to 0)"),
    "a step in words": ({"step": "late"}, "best.json: not a checkpoint marker as reasonlab writes it (step: Input "
                                          "should be a valid integer)"),
    "a fractional step": ({"step": 2.5}, "step: Input should be a valid integer"),
    "a step of true": ({"step": True}, "step: Input should be a valid integer"),
    "another checksum": ({"sha256": {"weights": "0" * 64}}, "best.safetensors: not the weights best.json was "
                                                            "written for"),
    "a step the run never reached": ({"step": 999999, "epoch": 999}, "best.json: step 999999, past the run's last "
                                                                      "checkpoint (step 10)"),
}


@pytest.mark.parametrize("damage", list(BEST_DAMAGE))
def test_a_best_json_not_bound_to_its_weights_is_refused_in_one_line(run, damage):
    fields, message = BEST_DAMAGE[damage]
    _edit(run / "checkpoints" / "best.json", **fields)
    with pytest.raises(StoreError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_trained(run, "best")
    result = _analyze(run, "--checkpoint", "best")
    assert result.exit_code == 2 and message in result.output and "Traceback" not in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and str(run / "checkpoints") in result.output
    assert not (run / "analysis").exists()


def test_weights_replaced_under_their_marker_are_refused(run):
    ckpt = run / "checkpoints"
    shutil.copy(ckpt / "step-5.safetensors", ckpt / "best.safetensors")  # another step's weights, same shapes
    shutil.copy(ckpt / "step-5.safetensors", ckpt / "step-10.safetensors")
    for checkpoint, damaged in (("best", "best.safetensors"), ("final", "step-10.safetensors")):
        result = _analyze(run, "--checkpoint", checkpoint)
        assert result.exit_code == 2 and f"{ckpt / damaged}: not the weights" in result.output, result.output
    assert _analyze(run, "--checkpoint", "5").exit_code == 0  # the checkpoint left whole still reads


def test_a_checkpoint_whose_marker_names_another_run_is_refused_by_analyze(run):
    _edit(run / "checkpoints" / "step-10.json", run_id=OTHER_RUN)
    for args in ([], ["--checkpoint", "10"]):
        result = _analyze(run, *args)
        assert result.exit_code == 2 and "step-10.json: a checkpoint of run 0123456789ab" in result.output, args
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
    assert not (run / "analysis").exists()


def test_a_best_json_written_before_runs_and_checksums_were_recorded_still_reads(run):
    best = run / "checkpoints" / "best.json"
    best.write_text(json.dumps({k: v for k, v in json.loads(best.read_text()).items() if k in ("epoch", "step",
                                                                                                 "value")}))
    assert load_trained(run, "best")[3] == "best"


def test_a_resumed_run_chooses_its_best_again_over_a_best_json_not_its_own(cfg, run):
    _edit(run / "checkpoints" / "best.json", run_id=OTHER_RUN)
    partial = run.rename(run.with_name(f"{run.name}.partial"))
    said: list[str] = []
    trainer = Trainer(cfg, partial, progress=False, log=said.append)
    trainer.begin()
    assert trainer.best_select == float("-inf")
    assert [m for m in said if "best.json: a checkpoint of run 0123456789ab" in m and "chosen again" in m], said


def test_a_pack_or_restore_refuses_a_best_checkpoint_of_another_run(cfg, run):
    ckpt = run / "checkpoints"
    check_best(ckpt, cfg.run_id())
    _edit(ckpt / "best.json", run_id=OTHER_RUN)
    with pytest.raises(StoreError, match="a checkpoint of run 0123456789ab"):
        check_best(ckpt, cfg.run_id())


def test_over_time_refuses_a_checkpoint_it_would_ignore(run):
    result = CliRunner().invoke(app, ["analyze", str(run), "--over-time", "--checkpoint", "best"])
    assert result.exit_code == 2 and "--checkpoint best: --over-time analyses every saved checkpoint" in \
        result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and not (run / "analysis").exists()
    shown = CliRunner().invoke(app, ["analyze", "--help"], env={"COLUMNS": "200"}).output
    assert "not with --over-time, which analyses every saved checkpoint" in shown, shown
