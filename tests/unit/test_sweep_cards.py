"""A sweep read back by a researcher (issue 58): ``show`` on a sweep lists its runs, an unfinished run's card names
the command that resumes it, a rerun says which runs it reused, the demo's verdict reads line by line on the console
and in ``reasonlab report``, and the report folds each run's config to the fields that tell it apart.

The demo runs through the command line with tiny overrides, its two runs trained in this process (seconds)."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import in_process, killed_after, plain, tiny_run
from typer.testing import CliRunner

from reasonlab.cli import app
from reasonlab.config import resolve

TINY = ["task.n_samples=1200", "model.d_model=16", "model.d_ff=24", "train.epochs=2", "train.warmup_epochs=1",
        "train.eval_every=1", "train.checkpoint_every=1", "train.batch_size=64"]


def _cli(*args) -> tuple[int, str]:
    result = CliRunner().invoke(app, [str(a) for a in args])
    return result.exit_code, plain(result.output)


def _demo_args(out) -> list[str]:
    return ["demo", "--out", str(out), *(a for item in TINY for a in ("--set", item))]


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """``reasonlab demo`` with tiny overrides, finished once: (store root, what it printed)."""
    out = tmp_path_factory.mktemp("demo")
    with pytest.MonkeyPatch.context() as patch:
        in_process(patch)
        code, printed = _cli(*_demo_args(out))
    assert code == 0, printed
    return out, printed


def test_the_demos_verdict_reads_line_by_line_and_fits_the_console(demo):
    _, printed = demo
    verdict = printed[printed.index("Large init:"):printed.index("\nnext:")]
    lines = verdict.splitlines()
    assert max(map(len, lines)) <= 80  # CliRunner's console: 80 columns; it was one line of ~700 characters
    assert any(line.startswith("Small init:") for line in lines)
    assert "The study's E1 criteria" in verdict and sum(line.startswith("- ") for line in lines) == 4


def test_the_report_of_the_demo_holds_its_verdict_and_short_configs(demo):
    out, _ = demo
    assert (out / "demo" / "summary.md").read_text().count("- small init") == 2  # learns the rule first; answers
    code, printed = _cli("report", out / "demo")
    assert code == 0, printed
    page = html.unescape((out / "demo" / "report.html").read_text())
    assert "The study's E1 criteria" in page and "Large init: γ 0.3 ended" in page
    summary = page.split('<div class="summary">')[1].split("</div>")[0]  # summary.md as HTML, not its raw text
    assert "<h1>" in summary and "<li>" in summary and "\n# " not in summary and "![" not in summary
    configs = re.findall(r"<details><summary>config[^<]*</summary><pre>(.*?)</pre></details>", page, flags=re.S)
    assert len(configs) == 2
    for text in configs:
        assert len(text.splitlines()) <= 30, text  # the resolved config was ~90 lines of JSON
        cfg = resolve(yaml.safe_load(text))  # the fields away from their defaults: the same run
        assert (out / "demo" / cfg.run_id() / "summary.json").is_file()
        assert cfg.model.d_model == 16 and cfg.task.kind == "mixture"


def test_a_rerun_says_it_reused_the_finished_runs(demo, monkeypatch):
    out, _ = demo
    in_process(monkeypatch)
    code, printed = _cli(*_demo_args(out))
    assert code == 0, printed
    assert f"2 of 2 runs already finished in {out / 'demo'}: reused, not trained again; nothing left to train" in (
        " ".join(printed.split()))


def test_show_on_a_sweep_lists_its_runs(demo, screen):
    out, _ = demo
    screen(250, False)  # wide enough that no cell wraps
    code, printed = _cli("show", out / "demo")
    assert code == 0, printed
    ids = sorted(p.name for p in (out / "demo").iterdir() if (p / "summary.json").is_file())
    text = " ".join(printed.split())
    assert len(ids) == 2 and all(run_id in text for run_id in ids)
    assert "2 finished, 0 unfinished, 0 not started, of 2" in text and "init.gamma=0.3" in text
    assert "reasonlab demo --out" in text  # the command that ran it


def test_an_unfinished_runs_card_names_the_command_that_resumes_it(demo, tmp_path, monkeypatch, screen):
    out, _ = demo
    screen(250, False)  # wide enough that no cell wraps
    store = tmp_path / "store"
    shutil.copytree(out, store)
    cfg = resolve(yaml.safe_load(next((store / "demo").glob("*/config.yaml")).read_text()))
    cfg = cfg.model_copy(update={"seed": 7})  # one more run in the demo's folder, stopped after its first epoch
    partial = killed_after(cfg, store / "demo", 1, monkeypatch)
    code, printed = _cli("show", partial)
    text = " ".join(printed.split())
    assert code == 0 and f"its sweep's command, `reasonlab demo --out {out}" in text, printed
    assert "`reasonlab train`" not in text
    code, printed = _cli("show", store / "demo")
    assert code == 0 and "unfinished, epoch 1 of 2" in " ".join(printed.split()), printed

    alone = killed_after(tiny_run(), tmp_path / "adhoc", 1, monkeypatch)  # a run of `reasonlab train`
    code, printed = _cli("show", alone)
    assert code == 0 and "the same `reasonlab train` command" in " ".join(printed.split()), printed


def test_a_rerun_that_trained_nothing_says_so_instead_of_a_wall_time_of_zero():
    from reasonlab.sweep.runner import SweepReport

    rerun = SweepReport(Path("s"), total=6, skipped=6, wall_time_s=0.4, run_time_s=1260.0).timing()
    assert rerun == ("6 runs, all finished before this invocation (which trained none); training time summed over "
                     "the finished runs: 21.0 min.")
    fresh = SweepReport(Path("s"), total=6, skipped=2, wall_time_s=600.0, run_time_s=1260.0, workers=2).timing()
    assert fresh.startswith("6 runs (2 already finished before this invocation, 0 failed); this invocation took "
                            "10.0 min")
