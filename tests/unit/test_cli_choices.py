"""The command line's choices: enumerated flags refused at parse time, did-you-mean for studies and experiments,
the deprecated --study (a profile family's old name), dry runs of reproduce and demo, the refusal of a paper-scale
profile on a CPU, and --help without <bool>."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
from typer.testing import CliRunner

from reasonlab.cli import app

runner = CliRunner()


def _one_error_line(args: list[str]) -> str:
    result = runner.invoke(app, args)
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error:"), result.output
    assert "Traceback" not in result.output
    return lines[0]


@pytest.mark.parametrize(("args", "expected"), [
    (["reproduce", "anchor-phase", "--backend", "rey"], "'rey' is not one of 'local', 'ray'"),
    (["sweep", "--profile", "cpu", "--backend", "dask"], "'dask' is not one of 'local', 'ray'"),
    (["analyze", ".", "--ablation", "half"], "'half' is not one of 'zero', 'mean'"),
    (["phase", ".", "--at", "best"], "'best' is not one of 'final', 't_star'"),
    (["reproduce", "anchor-phaze"], "did you mean anchor-phase?"),
    (["reproduce", "reasoning-bias", "--profile", "cpuu"], "did you mean cpu?"),
    (["train", "--family", "anchr", "--dry-run"], "--family 'anchr': unknown; did you mean anchor?"),
    (["sweep", "--family", "modullar", "--profile", "cpu", "--dry-run"], "did you mean modular?"),
    (["train", "--family", "mixture", "--study", "anchor"], "--study is the old name of --family"),
    (["train", "--profile", "cpu-wid", "--dry-run"], "did you mean anchor-cpu-wide?"),
    (["trian"], "Did you mean 'train'?"),
    (["train", "--dryrun"], "--dry-run"),
    (["show"], "Missing argument"),
])
def test_bad_choices_are_one_line_naming_the_choices(args: list[str], expected: str) -> None:
    assert expected in _one_error_line(args)


def test_study_is_a_deprecated_name_of_family(tmp_path) -> None:
    args = ["--profile", "emb-mlp-cpu", "--dry-run", "--out", str(tmp_path)]
    new = runner.invoke(app, ["train", "--family", "mixture", *args])
    old = runner.invoke(app, ["train", "--study", "mixture", *args])
    assert new.exit_code == 0 and old.exit_code == 0, old.output
    notice = [x for x in old.output.splitlines() if x.startswith("warning:")]
    assert notice == ["warning: --study is deprecated: a profile family is named with --family (`reasonlab studies` "
                      "lists the studies)"]
    assert old.output.replace(notice[0] + "\n", "") == new.output and "kind: mixture" in new.output.splitlines()[3]
    assert "--study" not in runner.invoke(app, ["train", "--help"]).output


def test_reproduce_and_demo_dry_runs_list_their_runs_and_write_nothing(tmp_path) -> None:
    out = tmp_path / "store"
    result = runner.invoke(app, ["reproduce", "anchor-phase", "--dry-run", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "sweep anchor-phase-cpu: 45 runs" in result.output and result.output.count("init.gamma=") == 45
    assert "nothing trained" in result.output
    result = runner.invoke(app, ["reproduce", "scan", "--dry-run", "--out", str(out)])
    assert result.exit_code == 0 and "sweep scan-cpu:" in result.output, result.output
    result = runner.invoke(app, ["demo", "--dry-run", "--out", str(out)])
    assert result.exit_code == 0 and "sweep demo: 2 runs" in result.output, result.output
    assert "init.gamma=0.3" in result.output and "init.gamma=0.8" in result.output
    result = runner.invoke(app, ["demo", "anchor", "--dry-run", "--out", str(out)])
    assert result.exit_code == 0 and "sweep demo-anchor: 2 runs" in result.output, result.output
    assert "init.gamma=0.3" in result.output and "init.gamma=0.85" in result.output
    # the demo's runs are, config for config, the committed search runs its profile was chosen from
    # (results/anchor-search, docs/anchor-composition.md), so the README's figures for it are theirs
    committed = Path(__file__).parents[2] / "results" / "anchor-search"
    for run in ("search-s3-g03/d8f6b940c81f", "search-s3/a22df68a1b43"):
        assert (committed / run / "summary.json").is_file() and f"  {run.split('/')[1]} · anchor · " in result.output
    # and its other seeds are the committed results/demo-anchor runs the docs table per seed
    for seed, runs in ((2, ("20b8c7059e1c", "7e5a1cbbb09a")), (3, ("44ad775c2fb8", "245eacef2408"))):
        result = runner.invoke(app, ["demo", "anchor", "--seed", str(seed), "--dry-run", "--out", str(out)])
        for run in runs:
            assert (committed.parent / "demo-anchor" / run / "summary.json").is_file()
            assert f"  {run} · anchor · " in result.output, result.output
    assert not out.exists()


def test_a_paper_scale_profile_on_a_cpu_needs_yes(tmp_path, monkeypatch) -> None:
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    out = tmp_path / "store"
    for args in (["reproduce", "anchor-phase", "--profile", "paper"], ["sweep", "--profile", "anchor-paper", "--grid",
                                                                       "seed=1,2"],
                 ["reproduce", "modular-phase", "--profile", "gpu"]):
        line = _one_error_line([*args, "--out", str(out)])
        assert "--yes" in line and "no CUDA device" in line
    listed = runner.invoke(app, ["reproduce", "anchor-phase", "--profile", "paper", "--dry-run", "--out", str(out)])
    assert listed.exit_code == 0 and "810 runs" in listed.output
    # the trajectory study is paper scale truncated to hours on a CPU: it asks for no --yes
    listed = runner.invoke(app, ["reproduce", "anchor-trajectory", "--dry-run", "--out", str(out)])
    assert listed.exit_code == 0 and "2 runs" in listed.output
    warned = runner.invoke(app, ["train", "--profile", "anchor-paper", "--dry-run", "--out", str(out)])
    assert warned.exit_code == 0 and "warning: --profile anchor-paper" in warned.output
    assert not out.exists()


def test_a_demo_is_an_arm_of_a_registered_study(tmp_path, monkeypatch) -> None:
    """An arm that says it is a demo (``Arm.demo``) is ``reasonlab demo <name>``: in the command's help, run at the
    seed given and followed by the study's next step; ``reproduce`` runs it too, at one seed. The demos are the
    registered studies' demo arms, the command's default first."""
    from reasonlab import registry
    from reasonlab.cli.training import demo
    from reasonlab.studies.base import Arm, Demo, Study
    from reasonlab.studies.demo import DEFAULT, demos

    class Tiny(Study):
        name, kind = "tiny-study", "anchor"
        arms = {"cpu": Arm(profile="cpu"), "small": Arm(profile="cpu", demo=Demo("tiny-demo", "writes one file"))}

        def run_demo(self, arm, out, seed, make_executor, console, overrides=()):
            (out / "drawn.txt").parent.mkdir(parents=True)
            (out / "drawn.txt").write_text(f"{arm} at seed {seed}")
            return [out / "drawn.txt"]

        def next_step(self, arm, paths):
            return f"look at {paths[0].name}"

    registry.studies()  # the built-in studies first, so that the copies below hold them
    monkeypatch.setattr(registry, "_STUDIES", dict(registry._STUDIES))
    monkeypatch.setattr(registry, "_PLUGINS", dict(registry._PLUGINS))
    registry.register_study(Tiny)
    helped = runner.invoke(app, ["demo", "--help"]).output
    assert "tiny-demo: writes one file" in " ".join(helped.replace("│", " ").split()), helped
    result = runner.invoke(app, ["demo", "tiny-demo", "--seed", "4", "--out", str(tmp_path / "o")])
    assert result.exit_code == 0 and "next: look at drawn.txt" in result.output, result.output
    assert (tmp_path / "o" / "drawn.txt").read_text() == "small at seed 4"
    line = _one_error_line(["demo", "tiny-dem", "--out", str(tmp_path / "o")])
    assert "did you mean tiny-demo?" in line and "reasoning" in line
    reproduced = runner.invoke(app, ["reproduce", "tiny-study", "--profile", "small", "--out", str(tmp_path / "r")])
    assert reproduced.exit_code == 0 and (tmp_path / "r" / "drawn.txt").read_text() == "small at seed 1"
    assert "one seed" in _one_error_line(["reproduce", "tiny-study", "--profile", "small", "--seeds", "1,2"])
    assert inspect.signature(demo).parameters["which"].default == DEFAULT
    assert [(name, study.name, arm) for name, (study, arm) in demos().items()] == [
        (DEFAULT, "reasoning-bias", "demo"), ("anchor", "anchor-phase", "demo"),
        ("trajectory", "anchor-trajectory", "demo"), ("tiny-demo", "tiny-study", "small")]


@pytest.mark.parametrize("command", [[], ["train"], ["reproduce"], ["analyze"], ["demo"]])
def test_flags_show_no_bool_type_in_help(command: list[str]) -> None:
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0 and "--help" in result.output and "<bool>" not in result.output


def test_the_command_list_flows_each_commands_summary_as_one_text() -> None:
    """--help's list of commands: each summary is its docstring's first paragraph without the docstring's own line
    breaks, which the rich help would keep and so cut a phrase mid-line ('its escape' / 'points')."""
    import typer

    group = typer.main.get_command(app)
    summaries = {name: command.short_help for name, command in group.commands.items()}
    assert {"train", "show", "demo", "studies"} <= set(summaries)
    assert all(text and "\n" not in text for text in summaries.values()), summaries
    assert "(its last evaluation, and its escape points or plateau exits so far)" in summaries["show"]


def test_a_sweep_files_family_qualifies_its_own_profile_only(tmp_path) -> None:
    spec = tmp_path / "s.yaml"
    spec.write_text("family: anchor\nprofile: cpu\ngrid:\n  init.gamma: [0.3, 0.5]\n")
    out = ["--dry-run", "--out", str(tmp_path / "store")]
    own = runner.invoke(app, ["sweep", str(spec), *out])
    assert own.exit_code == 0 and "· anchor · profile anchor-cpu ·" in own.output, own.output
    other = runner.invoke(app, ["sweep", str(spec), "--profile", "modular-cpu", *out])
    assert other.exit_code == 0 and "· modular · profile modular-cpu ·" in other.output, other.output
    bare = runner.invoke(app, ["sweep", str(spec), "--profile", "cpu", *out])
    assert bare.exit_code == 2 and "ambiguous" in bare.output and "add --family" in bare.output


def test_the_set_example_in_help_is_accepted_by_the_demo_and_every_profiles_train(tmp_path) -> None:
    """`demo --help` suggested `--set model.depth=3`, which the demo's Emb-MLP refuses: the example every command's
    --set shows must be a field every run has."""
    import re

    from reasonlab.config import families, family_profiles, raw_config, resolve

    for command in ("demo", "train", "sweep", "reproduce"):
        text = " ".join(re.sub("[│╭╮╰╯─]", " ", runner.invoke(app, [command, "--help"]).output).split())
        example = re.search(r"override a field, e\.g\. (\S+)", text).group(1)
        assert example == "train.epochs=20", text
    result = runner.invoke(app, ["demo", "--dry-run", "--set", example, "--out", str(tmp_path)])
    assert result.exit_code == 0 and "dry run: nothing trained" in result.output, result.output
    for family in families():
        for profile in family_profiles(family):
            assert resolve(raw_config(None, profile, [example], family)).train.epochs == 20


@pytest.mark.parametrize("command", [["train", "--profile", "anchor-cpu"], ["demo"],
                                     ["sweep", "--profile", "anchor-cpu"], ["reproduce", "anchor-phase"]])
def test_a_field_and_its_value_as_two_words_name_the_override_to_write(command: list[str], tmp_path: Path) -> None:
    """`--set init.gamma 0.5` read 0.5 as a config file (train), a demo's name or a stray argument."""
    line = _one_error_line([*command, "--set", "init.gamma", "0.5", "--dry-run", "--out", str(tmp_path)])
    assert line == ("error: --set init.gamma 0.5: a field and its value are one word joined by '='; write "
                    "--set init.gamma=0.5")
    assert not any(tmp_path.iterdir())
