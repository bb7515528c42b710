"""The PrOntoQA + TinyStories study end to end on a tiny override, its ordering verdict and its kept cosine files."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import reproduce_tiny


@pytest.mark.slow
def test_reproduce_prontoqa_tinystories_end_to_end_on_a_tiny_override(tmp_path):
    tiny = ["task.n_per_source=40", "task.max_len=48", "task.train_eval_n=8", "model.d_model=16", "model.d_k=4",
            "model.d_v=4", "model.d_ff=32", "model.max_positions=48", "train.epochs=2", "train.batch_size=16"]
    reproduce_tiny("prontoqa-tinystories", tmp_path, tiny)
    sweep_dir = tmp_path / "prontoqa-tinystories-cpu"
    summary = (sweep_dir / "summary.md").read_text()
    assert summary.count("| 0.8 |") >= 3 and "γ without any LayerNorm" in summary and "0.123" in summary
    assert "(ΔL̄ > 0, E2)" in summary and "target ≥ 0.2:" in summary
    for name in ("delta-l", "cosine"):
        assert (sweep_dir / "figures" / f"{name}.png").is_file(), name
    assert "### Over seeds" in summary and "| 1.0 | 3 |" in summary
    assert "ΔL̄ rises with γ, 0.3 < 0.5 < 0.8 < 1.0 in the seed means" in summary
    # every run's summary carries its ΔL̄, which the sweep's results table shows beside the axes
    from reasonlab.kinds.text_mixture.evaluate import delta_l_window
    from reasonlab.store import Metrics
    from reasonlab.sweep.results import read_results

    table = {r["run_id"]: r for r in read_results(sweep_dir)}
    for run_dir in (p.parent for p in sweep_dir.glob("*/summary.json")):
        run = json.loads((run_dir / "summary.json").read_text())
        expected = delta_l_window(Metrics.read(run_dir / "metrics.parquet"), run["steps"])
        assert expected is not None and run["delta_L_window"]["train"] == expected
        assert table[run["run_id"]]["delta_L_window.train"] == expected
    # a committed sweep has no checkpoints: its summary comes back from the runs' kept cosines, without training
    for ckpt in sweep_dir.glob("*/checkpoints"):
        shutil.rmtree(ckpt)
    (sweep_dir / "summary.md").unlink()
    reproduce_tiny("prontoqa-tinystories", tmp_path, tiny)
    assert (sweep_dir / "summary.md").read_text().split("## γ (with LayerNorm)")[1] == \
        summary.split("## γ (with LayerNorm)")[1]


def test_ordering_verdict_separates_rising_means_from_noise():
    from reasonlab.studies.prontoqa_tinystories.report import ordering_verdict

    assert ordering_verdict({0.3: [0.1, 0.2], 0.5: [0.3, 0.4], 0.8: [0.5, 0.6]}) == "**held**"
    assert ordering_verdict({0.3: [0.1, 0.4], 0.5: [0.3, 0.5]}).startswith("**not separable from noise**")
    assert ordering_verdict({0.3: [0.5, 0.6], 0.5: [0.3, 0.4]}) == "**did not hold**"
    assert "held" not in (one := ordering_verdict({0.3: [0.1], 0.5: [0.2]})) and "1 seed" in one
    assert ordering_verdict({0.3: [0.1]}).startswith("not testable")


def test_a_kept_cosine_file_not_of_this_run_is_refused(tmp_path):
    from reasonlab.errors import StoreError
    from reasonlab.studies.prontoqa_tinystories import study_configs
    from reasonlab.studies.prontoqa_tinystories.measure import embedding_cosines

    cfg = study_configs("cpu")["main"][0]
    kept = tmp_path / "analysis" / "embedding-cosine.json"
    kept.parent.mkdir()
    for text, says in (('{"cosine": {}}', "not an embedding-cosine file"),
                       ('{"run_id": "other", "cosine": {}, "n_exclusive": [1, 2]}', "written for run 'other'")):
        kept.write_text(text)
        with pytest.raises(StoreError, match=says):
            embedding_cosines(cfg, tmp_path)
