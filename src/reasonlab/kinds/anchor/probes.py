"""The anchor-composition analyses (anchor spec §7) as ``reasonlab analyze`` runs them: information flow,
post-attention representations, fused vectors, condensation, embedding structure and spectra. Each builds its
probe inputs from the run's task, computes the numbers with ``analysis.anchor`` and draws ``plots.anchor``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from reasonlab.analysis.geometry import pca
from reasonlab.analysis.loading import Loaded, save
from reasonlab.config import ConfigError
from reasonlab.evaluate.cosine import cosine_matrix
from reasonlab.kinds.anchor import analysis as an
from reasonlab.kinds.anchor import figures as plots
from reasonlab.kinds.anchor.config import Pair
from reasonlab.kinds.anchor.data import AnchorTask
from reasonlab.registry import KindOption, integer, number


def _task(run: Loaded) -> AnchorTask:
    return run.task


def _probe_pair(run: Loaded) -> Pair:
    """--pair a1-a2, else the run's first held-out pair, else its first pair."""
    task = _task(run)
    pair = Pair.parse(run.options.get("pair") or (task.held_out[0] if task.held_out else task.pairs[0]))
    if pair not in task.pairs:
        raise ConfigError(f"--pair: {pair.key} is not an ordered pair of the run's anchors {task.cfg.anchors}")
    return pair


def _sequences(run: Loaded, pair: tuple[int, int], n: int, seed: int, key: int | None = None,
               position: int | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """n seeded sequences of ``pair`` (train and test keys alike), optionally with one key at one position."""
    task = _task(run)
    gen = torch.Generator().manual_seed(seed)
    seq, keys, pos = task.sample(pair, n, False, gen)
    if position is not None:
        cfg = task.cfg
        seq = torch.randint(cfg.item_min, cfg.item_max + 1, seq.shape, generator=gen)
        pos = torch.full_like(pos, position)
        seq[:, position + 1], seq[:, position + 2] = pair
    if key is not None:
        keys = torch.full_like(keys, key)
    seq[torch.arange(n), pos] = keys
    return seq, keys, pos


def _position(run: Loaded) -> int:
    """--position, else the middle key position (noise on both sides of the key)."""
    positions = _task(run).cfg.positions()
    position = run.options.get("position", positions[len(positions) // 2])
    if position not in positions:
        raise ConfigError(f"--position: {position} is not a key position of this task ({positions})")
    return position


def _cache(run: Loaded, tokens: Tensor) -> dict[str, Tensor]:
    _, cache = run.model.run_with_cache(tokens)
    return cache


def _patterns(run: Loaded, tokens: Tensor) -> np.ndarray:
    """(N, layers, T, T) attention, averaged over heads."""
    cache = _cache(run, tokens)
    return np.stack([cache[f"blocks.{i}.attn.hook_pattern"].mean(1).numpy() for i in range(len(run.model.blocks))],
                    axis=1)


def probe_flow(run: Loaded) -> dict:
    """Attention edges of one input (key ``--key``, default 99, with the probe pair) drawn as a layered graph,
    and the mean flows last → key/anchors and anchors → key over 1,000 sequences of the pair."""
    pair, cfg = _probe_pair(run), _task(run).cfg
    key = run.options.get("key", min(99, cfg.item_max))
    if not cfg.item_min <= key <= cfg.item_max:
        raise ConfigError(f"--key: {key} is not a key of this task (its items are {cfg.item_min}..{cfg.item_max})")
    seed = run.options.get("seed", 0)
    one, _, pos = _sequences(run, pair, 1, seed, key=key, position=_position(run))
    pattern = _patterns(run, one)[0]
    threshold = run.options.get("threshold", 0.2)
    edges = an.flow_edges(pattern, threshold)
    many, _, positions = _sequences(run, pair, 1000, seed + 1)
    summary = an.flow_summary(_patterns(run, many), positions.numpy())
    roles = {str(int(pos[0]) + i): role for i, role in enumerate(("key", "a1", "a2"))}
    numbers = {"pair": list(pair), "key": key, "tokens": one[0].tolist(), "threshold": threshold, "roles": roles,
               "edges": [e.__dict__ for e in edges], "mean_flow": summary}
    draw_flow(numbers, pattern, run.out / "flow")
    return save(run, "flow", numbers, {"pattern": pattern})


def draw_flow(numbers: dict, pattern: np.ndarray, out_base: Path) -> list[Path]:
    """The flow figure from the probe's saved numbers and pattern (``flow.json``, ``flow.npz``): drawn again from
    committed files, without the run's weights."""
    threshold, pair = numbers["threshold"], Pair(*numbers["pair"])
    return plots.plot_flow(pattern, numbers["tokens"], {int(k): v for k, v in numbers["roles"].items()},
                           an.flow_edges(pattern, threshold), threshold,
                           f"pair {pair.caption}, key {numbers['key']}: edges with attention ≥ {threshold}", out_base)


def probe_representations(run: Loaded) -> dict:
    """The last-position vector after the first attention block over every pair: PCA coloured by pair, and how
    far mirror pairs (a, b) and (b, a) sit apart (``mirror_merge``, 0 = they coincide)."""
    task, seed = _task(run), run.options.get("seed", 0)
    per_pair = run.options.get("per_pair", 200)
    seqs = [(_sequences(run, p, per_pair, seed + i)[0], p) for i, p in enumerate(task.pairs)]
    tokens = torch.cat([s for s, _ in seqs])
    labels = [p for _, p in seqs for _ in range(per_pair)]
    vectors = _cache(run, tokens)["blocks.0.hook_resid_mid"][:, -1].numpy()
    merge = an.mirror_merge(vectors, labels)
    scores, explained = pca(torch.as_tensor(vectors), k=2)
    numbers = {"mirror_merge": merge, "pca_explained": explained.tolist()}
    arrays = {"pca": scores, "pairs": np.array(labels)}
    draw_representations(numbers, arrays, run.out / "representations")
    return save(run, "representations", numbers, arrays)


def draw_representations(numbers: dict, arrays: dict[str, np.ndarray], out_base: Path) -> list[Path]:
    """The representations scatter from the probe's saved numbers and arrays (``representations.json``, ``.npz``):
    drawn again from committed files, without the run's weights."""
    return plots.plot_pair_scatter(arrays["pca"], [Pair(*map(int, row)) for row in arrays["pairs"]],
                                   f"after attention block 1, last position; mirror merge "
                                   f"{numbers['mirror_merge']:.2f} (0 = mirror pairs coincide); PCs explain "
                                   f"{sum(numbers['pca_explained']):.0%}", out_base)


def _fused(run: Loaded, pair: tuple[int, int], keys: list[int]) -> np.ndarray:
    """v(x; pair): the last position of the second block's post-attention stream, one fixed noise draw."""
    layer = min(1, len(run.model.blocks) - 1)
    tokens = torch.cat([_sequences(run, pair, 1, run.options.get("seed", 0), key=k, position=_position(run))[0]
                        for k in keys])
    return _cache(run, tokens)[f"blocks.{layer}.hook_resid_mid"][:, -1]


def probe_fused(run: Loaded) -> dict:
    """Cosine between fused vectors of two pairs over a key range, with the cells of equal inferential targets
    boxed (spec Fig. 4): the inferential solution gives parallel vectors exactly on the boxes."""
    task = _task(run)
    anchors = task.cfg.anchors
    default = [((3, 3), (2, 2)), ((1, 2), (1, 3))] if {1, 2, 3} <= set(anchors) else \
        [((anchors[0], anchors[0]), (anchors[-1], anchors[-1]))]
    lo = max(task.cfg.item_min, run.options.get("key_min", 30))
    keys = list(range(lo, min(task.cfg.item_max, lo + 10) + 1))
    numbers, arrays, panels = {}, {}, []
    for first, second in run.options.get("fused_pairs", default):
        cos = cosine_matrix(torch.cat([_fused(run, first, keys), _fused(run, second, keys)]))[: len(keys),
                                                                                            len(keys):]
        xs = torch.tensor(keys)
        boxes = (task.inferential(xs, first)[:, None] == task.inferential(xs, second)[None, :]).numpy()
        name = f"{first[0]}{first[1]}-vs-{second[0]}{second[1]}"
        numbers[name] = {"boxed_contrast": an.boxed_contrast(cos, boxes), "boxed_mean": float(cos[boxes].mean())
                         if boxes.any() else float("nan")}
        arrays[name] = cos
        panels.append((f"v(x1; {first}) vs v(x2; {second})", cos, boxes))
    plots.plot_fused(panels, keys, run.out / "fused")
    return save(run, "fused", {"keys": keys, "pairs": numbers}, arrays)


def _token_rows(run: Loaded) -> tuple[list[int], Tensor]:
    """Embedding rows of the item tokens (keys, noise) and every designated target, ordered by value."""
    task = _task(run)
    xs = torch.arange(task.cfg.item_min, task.cfg.item_max + 1)
    targets = {int(v) for p in task.pairs for v in task.designated(xs, p)}
    values = sorted((set(xs.tolist()) | targets) - set(task.cfg.anchors))
    values = [v for v in values if 0 < v < run.model.vocab_size]
    return values, run.model.embed.weight.detach()[values]


def probe_condensation(run: Loaded) -> dict:
    """Cosine between the neurons (rows) of the first-layer W_Q and between embedding rows, reordered by groups
    of cos > ``threshold``: small initialization condenses W_Q onto few directions (paper §5.3)."""
    threshold = run.options.get("threshold", 0.7)
    values, emb = _token_rows(run)
    result, panels, arrays = {}, [], {}
    for name, rows in (("W_Q layer 1", run.model.blocks[0].attn.W_Q.weight.detach()), ("embedding", emb)):
        c = an.condensation(rows, threshold)
        result[name] = c.scores(threshold)
        panels.append((f"{name}: {result[name]['groups']} groups, largest {result[name]['largest_group_share']:.0%}",
                       c.cos[np.ix_(c.order, c.order)]))
        arrays[name.split()[0]] = c.cos
    plots.plot_condensation(panels, run.out / "condensation")
    return save(run, "condensation", {"threshold": threshold, **result}, arrays)


def probe_embedding(run: Loaded) -> dict:
    """Ordinal structure of the item/target embeddings: PCA coloured by value, |Spearman| of PC1, and whether
    steps of 3 and 4 (the anchor-shift differences) point one way."""
    values, emb = _token_rows(run)
    numbers = an.ordinal_structure(emb, values, seed=run.options.get("seed", 0))
    scores, explained = pca(emb, k=2)
    plots.plot_embedding(scores, values, f"embedding rows of items and targets; |Spearman(value, PC1)| "
                         f"{numbers['pc1_spearman']:.2f}", run.out / "embedding")
    return save(run, "embedding", {**numbers, "pca_explained": explained.tolist()}, {"pca": scores})


def probe_spectra(run: Loaded) -> dict:
    """Singular values of every weight matrix and the eigenvalues of the embedding rows' covariance."""
    svs = an.singular_values(run.model)
    _, emb = _token_rows(run)
    eig = an.covariance_spectrum(emb)
    plots.plot_spectra(svs, eig, run.out / "spectra")
    top = {name: (s[:3] / s.sum()).tolist() for name, s in svs.items()}
    return save(run, "spectra", {"top3_share": top, "embedding_top_eigen_share": float(eig[0] / eig.sum())},
                {"embedding_eigenvalues": eig, **{n.replace(".", "_"): s for n, s in svs.items()}})


def headline(name: str, numbers: dict) -> str:
    """One line per analysis for the terminal; the JSON beside the figures has everything."""
    if name == "flow":
        flows = numbers["mean_flow"]
        return "; ".join(f"layer {i + 1}: last→key {flows['last->key'][i]:.2f}, last→a1 {flows['last->a1'][i]:.2f}, "
                         f"last→a2 {flows['last->a2'][i]:.2f}, a2→key {flows['a2->key'][i]:.2f}"
                         for i in range(len(flows["last->key"])))
    if name == "representations":
        return f"mirror merge {numbers['mirror_merge']:.2f} (0: mirror pairs coincide, the symmetric signature)"
    if name == "fused":
        return ", ".join(f"{k}: boxed − other cosine {v['boxed_contrast']:.2f}" for k, v in numbers["pairs"].items())
    if name == "condensation":
        return ", ".join(f"{k}: {v['groups']} groups, largest {v['largest_group_share']:.0%}"
                         for k, v in numbers.items() if isinstance(v, dict))
    if name == "embedding":
        return (f"|Spearman(value, PC1)| {numbers['pc1_spearman']:.2f}; step-3 / step-4 / random difference cosine "
                f"{numbers['step3_cosine']:.2f} / {numbers['step4_cosine']:.2f} / {numbers['random_step_cosine']:.2f}")
    return f"top eigenvalue holds {numbers['embedding_top_eigen_share']:.0%} of the embedding variance"


PROBES: dict[str, Callable[[Loaded], dict]] = {
    "flow": probe_flow, "representations": probe_representations, "fused": probe_fused,
    "condensation": probe_condensation, "embedding": probe_embedding, "spectra": probe_spectra}


# Readable titles of the probes (the report's headings and captions).
TITLES = {
    "flow": "Information flow",
    "representations": "Post-attention representations",
    "fused": "Fused vectors",
    "condensation": "Condensation",
    "embedding": "Embedding structure",
    "spectra": "Weight spectra",
}

# What the probes read from the command line (``reasonlab analyze`` flags); a flag not given keeps each default.
OPTIONS = (
    KindOption("pair", "the probe pair a1-a2, e.g. 4-3 (4,3 also works; default: the held-out pair)", Pair.parse,
               "A1-A2"),
    KindOption("key", "the flow probe's key (default 99)", integer(0), "INTEGER"),
    KindOption("position", "key position of the probe inputs (default: the middle one)", integer(0), "INTEGER"),
    KindOption("threshold", "flow edge / condensation cosine threshold, in [-1, 1]", number(-1, 1), "FLOAT"),
)
