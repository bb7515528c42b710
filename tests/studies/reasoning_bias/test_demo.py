"""The reasoning-bias study's demo arm (``reasonlab demo``): end to end on a tiny override, its verdict read from the
numbers, its table on the command line's console, and the words of its figures (the mixture kind's labels, keyed to
their stored names; read from the committed seed 1 in ``results/demo``)."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import pytest
import yaml
from typer.testing import CliRunner

from reasonlab.cli import app
from reasonlab.records import finished_runs
from reasonlab.studies.reasoning_bias import demo
from reasonlab.vocabulary import label, labelled

RESULTS = Path(__file__).resolve().parents[3] / "results"
runner = CliRunner()


@pytest.mark.slow
def test_demo_end_to_end_on_a_tiny_override(tmp_path: Path) -> None:
    """The main demo: the reasoning/memory mixture at both initializations as a sweep, its table, its figure and a
    verdict that names the four E1 criteria; then the sweep reads as one."""

    small = ["--set", "train.epochs=2", "--set", "task.n_samples=2000", "--set", "model.d_model=16",
             "--set", "model.d_ff=32", "--set", "train.checkpoint_every=1"]
    result = runner.invoke(app, ["demo", "--out", str(tmp_path), "--workers", "1", *small])
    assert result.exit_code == 0, result.output
    runs = finished_runs(tmp_path / "demo")
    gammas = sorted(yaml.safe_load((r / "config.yaml").read_text())["init"]["gamma"] for r in runs)
    assert gammas == sorted(demo.DEMO_GAMMAS)
    assert (tmp_path / "demo" / "figures" / "demo.png").is_file()
    said = " ".join(result.output.split())
    assert f"Large init: γ {demo.DEMO_GAMMAS[0]:g} ended" in said and "The study's E1 criteria (" in said
    assert "The contrast shows" in said or "does NOT show" in said
    assert "reasonlab demo trajectory" in said
    after = runner.invoke(app, ["results", str(tmp_path / "demo"), "--sql", "SELECT run_id, label FROM runs"])
    assert after.exit_code == 0, after.output
    assert all(r.name in after.output for r in runs)  # the demo's store reads as a sweep's


def _mixture_run(label: str, memory: float, unseen: float, t50_memory: int | None, t50_rule: int | None) -> dict:
    return {"label": label, "memory_acc": memory, "reasoning_train_acc": 1.0, "reasoning_test_acc": unseen,
            "t50_memory": t50_memory, "t50_reasoning_train": t50_rule, "last_epoch": 60}


def test_mixture_demo_verdict_reads_the_criteria_from_the_numbers() -> None:

    large, small = demo.DEMO_GAMMAS
    shows = demo.demo_verdict({large: _mixture_run("memorizing", 1.0, 0.47, 8, 8),
                          small: _mixture_run("reasoning", 1.0, 0.91, 26, 10)})
    assert "The contrast shows" in shows and "(3 of 4)" in shows
    assert "large init at least 0.5 lower on the unseen tuples: did not hold" in shows
    # the rule learned at the same time as the table at small init: no contrast, whatever the labels
    together = demo.demo_verdict({large: _mixture_run("memorizing", 1.0, 0.47, 8, 8),
                             small: _mixture_run("reasoning", 1.0, 0.95, 10, 10)})
    assert "does NOT show" in together and "learns the rule first (t50 ratio ≤ 0.5): did not hold" in together
    # memory never learned at small init: the ratio is a bound, still "rule first"
    bound = demo.demo_verdict({large: _mixture_run("memorizing", 1.0, 0.2, 8, 8),
                          small: _mixture_run("not-fitted", 0.3, 0.95, None, 10)})
    assert "The contrast shows" in bound and "(4 of 4)" in bound
    assert "not both finished" in demo.demo_verdict({large: _mixture_run("memorizing", 1.0, 0.4, 8, 8)})


@pytest.mark.parametrize("tty", [True, False], ids=["terminal", "piped"])
@pytest.mark.parametrize("width", [80, 120])
def test_the_demo_table_reads_on_the_demos_own_console(screen, capsys, width, tty) -> None:
    """The table as the demo prints it: on the command line's console (which escapes control characters in stored
    strings), in a terminal of 80 or 120 columns and piped. Its two-line headers break into two lines, not into
    ``rule\\x0atrained``, and no cell folds ('memorizi' / 'ng')."""
    from conftest import plain

    from reasonlab.cli.common import console

    large, small = demo.DEMO_GAMMAS
    runs = {large: {**_mixture_run("memorizing", 1.0, 0.47, 8, 8), "wall_time_s": 1302.4},
            small: {**_mixture_run("not-fitted", 0.3, 0.95, None, 10), "wall_time_s": 822.0}}
    screen(width, tty)
    console.print(demo.demo_table(runs, "runs/demo"))
    lines = plain(capsys.readouterr().out).splitlines()
    assert "\\x" not in "\n".join(lines) and max(map(len, lines)) <= width
    head = [line.split("┃")[1:-1] for line in lines if line.startswith("┃")]
    assert len(head) > 1  # the long headers break onto lines of their own, word by word, none cut
    assert [" ".join(" ".join(column).split()) for column in zip(*head, strict=True)] == list(demo.columns())
    rows = [line for line in lines if line.startswith("│")]
    assert len(rows) == 2 and "memorizing" in rows[0] and "not-fitted" in rows[1] and "never" in rows[1]
    assert "1302" in rows[0] and "0.470" in rows[0]


def test_the_demo_words_its_figures_by_the_mixture_kinds_labels_and_keys_them_to_their_stored_names(tmp_path):
    runs = demo.read_demo_runs(RESULTS / "demo" / "seed-1")
    words = {name: label(name, "mixture") for name in demo.FIGURES}
    assert set(words.values()) == {"memory", "rule on trained tuples", "rule on unseen tuples"}
    assert all(text in demo.columns() for text in words.values())
    caption = demo.caption()
    assert all(f"{text} = {name}" in caption for name, text in words.items())
    verdict = demo.demo_verdict(runs)
    assert f"{words['memory_acc']} 1.00, {words['reasoning_test_acc']} 0.47" in verdict
    assert "unseen reasoning" not in verdict and "unseen reasoning" not in demo.demo_summary(runs, "p", "t")

    drawn: dict = {}
    legends: list[str] = []
    original_plot, original_legend = demo.plot_demo, plt.Axes.legend

    def plot(panels, out_base, caption):
        drawn.update(subtitles=[subtitle for _, subtitle, _ in panels], caption=caption)
        return original_plot(panels, out_base, caption)

    def legend(ax, *args, **kwargs):
        made = original_legend(ax, *args, **kwargs)
        legends.extend(t.get_text() for t in made.get_texts())
        return made

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(demo, "plot_demo", plot)
        patch.setattr(plt.Axes, "legend", legend)
        demo.draw_demo(runs, "p", 1, tmp_path / "demo")
    assert set(legends) == {labelled(name, "mixture") for name in demo.FIGURES}
    assert drawn["subtitles"] == ["rule on unseen tuples: 0.47", "rule on unseen tuples: 0.91"]
    assert "Thick line: rule on unseen tuples" in drawn["caption"]
