"""The parity probe as ``reasonlab analyze`` runs it: ``flips`` flips one bit (``--bit``) of every string and
counts how often the model's answer flips. The parity rule flips it every time; a memorized table need not, on
the strings it never saw.

Layer: analysis (by its file name).
"""

from __future__ import annotations

from collections.abc import Callable

from reasonlab.analysis.loading import Loaded, save
from reasonlab.config import ConfigError
from reasonlab.registry import KindOption, integer

from .figures import plot_flips


def probe_flips(run: Loaded) -> dict:
    n_bits = run.cfg.task.n_bits
    bit = run.options.get("bit", 0)
    if bit >= n_bits:
        raise ConfigError(f"--bit: {bit} is not a bit of this task (its bits are 0..{n_bits - 1})")
    rates = {}
    for name, s in run.data.eval_sets.items():
        flipped = s.inputs.clone()
        flipped[:, bit] = 3 - flipped[:, bit]  # the bit tokens 1 and 2 swap
        rates[name] = float((run.model(s.inputs).argmax(-1) != run.model(flipped).argmax(-1)).float().mean())
    plot_flips(rates, bit, run.out / "flips")
    return save(run, "flips", {"bit": bit, "flipped": rates}, {})


def headline(name: str, numbers: dict) -> str:
    flipped = numbers["flipped"]
    return (f"bit {numbers['bit']} flips the answer on {flipped['seen']:.0%} of seen and {flipped['held_out']:.0%} "
            "of held-out strings (the rule: all)")


PROBES: dict[str, Callable[[Loaded], dict]] = {"flips": probe_flips}
TITLES = {"flips": "Answer flips"}
OPTIONS = (KindOption("bit", "the bit the flips probe flips (default 0)", integer(0), "INTEGER"),)
