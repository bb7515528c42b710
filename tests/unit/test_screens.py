"""What a researcher reads on a screen (issue 58), rendered through the consoles the command line prints on, at 80,
100 and 120 columns, on a terminal and piped: ``reasonlab results`` and its SQL (whole names and values, never
folded or cut to nothing; a misnamed column answered with the name to write), a sweep's live view and a run's
progress bar (step count and ETA kept, evaluations wrapped rather than cut), and the line breaks of stored text."""

from __future__ import annotations

import os
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import plain, served_as_stored
from typer.testing import CliRunner

from reasonlab.cli import app

WIDTHS = [80, 120]
TTY = pytest.mark.parametrize("tty", [True, False], ids=["terminal", "piped"])
FIGURES = {"final.memory_acc": [1.0, 0.9991], "final.memory_loss": [0.004218, 0.1945],
           "final.reasoning_train_acc": [1.0, 0.9986], "final.reasoning_train_loss": [0.00148, 0.04012],
           "final.reasoning_test_acc": [0.47, 0.91], "final.reasoning_test_loss": [1.694, 0.3302],
           "final.memory_in_range": [1.0, 1.0]}


def _cli(*args) -> tuple[int, str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, plain(result.output)


@pytest.fixture
def demo_sweep(tmp_path, monkeypatch):
    """A sweep folder as the demo leaves it, with its results table alone: two mixture runs, the demo's figures,
    and as many columns as ``SELECT *`` returns on a real run (74)."""
    served_as_stored(monkeypatch)
    sweep = tmp_path / "demo"
    sweep.mkdir()
    columns = {"run_id": ["aaa0338cd67a", "0c4035dd302a"], "label": ["memorizing", "reasoning"],
               "profile": ["cpu (reduced Emb-MLP: d 400/1200, 40k seqs, batch 256, 60 epochs, peak lr 1e-3)"] * 2,
               "git_revision": ["2c17e922b8ae423408e907c947f891b389dd1871"] * 2, "seed": [1, 1],
               "task.kind": ["mixture"] * 2, "init.gamma": [0.3, 0.8], "train.base_lr": [1e-5, 1e-5],
               "train.lr_multiplier": [100.0, 100.0], **FIGURES, "wall_time_s": [151.2, 149.2]}
    columns |= {f"task.field_{i}": [i, i] for i in range(74 - len(columns))}
    pq.write_table(pa.table(columns), sweep / "results.parquet")
    return sweep


def _fits(output: str, width: int) -> list[str]:
    lines = output.splitlines()
    assert lines and max(map(len, lines)) <= width, output
    return lines


# ---- reasonlab results ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("width", WIDTHS)
def test_results_shows_whole_names_and_values_side_by_side(screen, demo_sweep, width):
    """The demo's table is ~230 columns wide: squeezed into 80 or 120 its headers broke into 4-character pieces and
    its values folded (``memo/rizi/ng``); turned on its side, each figure is one line with both runs' values."""
    screen(width, True)
    code, output = _cli("results", demo_sweep)
    assert code == 0, output
    lines = _fits(output, width)
    assert any("aaa0338cd67a" in line and "0c4035dd302a" in line for line in lines), output
    for name, (large, small) in FIGURES.items():
        assert any(name in line and f"{large:.4g}" in line and f"{small:.4g}" in line for line in lines), name
    assert any("memorizing" in line and "reasoning" in line for line in lines), output


@pytest.mark.parametrize("width", WIDTHS)
def test_select_star_prints_every_column_and_value(screen, demo_sweep, width):
    """``SELECT * FROM runs`` once printed 74 empty zero-width columns and no data, exit 0."""
    screen(width, True)
    code, output = _cli("results", demo_sweep, "--sql", "SELECT * FROM runs")
    assert code == 0, output
    lines = _fits(output, width)
    assert "┃┃" not in output and "││" not in output
    for name in ("label", "init.gamma", "train.lr_multiplier", "task.field_55", "final.reasoning_test_acc"):
        assert any(line.startswith(f"│ {name} ") for line in lines), name
    assert "aaa0338cd67a" in output and "0c4035dd302a" in output and "memorizing" in output
    assert any("final.reasoning_test_acc" in line and "0.47" in line for line in lines), output


@pytest.mark.parametrize("sql", [None, "SELECT * FROM runs"])
def test_a_piped_table_is_plain_text_one_line_per_run_whatever_its_width(screen, demo_sweep, sql):
    """Piped, a wide table was drawn in boxes and turned on its side in blocks of a few runs: for ``grep``, ``less -S``
    or a file it is one header line and one whole line per run, columns aligned, no rules."""
    screen(80, False)
    code, output = _cli("results", demo_sweep, *(["--sql", sql] if sql else []))
    assert code == 0, output
    header, *runs = output.splitlines()
    assert len(runs) == 2 and not set("┃│┏└━─") & set(output), output
    starts = [m.start() for m in re.finditer(r"\S+", header)]  # each column starts under its name
    names = header.split()
    assert {"run_id", "final.reasoning_test_acc", "label"} <= set(names)
    assert (sql is not None) == ("task.field_55" in names)
    for run, (run_id, label, acc) in zip(runs, (("aaa0338cd67a", "memorizing", "0.47"),
                                                ("0c4035dd302a", "reasoning", "0.91")), strict=True):
        spans = zip(starts, [*starts[1:], None], strict=True)
        cells = dict(zip(names, (run[a:b].strip() for a, b in spans), strict=True))
        assert (cells["run_id"], cells["label"], cells["final.reasoning_test_acc"]) == (run_id, label, acc), run
        assert sql is None or cells["profile"].startswith("cpu (reduced Emb-MLP:"), run


def test_a_table_that_fits_is_printed_as_it_is(screen, demo_sweep):
    screen(80, True)
    code, output = _cli("results", demo_sweep, "--sql", 'SELECT run_id, "init.gamma", label FROM runs')
    assert code == 0, output
    assert "┃ run_id       ┃ init.gamma ┃ label      ┃" in output
    assert "│ aaa0338cd67a │ 0.3        │ memorizing │" in output


def test_a_wide_table_is_turned_in_blocks_that_fit_and_an_empty_one_names_its_columns():
    import io

    from reasonlab.report.table import results_view
    from reasonlab.terminal import SafeConsole

    def drawn(columns, rows, width) -> str:
        console = SafeConsole(file=io.StringIO(), width=width, markup=False)
        console.print(results_view(columns, rows, width, "runs/s"))
        return console.file.getvalue()

    columns = ["run_id", *(f"final.figure_{i}" for i in range(12))]
    rows = [(f"run{r:09d}", *(r + i / 7 for i in range(12))) for r in range(5)]
    output = drawn(columns, rows, 80)
    assert max(map(len, output.splitlines())) <= 80
    assert "runs/s — runs 1–4 of 5" in output and "runs/s — run 5 of 5" in output
    empty = drawn(columns, [], 80)
    assert "no rows" in empty and all(c in empty for c in columns[1:]), empty


@pytest.mark.parametrize(("sql", "hint"), [
    ("SELECT init.gamma FROM runs", 'written in double quotes: "init.gamma"'),
    ('SELECT "init.gamma" FROM runs WHERE train.lr_multiplier > 1', 'double quotes: "train.lr_multiplier"'),
    ("SELECT gamma FROM runs", 'did you mean "init.gamma"?'),
    ("SELECT r.gama FROM runs r", 'did you mean "init.gamma"?'),
    ("SELECT lr FROM runs", 'did you mean "train.base_lr" or "train.lr_multiplier"?'),
    ("SELECT valu FROM metrics", 'did you mean "value"?'),
    ("SELECT zzzz FROM runs", "DESCRIBE runs (or metrics, offsets) lists a table's columns"),
])
def test_a_misnamed_column_is_answered_with_the_name_to_write(demo_sweep, sql, hint):
    """A dotted name unquoted gave DuckDB's raw ``Referenced table "init" not found!``; a name without its section
    gave no "did you mean"."""
    code, output = _cli("results", demo_sweep, "--sql", sql)
    errors = [line for line in output.splitlines() if line.startswith("error: --sql: ")]
    assert code == 2 and len(errors) == 1 and hint in errors[0], output


# ---- line breaks ----------------------------------------------------------------------------------------------------
def test_a_line_break_is_layout_on_the_console_and_escaped_where_one_line_is_promised(screen, capsys):
    from reasonlab.cli.common import console, line

    screen(80, False)
    console.print("rule\ntrained \x1b[2J")
    line("epoch 3\nforged line")
    assert capsys.readouterr().out.splitlines() == ["rule", "trained \\x1b[2J", "epoch 3\\x0aforged line"]
    code, output = _cli("results", "no\nsuch")
    assert code == 2 and output.splitlines() == ["error: no\\x0asuch: no such directory; pass a sweep directory or a "
                                                 "store root"], output


# ---- the live view and the progress bar -----------------------------------------------------------------------------
@pytest.fixture
def two_running(tmp_path):
    """A demo-like sweep's monitor with its two runs at step 12,345 of 60,000 after an evaluation."""
    from reasonlab.cli.common import console
    from reasonlab.config import raw_config, resolve
    from reasonlab.records import write_progress
    from reasonlab.sweep.runner import Monitor

    cfgs = [resolve(raw_config(None, "mixture-emb-mlp-cpu", [f"init.gamma={g}"])) for g in (0.3, 0.8)]
    monitor = Monitor("demo", tmp_path, cfgs, ["init.gamma"], 0, 2, console)
    for cfg in cfgs:
        partial = tmp_path / f"{cfg.run_id()}.partial"
        partial.mkdir()
        write_progress(partial, epoch=12, epochs=60, step=12345, steps=60000, steps_per_s=85.3, eta_s=700.0,
                       loss=0.123, wall_time_s=140.0, evaluated_epoch=12,
                       figures={"memory_acc": 0.98, "reasoning_train_acc": 0.93, "reasoning_test_acc": 0.47})
        os.utime(partial / "progress.json", (monitor.since + 1, monitor.since + 1))  # written while it watched
    return monitor, {c.run_id() for c in cfgs}


@pytest.mark.parametrize("width", [80, 100, 160])
def test_the_live_view_keeps_each_run_whole_at_any_width(screen, capsys, two_running, width):
    """At 100 columns or fewer each run took 5 lines, its figures cut (``reasoning_tr…``); and the header of an
    empty table was left on screen after the last run ended."""
    monitor, ids = two_running
    screen(width, True)
    monitor.console.print(monitor.render(ids))
    lines = _fits(plain(capsys.readouterr().out), width)
    rows = [i for i, line in enumerate(lines) if line.startswith(tuple(ids))]
    assert len(rows) == 2 and "…" not in "".join(lines)
    for i, end in zip(rows, [*rows[1:], len(lines)], strict=True):
        assert "12/60" in lines[i] and "12345/60000" in lines[i] and "11m40s" in lines[i] and "0.123" in lines[i]
        # beside the run where it fits, else under it (wrapped, never cut), each figure by its stored name
        evaluation = lines[i] if width > 120 else " ".join(line.strip() for line in lines[i + 1:end])
        assert "memory_acc 0.98 reasoning_train_acc 0.93 reasoning_test_acc 0.47" in evaluation
        assert end - i <= (1 if width > 120 else 3)
    monitor.console.print(monitor.render(set()))  # every run has ended: the sweep's line alone, no empty header
    ended = plain(capsys.readouterr().out)
    assert ended.startswith("sweep demo: ") and "loss" not in ended and len(ended.splitlines()) <= 2, ended


@pytest.mark.parametrize("width", [80, 100])
def test_a_runs_progress_bar_keeps_its_step_count_and_eta(screen, capsys, width):
    from reasonlab.train.progress import Progress

    screen(width, False)  # piped, the bar draws its last frame once
    with Progress(60000, 12345, "γ0.3 s1", "bar") as bar:
        bar.show(12, 60, 0.123, ["memory 0.98", "reasoning_train 0.93", "reasoning_test 0.47"])
    lines = _fits(plain(capsys.readouterr().out), width)
    assert lines[0].startswith("γ0.3 s1 ") and "12345/60000" in lines[0] and "ETA" in lines[0], lines
    assert lines[1] == "  ep 12/60 loss 0.123 memory 0.98 reasoning_train 0.93 reasoning_test 0.47", lines


def test_a_status_too_long_for_the_terminal_breaks_between_its_parts(screen, capsys):
    """At 80 columns the stored names of a mixture run's figures fill more than a line: the status continues on the
    next line whole, never ``reasoning_test_acc`` on one line and its value on the next."""
    from reasonlab.train.progress import Progress

    screen(80, False)
    parts = ["memory_acc 0.98", "reasoning_train_acc 0.93", "reasoning_test_acc 0.70"]
    with Progress(46380, 30252, "γ0.8 s2", "bar") as bar:
        bar.show(9, 9, 2.273, parts)  # the last name ends at column 79, its value would not fit after it
    status = _fits(plain(capsys.readouterr().out), 80)[1:]
    assert status == ["  ep 9/9 loss 2.273 memory_acc 0.98 reasoning_train_acc 0.93", "  reasoning_test_acc 0.70"]


@pytest.mark.parametrize("width", [0, 5])
def test_a_terminal_too_narrow_still_gets_the_output_and_its_errors(screen, width):
    """COLUMNS=0 (or a few columns) is drawn at the console's minimum width: a listing prints its rows and a bad
    input its one line, never nothing."""
    screen(width, tty=False)
    code, out = _cli("studies")
    assert code == 0 and "anchor" in out and out.count("\n") > 10
    code, out = _cli("train", "--profile", "nope")
    assert code == 2 and "unknown; choose one of" in out


@pytest.mark.parametrize("columns", ["0", "1", "5"])
def test_help_at_a_few_columns_is_drawn_at_the_narrowest_width(columns):
    """--help's console is typer's, not the command line's: COLUMNS of 0–5 gave a blank line, box corners or words
    cut three characters a line; it draws at the command line's narrowest width instead."""
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "reasonlab", "pack", "--help"], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": columns}, timeout=120)
    assert done.returncode == 0 and "Usage:" in done.stdout and "Copy runs' records" in done.stdout, done.stdout
