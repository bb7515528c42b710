"""``describe_run``: a run in one line, the same wherever a run is printed (no training)."""

from __future__ import annotations

import pytest
from conftest import tiny_run, tiny_run_dict

from reasonlab.config import resolve
from reasonlab.describe import describe_run
from reasonlab.record_schemas import RunSummary


def test_a_planned_run_reads_id_kind_profile_key_fields_and_length():
    cfg = tiny_run(profile="tiny", init={"gamma": 0.8}, seed=3)
    assert describe_run(cfg) == (f"{cfg.run_id()} · anchor · profile tiny · init.gamma=0.8 model.depth=2 seed=3 · "
                                 "4 epochs")


def test_a_long_profile_label_is_named_by_its_first_word_only():
    cfg = tiny_run(profile="lm-regime (reduced data and model: 800 documents per source; spec optimizer)")
    assert " · profile lm-regime · " in describe_run(cfg) and "reduced" not in describe_run(cfg)


def test_a_sweeps_axes_join_the_key_fields_once_and_a_finished_run_adds_steps_and_label():
    cfg = tiny_run(train={"weight_decay": 0.1})
    line = describe_run(cfg, ["seed", "train.weight_decay", "init.gamma+train.epochs"], "inferential", 96)
    fields = line.split(" · ")[3]
    assert fields == "init.gamma=0.5 model.depth=2 seed=1 train.weight_decay=0.1 init.gamma+train.epochs=0.5/4"
    assert line.endswith(" · 4 epochs / 96 steps · inferential") and " · profile custom · " in line


def test_the_gpt_scheme_shows_its_std_not_a_gamma():
    line = describe_run(tiny_run(init={"scheme": "gpt", "std": 0.04}))
    assert "init.scheme=gpt init.std=0.04 model.depth=2 seed=1" in line and "gamma" not in line


def test_a_kind_adds_its_phase_axes_and_a_model_without_depth_shows_its_kind():
    modular = tiny_run_dict()
    modular["task"] = {"kind": "modular", "p": 7, "n_shots": 4, "n_tasks": 8, "alpha": 0.6, "n_ood_tasks": 16,
                       "steps_per_epoch": 5, "eval_batches": 2, "eval_batch_size": 16}
    modular["model"].update(norm="pre", final_norm=True, positions="rope", tied_head=True, max_positions=16,
                            n_heads=2, head_bias=False)
    assert " · modular · " in describe_run(resolve(modular))
    assert "seed=1 task.n_tasks=8 task.alpha=0.6 · " in describe_run(resolve(modular))
    mlp = resolve({"task": {"kind": "mixture", "n_samples": 4000, "emb_mlp_form": True},
                   "model": {"kind": "emb_mlp"}, "init": {"gamma": 0.8}, "seed": 2})
    assert " · mixture · " in describe_run(mlp) and "init.gamma=0.8 model.kind=emb_mlp seed=2 · " in describe_run(mlp)


@pytest.mark.parametrize("label", ["symmetric", "not-fitted"])
def test_a_summary_describes_its_run_with_its_label_and_steps(label):
    cfg = tiny_run(profile="tiny")
    summary = RunSummary.model_validate({
        "run_id": cfg.run_id(), "profile": "tiny", "status": "finished", "label": label, "outcome": {"label": label},
        "final": {}, "epochs": 4, "steps": 40, "wall_time_s": 1.0, "n_params": 10, "device": "cpu", "threads": 1,
        "versions": {"reasonlab": "0", "torch": "0", "python": "3"}, "config": cfg.model_dump(mode="json")})
    assert summary.describe() == describe_run(cfg, label=label, steps=40)
    assert summary.describe().endswith(f" · 4 epochs / 40 steps · {label}")
