"""The modular-phase study: its three claims on constructed rows, `reproduce` end to end on a tiny override, and
the routes its docs draw (route R3's regression rule)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def _row(depth, n, alpha, seed, ood, peak=None, **extra):
    return {"model.depth": depth, "task.n_tasks": n, "task.alpha": alpha, "seed": seed,
            "final.ood_test_last_shot": ood, "best.ood_test_peak": ood if peak is None else peak, **extra}


def test_modular_phase_claims_on_constructed_rows():
    from reasonlab.studies.modular.report import depth_one_claim, rising_claim, task_count_claim

    rows = [_row(2, n, a, s, acc) for a in (0.5, 0.7) for s in (1, 2) for n, acc in ((8, 0.1), (64, 0.9))]
    held, lines = task_count_claim(rows)
    assert held and "seeds [1, 2]" in lines[-1]
    rows[-1]["final.ood_test_last_shot"] = 0.7  # α 0.7, seed 2 no longer reaches τ_good: one seed left
    assert task_count_claim(rows)[0] is False
    assert task_count_claim([_row(2, 8, 0.3, 1, 0.1)])[0] is None  # no α ≥ 0.5: not testable
    assert depth_one_claim([_row(1, 64, 0.7, 1, 0.3, peak=0.5), _row(2, 64, 0.7, 1, 0.9)])[0] is True
    assert depth_one_claim([_row(1, 64, 0.7, 1, 0.3, peak=0.85)])[0] is False  # a transient peak counts
    held, detail = depth_one_claim([_row(1, 64, 0.7, 1, 0.3), _row(2, 64, 0.7, 1, 0.4)])
    assert held is None and "no deeper run reached" in detail  # nothing generalized at any depth: not testable
    assert depth_one_claim([_row(1, 64, 0.7, 1, 0.3, peak=0.5)])[0] is None  # no deeper run to tell it from
    assert depth_one_claim(rows)[0] is None
    import numpy as np

    assert rising_claim(np.linspace(0.05, 0.95, 12))[0]
    assert rising_claim(np.array([0.27, 0.76, 0.78, 1.0, 0.99] + [1.0] * 7))[0]  # saturates: still a rise
    assert not rising_claim(np.full(12, 0.9))[0]  # flat: no rise with k
    assert not rising_claim(np.linspace(0.05, 0.3, 12))[0]  # rising, but by less than 0.5


@pytest.mark.slow
def test_reproduce_modular_phase_end_to_end_on_a_tiny_override(tmp_path):
    from conftest import reproduce_tiny

    from reasonlab.sweep.results import read_results

    tiny = ["task.n_shots=4", "model.d_model=16", "model.d_k=4", "model.d_v=4", "model.d_ff=32",
            "model.max_positions=12", "train.epochs=2", "task.steps_per_epoch=3", "task.eval_batches=1",
            "task.eval_batch_size=16", "train.warmup_epochs=0", "train.checkpoint_log=0"]
    reproduce_tiny("modular-phase", tmp_path, tiny, seeds="1,2")
    sweep_dir = tmp_path / "modular-phase-cpu"
    rows = read_results(sweep_dir)
    assert len(rows) == 4 * 2 * 2 * 2 and all(r["profile"].startswith("modular-cpu (reduced") for r in rows)
    summary = (sweep_dir / "summary.md").read_text()
    assert "O.o.d. generalization appears with the task count" in summary and "Depth 1 never" in summary
    assert "## Depth 2, early-stopped at t*" in summary and "Shot curve rises with k" in summary
    for name in ("phase-L1-final", "phase-L2-t_star", "shots"):
        assert (sweep_dir / "figures" / f"{name}.png").is_file(), name

    # the docs' section from the records alone: the summary's body at another heading level, without its figures
    from reasonlab.studies import modular_phase
    from reasonlab.studies.modular import report
    from reasonlab.sweep.grid import sweep_configs
    from reasonlab.sweep.runner import finished_rows, seed_axis

    configs = sweep_configs(modular_phase.STUDY.spec("cpu"), grid=seed_axis([1, 2]), overrides=tiny)[0]
    finished = finished_rows(configs, sweep_dir)
    measured = report.measure(finished, sweep_dir)
    assert "\n".join(report.report_lines(finished, measured)) in summary
    docs = "\n".join(report.report_lines(finished, measured, 4, False))
    assert "#### Depth 2, early-stopped at t*" in docs and "](figures/" not in docs


def test_a_route_draws_its_first_seed_and_holds_one_run_per_seed(tmp_path):
    """A route's folder may hold several seeds (route R3's second seed beside its first): its figure draws the first;
    two runs of one seed are refused by name rather than one of them drawn."""
    from reasonlab.errors import UserError
    from reasonlab.studies import modular_phase
    from reasonlab.studies.modular.docs import ROUTES, ModularDocs
    from reasonlab.studies.sections import Repository

    first = ModularDocs(Repository(REPO), modular_phase.STUDY).route_run("modular-grok")
    folder = tmp_path / ROUTES["modular-grok"][0]
    shutil.copytree(first, folder / first.name)
    docs = ModularDocs(Repository(tmp_path), modular_phase.STUDY)
    assert docs.route_run("modular-grok") == folder / first.name
    shutil.copytree(first, folder / "again" / first.name)
    with pytest.raises(UserError, match="two runs of seed 1"):  # a new reading: one reading keeps what it read
        ModularDocs(Repository(tmp_path), modular_phase.STUDY).route_run("modular-grok")


def test_route_r3_is_modular_regression_only_when_two_new_seeds_pass_both_scores():
    """Seeds 3–5 decide route R3: 2 passing → modular regression (counting every scored seed); fewer than 2 that can
    still pass → ratio matching; a seed not yet scored at both checkpoints keeps the verdict pending."""
    from reasonlab.studies.modular import route_r3 as r3

    assert r3.r3_verdict({1: True, 2: False, 3: True, 4: True}).endswith("3 of 4 seeds")
    assert r3.r3_verdict({3: False, 4: False}).startswith("**ratio matching**")
    assert r3.r3_verdict({3: True, 4: False}).startswith("pending")
    assert r3.r3_verdict({1: True, 2: True}).startswith("pending (seeds 3–5 scored: 0 of 3)")
