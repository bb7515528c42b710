"""Data-spec properties of the anchor-composition task (spec §2).

Over 400 lines: one test per property of the anchor data spec (§2), which has many.
"""

from __future__ import annotations

import pytest
import torch
from conftest import tiny_task
from pydantic import ValidationError

from reasonlab.config import ConfigError
from reasonlab.kinds.anchor.config import AnchorTaskConfig
from reasonlab.kinds.anchor.data import AnchorTask, symmetric_offsets
from reasonlab.tasks.base import EvalSet

PAPER_SHIFTS = {1: 5, 2: 1, 3: -2, 4: -8}


def locate(seq: torch.Tensor, anchors: list[int]) -> tuple[int, int, int, int]:
    """(key position, key, a1, a2) of one sequence; asserts there is exactly one adjacent anchor pair."""
    is_anchor = torch.isin(seq, torch.tensor(anchors))
    adjacent = torch.nonzero(is_anchor[:-1] & is_anchor[1:]).flatten().tolist()
    assert len(adjacent) == 1, f"expected one adjacent anchor pair in {seq.tolist()}"
    assert int(is_anchor.sum()) == 2, f"expected exactly two anchor tokens in {seq.tolist()}"
    i = adjacent[0]
    return i - 1, int(seq[i - 1]), int(seq[i]), int(seq[i + 1])


@pytest.fixture(scope="module")
def paper_data():
    task = AnchorTask(tiny_task())
    return task, task.build(seed=3)


def all_sets(data):
    """(name, pair, is_test_key_group, EvalSet) for every group."""
    for name, es in data.eval_sets.items():
        parts = name.split("/")
        if parts[0] == "heldout":
            pair, test = parts[1], parts[2] == "test_keys"
        else:
            pair, test = parts[1], parts[0] == "test"
        a, b = (int(x) for x in pair.split("-"))
        yield name, (a, b), test, es


# ---- the paper's examples and the mapping ------------------------------------------------------------------
def test_paper_examples():
    task = AnchorTask(AnchorTaskConfig())
    assert task.target_of(torch.tensor([23, 1, 2, 43, 46, 74, 54, 44, 72])) == 29
    assert task.target_of(torch.tensor([52, 33, 36, 2, 4, 78, 92, 24, 58])) == 29


def test_target_of_uses_first_anchor_order_and_non_inferential():
    task = AnchorTask(AnchorTaskConfig())
    # (3,4) is non-inferential: x - 6, not x - 10
    assert task.target_of(torch.tensor([50, 3, 4, 60, 61, 62, 63, 64, 65])) == 44
    # (4,3) held out: designated = inferential x - 10
    assert task.target_of(torch.tensor([50, 4, 3, 60, 61, 62, 63, 64, 65])) == 40
    # the pair may end the sequence (key position 6)
    assert task.target_of(torch.tensor([90, 91, 92, 93, 94, 95, 30, 1, 1])) == 40


def test_sequence_structure(paper_data):
    task, data = paper_data
    cfg = task.cfg
    seqs = [data.train_inputs] + [es.inputs for es in data.eval_sets.values()]
    for inputs in seqs:
        assert inputs.dtype == torch.long
        assert inputs.shape[1] == cfg.seq_len
        for seq in inputs:
            p, key, _, _ = locate(seq, cfg.anchors)
            assert p in cfg.positions()
            assert cfg.item_min <= key <= cfg.item_max
            noise = torch.cat([seq[:p], seq[p + 3 :]])
            assert bool(((noise >= cfg.item_min) & (noise <= cfg.item_max)).all())
    assert not bool((data.train_inputs == 0).any())  # pad never generated


def test_all_key_positions_used(paper_data):
    task, data = paper_data
    seen = {locate(seq, task.cfg.anchors)[0] for seq in data.train_inputs}
    assert seen == set(range(7))


def test_training_targets_are_designated_mapping(paper_data):
    task, data = paper_data
    seen_pairs = set()
    for seq, y in zip(data.train_inputs, data.train_targets, strict=True):
        _, key, a1, a2 = locate(seq, task.cfg.anchors)
        seen_pairs.add((a1, a2))
        expected = key - 6 if (a1, a2) == (3, 4) else key + PAPER_SHIFTS[a1] + PAPER_SHIFTS[a2]
        assert int(y) == expected
        assert task.target_of(seq) == expected
    # the 15 trained ordered pairs, doubled pairs included, and not the held-out one
    assert seen_pairs == {(a, b) for a in range(1, 5) for b in range(1, 5)} - {(4, 3)}
    assert len(data.train_inputs) == 15 * task.cfg.n_train_per_pair
    assert len(data.train_targets) == len(data.train_inputs)


def test_eval_targets_are_designated_mapping(paper_data):
    task, data = paper_data
    for name, pair, _, es in all_sets(data):
        if name.startswith("heldout/"):
            continue
        assert set(es.targets) == {"designated"}
        for seq, y in zip(es.inputs, es.targets["designated"], strict=True):
            _, key, a1, a2 = locate(seq, task.cfg.anchors)
            assert (a1, a2) == pair
            expected = key - 6 if pair == (3, 4) else key + PAPER_SHIFTS[a1] + PAPER_SHIFTS[a2]
            assert int(y) == expected


def test_held_out_pair_never_in_training(paper_data):
    task, data = paper_data
    pairs = {locate(seq, task.cfg.anchors)[2:] for seq in data.train_inputs}
    assert (4, 3) not in pairs
    x = data.train_inputs
    assert not bool(((x[:, :-1] == 4) & (x[:, 1:] == 3)).any())


def test_held_out_eval_targets(paper_data):
    task, data = paper_data
    names = {n for n in data.eval_sets if n.startswith("heldout/")}
    assert names == {"heldout/4-3/train_keys", "heldout/4-3/test_keys"}
    for name in names:
        es = data.eval_sets[name]
        assert es.reference == "inferential"
        assert es.info["symmetric"] == "defined"
        assert set(es.targets) == {"inferential", "symmetric"}
        for seq, inf, sym in zip(es.inputs, es.targets["inferential"], es.targets["symmetric"], strict=True):
            _, key, a1, a2 = locate(seq, task.cfg.anchors)
            assert (a1, a2) == (4, 3)
            assert int(inf) == key - 10
            assert int(sym) == key - 6
    assert "train/4-3" not in data.eval_sets and "test/4-3" not in data.eval_sets
    # where the symmetric answer sits in the (prediction − inferential) histogram, for the run figure
    assert data.info["symmetric_offsets"] == {name: 4 for name in names}


def test_held_out_targets_kinds():
    task = AnchorTask(AnchorTaskConfig())
    spec = task.held_out_targets((4, 3))
    assert spec.mirror == (3, 4) and spec.symmetric == "defined"


# ---- key/position split ------------------------------------------------------------------------------------
@pytest.mark.parametrize("modulus", [None, 9])
def test_key_position_split(modulus):
    cfg = tiny_task(split_modulus=modulus, n_train_per_pair=60, n_test_per_pair=30)
    task = AnchorTask(cfg)
    m = 7 if modulus is None else modulus
    assert cfg.modulus() == m
    data = task.build(seed=0)
    assert data.info["split_modulus"] == m
    train_keys: dict[int, set[int]] = {}
    test_keys: dict[int, set[int]] = {}
    n_test_checked = 0
    for _, _, test, es in all_sets(data):
        for seq in es.inputs:
            p, key, _, _ = locate(seq, cfg.anchors)
            if test:
                assert key % m == p % m, (key, p)
                test_keys.setdefault(p, set()).add(key)
                n_test_checked += 1
            else:
                assert key % m != p % m, (key, p)
                train_keys.setdefault(p, set()).add(key)
    for seq in data.train_inputs:
        p, key, _, _ = locate(seq, cfg.anchors)
        assert key % m != p % m
        train_keys.setdefault(p, set()).add(key)
    assert n_test_checked == 16 * 30
    for p in test_keys:
        assert not (train_keys.get(p, set()) & test_keys[p])
    # keys overlap across splits in value (only the pairing with a position is held out)
    all_train = set().union(*train_keys.values())
    all_test = set().union(*test_keys.values())
    assert all_train & all_test


def test_modulus_nine_never_tests_residues_seven_and_eight():
    cfg = tiny_task(split_modulus=9, n_test_per_pair=40)
    data = AnchorTask(cfg).build(seed=5)
    for name, _, test, es in all_sets(data):
        if test:
            for seq in es.inputs:
                _, key, _, _ = locate(seq, cfg.anchors)
                assert key % 9 not in (7, 8), name


def test_split_off_allows_any_key():
    cfg = tiny_task(split=False, n_train_per_pair=200)
    data = AnchorTask(cfg).build(seed=0)
    assert data.info["split_modulus"] == 0
    hits = 0
    for seq in data.train_inputs:
        p, key, _, _ = locate(seq, cfg.anchors)
        hits += key % 7 == p % 7
    assert hits > 0  # with the split on this would be impossible


# ---- counts and determinism --------------------------------------------------------------------------------
def test_equal_counts_per_pair(paper_data):
    task, data = paper_data
    counts = data.info["group_counts"]
    assert len(counts) == 32
    for a in range(1, 5):
        for b in range(1, 5):
            assert counts[f"{a}-{b}/train_keys"] == task.cfg.n_train_per_pair
            assert counts[f"{a}-{b}/test_keys"] == task.cfg.n_test_per_pair
    for name, _, test, es in all_sets(data):
        assert len(es) == (task.cfg.n_test_per_pair if test else task.cfg.n_train_per_pair), name
    # training data holds each trained pair exactly n_train_per_pair times
    per_pair: dict[tuple[int, int], int] = {}
    for seq in data.train_inputs:
        pair = locate(seq, task.cfg.anchors)[2:]
        per_pair[pair] = per_pair.get(pair, 0) + 1
    assert set(per_pair.values()) == {task.cfg.n_train_per_pair}


def test_same_seed_same_data_different_seed_different():
    task = AnchorTask(tiny_task())
    a, b, c = task.build(seed=11), task.build(seed=11), task.build(seed=12)
    assert torch.equal(a.train_inputs, b.train_inputs)
    assert torch.equal(a.train_targets, b.train_targets)
    assert a.eval_sets.keys() == b.eval_sets.keys()
    for name in a.eval_sets:
        assert torch.equal(a.eval_sets[name].inputs, b.eval_sets[name].inputs)
        for kind in a.eval_sets[name].targets:
            assert torch.equal(a.eval_sets[name].targets[kind], b.eval_sets[name].targets[kind])
    assert not torch.equal(a.train_inputs, c.train_inputs)
    assert not torch.equal(a.eval_sets["heldout/4-3/train_keys"].inputs, c.eval_sets["heldout/4-3/train_keys"].inputs)


# ---- variants ----------------------------------------------------------------------------------------------
def test_complexity_k_variant():
    cfg = tiny_task(complexity_k=2, held_out_pairs=[], non_inferential={})
    task = AnchorTask(cfg)
    data = task.build(seed=2)
    expected_off = {(1, 2): 4, (2, 1): 4, (1, 3): 1, (3, 1): 1}
    seen = set()
    for seq, y in zip(data.train_inputs, data.train_targets, strict=True):
        _, key, a1, a2 = locate(seq, cfg.anchors)
        seen.add((a1, a2))
        off = expected_off.get((a1, a2), PAPER_SHIFTS[a1] + PAPER_SHIFTS[a2])
        assert int(y) == key + off, (a1, a2)
    assert len(seen) == 16  # nothing held out
    assert not any(n.startswith("heldout/") for n in data.eval_sets)
    # (3,4) is inferential again once non_inferential is empty
    assert int(task.designated(torch.tensor([50]), (3, 4))[0]) == 40


def test_complexity_k_zero_is_paper_task():
    task = AnchorTask(AnchorTaskConfig())
    x = torch.tensor([50])
    assert int(task.designated(x, (1, 2))[0]) == 56
    assert int(task.designated(x, (2, 1))[0]) == 56


def test_held_out_with_inferential_mirror_is_indistinguishable():
    # mirror (3,4) trained inferentially with additive shifts: symmetric == inferential
    cfg = tiny_task(non_inferential={})
    data = AnchorTask(cfg).build(seed=0)
    for group in ("train_keys", "test_keys"):
        es = data.eval_sets[f"heldout/4-3/{group}"]
        assert es.info["symmetric"] == "indistinguishable"
        assert "symmetric" not in es.targets
        assert set(es.targets) == {"inferential"}


def test_held_out_with_held_out_mirror_is_undefined():
    cfg = tiny_task(held_out_pairs=[(4, 3), (3, 4)])
    task = AnchorTask(cfg)
    data = task.build(seed=0)
    for pair in ("4-3", "3-4"):
        es = data.eval_sets[f"heldout/{pair}/train_keys"]
        assert es.info["symmetric"] == "undefined"
        assert set(es.targets) == {"inferential"}
    x = data.train_inputs
    assert not bool(((x[:, :-1] == 3) & (x[:, 1:] == 4)).any())
    assert len(x) == 14 * cfg.n_train_per_pair


# complexity_pairs defaults to pairs of anchors 1-4 and is validated even when complexity_k == 0 (src bug, see
# test_non_paper_anchors_need_no_complexity_fields); the tests below clear it explicitly.
NO_COMPLEXITY = {"complexity_pairs": [], "complexity_offsets": []}


def test_non_paper_anchors_need_no_complexity_fields():
    cfg = AnchorTaskConfig(
        anchors=[5, 6, 7],
        shifts={5: 2, 6: -3, 7: 4},
        item_min=20,
        item_max=60,
        vocab_size=100,
        held_out_pairs=[(7, 5)],
        non_inferential={},
    )
    assert cfg.complexity_k == 0


def test_non_paper_anchor_set():
    shifts = {5: 2, 6: -3, 7: 4}
    cfg = AnchorTaskConfig(
        anchors=[5, 6, 7],
        shifts=shifts,
        item_min=20,
        item_max=60,
        vocab_size=100,
        held_out_pairs=[(7, 5)],
        non_inferential={(5, 7): 3},
        seq_len=8,
        n_train_per_pair=30,
        n_test_per_pair=10,
        **NO_COMPLEXITY,
    )
    task = AnchorTask(cfg)
    data = task.build(seed=4)
    assert len(data.train_inputs) == 8 * 30
    assert data.vocab_size == 100 and data.seq_len == 8
    for seq, y in zip(data.train_inputs, data.train_targets, strict=True):
        p, key, a1, a2 = locate(seq, cfg.anchors)
        assert 0 <= p <= 5 and 20 <= key <= 60
        assert (a1, a2) != (7, 5)
        expected = key + 3 if (a1, a2) == (5, 7) else key + shifts[a1] + shifts[a2]
        assert int(y) == expected
    es = data.eval_sets["heldout/7-5/train_keys"]
    assert es.info["symmetric"] == "defined"
    for seq, inf, sym in zip(es.inputs, es.targets["inferential"], es.targets["symmetric"], strict=True):
        _, key, a1, a2 = locate(seq, cfg.anchors)
        assert (a1, a2) == (7, 5)
        assert int(inf) == key + 6 and int(sym) == key + 3
    assert data.info["split_modulus"] == 6  # seq_len - 2


def test_single_maps_non_additive():
    items = range(20, 40)
    maps = {1: {x: x + 1 for x in range(20, 80)}, 2: {x: 2 * x for x in range(20, 80)}}
    cfg = AnchorTaskConfig(
        anchors=[1, 2],
        shifts={},
        single_maps=maps,
        item_min=20,
        item_max=39,
        vocab_size=200,
        held_out_pairs=[(2, 1)],
        non_inferential={},
        n_train_per_pair=20,
        n_test_per_pair=5,
        **NO_COMPLEXITY,
    )
    task = AnchorTask(cfg)
    x = torch.tensor(list(items))
    assert torch.equal(task.inferential(x, (1, 2)), 2 * (x + 1))  # a1 applied first
    assert torch.equal(task.inferential(x, (2, 1)), 2 * x + 1)
    data = task.build(seed=0)
    es = data.eval_sets["heldout/2-1/train_keys"]
    assert es.info["symmetric"] == "defined"  # the maps do not commute
    for seq, inf, sym in zip(es.inputs, es.targets["inferential"], es.targets["symmetric"], strict=True):
        _, key, _, _ = locate(seq, cfg.anchors)
        assert int(inf) == 2 * key + 1 and int(sym) == 2 * (key + 1)
    assert data.info["symmetric_offsets"]["heldout/2-1/train_keys"] == 1  # 2(x + 1) − (2x + 1)


# ---- validation --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kw",
    [
        {"anchors": [1, 2, 3, 20]},  # overlaps the item range
        {"anchors": [0, 1, 2, 3], "shifts": {0: 1, 1: 1, 2: 1, 3: 1}},  # pad token
        {"anchors": [1, 1, 2, 3]},  # not distinct
        {"held_out_pairs": [(4, 5)]},  # not an anchor
        {"non_inferential": {"3,9": -6}},  # not an anchor
        {"key_positions": [0, 7]},  # 7 + 2 > seq_len - 1
        {"key_positions": [-1]},
        {"shifts": {1: 5, 2: 1, 3: -2}},  # one shift missing
        {"item_min": 50, "item_max": 40},
        {"complexity_k": 7},
        {"complexity_offsets": [1, 2]},
        {"n_train_per_pair": 0},
        {"unknown_field": 1},
        {"non_inferential": {"3;4": -6}},  # malformed pair key
    ],
)
def test_bad_configs_raise(kw):
    with pytest.raises((ValidationError, ConfigError)):
        AnchorTaskConfig(**kw)


def test_key_position_at_limit_is_fine():
    cfg = AnchorTaskConfig(key_positions=[6])
    assert cfg.positions() == [6]


def test_vocab_too_small_for_targets_is_refused_by_the_config():
    # items end at 99 < 105, but targets reach 99 + 10 = 109: refused before any data is built
    with pytest.raises(ValidationError, match="vocab_size: targets span"):
        tiny_task(vocab_size=105)


def test_vocab_too_small_for_items_is_refused_by_the_config():
    with pytest.raises(ValidationError, match="vocab_size: 90 must exceed"):
        tiny_task(vocab_size=90)


def test_targets_below_one_are_refused_by_the_config():
    # 20 - 12 - 12 = -4: the (4,4) targets fall below the first token
    with pytest.raises(ValidationError, match="vocab_size: targets span -4"):
        tiny_task(shifts={1: 5, 2: 1, 3: -2, 4: -12})


def test_every_pair_held_out_fails_at_build():
    cfg = tiny_task(anchors=[1], shifts={1: 1}, held_out_pairs=[(1, 1)], non_inferential={}, **NO_COMPLEXITY)
    with pytest.raises(ConfigError, match="held_out_pairs"):
        AnchorTask(cfg).build(seed=0)


def test_modulus_without_test_keys_fails_at_build():
    # modulus 100 > every key: residue p only has keys when p >= 20, none of the positions 0..6
    with pytest.raises(ConfigError, match="split_modulus"):
        AnchorTask(tiny_task(split_modulus=100)).build(seed=0)


def test_split_modulus_zero_disables_split():
    cfg = tiny_task(split_modulus=0)
    data = AnchorTask(cfg).build(seed=0)
    assert data.info["split_modulus"] == 0


def test_symmetric_offsets_only_where_fixed():
    x = torch.arange(5)
    sets = {"heldout/4-3/train_keys": EvalSet(x[:, None], {"inferential": x, "symmetric": x + 4}),
            "heldout/2-1/train_keys": EvalSet(x[:, None], {"inferential": x, "symmetric": 2 * x}),
            "test/1-1": EvalSet(x[:, None], {"designated": x})}
    assert symmetric_offsets(sets) == {"heldout/4-3/train_keys": 4}
