"""Anchor-study analyses (anchor spec §7) on constructed cases with known answers, and end to end from a run."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from conftest import tiny_run
from typer.testing import CliRunner

from reasonlab.cli import app
from reasonlab.kinds.anchor import analysis as an
from reasonlab.train.run import train_run


def test_flow_edges_of_a_hand_set_attention():
    T = 4
    pattern = np.zeros((2, T, T))
    pattern[0] = np.eye(T)  # layer 1: every token keeps itself
    pattern[1, 3] = [0.1, 0.6, 0.3, 0.0]  # layer 2: the last token reads token 1, then token 2
    pattern[1, :3] = np.eye(T)[:3]
    edges = an.flow_edges(pattern, threshold=0.25)
    assert (edges[-2].layer, edges[-2].src, edges[-2].dst, edges[-2].weight) == (1, 1, 3, 0.6)
    assert (edges[-1].src, edges[-1].dst, edges[-1].weight) == (2, 3, 0.3)
    assert len(edges) == 4 + 3 + 2 and all(e.weight >= 0.25 for e in edges)  # 0.1 is below the threshold


def test_flow_summary_reads_the_roles_at_each_sequences_key_position():
    n, T = 2, 6
    patterns = np.zeros((n, 1, T, T))
    key_pos = np.array([0, 2])
    patterns[0, 0, T - 1, 0] = 1.0  # sequence 0: last → key (position 0)
    patterns[1, 0, T - 1, 4] = 1.0  # sequence 1: last → a2 (position 2 + 2)
    patterns[1, 0, 3, 2] = 1.0  # sequence 1: a1 → key
    s = an.flow_summary(patterns, key_pos)
    assert s["last->key"] == [0.5] and s["last->a2"] == [0.5] and s["a1->key"] == [0.5] and s["a2->key"] == [0.0]


def test_mirror_merge_is_zero_when_mirror_pairs_coincide():
    rng = np.random.default_rng(0)
    centres = {(a, b): rng.normal(size=8) for a in (1, 2, 3) for b in (1, 2, 3)}
    pairs = [p for p in centres for _ in range(5)]
    symmetric = np.array([centres[tuple(sorted(p))] for p in pairs])  # (a, b) and (b, a) share a centre
    ordered = np.array([centres[p] for p in pairs])
    assert an.mirror_merge(symmetric, pairs) == pytest.approx(0.0)
    assert an.mirror_merge(ordered, pairs) > 0.5


def test_boxed_contrast():
    cos = np.array([[1.0, 0.0], [0.2, 0.8]])
    boxes = np.eye(2, dtype=bool)
    assert an.boxed_contrast(cos, boxes) == pytest.approx(0.9 - 0.1)


def test_condensation_groups_identical_rows():
    base = torch.eye(4)
    rows = torch.stack([base[0], 2 * base[0], base[0] + 0.01 * base[1], base[1], base[2]])
    c = an.condensation(rows, threshold=0.7)
    assert c.groups == [[0, 1, 2], [3], [4]] and list(c.order) == [0, 1, 2, 3, 4]
    assert c.cos[0, 1] == pytest.approx(1.0)
    s = c.scores(0.7)
    assert s["groups"] == 3 and s["largest_group_share"] == pytest.approx(3 / 5)
    assert s["pairs_above"] == pytest.approx(3 / 10)


def test_ordinal_structure_finds_a_chain():
    values = list(range(20, 60))
    gen = torch.Generator().manual_seed(0)
    u, w = torch.randn(16, generator=gen), torch.randn(16, generator=gen)
    chain = torch.stack([v * u + 0.01 * torch.randn(16, generator=gen) for v in values])
    s = an.ordinal_structure(chain, values)
    assert s["pc1_spearman"] == pytest.approx(1.0) and s["step3_cosine"] > 0.99 and s["step4_cosine"] > 0.99
    noise = torch.randn(len(values), 16, generator=gen) + 0 * w
    s = an.ordinal_structure(noise, values)
    assert abs(s["step3_cosine"]) < 0.2 and abs(s["random_step_cosine"]) < 0.2


def test_spectra_of_a_rank_one_matrix():
    model = torch.nn.Linear(5, 4, bias=False)
    with torch.no_grad():
        model.weight.copy_(torch.outer(torch.arange(1.0, 5.0), torch.ones(5)))
    s = an.singular_values(model)["weight"]
    assert s[0] > 1 and np.allclose(s[1:], 0, atol=1e-9)
    eig = an.covariance_spectrum(model.weight)
    assert eig[0] > 0 and np.allclose(eig[1:], 0, atol=1e-9)


@pytest.mark.slow
def test_analyze_cli_runs_every_anchor_analysis(tmp_path):
    run_dir, _ = train_run(tiny_run(train={"epochs": 2}), tmp_path / "runs", progress=False, log=lambda _: None)
    result = CliRunner().invoke(app, ["analyze", str(run_dir), "--key", "40"])
    assert result.exit_code == 0, result.output
    out = run_dir / "analysis" / "final"
    for name in ("flow", "representations", "fused", "condensation", "embedding", "spectra"):
        assert (out / f"{name}.json").is_file() and (out / f"{name}.png").is_file(), name
    flow = json.loads((out / "flow.json").read_text())
    assert flow["key"] == 40 and flow["pair"] == [4, 3] and flow["tokens"][4:6] == [4, 3]  # middle key position 3
    assert set(flow["mean_flow"]) == {"last->key", "last->a1", "last->a2", "a1->key", "a2->key"}
    assert flow["roles"] == {"3": "key", "4": "a1", "5": "a2"}
    # both figures come back from the saved files alone (what a committed analysis holds), into any folder
    from reasonlab.kinds.anchor.probes import draw_flow, draw_representations
    with np.load(out / "flow.npz") as arrays:
        assert tmp_path / "again" / "flow.png" in draw_flow(flow, arrays["pattern"], tmp_path / "again" / "flow")
    with np.load(out / "representations.npz") as arrays:
        drawn = draw_representations(json.loads((out / "representations.json").read_text()), dict(arrays),
                                     tmp_path / "again" / "representations")
    assert tmp_path / "again" / "representations.png" in drawn
    bad = CliRunner().invoke(app, ["analyze", str(run_dir), "--pair", "9,9"])
    assert bad.exit_code == 2 and "--pair" in bad.output and "Traceback" not in bad.output


@pytest.mark.slow
def test_analyses_over_saved_checkpoints(tmp_path):
    cfg = tiny_run(train={"epochs": 3, "checkpoint_every": 1})
    run_dir, _ = train_run(cfg, tmp_path / "runs", progress=False, log=lambda _: None)
    result = CliRunner().invoke(app, ["analyze", str(run_dir), "--over-time", "--probe", "condensation",
                                      "--probe", "flow"])
    assert result.exit_code == 0, result.output
    out = run_dir / "analysis" / "dynamics"
    steps = sorted(int(p.name.removeprefix("step-")) for p in (run_dir / "analysis").glob("step-*"))
    assert len(steps) == 3
    series = json.loads((out / "dynamics.json").read_text())
    assert sorted(map(int, series["flow"])) == steps and "mean_flow.last->key[1]" in series["flow"][str(steps[-1])]
    for name in ("flow-strip", "flow-scalars", "condensation-strip", "condensation-scalars", "accuracy"):
        assert (out / f"{name}.png").is_file(), name
    # --every: the checkpoints at multiples of its steps, and the last
    every = steps[1]
    again = CliRunner().invoke(app, ["analyze", str(run_dir), "--over-time", "--every", str(every), "--probe", "flow"])
    assert again.exit_code == 0, again.output
    picked = sorted(map(int, json.loads((out / "dynamics.json").read_text())["flow"]))
    assert picked == sorted({s for s in steps if s % every == 0} | {steps[-1]}) and picked != steps
    alone = CliRunner().invoke(app, ["analyze", str(run_dir), "--every", "2"])
    assert alone.exit_code == 2 and "--every" in alone.output and "--over-time" in alone.output
    assert "Traceback" not in alone.output


def test_scalars_flatten_nested_numbers():
    from reasonlab.analysis.probes import scalars

    assert scalars({"a": 1, "b": {"c": 0.5, "d": [0.1, 0.2]}, "e": "text", "f": True}) == {
        "a": 1.0, "b.c": 0.5, "b.d[0]": 0.1, "b.d[1]": 0.2}
