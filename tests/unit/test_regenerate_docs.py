"""scripts/regenerate_docs.py: the docs' figures and generated tables match the committed results/ (issue 41)."""

from __future__ import annotations

import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reasonlab.studies.sections import Repository

REPO = Path(__file__).resolve().parents[2]


def _run(*args: str, repo: Path = REPO) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(repo / "src")}
    return subprocess.run([sys.executable, str(repo / "scripts" / "regenerate_docs.py"), *args], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_check_passes_on_the_committed_tree():
    """Every figure under docs/figures has a generator with its inputs committed, every image a doc shows is drawn
    by one, and every generated table (the README's included) equals what results/ gives."""
    done = _run("--check")
    assert done.returncode == 0, done.stderr
    assert "docs match results/" in done.stdout


@pytest.mark.slow
def test_check_fails_on_a_hand_edited_table_and_an_orphan_figure(tmp_path):
    """A verdict of the README's table changed by hand, and a figure nothing generates, each fail the check by name."""
    clone = tmp_path / "repo"  # a copy of what the script reads: the working tree as it is
    for rel in ("docs", "scripts", "src", "results", "tests/reference"):
        shutil.copytree(REPO / rel, clone / rel, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "README.md", clone / "README.md")
    readme = clone / "README.md"
    text = readme.read_text()
    assert "| not reproduced |" in text
    readme.write_text(text.replace("| not reproduced |", "| reproduced |", 1))
    (clone / "docs" / "figures" / "orphan.png").write_bytes(b"\x89PNG")
    done = _run("--check", repo=clone)
    assert done.returncode == 1
    assert "docs/figures/orphan.png: no generator" in done.stderr
    (clone / "docs" / "figures" / "orphan.png").unlink()
    done = _run("--check", repo=clone)
    assert done.returncode == 1
    assert "README.md: a generated table differs" in done.stderr


def _docs(monkeypatch, root: Path = REPO):
    """The script's generators over one reading of ``root`` that writes nothing, as an invocation of it gathers
    them."""
    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    return importlib.import_module("regenerate_docs").Docs(Repository(root, writes=False))


def test_every_generator_has_its_inputs_committed(monkeypatch):
    """Nothing is pending on the committed tree (the coverage part of ``--check``, without drawing or tables)."""
    assert _docs(monkeypatch).pending() == []


def test_a_generator_without_its_inputs_is_named_with_the_command_that_commits_them(monkeypatch, capsys):
    """With a sweep's folder gone, each generator reading it is named by ``--pending`` (and ``--check``), with how
    many inputs are missing and the command that trains and packs them; the results tables, which read every
    sweep, name the generators whose commands commit what they miss."""
    monkeypatch.syspath_prepend(str(REPO / "scripts"))
    docs = importlib.import_module("regenerate_docs")
    before = set(docs.Docs(Repository(REPO, writes=False)).pending())
    gone = REPO / "results" / "addition-cpu"
    real_exists = Path.exists
    monkeypatch.setattr(Path, "exists", lambda p: not p.is_relative_to(gone) and real_exists(p))
    monkeypatch.setattr(sys, "argv", ["regenerate_docs.py", "--pending"])
    assert docs.main() == 0
    listed = {line.split(": ", 1)[0]: line for line in capsys.readouterr().out.splitlines() if line not in before}
    assert set(listed) == {"benchmark-addition-cpu", "addition-cpu", "what-reproduces", "verdicts", "verdict-readings"}
    from reasonlab.studies import benchmarks
    from reasonlab.studies.benchmarks.docs import committed

    sweep = committed(benchmarks.STUDIES["addition"], Repository(REPO))
    assert listed["addition-cpu"] == (
        f"addition-cpu: {3 * len(sweep.configs())} input(s) missing from the repository (first: results/addition-cpu/"
        f"{sweep.configs()[0].run_id()}/config.yaml); to commit them: reasonlab reproduce addition --profile cpu "
        "--out ~/reasonlab-runs && reasonlab pack ~/reasonlab-runs/addition-cpu results/addition-cpu")
    assert listed["what-reproduces"].endswith("committed by the commands of: benchmark-addition-cpu")
    monkeypatch.setattr(sys, "argv", ["regenerate_docs.py", "--check"])
    assert docs.main() == 1
    assert listed["addition-cpu"] in capsys.readouterr().err


def test_the_regime_docs_follow_what_is_committed(monkeypatch):
    """The regime sweep grows over days, so its docs are whatever is committed: every finished run of the grid in
    its group's table (— for cosines it cannot have), no unfinished snapshot, each group without a finished run
    saying so; its figures and both tables registered."""
    docs = _docs(monkeypatch)
    from reasonlab.studies import prontoqa_tinystories as lm
    from reasonlab.studies.prontoqa_tinystories import docs as lm_docs

    rb = lm_docs.LmDocs(Repository(REPO, writes=False))
    groups, measured = rb._lm("regime")
    sweep = REPO / lm_docs.LM_REGIME
    report = rb._regime_report()
    for group, cfgs in groups.items():
        section = report.split(f"#### {lm.TITLES[group]}\n")[1].split("\n#### ")[0]
        finished = [c for c in cfgs if (sweep / c.run_id() / "summary.json").is_file()]
        assert ("No finished run yet." in section) == (not finished), group
        for c in finished:
            m = measured[c.run_id()]
            lr = c.train.base_lr * c.train.lr_multiplier
            row = next(r for r in section.splitlines() if r.startswith(f"| {c.init.gamma} | {lr:g} | {c.seed} |"))
            assert row.endswith("| — | — | — | — |") == (m["cosine"] is None), row
            assert f"| {m['delta_L_train_window']:.3f} |" in row
    assert not any(p.name.removesuffix(".partial") in measured for p in sweep.glob("*.partial"))
    assert set(lm_docs._lm_figures("regime")) <= {o for g in docs.figures.values() for o in g.outputs}
    assert {"prontoqa-tinystories-regime", "prontoqa-tinystories-regime-reading"} <= set(docs.tables)


def test_a_figure_the_docs_show_is_missing_for_the_check_only(monkeypatch, tmp_path):
    """A figure newly shown in the docs, with its generator but not drawn yet: the check names it; the plain run
    (which draws it) does not refuse."""
    docs = _docs(monkeypatch)
    from reasonlab.studies.modular.docs import ROUTES
    from reasonlab.studies.sections import FIGURES

    name = next(iter(ROUTES))
    shown = REPO / FIGURES / f"{name}.png"
    real_is_file = type(shown).is_file
    monkeypatch.setattr(type(shown), "is_file", lambda p: p != shown and real_is_file(p))
    assert any(f"figures/{name}.png, which does not exist" in p for p in docs.coverage(check=True))
    assert not any(f"figures/{name}.png" in p for p in docs.coverage(check=False))
