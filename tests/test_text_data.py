"""The shipped TinyStories sample and the local word tokenizer (reasoning-bias spec §4)."""

from __future__ import annotations

import pytest

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
