"""A PrOntoQA-style generator of our own, and an independent forward-chaining checker (reasoning-bias spec §4).

A fictional ontology is a chain of concepts C_0 ⊂ C_1 ⊂ … ⊂ C_{m−1}; every concept below the top carries one
property (from a family not reused along the chain, randomly negated). An entity is a C_j; the k-hop question
asks for the property of C_{j+k−1}, reached by k−1 subsumptions and one property rule. The query is negated with
probability ½ (answer False), one off-chain distractor holds the queried property at the opposite polarity, and the
chain of thought lists each rule and the fact it yields. The checker parses sentences back into facts and rules
with regular expressions and forward-chains from the entity fact; it knows nothing of the generator.
"""

from __future__ import annotations

import gzip
import json
import random
import re
from dataclasses import dataclass
from importlib import resources

CONCEPTS = ("wumpus", "yumpus", "zumpus", "dumpus", "rompus", "numpus", "tumpus", "vumpus", "impus", "jompus",
            "gorpus", "shumpus", "lempus", "sterpus", "grimpus", "lorpus", "brimpus")
ENTITIES = ("Fae", "Rex", "Sally", "Max", "Alex", "Sam", "Polly", "Stella", "Wren")
FAMILIES = {
    "colour": ("blue", "red", "brown", "orange"), "size": ("small", "large"),
    "material": ("metallic", "wooden", "luminous", "liquid"), "opacity": ("transparent", "opaque"),
    "taste": ("sweet", "sour", "spicy", "bitter"), "temperature": ("hot", "cold", "temperate"),
    "smell": ("floral", "fruity", "earthy"), "brightness": ("bright", "dull"),
    "mood": ("happy", "angry", "nervous", "feisty"), "temperament": ("kind", "mean", "aggressive", "amenable", "shy"),
}


def plural(c: str) -> str:
    return c + "es"


def article(c: str) -> str:
    return "an" if c[0] in "aeiou" else "a"


def cap(s: str) -> str:
    return s[0].upper() + s[1:]


@dataclass(frozen=True)
class Example:
    context: list[str]
    query: str  # "E is (not) P."
    cot: list[str]
    answer: bool
    hops: int

    def render(self) -> str:
        return (f"{' '.join(self.context)} True or false: {self.query}\n{' '.join(self.cot)}\n"
                f"The answer is {self.answer}.")


def _subsumption(x: str, y: str, rng: random.Random) -> str:
    form = rng.randrange(3)
    if form == 2:
        return f"{cap(plural(x))} are {plural(y)}."
    return f"{('Every', 'Each')[form]} {x} is {article(y)} {y}."


def _property(x: str, prop: str, negated: bool, rng: random.Random) -> str:
    neg = "not " if negated else ""
    if rng.randrange(2) == 0:
        return f"{cap(plural(x))} are {neg}{prop}."
    return f"{rng.choice(('Every', 'Each'))} {x} is {neg}{prop}."


def generate(rng: random.Random, hops: int, extra: tuple[int, int] = (1, 4)) -> Example:
    """One k-hop example with ``extra`` (uniform, inclusive) more concepts on the chain than the proof uses."""
    m = hops + rng.randint(*extra)
    concepts = rng.sample(CONCEPTS, m + 1)
    chain, off_chain = concepts[:m], concepts[m]
    families = rng.sample(sorted(FAMILIES), m - 1)  # one per concept below the top, none reused
    props = [(rng.choice(FAMILIES[f]), rng.random() < 0.5) for f in families]
    sentences, rules = [], {}
    for i, c in enumerate(chain):
        if i < m - 1:
            rules[("prop", c)] = _property(c, *props[i], rng)
            sentences.append(rules[("prop", c)])
            rules[("sub", c)] = _subsumption(c, chain[i + 1], rng)
            sentences.append(rules[("sub", c)])
    j = rng.randint(0, m - 1 - hops)  # C_{j+k−1} must lie below the top (it has a property)
    entity = rng.choice(ENTITIES)
    target = chain[j + hops - 1]
    prop, negated = props[j + hops - 1]
    distractor = _property(off_chain, prop, not negated, rng)
    sentences.insert(rng.randrange(len(sentences) + 1), distractor)
    sentences.append(f"{entity} is {article(chain[j])} {chain[j]}.")
    cot = [f"{entity} is {article(chain[j])} {chain[j]}."]
    for i in range(j, j + hops - 1):
        cot += [rules[("sub", chain[i])], f"{entity} is {article(chain[i + 1])} {chain[i + 1]}."]
    fact = f"{entity} is {'not ' if negated else ''}{prop}."
    cot += [rules[("prop", target)], fact]
    answer = rng.random() < 0.5
    query = fact if answer else f"{entity} is {'' if negated else 'not '}{prop}."
    return Example(sentences, query, cot, answer, hops)


def generate_many(n: int, seed: int, hops: tuple[int, int] = (1, 5), exclude: set[str] | None = None) -> list[Example]:
    """``n`` distinct examples (by rendered text), none in ``exclude``; hops uniform over the inclusive range."""
    rng, seen, out = random.Random(seed), set(exclude or ()), []
    while len(out) < n:
        ex = generate(rng, rng.randint(*hops))
        text = ex.render()
        if text not in seen:
            seen.add(text)
            out.append(ex)
    return out


# ---- the checker ---------------------------------------------------------------------------------------------
_SUB_SINGULAR = re.compile(r"^(?:Every|Each) (\w+) is an? (\w+)\.$")
_SUB_PLURAL = re.compile(r"^(\w+)es are (\w+)es\.$")
_PROP_PLURAL = re.compile(r"^(\w+)es are (not )?(\w+)\.$")
_PROP_SINGULAR = re.compile(r"^(?:Every|Each) (\w+) is (not )?(\w+)\.$")
_ENTITY = re.compile(r"^([A-Z]\w*) is an? (\w+)\.$")
_QUERY = re.compile(r"^([A-Z]\w*) is (not )?(\w+)\.$")


def split_sentences(text: str) -> list[str]:
    return [s.strip() + "." for s in text.strip().split(".") if s.strip()]


def parse(sentences: list[str]) -> tuple[dict[str, set[str]], dict[str, list[tuple[str, bool]]], tuple[str, str]]:
    """(subsumptions X -> {Y}, properties X -> [(P, polarity)], entity fact) from context sentences."""
    subs: dict[str, set[str]] = {}
    props: dict[str, list[tuple[str, bool]]] = {}
    entity = None
    for s in sentences:
        if m := _ENTITY.match(s):
            entity = (m.group(1), m.group(2))
        elif (m := _SUB_SINGULAR.match(s)) or (m := _SUB_PLURAL.match(s)):
            subs.setdefault(m.group(1).lower(), set()).add(m.group(2))
        elif (m := _PROP_PLURAL.match(s)) or (m := _PROP_SINGULAR.match(s)):
            props.setdefault(m.group(1).lower(), []).append((m.group(3), m.group(2) is None))
        else:
            raise ValueError(f"unrecognised sentence: {s!r}")
    if entity is None:
        raise ValueError("no entity fact ('E is a C.') in the context")
    return subs, props, entity


def check(context: list[str], query: str) -> bool | None:
    """The answer to "True or false: query" by forward chaining from the entity fact; None if undetermined."""
    subs, props, (name, start) = parse(context)
    known, frontier = {start}, [start]
    while frontier:
        for parent in subs.get(frontier.pop(), ()):
            if parent not in known:
                known.add(parent)
                frontier.append(parent)
    facts = {p: pol for c in known for p, pol in props.get(c, ())}
    m = _QUERY.match(query.strip())
    if m is None or m.group(1) != name:
        raise ValueError(f"query {query!r} is not about {name}")
    prop, polarity = m.group(3), m.group(2) is None
    return None if prop not in facts else facts[prop] == polarity


def cot_is_valid(example: Example) -> bool:
    """Every chain-of-thought step is a context sentence or follows from the facts before it by one rule."""
    subs, props, (name, start) = parse(example.context)
    have = {start}
    for s in example.cot:
        if s in example.context:
            continue
        m = _ENTITY.match(s)
        if m and m.group(1) == name and any(m.group(2) in subs.get(c, ()) for c in have):
            have.add(m.group(2))
            continue
        m = _QUERY.match(s)
        if not (m and m.group(1) == name and any((m.group(3), m.group(2) is None) in props.get(c, ()) for c in have)):
            return False
    return True


def load_sample() -> list[dict]:
    """The shipped PrOntoQA sample (500 five-hop examples, Logic-LM preprocessing): see data/prontoqa/NOTICE.md."""
    path = resources.files("reasonlab") / "data" / "prontoqa" / "dev.json.gz"
    return json.loads(gzip.decompress(path.read_bytes()))


def sample_query(item: dict) -> str:
    """The statement of a sample item's question ("Is the following statement true or false? Max is sour.")."""
    return item["question"].split("?", 1)[1].strip()
