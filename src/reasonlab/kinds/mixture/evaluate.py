"""Summary of a reasoning/memory mixture run (reasoning-bias spec §2): accuracy and loss per source, and a label.

Label at an evaluation: ``not-fitted`` while the trained sources (memory, reasoning-train) are below the fit
threshold; then ``reasoning`` if the masked reasoning tuples are answered by the rule (accuracy > majority), else
``memorizing``. Which source is learned first is read from the curves (metrics.parquet), not from this label.
"""

from __future__ import annotations

from reasonlab.config import ThresholdConfig
from reasonlab.evaluate.set_score import Evaluation, SetScore, pooled
from reasonlab.store import MetricRow, Metrics
from reasonlab.tasks.base import EvalSet

SOURCES = {"memory": "memory", "reasoning_train": "reasoning/train", "reasoning_test": "reasoning/test"}
# The kind's vocabulary (``reasonlab.vocabulary``): each figure's one label. A source's label names its accuracy; its
# loss and in-range rate add the measure.
SOURCE_WORDS = {"memory": "memory", "reasoning_train": "rule on trained tuples",
                "reasoning_test": "rule on unseen tuples"}
WORDS = {f"{source}{suffix}": f"{words}{measure}" for source, words in SOURCE_WORDS.items()
         for suffix, measure in (("_acc", ""), ("_loss", ": loss"), ("_in_range", ": in-range rate"))}


def _pooled_loss(scores: dict[str, SetScore], prefix: str) -> float | None:
    chosen = [s for name, s in scores.items() if name.startswith(prefix) and s.loss is not None]
    return sum(s.loss * s.n for s in chosen) / sum(s.n for s in chosen) if chosen else None


def mixture_label(figures: dict[str, float], th: ThresholdConfig) -> str:
    trained = [figures[k] for k in ("memory_acc", "reasoning_train_acc") if k in figures]
    if any(a < th.fit for a in trained):
        return "not-fitted"
    if "reasoning_test_acc" not in figures:
        return "fitted"
    return "reasoning" if figures["reasoning_test_acc"] > th.majority else "memorizing"


def mixture_summary(scores: dict[str, SetScore], sets: dict[str, EvalSet], th: ThresholdConfig) -> Evaluation:
    figures: dict[str, float] = {}
    for short, prefix in SOURCES.items():
        if (acc := pooled(scores, prefix)) is not None:
            figures[f"{short}_acc"] = acc
            figures[f"{short}_loss"] = _pooled_loss(scores, prefix)
    if (rate := pooled(scores, "memory", "in_range")) is not None:
        figures["memory_in_range"] = rate
    for name, s in scores.items():
        if name.startswith("memory/group-"):  # label-distribution variants: one curve per group (Fig. 8)
            key = name.replace("/", "_").replace("-", "_")
            figures[f"{key}_acc"], figures[f"{key}_loss"] = s.acc("designated"), s.loss
            if "in_range" in s.correct:
                figures[f"{key}_in_range"] = s.acc("in_range")
    label = mixture_label(figures, th)
    return Evaluation(label, dict(figures), figures, {k: v for k, v in figures.items() if k.endswith("_acc")},
                      {"label": label})


def t50(rows: list[MetricRow], source: str, threshold: float = 0.5, kind: str = "acc") -> int | None:
    """First evaluated epoch at which the source's pooled ``kind`` (accuracy, or in_range) reaches ``threshold``
    (None if never)."""
    return Metrics(rows).first_epoch("pooled", f"{source}_{kind}", threshold)


def pooled_at(rows: list[MetricRow], metric: str, epoch: int) -> float | None:
    return Metrics(rows).at(epoch, "pooled", metric)


def label_law_criteria(rows: list[MetricRow], groups: int, in_range: float = 0.9) -> list[dict[str, object]]:
    """Fig. 8 (i), per memory group: the first epoch at which the in-range rate reaches ``in_range``, the accuracy
    then, and t50. The claim holds for a group when it knows the label range (in-range ≥ 0.9) while its accuracy
    is still below 0.5."""
    out = []
    for i in range(1, groups + 1):
        source = f"memory_group_{i}"
        epoch = t50(rows, source, in_range, "in_range")
        acc = None if epoch is None else pooled_at(rows, f"{source}_acc", epoch)
        out.append({"group": i, "epoch_in_range": epoch, "acc_then": acc, "t50": t50(rows, source),
                    "held": acc is not None and acc < 0.5})
    return out


def t50_ratio(run: dict) -> tuple[float | None, bool]:
    """t50 reasoning-train over t50 memory, and whether that is only an upper bound. Memory that never reached 0.5
    by the last evaluated epoch E has t50 > E (right-censored), so the ratio is then below t50_rsn / E: a run
    that learned the rule and never the memory reasons first however long it would have trained on."""
    rsn, mem = run["t50_reasoning_train"], run["t50_memory"]
    if rsn is None:
        return None, False
    if mem is None:
        return rsn / run["last_epoch"], True
    return rsn / mem, False


def reasoning_bias_criteria(small: dict, large: dict) -> dict[str, object]:
    """The spec's E1 criteria from the t50s, last evaluated epoch and final test accuracies of a small-init (γ 0.8)
    and a large-init (γ 0.3) run: reasoning first at small init (t50 rsn ≤ 0.5·t50 mem, test ≥ 0.9), no such bias
    at large init (ratio in [0.5, 2], test at least 0.5 below the small-init value). A ratio known only as an upper
    bound passes "≤ 0.5" when the bound does and never passes "in [0.5, 2]"; a rule never learned fails both."""
    r_small, small_bound = t50_ratio(small)
    r_large, large_bound = t50_ratio(large)
    out: dict[str, object] = {"t50_ratio_small_init": r_small, "t50_ratio_small_init_bound": small_bound,
                              "t50_ratio_large_init": r_large, "t50_ratio_large_init_bound": large_bound}
    out["small_init_reasons_first"] = r_small is not None and r_small <= 0.5
    out["small_init_generalizes"] = small["reasoning_test_acc"] >= 0.9
    out["large_init_no_bias"] = r_large is not None and not large_bound and 0.5 <= r_large <= 2
    out["large_init_generalizes_less"] = large["reasoning_test_acc"] <= small["reasoning_test_acc"] - 0.5
    return out
