"""Run ids name directories in users' stores and runs cited in the docs: a refactor must not move them.

``data/run_ids.json`` records, before any refactor, the run id of every shipped profile (resolved with its
default seed) and, per study grid, the number of runs and a digest of their sorted ids. Regenerate it only
for a deliberate change of a run's identity, and say so in the commit.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path

import pytest

from reasonlab.config import raw_config, resolve
from reasonlab.sweep.grid import sweep_configs

RECORDED = json.loads((Path(__file__).resolve().parents[1] / "data" / "run_ids.json").read_text())


def shipped_profiles() -> list[str]:
    return sorted(p.stem for p in Path(str(resources.files("reasonlab"))).glob("kinds/*/profiles/*.yaml"))


def test_every_shipped_profile_is_recorded():
    assert shipped_profiles() == sorted(RECORDED["profiles"])


@pytest.mark.parametrize("stem", sorted(RECORDED["profiles"]))
def test_shipped_profile_keeps_its_run_id(stem):
    study, profile = stem.split("-", 1)
    assert resolve(raw_config(None, profile, [], study)).run_id() == RECORDED["profiles"][stem]


def study_specs():
    from reasonlab.studies import benchmarks, modular_phase
    from reasonlab.studies.anchor import study as anchor

    studies = {"anchor-phase": anchor.PHASE, "anchor-complexity": anchor.COMPLEXITY, "anchor-lr-wd": anchor.LR_WD,
               "modular-phase": modular_phase.STUDY, **benchmarks.STUDIES}
    # a demo arm's runs are pinned by its committed runs (tests/unit/test_cli_choices.py)
    return {f"{name}/{p}": study.spec(p) for name, study in studies.items() for p, arm in study.arms.items()
            if arm.demo is None}


def test_study_grids_keep_their_run_ids():
    specs = study_specs()
    assert sorted(specs) == sorted(RECORDED["study_grids"])
    for key, spec in specs.items():
        ids = sorted(c.run_id() for c in sweep_configs(spec)[0])
        digest = hashlib.sha256(",".join(ids).encode()).hexdigest()[:16]
        assert {"runs": len(ids), "sha256": digest} == RECORDED["study_grids"][key], key


# The grids before their arms grew, restricted to what they were: they still give exactly the old runs, so every
# run trained, committed or cited before keeps its id. The arms took 3 seeds on 2026-12-05 (the benchmarks' on
# 2026-12-07); the paper-width arm took the γ between its contrast (0.7, 0.75) on 2026-12-07.
EARLIER_GRIDS = {"anchor-phase/cpu": ("seed=1,2", 30, "ab29c49d35fed857"),
                 "anchor-complexity/cpu": ("seed=2", 21, "90abcb378bcbdf4a"),
                 "anchor-lr-wd/cpu": ("seed=1", 9, "066674f10932e510"),
                 "modular-phase/cpu": ("seed=1,2", 32, "93ab87728212281a"),
                 "addition/cpu": ("seed=1", 6, "25f24e9aefa29205"), "scan/cpu": ("seed=1", 6, "a62b813c553c6c8d"),
                 "cogs/cpu": ("seed=1", 6, "43fe4f34f00cc69b"), "prontoqa/cpu": ("seed=1", 6, "596ff1799ac332b8"),
                 "anchor-phase/cpu-wide": ("init.gamma=0.5,0.8", 6, "5eb1bec2f89f7715")}


@pytest.mark.parametrize("key", sorted(EARLIER_GRIDS))
def test_the_grown_arms_hold_their_earlier_runs(key):
    restriction, runs, digest = EARLIER_GRIDS[key]
    ids = sorted(c.run_id() for c in sweep_configs(study_specs()[key], grid=[restriction])[0])
    assert (len(ids), hashlib.sha256(",".join(ids).encode()).hexdigest()[:16]) == (runs, digest)


def test_the_paper_width_arm_is_the_profile_swept_over_its_contrast():
    """`reproduce anchor-phase --profile cpu-wide` trains exactly the runs of `reasonlab sweep --profile cpu-wide
    --grid init.gamma=0.5,0.7,0.75,0.8 --grid seed=1,2,3` (the docs' earlier search), the profile's own run among
    them."""
    from reasonlab.studies.anchor import study as anchor
    from reasonlab.sweep.grid import SweepSpec

    arm = {c.run_id() for c in sweep_configs(anchor.PHASE.spec("cpu-wide"))[0]}
    swept = sweep_configs(SweepSpec(name="search", family="anchor", profile="cpu-wide", grid={}),
                          grid=["init.gamma=0.5,0.7,0.75,0.8", "seed=1,2,3"])[0]
    assert arm == {c.run_id() for c in swept} and len(arm) == 12
    assert RECORDED["profiles"]["anchor-cpu-wide"] in arm


def test_the_integrated_decay_arm_is_the_paper_width_arm_with_weight_decay_0_28():
    """`--profile cpu-wide-wd` trains the `cpu-wide` contrast's runs (γ 0.5, 0.8) with weight decay 0.28 and nothing
    else changed, the runs of `reasonlab sweep --profile cpu-wide --set train.weight_decay=0.28` over that grid; its
    labels say so."""
    from reasonlab.studies.anchor import study as anchor
    from reasonlab.sweep.grid import SweepSpec

    wide, wd = (sweep_configs(anchor.PHASE.spec(arm), grid=["init.gamma=0.5,0.8"])[0]
                for arm in ("cpu-wide", "cpu-wide-wd"))
    assert [c.model_copy(update={"train": c.train.model_copy(update={"weight_decay": 0.28})}).model_dump(
        exclude={"profile"}) for c in wide] == [c.model_dump(exclude={"profile"}) for c in wd]
    swept = sweep_configs(SweepSpec(name="search", family="anchor", profile="cpu-wide", grid={}),
                          grid=["init.gamma=0.5,0.8", "seed=1,2,3"], overrides=["train.weight_decay=0.28"])[0]
    assert {c.run_id() for c in wd} == {c.run_id() for c in swept} and len(wd) == 6
    assert all("train.weight_decay=0.28" in c.profile for c in wd)


def test_the_fig8_runs_keep_their_seed_1_ids_now_that_every_seed_has_them():
    """Fig. 8's two runs trained at seed 1 only until 2026-12-07; the committed ones keep their ids."""
    from reasonlab.studies.reasoning_bias import fig8_configs, study_configs

    assert [c.run_id() for c in fig8_configs("cpu", [], 1)] == ["ef6b750977ff", "054fd3e83e12"]
    assert len(study_configs("cpu")) == 12 + 2 * 3


def test_the_cell_protocol_arm_is_the_integrated_decay_arm_over_five_peak_learning_rates():
    """`--profile cpu-wide-cell` trains the `cpu-wide-wd` runs (peak lr 2.5e-4) and the same contrast at four more
    peak learning rates spanning the paper's grid (1e-4 … 3e-4), seeds outermost so each finished seed is a cell."""
    from reasonlab.studies.anchor import study as anchor

    cell = sweep_configs(anchor.PHASE.spec("cpu-wide-cell"))[0]
    wd = sweep_configs(anchor.PHASE.spec("cpu-wide-wd"))[0]
    assert {c.run_id() for c in wd} < {c.run_id() for c in cell} and len(cell) == 30
    assert sorted({round(c.train.base_lr * c.train.lr_multiplier, 8) for c in cell}) == [1e-4, 1.5e-4, 2e-4, 2.5e-4,
                                                                                          3e-4]
    assert [c.seed for c in cell] == sorted(c.seed for c in cell)
