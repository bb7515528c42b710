"""A task's data as a ``torch.utils.data.Dataset``: its fixed training set, or one of its evaluation sets, row by row,
so a ``DataLoader`` (batching, shuffling, workers) or any PyTorch training code reads the very tensors the trainer
and the scorer read, without reasonlab's loop.
"""

from __future__ import annotations

from torch import Tensor
from torch.utils.data import Dataset

from reasonlab.arguments import checked, instance, word
from reasonlab.errors import ConfigError
from reasonlab.tasks.base import TaskData

_DATA = instance(TaskData, "the TaskData of build_task(config) or run.data()")
TRAIN = "train"  # the split name of the fixed training set (an evaluation set of that name is read as ``eval:train``)


class TaskDataset(Dataset):
    """Rows of ``data`` (``build_task(config)``, ``run.data()``) as ``(input, target)`` pairs of tensors: ``split``
    ``"train"`` is the training set, any other split one of ``data.eval_sets`` by name, read against its target
    ``target`` (an anchor held-out set holds ``inferential`` and ``symmetric``; most sets ``designated``).

    A task that draws its training batches per step (in-context modular arithmetic: ``data.batch_fn``) has no fixed
    training set; ``TaskDataset.splits(data)`` lists the splits a dataset can be made of."""

    @checked(split=word("a split of TaskDataset.splits(data), e.g. 'train'"),
             target=word("a target of the set, e.g. 'designated'"))
    def __init__(self, data: TaskData, split: str = TRAIN, target: str = "designated") -> None:
        _DATA(data, "TaskDataset data")
        self.split, self.target = split, target
        if split == TRAIN:
            if data.batch_fn is not None:
                raise ConfigError(f"TaskDataset split 'train': this task draws its training batches per step "
                                  f"(data.batch_fn(step, batch_size)) and has no fixed training set; choose one of "
                                  f"{', '.join(map(repr, TaskDataset.splits(data)))}")
            self.inputs, self.targets = data.train_inputs, data.train_targets
            return
        name = TRAIN if split == f"eval:{TRAIN}" else split
        if name not in data.eval_sets:
            raise ConfigError(f"TaskDataset split {split!r}: not a split of this task; choose one of "
                              f"{', '.join(map(repr, TaskDataset.splits(data)))}")
        targets = data.eval_sets[name].targets
        if target not in targets:
            raise ConfigError(f"TaskDataset target {target!r}: the set {name!r} holds the targets "
                              f"{', '.join(map(repr, targets))}; pass target= one of them")
        self.inputs, self.targets = data.eval_sets[name].inputs, targets[target]

    @staticmethod
    def splits(data: TaskData) -> list[str]:
        """The splits of ``data`` a dataset can be made of: ``"train"`` where the task has a fixed training set,
        then its evaluation sets (one named ``train`` as ``eval:train``)."""
        _DATA(data, "TaskDataset.splits data")
        names = [f"eval:{n}" if n == TRAIN else n for n in data.eval_sets]
        return ([TRAIN] if data.batch_fn is None else []) + names

    def __len__(self) -> int:
        return len(self.inputs)

    def __getitem__(self, i: int) -> tuple[Tensor, Tensor]:
        return self.inputs[i], self.targets[i]
