"""The law of reasonlab's in-context modular arithmetic training batches against the reference code's,
``ICL_Modular_Arithmetic`` (https://github.com/ablghtianyi/ICL_Modular_Arithmetic, commit
d520c0cb8dfa0cbde5d8c80eb7448330ded4b7f7, MIT).

``fixtures/modular/batches.npz`` holds the first 2,000 training batches the reference's own ``main`` hands its
training loop at two configs (``scripts/reference/modular_batch_fixtures.py``; the README says how to regenerate
it): ``small`` (16 tasks, 8 shots, batch 32: two rows per task) and ``side_by_side`` (64 tasks, 16 shots, batch 64:
one row per task, the side-by-side profile ``modular-reference``). reasonlab draws as many batches with the
reference's options (``pair_draw=iid``, ``batch_mode=balanced_shared``, ``split_draw=numpy``). The two codes draw
from different generators, so the batches differ; their law must not:

- structure, exactly, in both: ``bs`` rows of ``shots`` pairs per batch, every i.d. task in ``bs / n_tasks`` rows,
  every task given the same rows of pairs (its rows differ from another task's only in z), every pair in the α
  split's training pairs (the same split in both);
- distribution, on the shared rows (the independent units: ``2,000 · bs / n_tasks`` rows per side), by tests whose
  level is fixed in advance at α = 1e-3 per family (not tuned to the data): the number of distinct pairs per row,
  a two-sample homogeneity chi-square between the codes and a goodness-of-fit chi-square of each against the exact
  law of i.i.d. draws with replacement (categories fixed by that law: the lowest counts pooled until the pool
  expects ≥ 5 rows); the probability that the pair at shot k already occurred in its row, for every k ≥ 1, a
  two-proportion z-test between the codes and a binomial z-test of each against 1 − (1 − 1/n)^k, Bonferroni over
  the shots (each at α / (shots − 1)); the pair frequencies, a chi-square of each code against the uniform law on
  the n training pairs (df n − 1) and a 2 × n homogeneity chi-square between them.

The draws are seeded, so each test's outcome is fixed; α is the chance that a correct draw under another seed
would fail a family (about 1 % over the 12 families). A wrong law fails by far: pairs drawn without replacement
(``pair_draw=stream``) repeat in a row only where it crosses the end of a pass (at 16 shots 6 % of rows, against 73 %
of i.i.d. rows), rows not shared across tasks (``batch_mode=balanced_independent``) fail the structure.
"""

from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from reasonlab.kinds.modular.config import ModularTaskConfig
from reasonlab.kinds.modular.data import ModularTask

FIXTURES = Path(__file__).parent / "fixtures" / "modular"
LAW = json.loads((FIXTURES / "batches.json").read_text())
ARRAYS = dict(np.load(FIXTURES / "batches.npz"))
NAMES = list(LAW["args"])
ALPHA = 1e-3


def chi2_sf(x: float, df: int) -> float:
    """P(χ²_df ≥ x): the regularized upper incomplete gamma Q(df/2, x/2) in closed form for integer df."""
    h = x / 2
    if df % 2 == 0:
        return sum(math.exp(-h + i * math.log(h) - math.lgamma(i + 1)) for i in range(df // 2)) if h else 1.0
    head = math.erfc(math.sqrt(h))
    return head + sum(math.exp(-h + (i + 0.5) * math.log(h) - math.lgamma(i + 1.5)) for i in range(df // 2)) \
        if h else 1.0


def normal_sf2(z: float) -> float:
    """Two-sided P(|N(0, 1)| ≥ |z|)."""
    return math.erfc(abs(z) / math.sqrt(2))


def task_config(name: str, **changes: object) -> ModularTaskConfig:
    """reasonlab's task config of the reference's run ``name``, with ``changes``."""
    a = LAW["args"][name]
    return ModularTaskConfig.model_validate({
        "p": a["p"], "n_shots": a["n_point_per_row"], "n_tasks": a["n_tasks"], "task_rule": "rectangular",
        "alpha": a["data_pct"] / 100, "n_ood_tasks": a["n_ood_tasks"], "pair_draw": "iid",
        "batch_mode": "balanced_shared", "split_draw": "numpy", "split_seed": a["data_seed"],
        "vocab_size": a["vocab_size"], "task_seed": a["seed"], "eval_batches": 1, "eval_batch_size": a["eval_bs"],
    } | changes)


def rows_of(x: torch.Tensor, y: torch.Tensor, p: int, shots: int, tasks: torch.Tensor) -> tuple[np.ndarray, ...]:
    """Pair ids (rows, shots) of a batch and each row's task: the index of the one task of ``tasks`` whose
    z = a·x + b·y (mod p) fits every shot (−1 if none or several do)."""
    tokens = torch.cat([x, y[:, -1:]], dim=1).view(len(x), shots, 3)
    pairs = tokens[..., 0] * p + tokens[..., 1]
    grid = torch.arange(p * p)
    z_of = ((tasks[:, :1] * (grid // p) + tasks[:, 1:] * (grid % p)) % p).short()  # (tasks, p²): z of each pair
    fits = (z_of[:, pairs] == tokens[None, ..., 2].short()).all(-1)  # (tasks, rows)
    task = torch.where(fits.sum(0) == 1, fits.int().argmax(0), -1)
    return pairs.numpy(), task.numpy()


@functools.cache
def reasonlab_rows(name: str, **changes: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """reasonlab's first batches at the config of ``name`` (as many as the fixture holds): pair ids (batches,
    rows, shots), task indices (batches, rows) and its training pairs."""
    a, n = LAW["args"][name], len(ARRAYS[f"{name}/pairs"])
    task = ModularTask(task_config(name, **changes))
    batch_fn = task.build(a["seed"]).batch_fn
    tasks = torch.tensor(task.id_tasks)
    rows = [rows_of(*batch_fn(step, a["bs"]), a["p"], a["n_point_per_row"], tasks) for step in range(n)]
    return np.stack([r[0] for r in rows]), np.stack([r[1] for r in rows]), task.train_pairs.numpy()


def sides(name: str) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Both codes' batches at ``name``: (pairs, tasks, training pairs)."""
    reference = tuple(ARRAYS[f"{name}/{k}"].astype(np.int64) for k in ("pairs", "tasks", "train_pairs"))
    return {"reference": reference, "reasonlab": reasonlab_rows(name)}


def shared_rows(pairs: np.ndarray, tasks: np.ndarray, n_tasks: int) -> np.ndarray:
    """Per batch, every task's rows sorted (by task, then pair sequence): (batches, tasks, rows per task, shots)."""
    n, rows, shots = pairs.shape
    keys = np.concatenate([tasks[..., None], pairs], axis=2)
    order = np.lexsort(keys.transpose(2, 0, 1)[::-1], axis=1)
    return np.take_along_axis(pairs, order[..., None], axis=1).reshape(n, n_tasks, rows // n_tasks, shots)


def units(name: str, pairs: np.ndarray, tasks: np.ndarray) -> np.ndarray:
    """The independent rows: the first task's rows of every batch, (batches · rows per task, shots)."""
    grouped = shared_rows(pairs, tasks, LAW["args"][name]["n_tasks"])
    return grouped[:, 0].reshape(-1, pairs.shape[2])


def occupancy_law(n: int, shots: int) -> np.ndarray:
    """P(a row of ``shots`` i.i.d. uniform draws from ``n`` pairs holds d distinct pairs), d = 0..shots."""
    law = np.zeros(shots + 1)
    law[0] = 1.0
    for _ in range(shots):
        law[1:] = law[1:] * np.arange(1, shots + 1) / n + law[:-1] * (n - np.arange(shots)) / n
        law[0] = 0.0
    return law


def pooled(counts: np.ndarray, law: np.ndarray, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Counts and probabilities by category, the lowest categories pooled until the pool expects ≥ 5 rows."""
    cut = int(np.argmax(np.cumsum(law) * rows >= 5))
    return np.concatenate([[counts[: cut + 1].sum()], counts[cut + 1 :]]), np.concatenate(
        [[law[: cut + 1].sum()], law[cut + 1 :]])


def homogeneity(table: np.ndarray) -> float:
    """p of the chi-square test that the rows of a contingency table share one law (empty columns dropped)."""
    table = table[:, table.sum(0) > 0]
    expected = table.sum(1, keepdims=True) * table.sum(0, keepdims=True) / table.sum()
    return chi2_sf(float(((table - expected) ** 2 / expected).sum()), (table.shape[0] - 1) * (table.shape[1] - 1))


def goodness_of_fit(counts: np.ndarray, law: np.ndarray) -> float:
    """p of the chi-square test that ``counts`` follow ``law``."""
    expected = counts.sum() * law
    return chi2_sf(float(((counts - expected) ** 2 / expected).sum()), len(counts) - 1)


def repeats_by_shot(rows: np.ndarray) -> np.ndarray:
    """For shot k = 1..shots−1, how many rows hold the pair of shot k at an earlier shot."""
    return np.array([(rows[:, :k] == rows[:, k : k + 1]).any(1).sum() for k in range(1, rows.shape[1])])


@pytest.mark.parametrize("name", NAMES)
def test_batches_have_the_reference_structure(name):
    """Exactly, in both codes: rows and shots per batch, every task in bs / n_tasks rows, every task given the same
    rows of pairs, every pair in the α split's training pairs (the reference's, in both)."""
    a = LAW["args"][name]
    for code, (pairs, tasks, train) in sides(name).items():
        assert pairs.shape[1:] == (a["bs"], a["n_point_per_row"]), code
        expected = np.repeat(np.arange(a["n_tasks"]), a["bs"] // a["n_tasks"])
        assert (np.sort(tasks, axis=1) == expected).all(), code
        grouped = shared_rows(pairs, tasks, a["n_tasks"])
        assert (grouped == grouped[:, :1]).all(), f"{code}: tasks are given different rows of pairs"
        assert sorted(train.tolist()) == sorted(ARRAYS[f"{name}/train_pairs"].tolist()), code
        assert np.isin(pairs, train).all(), code


@pytest.mark.parametrize("name", NAMES)
def test_distinct_pairs_per_row_follow_the_reference_law(name):
    """Distinct pairs per row: the codes' counts are homogeneous and each fits i.i.d. draws with replacement,
    p > α = 1e-3 (categories from the exact law, the lowest pooled until they expect ≥ 5 rows)."""
    shots, n = LAW["args"][name]["n_point_per_row"], len(ARRAYS[f"{name}/train_pairs"])
    law = occupancy_law(n, shots)
    counts = {}
    for code, (pairs, tasks, _) in sides(name).items():
        rows = units(name, pairs, tasks)
        distinct = np.array([len(set(r)) for r in rows.tolist()])
        counts[code], probs = pooled(np.bincount(distinct, minlength=shots + 1), law, len(rows))
        assert goodness_of_fit(counts[code], probs) > ALPHA, (code, counts[code], probs * len(rows))
    assert homogeneity(np.stack(list(counts.values()))) > ALPHA, counts


@pytest.mark.parametrize("name", NAMES)
def test_repeat_probability_by_shot_is_the_reference(name):
    """P(the pair at shot k already occurred in its row), k = 1..shots−1: the codes agree by a two-proportion
    z-test, and each matches 1 − (1 − 1/n)^k by a binomial z-test, every test at p > α / (shots − 1)."""
    shots, n = LAW["args"][name]["n_point_per_row"], len(ARRAYS[f"{name}/train_pairs"])
    level = ALPHA / (shots - 1)
    theory = 1 - (1 - 1 / n) ** np.arange(1, shots)
    hits, rows = {}, {}
    for code, (pairs, tasks, _) in sides(name).items():
        units_ = units(name, pairs, tasks)
        hits[code], rows[code] = repeats_by_shot(units_), len(units_)
        z = (hits[code] / rows[code] - theory) / np.sqrt(theory * (1 - theory) / rows[code])
        assert min(normal_sf2(v) for v in z) > level, (code, hits[code] / rows[code], theory)
    (h1, h2), (n1, n2) = hits.values(), rows.values()
    both = (h1 + h2) / (n1 + n2)
    z = (h1 / n1 - h2 / n2) / np.sqrt(both * (1 - both) * (1 / n1 + 1 / n2))
    assert min(normal_sf2(v) for v in z) > level, (h1 / n1, h2 / n2)


@pytest.mark.parametrize("name", NAMES)
def test_pair_frequencies_are_uniform_in_both(name):
    """Pair frequencies over the independent rows: each code's fit the uniform law on the n training pairs
    (df n − 1) and the two are homogeneous (2 × n), p > α = 1e-3."""
    train = ARRAYS[f"{name}/train_pairs"].astype(np.int64)
    counts = {}
    for code, (pairs, tasks, _) in sides(name).items():
        rows = units(name, pairs, tasks)
        counts[code] = (rows.reshape(-1, 1) == train).sum(0)
        assert counts[code].sum() == rows.size, code
        assert goodness_of_fit(counts[code], np.full(len(train), 1 / len(train))) > ALPHA, (code, counts[code])
    assert homogeneity(np.stack(list(counts.values()))) > ALPHA
