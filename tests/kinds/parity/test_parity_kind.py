"""A task kind is one folder: this one (parity, shaped like ``reasonlab/kinds/<kind>/`` but outside the package)
gets full support through the command line from its own files alone — its profiles, its card rows, its run
figure, its results columns, its phase diagram and its option, its probe and its option — and nothing under
src/reasonlab names it.

Pytest imports this folder as a package to collect the file, so the kind registers then; the fixture registers
it again (another test may have replaced a kind of the same name) and removes it after the module."""

from __future__ import annotations

import csv
import importlib
import json
from pathlib import Path

import pytest
import torch
from typer.testing import CliRunner

from reasonlab import registry
from reasonlab.cli import app

SRC = Path(__file__).resolve().parents[3] / "src" / "reasonlab"
runner = CliRunner()


@pytest.fixture(scope="module", autouse=True)
def kind():
    module = importlib.reload(importlib.import_module(__package__))  # its __init__ registers it
    yield module
    registry.unregister_task("parity")
    for name in [m for m in registry._PLUGINS if m.split(".")[0] == __package__.split(".")[0]]:
        registry._PLUGINS.pop(name)


def cli(*args) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.output


def refused(*args) -> str:
    result = runner.invoke(app, [str(a) for a in args])
    lines = [x for x in result.output.splitlines() if x.strip()]
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error:"), result.output
    return lines[0]


def card_rows(printed: str) -> dict[str, str]:
    """The rows of a run card as printed (one-line rows: the kind's rows are short)."""
    cells = [[c.strip() for c in line.split("│")] for line in printed.splitlines()]
    return {c[1]: c[2] for c in cells if len(c) == 4 and c[1]}


def test_nothing_in_the_package_names_the_kind():
    named = [str(p.relative_to(SRC)) for p in SRC.rglob("*") if p.is_file() and p.suffix in (".py", ".yaml", ".md")
             and "parity" in p.read_text(errors="replace").lower()]
    assert named == []


def test_its_profiles_come_with_it_and_go_with_it(kind):
    from reasonlab.config import find_profile, profile_text

    folder = Path(kind.__file__).parent / "profiles"
    assert kind.Parity.profiles == folder and registry.task_kind("parity").profiles == folder
    listed = [line.split()[0] for line in cli("profiles").splitlines() if line.split()]
    assert {"parity-cpu", "parity-wide"} <= set(listed)
    assert find_profile("parity-wide") == ("parity", "wide") and find_profile("wide", "parity") == ("parity", "wide")
    assert cli("profile", "show", "parity-cpu") == profile_text("parity", "cpu") == (folder / "parity-cpu.yaml"
                                                                                      ).read_text()
    full = cli("train", "--profile", "parity-wide", "--dry-run")
    assert full == cli("train", "--family", "parity", "--profile", "wide", "--dry-run") and "d_model: 64" in full
    registry.unregister_task("parity")
    try:
        assert "parity-cpu" not in cli("profiles")
    finally:
        registry.register_task(kind.Parity, replace=True)


def test_its_profiles_and_options_reach_the_command_line():
    wide = cli("train", "--family", "parity", "--profile", "wide", "--dry-run")
    assert "kind: parity" in wide and "n_bits: 6" in wide and "d_model: 64" in wide  # its base's, then its own
    assert "did you mean wide?" in refused("train", "--family", "parity", "--profile", "wid", "--dry-run")
    analyze_help = " ".join(cli("analyze", "--help").replace("│", " ").split())
    assert "parity: flips" in analyze_help and "--bit INTEGER parity: the bit the flips probe flips" in analyze_help
    assert "--split" in cli("phase", "--help")
    assert "Invalid value for '--bit': 'x' is not an integer" in refused("analyze", ".", "--bit", "x")
    assert "'best' is not one of 'held_out', 'seen'" in refused("phase", ".", "--split", "best")


@pytest.mark.slow
def test_one_folder_gives_the_kind_full_support(tmp_path):
    from reasonlab.analysis.loading import load_trained
    from reasonlab.plots.run import run_figure
    from reasonlab.records import load_run
    from reasonlab.sweep.results import read_results

    # train: its own card rows
    out = cli("train", "--family", "parity", "--profile", "cpu", "--out", tmp_path, "--quiet")
    run_dir = next((tmp_path / "adhoc").iterdir())
    summary = load_run(run_dir)[0]
    final = summary["final"]
    rows = card_rows(out)
    assert rows["outcome"] == summary["label"] and rows["seen bit strings"] == f"accuracy {final['seen_acc']:.3f}"
    assert rows["held-out bit strings"] == f"accuracy {final['held_out_acc']:.3f}"
    assert rows["generalization gap"] == f"{final['seen_acc'] - final['held_out_acc']:.3f}"
    assert rows["best held-out accuracy"] == (f"{summary['best']['held_out_acc']:.3f} at epoch "
                                              f"{summary['best']['epoch']}")
    assert card_rows(cli("show", run_dir))["held-out bit strings"] == rows["held-out bit strings"]

    # its own run figure
    fig = run_figure(run_dir)
    assert [ax.get_title() for ax in fig.axes] == ["parity: loss", "parity: seen vs held-out strings"]
    assert fig.axes[1].get_ylabel() == "parity accuracy"
    assert [t.get_text() for t in fig.axes[1].get_legend().get_texts()] == ["seen strings", "held-out strings",
                                                                           "chance"]

    # its probe, with its option
    printed = " ".join(cli("analyze", run_dir, "--probe", "flips", "--bit", "3").split())
    numbers = json.loads((run_dir / "analysis" / "final" / "flips.json").read_text())
    _, model, data, _ = load_trained(run_dir)
    with torch.no_grad():
        for name, s in data.eval_sets.items():
            flipped = s.inputs.clone()
            flipped[:, 3] = 3 - flipped[:, 3]
            changed = (model(s.inputs).argmax(-1) != model(flipped).argmax(-1)).float().mean()
            assert numbers["flipped"][name] == pytest.approx(float(changed))
    assert numbers["bit"] == 3 and f"bit 3 flips the answer on {numbers['flipped']['seen']:.0%} of seen" in printed
    assert "--bit: 9 is not a bit of this task (its bits are 0..5)" in refused("analyze", run_dir, "--bit", "9")
    assert "--key: not an option of the probes of task kind 'parity' (those are: --bit)" in refused(
        "analyze", run_dir, "--key", "40")

    # the report: its words for its figures, its probe's title and headline
    cli("report", run_dir)
    page = (run_dir / "report.html").read_text()
    assert "held-out bit strings: accuracy" in page and "Answer flips" in page and numbers["headline"] in page

    # a sweep, its results columns, its phase rule and the rule's option
    cli("sweep", "--family", "parity", "--profile", "cpu", "--grid", "init.gamma=0.3,0.8", "--grid",
        "model.depth=1,2", "--name", "sw", "--out", tmp_path, "--workers", "2", "--threads", "1")
    sweep = tmp_path / "sw"
    rows = read_results(sweep)
    cli("results", sweep, "--csv", tmp_path / "sw.csv")
    with open(tmp_path / "sw.csv") as f:
        table = list(csv.DictReader(f))
    assert list(table[0]) == ["run_id", "init.gamma", "model.depth", "label", "final.held_out_acc", "parity.gap",
                              "parity.above_chance", "wall_time_s"]
    by_id = {r["run_id"]: r for r in rows}
    assert len(table) == 4
    for line in table:
        row = by_id[line["run_id"]]
        assert float(line["parity.gap"]) == pytest.approx(row["final.seen_acc"] - row["final.held_out_acc"], abs=1e-6)
        assert float(line["parity.above_chance"]) == pytest.approx(row["final.held_out_acc"] - 0.5, abs=1e-6)

    cells = cli("phase", sweep)
    for row in rows:
        assert (f"init.gamma={row['init.gamma']:g} model.depth={row['model.depth']}: {row['label']} (held_out "
                f"accuracy {row['final.held_out_acc']:.3f})") in cells
    assert (sweep / "figures" / "phase-held_out.png").is_file()
    seen = cli("phase", sweep, "--split", "seen")
    assert seen.count("(seen accuracy") == 4 and (sweep / "figures" / "phase-seen.png").is_file()
    assert "--at: not an option of the phase rule of task kind 'parity' (those are: --split)" in refused(
        "phase", sweep, "--at", "final")
