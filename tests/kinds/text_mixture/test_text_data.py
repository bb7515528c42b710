"""The shipped TinyStories sample and the local word tokenizer (reasoning-bias spec §4)."""

from __future__ import annotations

import pytest
import torch

from reasonlab.tasks.text import prontoqa as pq
from reasonlab.tasks.text.tinystories import load_stories
from reasonlab.tasks.text.tokenizer import SPECIALS, WordTokenizer


@pytest.fixture(scope="module")
def stories():
    return load_stories()


def test_sample_has_the_complete_stories(stories):
    assert len(stories) == 2316
    assert stories[0].startswith("One day, a little girl named Lily found a needle in her room.")
    assert not any("<|endoftext|>" in s for s in stories)


def test_tokenizer_round_trip_and_unknowns(stories):
    texts = stories[:500] + [e.render() for e in pq.generate_many(500, 1)]
    tok = WordTokenizer.fit(texts, min_freq=2)
    assert tok.vocab[: len(SPECIALS)] == list(SPECIALS) and tok.pad == 0
    known = [t for t in texts if tok.unk not in tok.encode(t)]
    assert len(known) > 300
    assert all(tok.decode(tok.encode(t)) == t for t in known)
    ids = tok.encode("Lily zorblaxed.", bos=True, eos=True)
    assert ids[0] == tok.bos and ids[-1] == tok.eos and tok.unk in ids
    assert " wumpus" in tok.ids and "umpus" not in tok.ids  # whole fictional names, not shared pieces


def test_tokenizer_is_deterministic_and_saves(stories):
    a = WordTokenizer.fit(stories[:200])
    b = WordTokenizer.fit(list(reversed(stories[:200])))
    assert a.vocab == b.vocab
    again = WordTokenizer.from_json(a.to_json())
    assert again.vocab == a.vocab
    rare = WordTokenizer.fit(["a b b"], min_freq=2)
    assert rare.vocab == [*SPECIALS, " b"]
    with pytest.raises(ValueError, match="word tokenizer"):
        WordTokenizer.from_json('{"kind": "bpe"}')


def test_text_mixture_task_sets_and_targets():
    from reasonlab.kinds.text_mixture.config import TextMixtureTaskConfig
    from reasonlab.kinds.text_mixture.data import TextMixtureTask

    task = TextMixtureTask(TextMixtureTaskConfig(n_per_source=100, max_len=64, train_eval_n=16))
    docs = task.documents(seed=1)
    assert {s: (len(t), len(e)) for s, (t, e) in docs.items()} == {"prontoqa": (90, 10), "tinystories": (90, 10)}
    assert not set(docs["prontoqa"][0]) & set(docs["prontoqa"][1])
    assert not set(docs["tinystories"][0]) & set(docs["tinystories"][1])
    data = task.build(seed=1)
    assert data.train_inputs.shape == (180, 64) and data.train_targets.shape == (180, 64)
    assert set(data.eval_sets) == {"prontoqa/train", "prontoqa/eval", "tinystories/train", "tinystories/eval"}
    tok = WordTokenizer.from_json(data.artifacts["tokenizer.json"])
    x, y = data.train_inputs, data.train_targets
    assert (x[:, 0] == tok.bos).all()
    assert torch.equal(y[:, :-1][y[:, :-1] != -100], x[:, 1:][y[:, :-1] != -100])  # targets are the next tokens
    assert ((y[:, :-1] == -100) == (x[:, 1:] == tok.pad)).all()  # padding, and only padding, is not scored
    assert task.build(seed=1).artifacts == data.artifacts  # deterministic


def test_exclusive_tokens_and_delta_l_window():
    from reasonlab.kinds.text_mixture.data import exclusive_tokens
    from reasonlab.kinds.text_mixture.evaluate import delta_l, delta_l_window
    from reasonlab.store import MetricRow

    pq_docs = ["Every wumpus is red."] * 25
    ts_docs = ["Lily is red and happy."] * 25
    tok = WordTokenizer.fit(pq_docs + ts_docs)
    pq_only, ts_only = exclusive_tokens(tok, pq_docs, ts_docs)
    assert {tok.vocab[i] for i in pq_only} == {"Every", " wumpus"}
    assert {tok.vocab[i] for i in ts_only} == {"Lily", " and", " happy"}  # " is", " red", "." are shared
    assert delta_l(3.0, 2.0) == 0.5
    rows = [MetricRow(0, s, "pooled", "delta_L_train", float(s)) for s in (0, 10, 40, 60, 100)]
    assert delta_l_window(rows, 100) == 25.0  # steps 10 and 40 lie in [5 %, 50 %]
    assert delta_l_window(rows, 100, window=(0.9, 0.95)) is None
