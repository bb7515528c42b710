"""The command line end to end on tiny configs: train, show, profiles, and one-line errors with exit code 2 (the
demos' own tests live with their studies, in tests/studies/<study>/)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import tiny_run_dict
from typer.testing import CliRunner

from reasonlab.cli import app
from reasonlab.config import raw_config, resolve
from reasonlab.records import finished_runs
from reasonlab.studies.anchor.demo import PROFILES

runner = CliRunner()


@pytest.fixture
def tiny_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(tiny_run_dict()))
    return path


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


def test_train_then_show(tiny_yaml: Path, tmp_path: Path) -> None:
    out = tmp_path / "store"
    result = runner.invoke(app, ["train", str(tiny_yaml), "--out", str(out), "--set", "init.gamma=0.7", "-q"])
    assert result.exit_code == 0, result.output
    (run_dir,) = finished_runs(out / "adhoc")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["config"]["init"]["gamma"] == 0.7
    assert summary["label"] in {"inferential", "symmetric", "other", "not-fitted"}
    assert (run_dir / "figures" / "run.png").stat().st_size > 0 and (run_dir / "figures" / "run.svg").is_file()
    assert summary["label"] in result.output
    shown = runner.invoke(app, ["show", str(run_dir)])
    assert shown.exit_code == 0 and summary["run_id"] in shown.output and "held-out 4-3" in shown.output
    assert "escape: seen_test_acc ≥ 0.5" in shown.output and "escape: seen_test_acc ≥ 0.9" in shown.output
    assert f"({summary['machine']['kernels']})" in shown.output  # the machine the numbers came from


BAD_INPUTS = [
    (["--set", "init.gama=0.7"], "init.gama"),
    (["--set", "model.depth=zero"], "model.depth"),
    (["--set", "task.held_out_pairs=[[5,3]]"], "task.held_out_pairs"),
    (["--set", "train.batch_size=100000"], "train.batch_size"),
    (["--set", "no_equals_sign"], "key=value"),
    (["--set", "task.item_min=0"], "task.item_min"),
    (["--set", "init.overrides={blocks.9.*: 1.0}"], "init.overrides"),
    (["--profile", "huge"], "--profile"),
    (["--name", "../escape"], "--name"),
    (["--set", "train.betas=[2,-1]"], "train.betas"),
    (["--set", "train.eps=.nan"], "train.eps"),
    (["--set", "train.warmup_epochs=.inf"], "train.warmup_epochs"),
    (["--set", "train.floor_lr=.nan"], "train.floor_lr"),
    (["--set", "train.lr_multiplier=.inf"], "train.lr_multiplier"),
    (["--set", "train.grad_clip=.inf"], "train.grad_clip"),
    (["--set", "model.ln_eps=-1"], "model.ln_eps"),
    (["--set", "task.vocab_size=50"], "task.vocab_size"),
    (["--set", "task.anchors=[-1,2,3,4]"], "task.anchors"),
    (["--set", "task.anchors=[1,2,3,300]", "--set", "task.shifts={1: 5, 2: 1, 3: -2, 300: -8}"], "task.vocab_size"),
    (["--set", "task.shifts={1: 5, 2: 1, 3: -2, 4: 150}"], "task.vocab_size"),
    (["--set", 'task.anchors={a: &a [1,1,1,1,1,1,1,1], b: &b [*a,*a,*a,*a,*a,*a,*a,*a], c: [*b,*b,*b,*b]}'],
     "aliases"),
    (["--set", "seed=" + "1" * 20_000], "longer than"),
    (["--set", "model.d_model=1000000000"], "GiB"),
]


@pytest.mark.parametrize(("args", "names"), BAD_INPUTS)
def test_bad_input_is_one_line_exit_2_nothing_written(tiny_yaml: Path, tmp_path: Path, args: list[str],
                                                       names: str) -> None:
    out = tmp_path / "store"
    result = runner.invoke(app, ["train", str(tiny_yaml), "--out", str(out), "-q", *args])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and names in lines[0], result.output
    assert "Traceback" not in result.output
    assert _tree(out) == []


def test_a_config_file_that_is_not_utf8_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes("train:\n  epochs: 3 # réglé\n".encode("latin-1"))
    result = runner.invoke(app, ["train", str(bad), "--out", str(tmp_path / "store"), "--dry-run"])
    assert result.exit_code == 2 and "not UTF-8" in result.output and str(bad) in result.output.replace("\n", "")
    assert not (tmp_path / "store").exists()


def test_several_overrides_after_one_set_name_the_fix(tiny_yaml: Path, tmp_path: Path) -> None:
    """``--set`` takes one value: a second one lands on the config argument or past it, and both say so."""
    as_config = runner.invoke(app, ["train", "--set", "seed=2", "model.depth=3", "--out", str(tmp_path / "a")])
    past = runner.invoke(app, ["train", str(tiny_yaml), "--set", "seed=2", "model.depth=3", "--out",
                               str(tmp_path / "b")])
    for result in (as_config, past):
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert result.exit_code == 2 and len(lines) == 1 and "its own --set" in lines[0], result.output
    assert "--set model.depth=3" in as_config.output
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_missing_and_broken_files(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["train", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2 and "nope.yaml" in missing.output
    broken = tmp_path / "broken.yaml"
    broken.write_text("model: [unclosed\n")
    result = runner.invoke(app, ["train", str(broken)])
    assert result.exit_code == 2 and "broken.yaml" in result.output and "line" in result.output
    shown = runner.invoke(app, ["show", str(tmp_path)])
    assert shown.exit_code == 2 and "summary.json" in shown.output


@pytest.mark.parametrize("profile", PROFILES)
def test_profiles_resolve_and_label_themselves(profile: str) -> None:
    cfg = resolve(raw_config(None, profile, [], "anchor"))
    assert cfg.profile.startswith(f"anchor-{profile}")  # its full name, as every run line shows it
    if profile.startswith("cpu"):
        assert "reduced" in cfg.profile  # a reduced profile says so in every run it produces
    if profile == "paper":
        assert (cfg.model.d_model, cfg.train.batch_size, cfg.train.epochs) == (400, 2048, 210)
        assert cfg.task.n_train_per_pair * 15 == 759_375


def test_dry_runs_print_what_would_run_and_write_nothing(tmp_path):
    from reasonlab.config import raw_config, resolve

    out = tmp_path / "store"
    result = runner.invoke(app, ["train", "--profile", "anchor-cpu", "--set", "init.gamma=0.9", "--dry-run",
                                 "--out", str(out)])
    cfg = resolve(raw_config(None, "anchor-cpu", ["init.gamma=0.9"]))
    assert result.exit_code == 0 and f"# run {cfg.run_id()}" in result.output and "gamma: 0.9" in result.output
    result = runner.invoke(app, ["sweep", "--family", "anchor", "--profile", "cpu", "--grid", "init.gamma=0.3,0.5",
                                 "--grid", "seed=1,2", "--dry-run", "--out", str(out), "--name", "g"])
    assert result.exit_code == 0 and "sweep g: 4 runs" in result.output and result.output.count("init.gamma=") == 4
    assert not out.exists()


@pytest.mark.slow
def test_module_entry_point_resolves_a_sweep(tmp_path):
    """``python -m reasonlab`` runs the package from a source tree without installing it."""
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "reasonlab", "sweep", "--profile", "anchor-paper", "--grid", "init.gamma=0.5,0.8",
           "--workers", "2", "--dry-run", "--out", str(tmp_path), "--name", "paper-check"]
    result = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "sweep paper-check: 2 runs" in result.stdout and result.stdout.count("init.gamma=") == 2
    assert not any(tmp_path.iterdir())


def _main(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    """The installed entry point (``reasonlab ...``), with its top-level error handling."""
    import sys

    from reasonlab.cli import main

    monkeypatch.setattr(sys, "argv", ["reasonlab", *map(str, args)])
    with pytest.raises(SystemExit) as done:
        main()
    captured = capsys.readouterr()
    return done.value.code, captured.out + captured.err


@pytest.mark.parametrize("case", ["out-is-a-file", "read-only", "dangling-partial",
                                  pytest.param("csv-dir-missing", marks=pytest.mark.slow)])  # trains a sweep
def test_bad_paths_are_one_line(tiny_yaml: Path, tmp_path: Path, monkeypatch, capsys, request, case: str) -> None:
    import os
    import subprocess

    from reasonlab.config import load_yaml, resolve

    out = tmp_path / "store"
    args = ["train", tiny_yaml, "--out", out, "-q"]
    if case == "out-is-a-file":
        out.write_text("not a directory")
    elif case == "read-only":
        out.mkdir()
        if os.geteuid() != 0:
            out.chmod(0o500)
        elif subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=1m", "none", str(out)],
                            capture_output=True).returncode != 0:
            pytest.skip("root writes through read-only permissions, and no read-only mount could be made")
        request.addfinalizer(lambda: subprocess.run(["umount", str(out)], capture_output=True))
    elif case == "dangling-partial":
        run_id = resolve(load_yaml(tiny_yaml)).run_id()
        (out / "adhoc").mkdir(parents=True)
        (out / "adhoc" / f"{run_id}.partial").symlink_to(tmp_path / "gone")
    else:
        import yaml

        finished, spec = tmp_path / "done", tmp_path / "s.yaml"
        spec.write_text(yaml.safe_dump({"config": load_yaml(tiny_yaml), "grid": {"seed": [1]}}))
        assert runner.invoke(app, ["sweep", str(spec), "--out", str(finished)]).exit_code == 0
        args = ["results", finished / "s", "--csv", tmp_path / "missing" / "r.csv"]
    code, output = _main(monkeypatch, capsys, *args)
    lines = [x for x in output.splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in output, output


def test_a_name_with_a_trailing_newline_is_refused(tiny_yaml: Path, tmp_path: Path) -> None:
    result = runner.invoke(app, ["train", str(tiny_yaml), "--out", str(tmp_path / "s"), "--name", "abc\n"])
    assert result.exit_code == 2 and "--name" in result.output
    assert not (tmp_path / "s").exists()


@pytest.mark.slow
def test_a_full_disk_while_the_figures_are_written_is_one_line(tiny_yaml: Path, tmp_path: Path, monkeypatch) -> None:
    """The run is finished and kept; only its figure is missing, and a rerun draws it."""
    import errno

    import reasonlab.files as files
    import reasonlab.plots as plots

    original = plots.atomic_write_bytes

    def full_disk(path, data):
        def no_space(fd):
            raise OSError(errno.ENOSPC, "No space left on device")

        with pytest.MonkeyPatch.context() as m:
            m.setattr(files.os, "fsync", no_space)
            original(path, data)

    monkeypatch.setattr(plots, "atomic_write_bytes", full_disk)
    out = tmp_path / "store"
    result = runner.invoke(app, ["train", str(tiny_yaml), "--out", str(out), "-q"])
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "no space left" in lines[0], result.output
    (run_dir,) = finished_runs(out / "adhoc")
    assert (run_dir / "summary.json").is_file() and not list(run_dir.rglob(".*tmp-*"))
    monkeypatch.setattr(plots, "atomic_write_bytes", original)
    assert runner.invoke(app, ["train", str(tiny_yaml), "--out", str(out), "-q"]).exit_code == 0
    assert (run_dir / "figures" / "run.png").is_file()


@pytest.mark.slow
def test_training_piped_to_a_file_prints_a_line_per_epoch(tiny_yaml: Path, tmp_path: Path) -> None:
    """Without a terminal (a log file, nohup) progress is one plain line per epoch, labelled briefly."""
    result = runner.invoke(app, ["train", str(tiny_yaml), "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    lines = [x for x in result.output.splitlines() if " step " in x and " ep " in x]
    epochs = yaml.safe_load(tiny_yaml.read_text())["train"]["epochs"]
    assert len(lines) == epochs and all(x.startswith("γ") and "ETA" in x for x in lines), result.output
    done, total = lines[-1].split(" step ")[1].split()[0].split("/")
    assert done == total
    assert "profile:" in result.output


def test_version_pair_formats_and_choices(tmp_path: Path) -> None:
    import reasonlab

    assert runner.invoke(app, ["--version"]).output.strip() == f"reasonlab {reasonlab.__version__}"
    warned = runner.invoke(app, ["train", "--set", "task.kind=anchor", "--dry-run", "--out", str(tmp_path)])
    assert warned.exit_code == 0 and "paper scale" in warned.output and "a reduced (cpu) profile" in warned.output
    bad_at = runner.invoke(app, ["phase", str(tmp_path), "--at", "best"])
    assert bad_at.exit_code == 2 and "'--at': 'best' is not one of 'final', 't_star'" in bad_at.output
    bad_pair = runner.invoke(app, ["phase", str(tmp_path), "--pair", "4x3"])
    assert bad_pair.exit_code == 2 and "--pair" in bad_pair.output


@pytest.mark.slow
def test_a_file_size_limit_is_one_line_and_keeps_the_run(tiny_yaml: Path, tmp_path: Path, monkeypatch) -> None:
    """EFBIG (ulimit -f) at a checkpoint write is one line, like a full disk; the rerun resumes and finishes."""
    import errno

    import reasonlab.files as files

    real_fsync, calls = files.os.fsync, []

    def limited(fd):
        calls.append(fd)
        if len(calls) == 5:
            raise OSError(errno.EFBIG, "File too large")
        real_fsync(fd)

    monkeypatch.setattr(files.os, "fsync", limited)
    out = tmp_path / "store"
    result = runner.invoke(app, ["train", str(tiny_yaml), "--out", str(out), "-q"])
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and "file too large" in lines[0], result.output
    monkeypatch.setattr(files.os, "fsync", real_fsync)
    assert runner.invoke(app, ["train", str(tiny_yaml), "--out", str(out), "-q"]).exit_code == 0
    assert len(finished_runs(out / "adhoc")) == 1


@pytest.mark.slow
def test_a_truncated_checkpoint_is_one_line_in_analyze(tiny_yaml: Path, tmp_path: Path) -> None:
    out = tmp_path / "store"
    assert runner.invoke(app, ["train", str(tiny_yaml), "--out", str(out), "-q"]).exit_code == 0
    (run_dir,) = finished_runs(out / "adhoc")
    last = max(run_dir.glob("checkpoints/step-*.safetensors"), key=lambda p: int(p.stem.split("-")[1]))
    last.write_bytes(last.read_bytes()[:100])
    result = runner.invoke(app, ["analyze", str(run_dir), "--probe", "spectra"])
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and last.name in lines[0], result.output
