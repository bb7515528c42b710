"""The modular-arithmetic probes (modular-icl spec §7) as ``reasonlab analyze`` runs them: each loads what it
needs from the run, calls ``analysis.modular`` for the numbers and ``plots.modular`` for the figures, and saves
both. Tasks with a zero component are left out and i.d. and o.o.d. tasks are reported separately.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch

from reasonlab.analysis.loading import Loaded, save
from reasonlab.arguments import ascii_int
from reasonlab.config import ConfigError
from reasonlab.kinds.modular import analysis as mod
from reasonlab.kinds.modular import figures as plots
from reasonlab.registry import KindOption, integer, one_of


def _groups(run: Loaded, limit: int) -> dict[str, list[tuple[int, int]]]:
    return {"id": mod.nonzero_tasks(run.task.id_tasks, limit), "ood": mod.nonzero_tasks(run.task.ood_tasks, limit)}


def _probe_task(run: Loaded) -> tuple[int, int]:
    """--task a,b, else the first i.d. task with a, b ≠ 0."""
    if run.options.get("task"):
        a, b = run.options["task"]
        return a % run.cfg.task.p, b % run.cfg.task.p
    return mod.nonzero_tasks(run.task.id_tasks, 1)[0]


def _context(run: Loaded) -> list[tuple[int, int]]:
    return mod.probe_context(run.cfg.task.p, run.cfg.task.n_shots - 1, run.options.get("seed", 0))


def parse_task(text: str) -> tuple[int, int]:
    """``--task 2,3`` (or ``2-3``) as (a, b)."""
    a, sep, b = text.replace("-", ",").partition(",")
    first, second = ascii_int(a.strip()), ascii_int(b.strip())
    if not sep or first is None or second is None:
        raise ValueError(f"{text!r} is not a task a,b of two integers (e.g. 2,3)")
    return first, second


# ---- the probes ------------------------------------------------------------------------------------------------
def probe_shots(run: Loaded) -> dict:
    """Per-shot accuracy on the four evaluation sets, against the RM and MR ceilings of the same sequences, and
    split by query: those ratio matching could answer from the earlier examples, and the rest ("beyond RM"),
    which a model answers only by combining examples — the eval-set reading of composition, beside the grid's."""
    p = run.cfg.task.p
    curves, numbers, arrays = {}, {}, {}
    ceilings: dict[str, np.ndarray] = {}
    for name, s in run.data.eval_sets.items():
        tokens = torch.cat([s.inputs, s.targets["designated"][:, -1:]], dim=1)
        correct = mod.shot_correct(run.model, tokens)
        masks = mod.shot_answerable(tokens[:, 0::3] * p + tokens[:, 1::3], p)
        split = {"on_rm": masks["rm"], "beyond_rm": ~masks["rm"]}
        with np.errstate(invalid="ignore"):  # a shot with no such query is nan
            per_shot = {k: (correct & m).sum(0) / m.sum(0) for k, m in split.items()}
        curves[name] = correct.mean(0)
        numbers[name] = {"last_shot": float(curves[name][-1]), "all_shot": float(curves[name].mean()),
                         "sequences": len(tokens), "distinct_queries": len(torch.unique(tokens[:, -3:-1], dim=0)),
                         **{k: {"last_shot": float(per_shot[k][-1]), "queries": int(m[:, -1].sum()),
                                "per_shot": per_shot[k].tolist()} for k, m in split.items()}}  # nan: none; null in JSON
        key = name.replace("/", "_")
        arrays[key], arrays[f"{key}_beyond_rm"] = curves[name], per_shot["beyond_rm"]
        if name == "ood/test":
            ceilings = {k: v.mean(0) for k, v in masks.items()}
    numbers["ceilings"] = {k: v.tolist() for k, v in ceilings.items()}
    plots.plot_shot_curves(curves, ceilings, run.out / "shots",
                           f"{run.cfg.profile} — per-shot accuracy at checkpoint {run.checkpoint}", plots.PAPER_SHOTS,
                           beyond=arrays.get("ood_test_beyond_rm"))
    return save(run, "shots", numbers, {**arrays, **{f"ceiling_{k}": v for k, v in ceilings.items()}})


def _shot_grids(run: Loaded, tasks: list[tuple[int, int]], context: list[tuple[int, int]]) -> list[mod.ShotGrid]:
    """The grids at the spec's k below the context's length and at its full length."""
    shots = tuple(sorted({k for k in mod.GRID_SHOTS if k < len(context)} | {len(context)}))
    return mod.shot_grids(run.model, tasks, context, run.cfg.task.p, shots)


def probe_grid(run: Loaded) -> dict:
    """k-shot correctness over all p² queries vs ratio matching and modular regression, per task group; with the
    fixed context drawn from all pairs (figures and arrays) and again from the test pairs alone (numbers under
    ``unseen_context``), as in the o.o.d.-test evaluation set, whose every example is a test pair."""
    p, context = run.cfg.task.p, _context(run)
    focus = _probe_task(run)
    numbers: dict = {"context": context, "task": list(focus)}
    arrays = {}
    unseen = np.zeros(p * p, dtype=bool)
    unseen[run.task.test_pairs.numpy()] = True  # pair id = x·p + y, the grid's (x, y) layout
    unseen = unseen.reshape(p, p)
    held_out = mod.probe_context(p, len(context), run.options.get("seed", 0), run.task.test_pairs)
    numbers["unseen_context"] = {"context": held_out}
    for group, tasks in _groups(run, run.options.get("max_tasks", 16)).items():
        if group == "id" and focus not in tasks:
            tasks = [focus, *tasks[:-1]]
        grids = _shot_grids(run, tasks, context)
        numbers[group] = {str(g.k): g.scores(unseen) for g in grids}
        for g in grids:
            arrays.update({f"{group}_k{g.k}": g.correct, f"{group}_k{g.k}_rm": g.rm, f"{group}_k{g.k}_mr": g.mr})
        numbers["unseen_context"][group] = {str(g.k): g.scores(unseen) for g in _shot_grids(run, tasks, held_out)}
        index = tasks.index(focus) if focus in tasks else 0
        numbers.setdefault("figure", {})[group] = {"task": list(tasks[index]), "index": index}
    draw_grid(numbers, arrays, run.out)
    return save(run, "grid", numbers, arrays)


def draw_grid(numbers: dict, arrays: dict[str, np.ndarray], out: Path) -> list[Path]:
    """The k-shot grid figures (``grid-<group>``) from the probe's saved numbers and arrays (``grid.json``,
    ``grid.npz``): drawn again from committed files, without the run's weights."""
    drawn = []
    for group, focus in numbers["figure"].items():
        grids = [mod.ShotGrid(int(k), arrays[f"{group}_k{k}"], arrays[f"{group}_k{k}_rm"], arrays[f"{group}_k{k}_mr"])
                 for k in sorted(numbers[group], key=int)]
        drawn += plots.plot_shot_grids(grids, tuple(focus["task"]), focus["index"], out / f"grid-{group}")
    return drawn


def probe_attention(run: Loaded) -> dict:
    """Per-layer, per-head attention of one sequence of the probe task, with scores of each head's pattern."""
    p, task = run.cfg.task.p, _probe_task(run)
    pairs = mod.probe_context(p, run.cfg.task.n_shots, run.options.get("seed", 0))
    tokens = mod.example_tokens(task, pairs, p)[: min(run.model.cfg.max_positions, 3 * run.cfg.task.n_shots - 1)]
    maps = mod.attention_maps(run.model, tokens)
    scores = {f"{li}.{h}": mod.attention_scores(maps[li, h]) for li in range(maps.shape[0])
              for h in range(maps.shape[1])}
    plots.plot_attention(maps, tokens.tolist(), run.out / "attention")
    return save(run, "attention", {"task": list(task), "heads": scores}, {"patterns": maps})


def _head_outputs(run: Loaded) -> tuple[np.ndarray, dict[str, np.ndarray], tuple[int, int], int]:
    p, n = run.cfg.task.p, run.cfg.task.n_shots
    shot = run.options.get("shot", n - 1)
    task = _probe_task(run)
    queries, outs = mod.head_outputs(run.model, task, _context(run), shot, p, n)
    return queries, outs, task, shot


def probe_ov(run: Loaded) -> dict:
    """Cosine similarity of each head's OV output over all p² inputs of one shot, ordered by the ratio y/x."""
    p = run.cfg.task.p
    queries, outs, task, shot = _head_outputs(run)
    order = mod.ratio_order(queries, p)
    numbers: dict = {"task": list(task), "shot": shot, "ratio_contrast": {}}
    arrays = {}
    for role, out in outs.items():
        mats = {}
        for li in range(out.shape[1]):
            for h in range(out.shape[2]):
                cos = mod.standardized_cosine(out[:, li, h])
                numbers["ratio_contrast"][f"{role}:{li}.{h}"] = mod.ratio_contrast(cos, queries, p)
                mats[(li, h)] = cos[np.ix_(order, order)]
                arrays[f"{role}_{li}_{h}"] = cos
        plots.plot_head_matrices(mats, f"OV-output cosine at the {role} position of shot {shot}, task {task}; "
                                       "rows and columns ordered by log(y/x), then log x", run.out / f"ov-{role}")
    return save(run, "ov", numbers, arrays)


def probe_pca(run: Loaded) -> dict:
    """The "circle of circles": top-2 PCA of one head's x- and y-position outputs over all p² inputs."""
    p = run.cfg.task.p
    queries, outs, task, shot = _head_outputs(run)
    features = np.concatenate([outs["x"], outs["y"]], axis=-1)  # (p², layers, heads, 2·d_model)
    explained, captured, fits = {}, {}, {}
    for li in range(features.shape[1]):
        for h in range(features.shape[2]):
            scores, var = mod.circle_pca(features[:, li, h])
            name = f"{li}.{h}"
            explained[name], captured[name], fits[name] = float(var.sum()), float(scores.var(0).sum()), scores
    # default: the head whose top-2 plane holds the most variance in absolute terms (a near-constant head can
    # have both of its few directions "explain" everything)
    head = run.options.get("head") or max(captured, key=captured.get)
    if head not in fits:
        raise ConfigError(f"--head: {head!r} is not a head of this model ({', '.join(fits)})")
    plots.plot_circle(fits[head], queries, mod.discrete_logs(p), p,
                      f"head {head}, task {task}, shot {shot}: top-2 PCs explain {explained[head]:.0%}",
                      run.out / "pca")
    return save(run, "pca", {"task": list(task), "shot": shot, "head": head, "top2_explained": explained,
                              "top2_variance": captured},
                 {"scores": fits[head], "queries": queries})


def _clean_sequences(run: Loaded, tasks: list[tuple[int, int]], per_task: int, seed: int) -> torch.Tensor:
    p, n = run.cfg.task.p, run.cfg.task.n_shots
    gen = torch.Generator().manual_seed(seed)
    pairs = run.task.train_pairs
    rows = []
    for task in tasks:
        for _ in range(per_task):
            ids = pairs[torch.randint(len(pairs), (n,), generator=gen)]
            rows.append(mod.example_tokens(task, [(int(i) // p, int(i) % p) for i in ids], p))
    return torch.stack(rows)


def probe_corruption(run: Loaded) -> dict:
    """Accuracy with corrupted context labels: m random examples, and one example j against later shots k."""
    p, seed = run.cfg.task.p, run.options.get("seed", 0)
    curves, maps, numbers, arrays = {}, {}, {}, {}
    for group, tasks in _groups(run, run.options.get("max_tasks", 32)).items():
        clean = _clean_sequences(run, tasks, run.options.get("per_task", 8), seed)
        curves[group] = mod.corruption_curves(run.model, clean, p, seed)
        maps[group] = mod.corruption_map(run.model, clean, p, seed)
        numbers[group] = {f"last_shot_m{m}": float(c[-1]) for m, c in curves[group].items()}
        arrays.update({f"{group}_m{m}": c for m, c in curves[group].items()})
        arrays[f"{group}_map"] = maps[group]
    plots.plot_corruption(curves, maps, run.out / "corruption")
    return save(run, "corruption", numbers, arrays)


def probe_masking(run: Loaded) -> dict:
    """Last-shot accuracy on the four sets with each head knocked out, then heads knocked out cumulatively in
    order of the o.o.d.-test accuracy each one costs alone."""
    how = run.options.get("ablation", "zero")
    data = run.data
    seqs = {n: torch.cat([s.inputs, s.targets["designated"][:, -1:]], dim=1) for n, s in data.eval_sets.items()}

    def last_shot(heads: list[tuple[int, int]]) -> dict[str, float]:
        with run.model.ablated(heads, how):
            return {n: float(mod.shot_correct(run.model, t)[:, -1].mean()) for n, t in seqs.items()}

    heads = mod.heads_of(run.model)
    single = {"none": last_shot([]), **{f"{li}.{h}": last_shot([(li, h)]) for li, h in heads}}
    cost = sorted(heads, key=lambda lh: single[f"{lh[0]}.{lh[1]}"]["ood/test"])
    cumulative = [("none", single["none"])]
    for i in range(1, len(cost) + 1):
        cumulative.append(("+" + f"{cost[i - 1][0]}.{cost[i - 1][1]}", last_shot(cost[:i])))
    plots.plot_masking(single, cumulative, run.out / "masking")
    return save(run, "masking", {"ablation": how, "single": single, "cumulative": cumulative}, {})


def headline(name: str, numbers: dict) -> str:
    """One line per probe for the terminal; the JSON beside the figures has everything."""
    if name == "shots":
        ceilings = "; ".join(f"{k.upper()} ceiling {v[-1]:.3f}" for k, v in numbers.get("ceilings", {}).items())
        beyond = numbers.get("ood/test", {}).get("beyond_rm")  # files written before the split have none
        if beyond and beyond["last_shot"] is not None:
            ceilings += f"; on the {beyond['queries']} queries RM cannot answer {_share(beyond['last_shot'])}"
        return (", ".join(f"{k} last-shot {v['last_shot']:.3f}" for k, v in numbers.items() if "/" in k)
                + (f" (o.o.d.-test at the last shot: {ceilings})" if ceilings else ""))
    if name == "grid":
        last = max(numbers["id"], key=int)
        def cells(g: dict) -> str:  # composition: the MR-but-not-RM cells, which ratio matching cannot answer
            unseen = g.get("unseen")
            tail = "" if unseen is None else (f"; on unseen pairs: RM cells {_share(unseen['on_rm'])}, composition "
                                              f"cells {_share(unseen['composition'])} of {unseen['composition_cells']}")
            return (f"accuracy {g['accuracy']:.3f} (on RM cells {_share(g['on_rm'])}, on composition cells "
                    f"{_share(g['composition'])}; RM covers {g['rm_fraction']:.0%}{tail})")
        line = ", ".join(f"{g} k={last}: {cells(numbers[g][last])}" for g in ("id", "ood"))
        held_out = numbers.get("unseen_context")  # files written before this variant have none
        if held_out:
            k = max(held_out["ood"], key=int)
            at = held_out["ood"][k]
            line += (f"; with a context of {len(held_out['context'])} test pairs, ood k={k}: on RM cells "
                     f"{_share(at['on_rm'])}, on composition cells {_share(at['composition'])}")
        return line
    if name == "pca":
        return f"head {numbers['head']}: top-2 PCs explain {numbers['top2_explained'][numbers['head']]:.0%}"
    if name == "masking":
        worst = min((k for k in numbers["single"] if k != "none"), key=lambda k: numbers["single"][k]["ood/test"])
        return f"knocking out head {worst} leaves o.o.d.-test last-shot {numbers['single'][worst]['ood/test']:.3f}"
    if name == "corruption":
        return ", ".join(f"{g}: " + " ".join(f"{k[-2:]}={v:.2f}" for k, v in numbers[g].items()) for g in numbers)
    if name == "attention":
        heads = numbers["heads"]
        return "; ".join(f"strongest {score.replace('_', ' ')}: head {max(heads, key=lambda h: heads[h][score])} "
                         f"({max(v[score] for v in heads.values()):.2f})" for score in next(iter(heads.values())))
    contrast = numbers["ratio_contrast"]  # ov
    best = max(contrast, key=contrast.get)
    return f"most ratio-organized head output: {best} (same-ratio minus other cosine {contrast[best]:.2f})"


def _share(value: float | None) -> str:
    """An accuracy for a headline; — where there was no such cell (None, as the stored JSON has it)."""
    return "—" if value is None else f"{value:.3f}"


PROBES: dict[str, Callable[[Loaded], dict]] = {
    "shots": probe_shots, "grid": probe_grid, "attention": probe_attention, "ov": probe_ov, "pca": probe_pca,
    "corruption": probe_corruption, "masking": probe_masking}


# Readable titles of the probes (the report's headings and captions).
TITLES = {
    "shots": "Accuracy per shot",
    "grid": "k-shot grids against ratio matching",
    "attention": "Attention patterns",
    "ov": "OV circuit outputs",
    "pca": "PCA of a head's output",
    "corruption": "Corrupted in-context examples",
    "masking": "Head masking",
}
# The figure a probe's strip across checkpoints shows, for probes with several figures.
MAIN_FIGURE = {"grid": "grid-id", "ov": "ov-x"}

# What the probes read from the command line (``reasonlab analyze`` flags); a flag not given keeps each default.
OPTIONS = (
    KindOption("task", "the probe task a,b (default: the first i.d. task with a, b ≠ 0)", parse_task, "A,B"),
    KindOption("head", "PCA head LAYER.HEAD (default: the one with the most variance in its top-2 plane)", str,
               "LAYER.HEAD"),
    KindOption("shot", "target shot of the OV/PCA probes (default: the last)", integer(0), "INTEGER"),
    KindOption("max_tasks", "tasks per group for grid/corruption", integer(1), "INTEGER"),
    KindOption("ablation", "head masking: zero or mean (default zero)", one_of("zero", "mean"), "[zero|mean]"),
    KindOption("eval_batches", "shots/masking: batches per evaluation set (default: the run's own; more give "
                               "last-shot accuracies over more distinct queries)", integer(1), "INTEGER"),
)
