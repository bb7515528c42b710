"""Real benchmarks (SCAN, COGS, addition, PrOntoQA) as decoder-only sequence to sequence (anchor spec §8),
registered on import: config, data (``Seq2SeqTask``), evaluate (exact match labels, steps to converge, the words
of its figures) and profiles/ (the benchmarks' built-in profiles)."""

from reasonlab.kinds.base import Kind
from reasonlab.kinds.seq2seq import evaluate
from reasonlab.kinds.seq2seq.config import Seq2SeqTaskConfig
from reasonlab.kinds.seq2seq.data import Seq2SeqTask
from reasonlab.registry import register_task


class Seq2Seq(Kind):
    name = "seq2seq"
    config = Seq2SeqTaskConfig
    task = Seq2SeqTask
    axes = {"task.n_train": ("training rows", "")}
    words = evaluate.WORDS
    main_columns = ("final.train_exact", "final.id_exact", "final.ood_exact", "final.id_judgement")
    summarize = staticmethod(evaluate.seq2seq_summary)
    best_of_run = staticmethod(evaluate.best_of_run)

    def accuracy_curve(self, split: str, metric: str) -> str | None:
        """Exact match and the judgement, pooled."""
        return metric if split == "pooled" and metric.endswith(("_exact", "_judgement")) else None


KIND = register_task(Seq2Seq)
