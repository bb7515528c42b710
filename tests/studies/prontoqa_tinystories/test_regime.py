"""The PrOntoQA + TinyStories study in the spec's optimization regime: the `regime` grid keeps the ids of the runs
trained before it, the embedding cosines are read at absolute steps from the snapshots, and the report's verdicts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import reproduce_tiny, stop_after
from safetensors.torch import load_file

from reasonlab.build import build_model
from reasonlab.errors import Interrupted, StoreError
from reasonlab.evaluate.cosine import mean_pairwise_cosine
from reasonlab.kinds.text_mixture.data import TextMixtureTask, exclusive_tokens, load_tokenizer
from reasonlab.kinds.text_mixture.evaluate import delta_l_window
from reasonlab.store import Metrics, read_metrics, write_metrics
from reasonlab.studies import prontoqa_tinystories as study
from reasonlab.studies.prontoqa_tinystories import measure, report
from reasonlab.train import interrupt
from reasonlab.train.loop import Trainer
from reasonlab.train.run import train_run

TINY = ["task.n_per_source=40", "task.max_len=48", "task.train_eval_n=8", "model.d_model=16", "model.d_k=4",
        "model.d_v=4", "model.d_ff=32", "model.max_positions=48", "train.batch_size=16", "train.eval_every=1",
        "train.checkpoint_every=1"]
REPO = Path(__file__).parents[3]

# The 9 main runs of `prontoqa-tinystories-regime`, started from `reasonlab sweep --family mixture --profile
# lm-regime --grid seed=1,2,3 --grid init.gamma=0.3,0.5,0.8` before the study had this grid: (γ, seed) -> run id.
REGIME_MAIN = {(0.3, 1): "e05c3303777b", (0.3, 2): "a3e515e597d7", (0.3, 3): "70c16da6a73f",
               (0.5, 1): "598c1e3f6ffe", (0.5, 2): "7c21ef6af051", (0.5, 3): "b6078fad075d",
               (0.8, 1): "2fd3264f9b19", (0.8, 2): "db015c37f0fd", (0.8, 3): "4b9044761781"}


def test_regime_grid_keeps_the_ids_of_the_runs_in_training_and_adds_single_seed_arms():
    groups = study.study_configs("regime")
    assert {(c.init.gamma, c.seed): c.run_id() for c in groups["main"]} == REGIME_MAIN
    assert set(groups) == {"main", "bpe", "lr3e-5", "width256"}
    for arm in ("bpe", "lr3e-5", "width256"):
        assert sorted((c.init.gamma, c.seed) for c in groups[arm]) == [(0.3, 1), (0.5, 1), (0.8, 1)], arm
    assert {c.task.tokenizer for c in groups["bpe"]} == {"bpe"}
    for c in groups["lr3e-5"]:  # the whole schedule at 0.3x: peak 3e-5, cosine to 0.1x peak
        assert c.train.base_lr * c.train.lr_multiplier == pytest.approx(3e-5)
        assert c.train.floor_lr == pytest.approx(3e-6)
    assert {(c.model.d_model, c.model.n_heads * c.model.d_k, c.model.d_ff) for c in groups["width256"]} == \
        {(256, 256, 1024)}
    every = [c.run_id() for cs in groups.values() for c in cs]
    assert len(set(every)) == 18
    # the new task field keeps the ids of every word-tokenized run, and a BPE run is another run
    word = study.study_configs("regime", ["task.tokenizer=word"])["main"]
    assert {(c.init.gamma, c.seed): c.run_id() for c in word} == REGIME_MAIN


def test_the_cpu_grid_keeps_the_ids_of_its_committed_runs():
    from pathlib import Path

    committed = Path(__file__).resolve().parents[3] / "results" / "reasoning-bias" / "prontoqa-tinystories-cpu"
    ids = {c.run_id() for cs in study.study_configs("cpu").values() for c in cs}
    assert ids == {p.name for p in committed.iterdir() if (p / "summary.json").is_file()}


def test_cosines_at_absolute_steps_from_snapshots(tmp_path):
    """Stages: the initialization rebuilt from the seed, 5 %, every absolute step saved, the end; each the mean
    pairwise cosine of the saved weights' rows of the exclusive tokens; kept, so the run regenerates them without
    its checkpoints."""
    cfg = study.study_configs("regime", [*TINY, "train.epochs=3", "train.snapshot_steps=[2,5,1000]"])["main"][0]
    run_dir, summary = train_run(cfg, tmp_path, progress=False)
    assert summary["steps"] == 12
    # ΔL from the training subsets (primary) and the eval splits, beside both sources' losses, at every evaluation;
    # the summary holds ΔL̄ (5–50 % of the steps) and the final ΔL of both
    rows = Metrics.read(run_dir / "metrics.parquet")
    names = ("delta_L_train", "delta_L_eval", "prontoqa_train_loss", "tinystories_train_loss", "prontoqa_eval_loss",
             "tinystories_eval_loss")
    steps = {n: [s for s, _ in rows.series("pooled", n, clock="step")] for n in names}
    assert all(v == steps["delta_L_train"] for v in steps.values()) and steps["delta_L_train"][-1] == 12
    assert len(steps["delta_L_train"]) >= 3
    assert summary["delta_L_window"]["train"] == delta_l_window(rows, 12, "train") is not None
    assert summary["delta_L_window"]["eval"] == delta_l_window(rows, 12, "eval") is not None
    assert summary["final"]["delta_L_train"] == rows.series("pooled", "delta_L_train", clock="step")[-1][1]
    assert summary["final"]["delta_L_eval"] == rows.series("pooled", "delta_L_eval", clock="step")[-1][1]
    measured = measure.measure_run(cfg, run_dir, keep=False)
    for src in ("prontoqa", "tinystories"):  # each source's own loss over the same window and at the end
        series = rows.series("pooled", f"{src}_train_loss", clock="step")
        in_window = [v for step, v in series if 0.05 <= step / 12 <= 0.5]
        assert measured[f"loss_{src}_window"] == pytest.approx(sum(in_window) / len(in_window))
        assert measured[f"loss_{src}_final"] == series[-1][1]
    first = measure.embedding_cosines(cfg, run_dir)
    assert list(first["cosine"]) == ["init", "early (step 1, 5%)", "step 2", "step 5", "final (step 12)"]
    tok = load_tokenizer((run_dir / "tokenizer.json").read_text())
    task = TextMixtureTask(cfg.task)
    docs = task.documents(cfg.seed)
    pq, ts = exclusive_tokens(tok, docs["prontoqa"][0], docs["tinystories"][0])
    assert first["n_exclusive"] == (len(pq), len(ts)) and first["tokens"]["prontoqa"] == [tok.decode([i]) for i in pq]
    for stage, name in (("step 5", "snapshot-5"), ("step 2", "snapshot-2"), ("final (step 12)", "step-12")):
        w = load_file(run_dir / "checkpoints" / f"{name}.safetensors")["embed.weight"]
        assert first["cosine"][stage] == {"prontoqa": mean_pairwise_cosine(w[pq]),
                                          "tinystories": mean_pairwise_cosine(w[ts])}, stage
    w0 = build_model(cfg, task.build(cfg.seed, docs)).embed.weight.detach()
    assert first["cosine"]["init"]["prontoqa"] == mean_pairwise_cosine(w0[pq])
    assert first["cosine"]["step 2"] != first["cosine"]["step 5"]
    shutil.rmtree(run_dir / "checkpoints")
    again = measure.embedding_cosines(cfg, run_dir)
    assert json.loads(json.dumps(again)) == json.loads(json.dumps(first))


def test_an_embedding_cosine_file_of_the_cpu_profile_format_is_still_read(tmp_path):
    cfg = study.study_configs("cpu")["main"][0]
    kept = {"run_id": cfg.run_id(), "n_exclusive": [81, 200],
            "cosine": {s: {"prontoqa": 0.1, "tinystories": 0.2} for s in ("init", "early (epoch 1)",
                                                                          "final (epoch 10)")}}
    (tmp_path / "analysis").mkdir()
    (tmp_path / "analysis" / "embedding-cosine.json").write_text(json.dumps(kept))
    got = measure.embedding_cosines(cfg, tmp_path)
    assert got["cosine"] == kept["cosine"] and got["n_exclusive"] == (81, 200) and got["tokens"] is None
    assert measure.stage_cosine(got, "early") == {"prontoqa": 0.1, "tinystories": 0.2}


def test_a_committed_runs_cosines_are_measured_again_from_its_logged_rows_and_kept_only_when_asked(tmp_path):
    """A committed regime run (logged cosines, its cosines file removed): measured again from its own files, the
    cosines are the committed ones; ``keep=False`` (regenerate_docs --check) writes nothing into the run."""
    committed = REPO / "results" / "reasoning-bias" / "prontoqa-tinystories-regime" / REGIME_MAIN[(0.3, 3)]
    run = tmp_path / committed.name
    shutil.copytree(committed, run, ignore=shutil.ignore_patterns("analysis"))
    cfg = next(c for cs in study.study_configs("regime").values() for c in cs if c.run_id() == run.name)
    kept = json.loads((committed / "analysis" / "embedding-cosine.json").read_text())["cosine"]
    again = measure.embedding_cosines(cfg, run, keep=False)["cosine"]
    # the committed ones, up to the last bits: the init stage is drawn again here, and another x86 CPU may sum in
    # another order than the machine that committed them
    assert again.keys() == kept.keys() and all(
        again[stage].keys() == kept[stage].keys()
        and all(again[stage][k] == pytest.approx(v, rel=1e-9, abs=1e-12) for k, v in kept[stage].items())
        for stage in kept)
    assert not (run / "analysis").exists()
    assert measure.embedding_cosines(cfg, run)["cosine"] == again
    assert json.loads((run / "analysis" / "embedding-cosine.json").read_text())["cosine"] == again


def _synthetic(groups, window, cosine):
    """Measured runs as ``measure_run`` gives them: ΔL̄ = window(γ, seed), cosines = cosine(γ, seed)."""
    return {c.run_id(): {"delta_L_train_window": window(c.init.gamma, c.seed),
                         "delta_L_eval_window": window(c.init.gamma, c.seed), "delta_L_train_final": 1.0,
                         "delta_L_eval_final": 1.0, "seed": c.seed, "cosine": cosine(c.init.gamma, c.seed),
                         "n_exclusive": (46, 200), "tokens": {"prontoqa": ["ump"], "tinystories": [" Lily"]},
                         "loss_prontoqa_window": 1 + abs(c.init.gamma - 0.5),
                         "loss_tinystories_window": 3 + c.init.gamma,
                         "loss_prontoqa_final": 0.5, "loss_tinystories_final": 2.0 + 0.1 * c.seed}
            for cs in groups.values() for c in cs}


STAGES = ("init", "early (step 450, 5%)", "step 500", "step 1000", "step 2000", "step 5000", "final (step 9000)")


def test_regime_report_verdicts_on_synthetic_runs():
    groups = study.study_configs("regime")

    def cosine(gamma, seed):  # PrOntoQA-only below TinyStories-only at steps 500 and 1000, in every seed
        return {s: {"prontoqa": 0.1, "tinystories": 0.4 if s in ("step 500", "step 1000") else 0.05}
                for s in STAGES}

    rising = _synthetic(groups, lambda g, s: g + 0.01 * s, cosine)
    text = report.summary_markdown("regime", groups, rising, "timing")
    assert ("ΔL̄ rises with γ, 0.3 < 0.5 < 0.8 in the seed means (per γ, mean [min, max]: 0.3: 0.320 [0.310, 0.330]; "
            "0.5: 0.520 [0.510, 0.530]; 0.8: 0.820 [0.810, 0.830]): **held**.") in text
    assert ("- main, γ 0.8 (the smallest initialization), cosine contrast (PrOntoQA-only below TinyStories-only, "
            "in every seed, 3 seeds): **held** early at step 500, step 1000 (not at early (step 450, 5%), step 2000, "
            "step 5000); at the end (final (step 9000)): did not hold.") in text
    assert "| main | 0.8 | step 500 | 3 | 46 / 200 | 0.100 [0.100, 0.100] | 0.400 [0.400, 0.400] |" in text
    assert "| paper | small init | early | | | 0.123 | 0.531 | 0.408 |" in text
    assert ("- bpe, γ 0.8 (the smallest initialization), cosine contrast (PrOntoQA-only below TinyStories-only, 1 "
            "seed: an observation, with no spread to test it against): **showed** early") in text  # a one-seed arm
    # each source's own loss beside the ratio, and the γ at which each is lowest over the window
    assert "| 0.8 | 3 | 1.300 [1.300, 1.300] | 3.800 [3.800, 3.800] | 0.500 [0.500, 0.500] | 2.200 [2.100, 2.300] |" \
        in text
    assert "Lowest over the window: PrOntoQA at γ 0.5, TinyStories at γ 0.3." in text
    for title in ("γ with GPT-2 BPE tokens", "γ at peak lr 3e-5", "γ at width 256"):
        assert f"## {title}" in text
    assert "ΔL̄ rises with γ at peak lr 3e-05 (mean over seeds per γ: 0.3: 0.310, 0.5: 0.510, 0.8: 0.810): rose in " \
           "the seed means (1 seed at some γ: an observation" in text
    # the seeds overlap: the means rise, but not beyond the spread; a fall: did not hold
    noisy = _synthetic(groups, lambda g, s: g + 0.3 * s, cosine)
    assert "0.8 in the seed means" in (t := report.summary_markdown("regime", groups, noisy, "timing"))
    assert "**not separable from noise**" in t.split("ΔL̄ rises with γ, ")[1].split("\n")[0]
    falling = _synthetic(groups, lambda g, s: 1 - g, lambda g, s: {x: {"prontoqa": 0.5, "tinystories": 0.1}
                                                                   for x in STAGES})
    t = report.summary_markdown("regime", groups, falling, "timing")
    assert "ΔL̄ rises with γ, 0.3 < 0.5 < 0.8 in the seed means" in t and \
        t.split("ΔL̄ rises with γ, ")[1].split("\n")[0].endswith("**did not hold**.")
    assert "**did not hold** early (at none of early (step 450, 5%), step 500, step 1000, step 2000, step 5000); " \
           "at the end (final (step 9000)): did not hold" in t


def test_a_group_without_a_finished_run_says_so_and_a_run_without_cosines_shows_dashes():
    """The report of a sweep whose arms are still queued: each arm says it has no finished run; per run, the early
    and final cosines beside ΔL, — where a run's cosines cannot be had."""
    groups = study.study_configs("regime")
    measured = _synthetic({"main": groups["main"]}, lambda g, s: g,
                          lambda g, s: {x: {"prontoqa": 0.1, "tinystories": 0.4 if x.startswith("early") else 0.2}
                                        for x in STAGES})
    measured[groups["main"][0].run_id()]["cosine"] = None  # γ 0.3, seed 1
    text = report.summary_markdown("regime", groups, measured, "")
    for title in ("γ with GPT-2 BPE tokens", "γ at peak lr 3e-5", "γ at width 256"):
        assert f"## {title}" in text and text.split(f"## {title}")[1].split("\n## ")[0].strip().endswith(
            "No finished run yet.")
    assert "| 0.3 | 0.0001 | 1 | 0.300 | 0.300 | 1.000 | 1.000 | — | — | — | — |" in text
    assert "| 0.3 | 0.0001 | 2 | 0.300 | 0.300 | 1.000 | 1.000 | 0.100 | 0.400 | 0.100 | 0.200 |" in text
    # over seeds, γ 0.3's ΔL rests on its 3 seeds and its cosines on the 2 that have them
    over = text.split("### Over seeds")[1]
    assert "| 0.3 | 3 (2 with cosines) |" in over and "| 0.5 | 3 |" in over


def test_contrast_verdict_needs_every_seed():
    pairs = {"init": [(0.0, 0.0)], "step 500": [(0.1, 0.4), (0.3, 0.2)], "final (step 900)": [(0.1, 0.2), (0.1, 0.3)]}
    assert report.contrast_verdict(pairs) == "**did not hold** early (at none of step 500); at the end " \
                                            "(final (step 900)): held"
    assert report.contrast_verdict({"init": [(0.0, 0.1)]}).startswith("not testable early")
    # one seed: an observation, not "held"
    assert report.contrast_verdict({"step 500": [(0.1, 0.4)], "final (step 900)": [(0.3, 0.2)]}) == \
        "**showed** early at step 500; at the end (final (step 900)): did not show"


@pytest.mark.slow
def test_the_cosines_a_run_logs_survive_a_stop_after_a_snapshot_and_the_loss_of_its_snapshots(tmp_path, monkeypatch):
    """A run logs its cosines every epoch and at every snapshot. Stopped mid-epoch just after a snapshot, it resumes
    to the rows of a run never stopped (the snapshot's kept once); with only its newest checkpoint left, as a pack
    restored on a new machine holds, its stages are still read, from the metrics, to the same numbers. A run that
    logged none and lost its snapshots is refused in one line: its ΔL stays in the sweep's tables, its cosines are
    left out of them."""
    cfg = study.study_configs("regime", [*TINY, "train.epochs=3", "train.snapshot_steps=[2,5]"])["main"][0]
    ref_dir, _ = train_run(cfg, tmp_path / "ref", progress=False)
    logged = Metrics.read(ref_dir / "metrics.parquet").series("weights", "cosine:prontoqa", clock="step")
    assert [s for s, _ in logged] == [1, 2, 4, 5, 8, 12]  # the 5 % snapshot, steps 2 and 5, every epoch's end
    stop_after(monkeypatch, Trainer, "train_step", 6)  # epoch 2 of 4 steps each, one step after the snapshot at 5
    with pytest.raises(Interrupted):
        train_run(cfg, tmp_path / "stopped", progress=False)
    monkeypatch.undo()
    interrupt._asked = False
    run_dir, _ = train_run(cfg, tmp_path / "stopped", progress=False)
    assert read_metrics(run_dir / "metrics.parquet") == read_metrics(ref_dir / "metrics.parquet")
    reference = measure.embedding_cosines(cfg, ref_dir)
    for name in [p.name for p in (run_dir / "checkpoints").iterdir() if not p.name.startswith("step-12")]:
        (run_dir / "checkpoints" / name).unlink()
    assert measure.embedding_cosines(cfg, run_dir) == reference
    assert list(reference["cosine"]) == ["init", "early (step 1, 5%)", "step 2", "step 5", "final (step 12)"]

    (run_dir / "analysis" / "embedding-cosine.json").unlink()  # a run of before the logged cosines
    write_metrics(run_dir / "metrics.parquet", [r for r in read_metrics(run_dir / "metrics.parquet")
                                                if not r.metric.startswith("cosine:")], cfg.run_id())
    with pytest.raises(StoreError, match="not all in the store; train the run again"):
        measure.embedding_cosines(cfg, run_dir)
    measured = measure.measure_sweep([cfg], run_dir.parent)[cfg.run_id()]
    assert measured["cosine"] is None and measured["delta_L_train_window"] is not None
    groups = {"main": [cfg]}
    text = report.summary_markdown("regime", groups, {cfg.run_id(): measured}, "")
    assert f"| {measured['delta_L_train_window']:.3f} |" in text and "Per run, PrOntoQA-only" in text
    assert f"seed {cfg.seed} (" not in text.split("Per run, PrOntoQA-only")[1]  # no cosine line for it


def test_reproduce_regime_skips_the_runs_a_plain_sweep_finished_and_regenerates_without_checkpoints(tmp_path):
    """The main runs trained by `reasonlab sweep` under the study's sweep name are found and skipped; the arms
    train; the report comes back the same from the committed files alone."""
    from typer.testing import CliRunner

    from reasonlab.cli import app

    tiny = [*TINY, "train.epochs=2", "train.snapshot_steps=[2,4]"]
    args = ["sweep", "--family", "mixture", "--profile", "lm-regime", "--grid", "seed=1,2,3", "--grid",
            "init.gamma=0.3,0.5,0.8", "--workers", "2", "--out", str(tmp_path), "--name", "prontoqa-tinystories-regime"]
    for item in tiny:
        args += ["--set", item]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    reproduce_tiny("prontoqa-tinystories", tmp_path, tiny, profile="regime")
    sweep_dir = tmp_path / "prontoqa-tinystories-regime"
    summary = (sweep_dir / "summary.md").read_text()
    assert "18 runs (9 already finished before this invocation, 0 failed)" in summary
    assert "| main | 0.8 | step 2 | 3 |" in summary and "| main | 0.8 | step 4 | 3 |" in summary
    assert "| bpe | 0.8 | step 4 | 1 |" in summary and "| width256 | 0.3 | init | 1 |" in summary
    assert "ΔL̄ rises with γ, 0.3 < 0.5 < 0.8 in the seed means" in summary
    for name in ("delta-l", "cosine"):
        assert (sweep_dir / "figures" / f"{name}.png").is_file(), name
    bpe_run = next(c for c in study.study_configs("regime", tiny)["bpe"])
    assert json.loads((sweep_dir / bpe_run.run_id() / "tokenizer.json").read_text())["kind"] == "bpe"
    for ckpt in sweep_dir.glob("*/checkpoints"):
        shutil.rmtree(ckpt)
    reproduce_tiny("prontoqa-tinystories", tmp_path, tiny, profile="regime")
    again = (sweep_dir / "summary.md").read_text()
    assert again.split("![ΔL]")[1] == summary.split("![ΔL]")[1]
