"""The HTML report: self-contained, escaped, and opened for real in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import matplotlib.image as mpimg
import pytest
import yaml
from conftest import tiny_run_dict
from typer.testing import CliRunner

from reasonlab.cli import app

runner = CliRunner()
HOSTILE = '<script>alert("x")</script>'
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Flags that keep headless Chromium off this machine's closed network (its own background services) and quiet.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--enable-logging=stderr",
         "--v=0", "--window-size=1200,1800"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory) -> Path:
    """A two-run sweep whose profile label is hostile HTML, one run analysed."""
    root = tmp_path_factory.mktemp("report")
    spec = root / "s.yaml"
    raw = tiny_run_dict(train={"epochs": 2})
    raw["profile"] = f"tiny {HOSTILE}"
    spec.write_text(json.dumps({"name": "tiny", "config": raw, "grid": {"init.gamma": [0.3, 0.9]}}))
    result = runner.invoke(app, ["sweep", str(spec), "--out", str(root), "--workers", "1"])
    assert result.exit_code == 0, result.output
    sweep_dir = root / "tiny"
    first = sorted(p for p in sweep_dir.iterdir() if (p / "summary.json").is_file())[0]
    assert runner.invoke(app, ["analyze", str(first), "--probe", "flow"]).exit_code == 0
    result = runner.invoke(app, ["report", str(sweep_dir)])
    assert result.exit_code == 0, result.output
    return sweep_dir


@pytest.mark.slow
def test_report_is_self_contained_and_escaped(sweep):
    html = (sweep / "report.html").read_text()
    assert HOSTILE not in html and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    assert "<script" not in html  # the page runs no code at all
    sources = re.findall(r'(?:src|href)="([^"]*)"', html)
    assert sources and all(s.startswith(("data:image/png;base64,", "#")) for s in sources)  # in-page links only
    sections = re.findall(r'<section class="run" id="run-([0-9a-f]{12})"', html)
    assert len(sections) == 2
    links = set(re.findall(r'href="#run-([0-9a-f]{12})"', html))
    assert links == set(sections)  # every phase-table cell links to an existing run section
    assert 'class="phase-table"' in html and "flow" in html  # the analysed run shows its analysis


def test_a_run_trained_a_few_steps_reports_its_hostile_profile_escaped(tmp_path):
    """The fast tier's report: one run trained in process, its hostile profile label escaped, no script, no link
    out of the page (the two-run sweep above checks the rest)."""
    from reasonlab.config import resolve
    from reasonlab.train.run import train_run

    raw = tiny_run_dict(train={"epochs": 1})
    raw["profile"] = f"tiny {HOSTILE}"
    run_dir, summary = train_run(resolve(raw), tmp_path, progress=False, log=lambda _: None)
    result = runner.invoke(app, ["report", str(run_dir)])
    assert result.exit_code == 0, result.output
    html = (run_dir / "report.html").read_text()
    assert HOSTILE not in html and "<script" not in html and "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    assert re.findall(r'<section class="run" id="run-([0-9a-f]{12})"', html) == [summary["run_id"]]
    assert all(s.startswith(("data:image/png;base64,", "#")) for s in re.findall(r'(?:src|href)="([^"]*)"', html))


def _visible(html: str) -> str:
    """The page without the folded-away configs (which hold the profile label too)."""
    return re.sub(r"<details>.*?</details>", "", html, flags=re.S)


def _section(html: str, run_id: str) -> str:
    return html.split(f'id="run-{run_id}"', 1)[1].split("</section>", 1)[0]


@pytest.mark.slow
def test_report_structure_contents_headers_headlines_and_back_links(sweep):
    html = (sweep / "report.html").read_text()
    ids = re.findall(r'<section class="run" id="run-([0-9a-f]{12})"', html)
    contents = html.split('<nav id="contents">', 1)[1].split("</nav>", 1)[0]
    assert set(re.findall(r'href="#([^"]+)"', contents)) == {"phase", *(f"run-{i}" for i in ids)}
    for run_id in ids:
        section = _section(html, run_id)
        cfg = yaml.safe_load((sweep / run_id / "config.yaml").read_text())
        header = re.search(r'<p class="run-header">([^<]*)</p>', section).group(1)
        assert f"init.gamma={cfg['init']['gamma']}" in header and "model.depth=2" in header and "seed=1" in header
        assert 'href="#contents"' in section and 'href="#phase"' in section  # back-links
        # each figure by its label with its stored name beside it; captions without file paths
        assert "held-out (4,3) · train keys · inferential (heldout/4-3/train_keys/inferential)" in section
        captions = re.findall(r"<figcaption>([^<]*)</figcaption>", section)
        assert captions and not any(".png" in c or "/" in c for c in captions)
        # no duplicates: the training curves once per run, the shared profile only at the top
        assert captions.count("Training loss, accuracies over training and the held-out answers at the end") == 1
    assert _visible(html).count("tiny &lt;script&gt;") == 1
    phase = html.split('<section id="phase">', 1)[1].split("</section>", 1)[0]
    assert "Cells over γ × seed" in phase and "<th>seed \\ γ</th>" in phase and "init.gamma" not in phase
    analysed = next(i for i in ids if (sweep / i / "analysis").is_dir())
    section = _section(html, analysed)
    assert "Information flow (final checkpoint)" in section
    assert re.search(r'<p class="headline">layer 1: last→key [0-9.]+', section)  # the analysis headline


@pytest.mark.slow
def test_report_derives_a_headline_the_analysis_file_lacks(sweep, tmp_path):
    """Analyses written before the headline was saved in their JSON still show one."""
    import shutil

    run_dir = next(p for p in sweep.iterdir() if (p / "analysis").is_dir())
    copy = tmp_path / run_dir.name
    shutil.copytree(run_dir, copy)
    numbers = json.loads((copy / "analysis" / "final" / "flow.json").read_text())
    assert numbers.pop("headline").startswith("layer 1:")
    (copy / "analysis" / "final" / "flow.json").write_text(json.dumps(numbers))
    assert runner.invoke(app, ["report", str(copy)]).exit_code == 0
    assert re.search(r'<p class="headline">layer 1: ', (copy / "report.html").read_text())


def test_sweep_cells_take_the_most_common_label():
    from reasonlab.report.html import sweep_cells

    rows = [{"run_id": f"r{i}", "a": a, "b": b, "label": lab}
            for i, (a, b, lab) in enumerate([(1, 1, "symmetric"), (1, 1, "symmetric"), (1, 1, "other"),
                                             (2, 1, "inferential")])]
    cells = sweep_cells(rows, "a", "b")
    assert cells[(1, 1)]["label"] == "symmetric" and len(cells[(1, 1)]["runs"]) == 3
    assert cells[(2, 1)]["colour"] != cells[(1, 1)]["colour"]


def test_sweep_axes_go_by_readable_names_in_tables_and_on_figures(tmp_path):
    """One table of axis names: short in the report's phase tables, with what they measure on figure axes."""
    from reasonlab.plots.phase import axis_label
    from reasonlab.report.html import _sweep_part

    rows = [{"run_id": f"r{g}{d}{wd}", "init.gamma": g, "model.depth": d, "train.weight_decay": wd, "label": "other"}
            for g in (0.3, 0.9) for d in (2, 3) for wd in (0.0, 0.1)]
    part = _sweep_part(tmp_path, rows, ["init.gamma", "model.depth", "train.weight_decay"])
    assert (part["x"], part["y"]) == ("γ", "depth")
    assert [t["title"] for t in part["tables"]] == ["weight decay = 0.0", "weight decay = 0.1"]
    assert axis_label("init.gamma") == "γ (initialization rate: std = d_in^-γ)"
    assert axis_label("model.depth") == "depth (blocks)" and axis_label("train.base_lr") == "base lr"


@pytest.mark.slow
def test_report_of_one_run_and_a_bad_target(sweep, tmp_path):
    from reasonlab.plots.run import plot_run

    run_dir = next(p for p in sweep.iterdir() if (p / "summary.json").is_file())
    plot_run(run_dir)  # as `reasonlab train` leaves it: figures/run.png holds the curves, drawn once in the page
    assert runner.invoke(app, ["report", str(run_dir)]).exit_code == 0
    html = (run_dir / "report.html").read_text()
    assert html.count('<section class="run"') == 1 and 'id="phase"' not in html
    assert html.count("Training loss, accuracies over training") == 2  # one figure: its alt text and caption
    assert html.count("Profile: ") == 1 and _visible(html).count("tiny &lt;script&gt;") == 1
    result = runner.invoke(app, ["report", str(tmp_path)])
    assert result.exit_code == 2 and "neither a finished run" in result.output
    assert not (tmp_path / "report.html").exists()


def _chromium(page: Path, out: Path, action: str) -> tuple[str, str, list[str]]:
    """Open ``page`` and take a screenshot or dump the DOM (``action``; headless Chromium exits after it):
    (stdout, stderr, URLs the page itself requested, from Chromium's net log)."""
    net = out / "net.json"
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={out / 'profile'}", f"--log-net-log={net}", action,
                           page.as_uri()], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    log = json.loads(net.read_text())
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    requested = [e["params"]["url"] for e in log["events"] if e["type"] == start
                 and "file://" in e["params"].get("network_isolation_key", "")  # initiated by the page, not the
                 and not e["params"]["url"].startswith(("file:", "data:"))]    # browser's own services
    return proc.stdout, proc.stderr, requested


def _console(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (the README's test command installs "
                                             "Debian's chromium where apt is available)")
def test_report_opens_in_headless_chromium(sweep, tmp_path):
    control = tmp_path / "control.html"  # the checks must catch what they look for
    control.write_text('<!DOCTYPE html><img src="http://reasonlab-test.invalid/x.png">'
                       '<script>console.error("control")</script>')
    (tmp_path / "c").mkdir()
    _, stderr, requested = _chromium(control, tmp_path / "c", f"--screenshot={tmp_path / 'c.png'}")
    assert requested == ["http://reasonlab-test.invalid/x.png"] and _console(stderr)

    (tmp_path / "r").mkdir()
    shot = tmp_path / "shot.png"
    _, stderr, requested = _chromium(sweep / "report.html", tmp_path / "r", f"--screenshot={shot}")
    assert requested == [] and _console(stderr) == []
    pixels = mpimg.imread(shot)
    assert pixels.shape[0] >= 1000 and pixels[..., :3].std() > 0.05  # a rendered page, not a blank one
    (tmp_path / "d").mkdir()
    dom, _, _ = _chromium(sweep / "report.html", tmp_path / "d", "--dump-dom")
    assert 'class="phase-table"' in dom and dom.count('class="run"') == 2 and "<img" in dom
    assert '<nav id="contents">' in dom and dom.count('class="run-header"') == 2 and 'class="headline"' in dom
    assert dom.count('href="#contents"') >= 3 and dom.count("<figcaption>") >= 3


def test_a_probe_value_that_is_nan_is_null_in_its_json_and_its_headline_does_not_fail(tmp_path, monkeypatch):
    """A probe may have no cell of a kind (NaN): the JSON stores null, the headline reads it as the JSON has it,
    and a headline that formats every value as a number falls back to showing nan rather than failing."""
    import json
    from types import SimpleNamespace

    from conftest import tiny_run

    from reasonlab.analysis import probes

    cfg = tiny_run()
    def probe(run) -> dict:  # as a kind's probe does through ``save``: its folder made, its numbers returned
        run.out.mkdir(parents=True, exist_ok=True)
        return {"v": float("nan"), "n": 3}

    strict = SimpleNamespace(probes={"p": probe},
                             headline=lambda name, numbers: f"v {numbers['v']:.2f} of {numbers['n']}")
    monkeypatch.setattr(probes, "load_trained", lambda *a: (cfg, None, None, "final"))
    monkeypatch.setattr(probes, "checkpoint_step", lambda *a: 7)
    monkeypatch.setattr(probes, "task_kind", lambda kind: strict)
    monkeypatch.setattr(probes, "make_task", lambda c: None)
    out = probes.analyze(tmp_path, ["p"])
    assert out["p"]["headline"] == "v nan of 3" and out["p"]["v"] is None
    assert json.loads((tmp_path / "analysis" / "final" / "p.json").read_text())["v"] is None
    lenient = SimpleNamespace(probes=strict.probes, headline=lambda name, numbers: f"v {numbers['v'] or '—'}")
    monkeypatch.setattr(probes, "task_kind", lambda kind: lenient)
    assert probes.analyze(tmp_path, ["p"])["p"]["headline"] == "v —"


def test_a_run_figure_names_only_the_shape_its_model_has_and_counts_whole_epochs():
    """The committed demo's Emb-MLP run: no depth in its title (the model has none), the title clear of the panels'
    own (a layout engine), whole-number epoch ticks, and each source in the colour the demo's figure gives it."""
    from reasonlab.plots.mixture import SOURCE_COLOURS
    from reasonlab.plots.run import run_figure

    run = next(p for p in sorted((Path(__file__).resolve().parents[2] / "results" / "demo" / "seed-1").iterdir())
               if (p / "summary.json").is_file())
    fig = run_figure(run)
    assert "depth=" not in fig._suptitle.get_text() and "d_model=400" in fig._suptitle.get_text()
    assert fig.get_layout_engine() is not None
    fig.canvas.draw()
    for ax in fig.axes:
        assert all(float(t).is_integer() for t in ax.get_xticks()), ax.get_title()
    colours = {line.get_label().split(" (")[-1].rstrip(")"): line.get_color() for line in fig.axes[1].get_lines()}
    assert colours["reasoning_test_acc"] == SOURCE_COLOURS["reasoning_test"]
