"""What a newcomer types first and how the command line answers: an override in the wrong form is named with the
form it takes, a command by another name points to (or is) the right one, and a count reads "1 run", not "1 runs".
Each answer to a mistake is one line and exit code 2."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from reasonlab.cli import app


def refused(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert result.output.startswith("error: ")
    return result.output


@pytest.mark.parametrize(("override", "expected"), [
    ("gamma=0.5", "gamma: unknown field (did you mean init.gamma (initialization rate γ)?"),
    ("train.gamma=0.5", "train.gamma: unknown field (did you mean init.gamma"),
    ("depth=3", "did you mean model.depth"),
    ("loss_below=0.1", "did you mean train.weight_decay_switch.loss_below"),
])
def test_a_field_named_without_its_section_or_in_another_is_found_where_it_is(override, expected):
    assert expected in refused("train", "--profile", "anchor-cpu", "--set", override, "--dry-run")


def test_a_list_for_a_field_of_one_value_points_to_the_grid_of_a_sweep():
    line = refused("train", "--profile", "anchor-cpu", "--set", "init.gamma=[0.3,0.8]", "--dry-run")
    assert line.rstrip().endswith("sweep them: --grid init.gamma=0.3,0.8")
    line = refused("sweep", "--family", "anchor", "--profile", "cpu", "--set", "init.bias=[zero,default]",
                   "--dry-run")
    assert "--grid init.bias=zero,default" in line


def test_one_value_for_a_list_field_is_shown_in_brackets():
    line = refused("train", "--profile", "anchor-cpu", "--set", "train.loggers=tensorboard", "--dry-run")
    assert line.rstrip().endswith("a list is written in brackets: train.loggers=[tensorboard]")
    line = refused("train", "--profile", "anchor-cpu", "--set", "train.betas=0.9", "--dry-run")
    assert line.rstrip().endswith("give its 2 values in brackets, e.g. train.betas=[0.9,0.999]")


def test_a_value_yaml_reads_as_a_date_is_refused_in_one_line():
    """``2020-01-01`` is a date to YAML: named as a wrong value, not a TypeError from labelling the profile."""
    assert "model.d_ff: Input should be a valid integer" in refused("train", "--profile", "anchor-cpu", "--set",
                                                                    "model.d_ff=2020-01-01", "--dry-run")
    assert "--grid init.gamma=2020-01-01" in refused("train", "--profile", "anchor-cpu", "--set",
                                                      "init.gamma=[2020-01-01]", "--dry-run")


def test_the_right_forms_the_hints_give_are_accepted():
    from reasonlab.config import raw_config, resolve

    cfg = resolve(raw_config(None, "anchor-cpu", ["init.gamma=0.3", "train.loggers=[tensorboard]",
                                                  "train.betas=[0.9,0.999]"]))
    assert (cfg.init.gamma, cfg.train.loggers, cfg.train.betas) == (0.3, ["tensorboard"], (0.9, 0.999))


def test_profile_list_is_the_list_of_profiles():
    runner = CliRunner()
    listed, profiles = runner.invoke(app, ["profile", "list"]), runner.invoke(app, ["profiles"])
    assert listed.exit_code == profiles.exit_code == 0, listed.output
    assert listed.output == profiles.output and "anchor-cpu" in listed.output


def _run_dir(parent, run_id: str = "0123456789ab"):
    (parent / run_id).mkdir(parents=True)
    (parent / run_id / "summary.json").write_text(json.dumps({}))


def test_show_of_a_folder_of_runs_or_of_sweeps_points_to_results(tmp_path):
    _run_dir(tmp_path / "runs" / "adhoc")
    line = refused("show", str(tmp_path / "runs" / "adhoc"))
    assert f"a folder of runs, not a run; `reasonlab results {tmp_path / 'runs' / 'adhoc'}` prints" in line
    line = refused("show", str(tmp_path / "runs"))
    assert f"a folder of sweeps, not a run; `reasonlab results {tmp_path / 'runs'}` prints their tables" in line
    (tmp_path / "empty").mkdir()
    assert "reasonlab results" not in refused("show", str(tmp_path / "empty"))  # nothing there: not a store


def test_a_count_of_runs_takes_the_number_of_its_count(tmp_path):
    from reasonlab.report.phase import label_phase
    from reasonlab.terminal import counted

    assert [counted(n, "run") for n in (0, 1, 2)] == ["0 runs", "1 run", "2 runs"]
    rows = [{"init.gamma": 0.3, "model.depth": 2, "label": "fitted", "final.acc": 1.0},
            {"init.gamma": 0.8, "model.depth": 2, "label": "fitted", "final.acc": 0.5},
            {"init.gamma": 0.8, "model.depth": 2, "label": "fitted", "final.acc": 0.7}]
    _, lines = label_phase(rows, tmp_path / "phase", "init.gamma", "model.depth", {}, "")
    assert lines[0].endswith("; 1 run)") and lines[1].endswith("; 2 runs)"), lines


@pytest.mark.parametrize("override", ["seed=true", "seed=false", "train.epochs=true", "init.gamma=true",
                                      "train.base_lr=yes", "train.threads=100000", "train.epochs=100000000"])
def test_a_truth_value_for_a_number_and_a_count_past_any_machine_are_one_line(override):
    """true/false is not 1/0 where a number is asked (pydantic would read it so), and thread and epoch counts past
    any machine are refused before torch sees them (a segfault, a schedule laid out for 10^8 epochs)."""
    result = CliRunner().invoke(app, ["train", "--profile", "anchor-cpu", "--set", override, "--dry-run"])
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert override.split("=")[0] in lines[0]


def test_booleans_still_set_the_fields_that_are_booleans():
    from reasonlab.config import raw_config, resolve

    cfg = resolve(raw_config(None, "anchor-cpu", ["train.tf32=true", "model.final_norm=false"]))
    assert cfg.train.tf32 is True and cfg.model.final_norm is False


@pytest.mark.parametrize("args", [["results", "results/demo", "--timeout", "inf", "--sql", "SELECT 1"],
                                  ["results", "results/demo", "--memory-limit", "1e308", "--sql", "SELECT 1"],
                                  ["analyze", "results/demo", "--seed", str(10**30)]])
def test_sql_bounds_and_probe_seeds_past_any_use_are_one_line(args):
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "Traceback" not in result.output and "less than or equal" in result.output
