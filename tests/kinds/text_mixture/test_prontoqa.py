"""The PrOntoQA-style generator and its independent checker, against the shipped sample (reasoning-bias spec §4)."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from reasonlab.tasks.text import prontoqa as pq


def shape(s: str) -> str:
    neg = "-not" if " not " in s else ""
    first = s.split()[0]
    if pq._ENTITY.match(s):
        return "entity"
    if pq._SUB_SINGULAR.match(s):
        return f"sub:{first}"
    if pq._SUB_PLURAL.match(s):
        return "sub:plural"
    if pq._PROP_PLURAL.match(s):
        return f"prop:plural{neg}"
    assert pq._PROP_SINGULAR.match(s), s
    return f"prop:{first}{neg}"


@pytest.fixture(scope="module")
def sample():
    return pq.load_sample()


@pytest.fixture(scope="module")
def generated():
    return pq.generate_many(2000, seed=1)


def test_checker_reproduces_every_gold_answer_of_the_sample(sample):
    assert len(sample) == 500
    for item in sample:
        assert pq.check(pq.split_sentences(item["context"]), pq.sample_query(item)) == (item["answer"] == "A")


def test_sample_explanations_pass_the_step_checker(sample):
    for item in sample[:100]:
        ex = pq.Example(pq.split_sentences(item["context"]), pq.sample_query(item), item["explanation"],
                        item["answer"] == "A", 5)
        assert pq.cot_is_valid(ex)


def test_generated_examples_are_correct_and_balanced(generated):
    assert all(pq.check(e.context, e.query) == e.answer for e in generated)
    assert all(pq.cot_is_valid(e) for e in generated)
    assert abs(sum(e.answer for e in generated) / len(generated) - 0.5) <= 0.03
    assert len({e.render() for e in generated}) == len(generated)
    assert set(Counter(e.hops for e in generated)) == {1, 2, 3, 4, 5}


def test_five_hop_examples_look_like_the_sample(generated, sample):
    five = [e for e in generated if e.hops == 5]
    assert {len(e.cot) for e in five} == {11}
    assert {len(e.context) for e in five} <= set(range(12, 19))
    sample_shapes = {shape(s) for item in sample for s in pq.split_sentences(item["context"])}
    assert {shape(s) for e in generated for s in e.context} <= sample_shapes


def _negate(fact: str) -> str:
    return fact.replace(" is not ", " is ") if " is not " in fact else fact.replace(" is ", " is not ", 1)


@pytest.mark.parametrize("seed", range(20))
def test_a_broken_proof_is_caught(seed):
    ex = pq.generate(random.Random(seed), hops=3)
    assert pq.cot_is_valid(ex)
    wrong_polarity = pq.Example(ex.context, ex.query, [*ex.cot[:-1], _negate(ex.cot[-1])], ex.answer, ex.hops)
    assert not pq.cot_is_valid(wrong_polarity)  # only the off-chain distractor says that
    skipped = pq.Example(ex.context, ex.query, [ex.cot[0], *ex.cot[3:]], ex.answer, ex.hops)
    assert not pq.cot_is_valid(skipped)  # a subsumption step left out


def test_train_and_eval_are_disjoint_and_seeded():
    train = pq.generate_many(300, seed=5)
    again = pq.generate_many(300, seed=5)
    assert [e.render() for e in train] == [e.render() for e in again]
    evals = pq.generate_many(100, seed=6, exclude={e.render() for e in train})
    assert not {e.render() for e in evals} & {e.render() for e in train}


def test_unrecognised_sentences_are_errors():
    with pytest.raises(ValueError, match="unrecognised"):
        pq.check(["Max is a wumpus.", "Wumpuses might be red."], "Max is red.")
