"""Real benchmarks as sequence to sequence: rows and splits, nested subsets, exact-match scoring against greedy
decoding, the PrOntoQA judgement, padding trimmed without changing the loss, and a run end to end."""

from __future__ import annotations

import json

import pytest
import torch
import torch.nn.functional as F
from conftest import tiny_run_dict
from torch import nn
from typer.testing import CliRunner

from reasonlab.cli import app
from reasonlab.config import ConfigError, resolve
from reasonlab.evaluate.sequence import greedy_decode, judgement_correct, score_sequences
from reasonlab.kinds.seq2seq.config import SCAN_SPLITS, Seq2SeqTaskConfig
from reasonlab.kinds.seq2seq.data import (
    BOS,
    EOS,
    PAD,
    SEP,
    AdditionPool,
    Seq2SeqTask,
    addition_benchmark,
    carries,
    nested_subset,
    prontoqa_benchmark,
    scan_categories,
)
from reasonlab.kinds.seq2seq.evaluate import convergence
from reasonlab.store import MetricRow, Metrics
from reasonlab.sweep.grid import expand
from reasonlab.tasks.base import trim_padding
from reasonlab.tasks.text import scan


def build(**kw):
    return Seq2SeqTask(Seq2SeqTaskConfig(**kw)).build(seed=1)


# ---- data -----------------------------------------------------------------------------------------------------
def test_scan_rows_are_source_sep_target_eos_with_loss_on_the_target():
    data = build(benchmark="scan", split="addprim_turn_left", n_train=50, eval_n=20)
    row, tgt = data.train_inputs[0], data.train_targets[0]
    sep = int((row == SEP).nonzero())
    assert row[0] == BOS and (tgt[:sep] == -100).all()  # nothing before <sep> is scored
    scored = tgt[tgt != -100]
    assert scored[-1] == EOS and (scored[:-1] > EOS).all()
    assert torch.equal(tgt[sep : sep + len(scored)], row[sep + 1 : sep + len(scored)].new_tensor(
        [*row[sep + 1 : sep + len(scored)].tolist()[: len(scored) - 1], EOS]))
    assert set(data.eval_sets) == {"train", "id", "ood"} and len(data.eval_sets["ood"]) == 20
    assert data.right_padded and data.info["n_pool"] == 21_890


def test_scan_splits_match_the_loader_and_categories():
    assert set(SCAN_SPLITS) == set(scan.SPLITS)
    ex = scan.parse_line("IN: jump around left twice and turn left OUT: I_TURN_LEFT I_JUMP I_TURN_LEFT", "t")
    assert scan_categories(ex) == ("prim:jump", "prim:turn_left", "out_len:≤8")
    with pytest.raises(ConfigError, match="task.split"):
        resolve({"task": {"kind": "seq2seq", "split": "nope"}})


def test_nested_subsets_and_full_pool():
    small, _ = nested_subset(1000, 100, seed=5)
    large, left = nested_subset(1000, 400, seed=5)
    assert large[:100] == small and not set(large) & set(left) and len(large) + len(left) == 1000
    with pytest.raises(ConfigError, match="task.n_train: 2000 exceeds"):
        nested_subset(1000, 2000, seed=5)
    a = build(benchmark="scan", n_train=60, eval_n=10)
    b = build(benchmark="scan", n_train=200, eval_n=10)
    assert len(a.train_inputs) == 60 and len(b.train_inputs) == 200

    def rows(data) -> set[tuple[str, ...]]:  # as words: the two vocabularies may differ
        vocab = json.loads(data.artifacts["vocab.json"])["vocab"]
        return {tuple(vocab[i] for i in r.tolist() if i not in (PAD, EOS)) for r in data.train_inputs}

    assert rows(a) < rows(b)


def test_addition_split_holds_out_the_box():
    cfg = Seq2SeqTaskConfig(benchmark="addition")
    pool = AdditionPool(cfg)
    assert len(pool) == 1000**2 - 201**2
    assert not any(400 <= a <= 600 and 400 <= b <= 600 for a, b in zip(pool.a, pool.b, strict=True))
    bench = addition_benchmark(cfg)
    assert len(bench.tests["ood"]) == 201**2
    p = bench.tests["ood"][0]
    assert p.source == ("4", "0", "0", "+", "4", "0", "0") and p.target == ("0", "8", "0", "0")
    assert [carries(a, b) for a, b in ((5, 5), (999, 1), (123, 456), (0, 0))] == [1, 3, 0, 0]
    rev = addition_benchmark(Seq2SeqTaskConfig(benchmark="addition", reverse_answer=True)).tests["ood"][0]
    assert rev.target == ("0", "0", "8", "0")
    with pytest.raises(ConfigError, match="task.held_out"):
        resolve({"task": {"kind": "seq2seq", "benchmark": "addition", "held_out": [600, 400]}})


def test_prontoqa_test_is_fixed_disjoint_and_training_nested():
    small = prontoqa_benchmark(Seq2SeqTaskConfig(benchmark="prontoqa", n_train=30, n_test=20))
    large = prontoqa_benchmark(Seq2SeqTaskConfig(benchmark="prontoqa", n_train=90, n_test=20))
    assert small.tests == large.tests and list(large.pool[:30]) == list(small.pool)
    assert not {p.source for p in large.pool} & {p.source for p in large.tests["id"]}
    assert all(p.target[-2] in (" True", " False") for p in large.pool)
    with pytest.raises(ConfigError, match="task.n_train"):
        prontoqa_benchmark(Seq2SeqTaskConfig(benchmark="prontoqa"))


# ---- scoring --------------------------------------------------------------------------------------------------
class Rule(nn.Module):
    """A causal toy model: the next token after any prefix is (sum of the prefix) mod (V − 4) + 4, or EOS
    once the prefix is longer than ``stop``."""

    def __init__(self, vocab: int, stop: int):
        super().__init__()
        self.vocab, self.stop = vocab, stop

    def forward(self, x, positions="last"):
        nxt = (x.cumsum(1) % (self.vocab - 4)) + 4
        nxt[:, self.stop :] = EOS
        return F.one_hot(nxt, self.vocab).float()


def rows_from_rule(model: Rule, prompts: list[list[int]], corrupt: set[int]):
    """Rows whose targets follow the rule's greedy output (corrupted at one token for the rows in ``corrupt``)."""
    seqs, prompt_len = [], []
    for i, p in enumerate(prompts):
        seq = [BOS, *p, SEP]
        prompt_len.append(len(seq))
        while seq[-1] != EOS:
            seq.append(int(model(torch.tensor([seq]), "all")[0, -1].argmax()))
        if i in corrupt:
            seq[len(p) + 3] = 4 + (seq[len(p) + 3] - 3) % (model.vocab - 4)
        seqs.append(seq)
    width = max(map(len, seqs))
    full = torch.tensor([s + [PAD] * (width - len(s)) for s in seqs])
    targets = full[:, 1:].clone()
    cols = torch.arange(width - 1)
    targets[(cols[None] < torch.tensor(prompt_len)[:, None] - 1) | (targets == PAD)] = -100
    return full[:, :-1], targets, torch.tensor(prompt_len)


def test_teacher_forced_exact_match_equals_greedy_decoding():
    from reasonlab.tasks.base import EvalSet

    model = Rule(vocab=13, stop=9)
    prompts = [[5], [6, 7], [8, 9, 10], [4, 4], [11], [12, 5, 6]]
    x, y, plen = rows_from_rule(model, prompts, corrupt={1, 4})
    es = EvalSet(x, {"designated": y}, scoring="sequences", info={"prompt_len": plen, "eos": EOS,
                                             "categories": {"cat:a": torch.tensor([0, 1, 2])}})
    s = score_sequences(model, es, len(x), torch.device("cpu"), batch=4)
    decoded = greedy_decode(model, x, plen, x.shape[1], EOS)
    greedy = [decoded[i][: int((y[i] != -100).sum())].tolist() == y[i][y[i] != -100].tolist()
              for i in range(len(x))]
    assert greedy == [True, False, True, True, False, True]
    assert s.correct["exact"] == sum(greedy) == 4 and s.acc("cat:a") == pytest.approx(2 / 3)
    assert s.counts["token"] == int((y != -100).sum()) and s.acc("token") < 1.0


def test_judgement_reads_the_token_after_the_answer_prefix():
    prefix = [7, 8]
    decoded = torch.tensor([[5, 7, 8, 1, 3], [7, 8, 2, 7, 8], [5, 5, 5, 5, 5], [7, 8, 2, 7, 8]])
    # row 1: the last "answer is" has no token after it within the decoding, so the earlier one counts
    hits = judgement_correct(decoded, prefix, torch.tensor([1, 2, 1, 1]))
    assert hits.tolist() == [True, True, False, False]


def test_trimming_padding_leaves_the_loss_unchanged():
    data = build(benchmark="scan", n_train=64, eval_n=8)
    cfg = resolve({**tiny_run_dict(model={"max_positions": 64}), "task": {"kind": "seq2seq", "n_train": 64}})
    from reasonlab.train.loop import build_model

    model = build_model(cfg, data)
    short = (data.train_targets != -100).sum(1).argsort()[:16]  # the batch's longest row is not the longest
    x, y = data.train_inputs[short], data.train_targets[short]
    tx, ty = trim_padding(x, y)
    assert tx.shape[1] < x.shape[1]
    with torch.no_grad():
        full = F.cross_entropy(model(x, "all").flatten(0, 1), y.flatten(), ignore_index=-100)
        cut = F.cross_entropy(model(tx, "all").flatten(0, 1), ty.flatten(), ignore_index=-100)
    assert float(cut) == pytest.approx(float(full), rel=1e-6)


def test_convergence_steps_are_the_first_evaluation_past_fit():
    rows = [MetricRow(e, e * 10, "pooled", m, v) for e, m, v in [
        (1, "train_exact", 0.5), (1, "ood_exact", 0.1), (2, "train_exact", 0.95), (2, "ood_exact", 0.3),
        (3, "train_exact", 0.99), (3, "ood_exact", 0.92)]]
    assert convergence(rows) == {"fit_step": 20, "ood_exact_step": 30}
    assert convergence(rows[:4]) == {"fit_step": 20, "ood_exact_step": None}


def test_linked_grid_axis_pairs_its_fields():
    base = tiny_run_dict()
    cfgs = expand(base, {"init.gamma+train.weight_decay": [[0.3, 0.01], [0.7, 0.1]], "seed": [1, 2]})
    assert {(c.init.gamma, c.train.weight_decay, c.seed) for c in cfgs} == {
        (0.3, 0.01, 1), (0.3, 0.01, 2), (0.7, 0.1, 1), (0.7, 0.1, 2)}
    with pytest.raises(ConfigError, match="one per field"):
        expand(base, {"init.gamma+train.weight_decay": [0.3]})


# ---- end to end -----------------------------------------------------------------------------------------------
def test_addition_run_end_to_end_through_the_cli(tmp_path):
    cfg = tmp_path / "add.yaml"
    cfg.write_text(json.dumps({
        "task": {"kind": "seq2seq", "benchmark": "addition", "max_operand": 99, "held_out": [40, 60],
                 "n_train": 512, "eval_n": 64},
        "model": {"d_model": 32, "d_k": 16, "d_v": 16, "d_ff": 64, "max_positions": 12},
        "train": {"epochs": 3, "batch_size": 64, "warmup_epochs": 1, "device": "cpu", "threads": 1,
                  "base_lr": 1e-3, "lr_multiplier": 3.0}}))
    result = CliRunner().invoke(app, ["train", str(cfg), "--out", str(tmp_path / "runs"), "--quiet"])
    assert result.exit_code == 0, result.output
    run_dir = next((tmp_path / "runs").glob("*/*/summary.json")).parent
    summary = json.loads((run_dir / "summary.json").read_text())
    final = summary["final"]
    assert {"train_exact", "id_exact", "ood_exact", "ood/carries:0"} <= set(final)
    assert summary["label"] in {"not-fitted", "generalized", "partial", "memorized"}
    assert "fit_step" in summary["best"] and (run_dir / "vocab.json").is_file()
    losses = [v for _, v in Metrics.read(run_dir / "metrics.parquet").series("train", "loss")]
    assert losses[-1] < losses[0]


def test_length_buckets_keep_every_row_and_group_similar_lengths():
    from reasonlab.train.step import epoch_order

    lengths = torch.randint(1, 60, (1000,), generator=torch.Generator().manual_seed(0))
    order = epoch_order(1000, seed=3, batch_size=10, lengths=lengths)
    assert sorted(order.tolist()) == list(range(1000))
    assert torch.equal(order, epoch_order(1000, seed=3, batch_size=10, lengths=lengths))
    assert torch.equal(epoch_order(1000, 3, 10), torch.randperm(1000, generator=torch.Generator().manual_seed(3)))
    spread = lengths[order].view(100, 10)
    random_spread = lengths[torch.randperm(1000)].view(100, 10)
    padded = (spread.max(1).values * 10).sum()  # the columns a trimmed batch computes
    assert padded < 0.7 * (random_spread.max(1).values * 10).sum()


@pytest.mark.parametrize(("positions", "norm"), [("learned", "post"), ("rope", "pre"), ("none", "post")])
def test_cached_generation_equals_decoding_by_full_forward_passes(positions, norm):
    from reasonlab.config import ModelConfig
    from reasonlab.models.transformer import Transformer

    cfg = ModelConfig(d_model=32, depth=2, n_heads=2, d_k=8, d_v=8, d_ff=64, positions=positions, norm=norm,
                      max_positions=24)
    torch.manual_seed(0)
    model = Transformer(cfg, 11)

    class Plain(nn.Module):  # the same function without a cache: decoded by full forward passes
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, x, positions="last"):
            return self.inner(x, positions)

    tokens = torch.randint(4, 11, (6, 20), generator=torch.Generator().manual_seed(1))
    prompt_len = torch.tensor([3, 5, 8, 4, 6, 2])
    fast = greedy_decode(model, tokens, prompt_len, 12, eos=3)
    slow = greedy_decode(Plain(model), tokens, prompt_len, 12, eos=3)
    assert fast.shape == (6, 12) and torch.equal(fast, slow)


def test_labels_read_the_headline_and_measure_a_judgement_above_chance():
    from reasonlab.config import ThresholdConfig
    from reasonlab.evaluate.set_score import SetScore
    from reasonlab.kinds.seq2seq.evaluate import seq2seq_summary
    from reasonlab.tasks.base import EvalSet

    def score(exact, judgement=None):
        correct = {"exact": round(exact * 100), "token": 100, **({"judgement": round(judgement * 100)}
                                                                 if judgement is not None else {})}
        return SetScore(100, correct, None, 0.1, counts={"token": 100})

    plain = EvalSet(torch.zeros(1, 2), {}, info={})
    judged = EvalSet(torch.zeros(1, 2), {}, info={"answer": torch.zeros(1)})
    th = ThresholdConfig()
    label = lambda scores, sets: seq2seq_summary(scores, sets, th).label  # noqa: E731
    assert label({"train": score(0.5), "ood": score(0.95)}, {"train": plain, "ood": plain}) == "not-fitted"
    assert label({"train": score(1.0), "ood": score(0.95)}, {"train": plain, "ood": plain}) == "generalized"
    assert label({"train": score(1.0), "ood": score(0.6)}, {"train": plain, "ood": plain}) == "partial"
    assert label({"train": score(1.0), "ood": score(0.1)}, {"train": plain, "ood": plain}) == "memorized"
    sets = {"train": judged, "id": judged}
    assert label({"train": score(1.0, 1.0), "id": score(0.0, 0.52)}, sets) == "memorized"  # chance
    assert label({"train": score(1.0, 1.0), "id": score(0.0, 0.8)}, sets) == "partial"
    assert label({"train": score(1.0, 1.0), "id": score(0.0, 0.96)}, sets) == "generalized"
