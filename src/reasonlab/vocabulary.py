"""One name per number: what a run's figure is called on every surface.

A figure has one stored name, the key its task kind's summary gives it (``reasoning_test_acc``,
``heldout/4-3/train_keys/inferential``): the key of ``summary.json``'s ``final`` figures, the metric of the
``pooled`` split in ``metrics.parquet``, and after ``final.`` (slashes as dots) the results column and the SQL
name. It has one human label, declared once by its kind (``Kind.words``, beside the kind's summary:
``reasoning_test_acc`` -> ``rule on unseen tuples``), and a name the kind declares no word for is its own label.

Every surface names a figure through this module, so no surface words it its own way: the progress line, the
live view, ``results`` and SQL show the stored name; the run card and the report show the label with the stored
name beside it (``labelled``); a figure's legend and a narrow table's headers show the label, with the stored names
in a key under them (``key``).

Layer: ground (imports only the registry).
"""

from __future__ import annotations

from collections.abc import Iterable

from reasonlab.registry import task_kinds

# Words every kind's set and figure names share (the rest: each kind's own ``words``)
WORDS = {"id": "in-distribution", "ood": "out-of-distribution", "acc": "accuracy", "any": "any defined target"}


def label(name: str, kind: str | None = None) -> str:
    """The figure's one human label: its kind's word for the whole name, else its ``/``-separated parts in words
    (a part the kind ``qualify``-es joins the one before it: ``heldout/4-3/test_keys/inferential`` -> ``held-out
    (4,3) · test keys · inferential``), a part without a word as it is stored. ``kind`` None reads every kind's
    words (a set name or figure stem whose kind is not at hand)."""
    entries = [entry] if (entry := task_kinds().get(str(kind))) is not None else list(task_kinds().values())
    words = {**WORDS, **{w: t for e in entries for w, t in (e.words or {}).items()}}
    if name in words:
        return words[name]
    qualifiers = [e.qualify for e in entries if e.qualify is not None]
    parts: list[str] = []
    for part in name.split("/"):
        qualifier = next((q for qualify in qualifiers if (q := qualify(part)) is not None), None) if parts else None
        if qualifier is not None:
            parts[-1] += f" {qualifier}"
        else:
            parts.append(words.get(part, part))
    return " · ".join(parts)


def labelled(name: str, kind: str | None = None) -> str:
    """The label with the stored name beside it, ``rule on unseen tuples (reasoning_test_acc)``; the stored name
    alone when it is its own label."""
    text = label(name, kind)
    return name if text == name else f"{text} ({name})"


def key(names: Iterable[str], kind: str | None = None) -> str:
    """The stored names of labels shown alone (a legend, a table's headers), for a line under them: ``memory =
    memory_acc · rule on unseen tuples = reasoning_test_acc``; a name that is its own label is left out."""
    return " · ".join(f"{text} = {name}" for name in dict.fromkeys(names) if (text := label(name, kind)) != name)
