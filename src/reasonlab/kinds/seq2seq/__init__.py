"""Real benchmarks (SCAN, COGS, addition, PrOntoQA) as decoder-only sequence to sequence (anchor spec §8),
registered on import: config, data (``Seq2SeqTask``) and evaluate (exact match labels, steps to converge, the words
of its figures)."""

from reasonlab.kinds.seq2seq import evaluate
from reasonlab.kinds.seq2seq.config import Seq2SeqTaskConfig
from reasonlab.kinds.seq2seq.data import Seq2SeqTask
from reasonlab.registry import TaskKind, register_task

KIND = register_task(TaskKind(
    "seq2seq", Seq2SeqTaskConfig, Seq2SeqTask, evaluate.seq2seq_summary, best_of_run=evaluate.best_of_run,
    main_columns=("final.train_exact", "final.id_exact", "final.ood_exact", "final.id_judgement"),
    axes={"task.n_train": ("training rows", "")}, words=evaluate.WORDS))
