"""The shipped TinyStories sample and the local word tokenizer (reasoning-bias spec §4)."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
from conftest import reproduce_tiny

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
