"""The modular side by side: the authors' own training script (``scripts/reference/modular_side_by_side.py``) and
``reasonlab train --profile reference`` at one small config, two seeds per code, compared on what both codes log at
the same steps.

Two figures per logged step and run:

- the loss on the training distribution at that step's weights: the reference's ``tr_loss`` (its last training
  batch, 64 sequences) and reasonlab's ``id/train:iid`` loss (16 fresh batches of 256 training sequences);
- the o.o.d. last-shot accuracy, the reference's own criterion: its ``ood_val_last_acc`` (o.o.d. tasks on the pairs
  held out of pre-training, pairs drawn i.i.d.) and reasonlab's ``ood/test:iid`` accuracy at the last shot.

The seeds of the two codes draw different tasks and weights, so runs are not paired: each code is summarized by its
seed mean. The verdict holds when the plateau exits agree within ±25 % of the reference's, and at every step both
codes logged the seed means of the o.o.d. accuracy are within 0.1. A plateau exit is the first logged step from which
every logged loss is at most 0.9·ln p: the reference's figure is the loss of one batch of 64 sequences, which dips
below the line on the plateau now and then (a dip at step 8,000 of a run that leaves it at 25,000), so the first
step below the line alone would time its noise.

Beside the line, two losses each run's tasks reach without inferring the task (``loss_levels``): the context-free
level (z predicted from the pair alone) and the copying level (that, with the answer of a pair already shown in the
row copied): where the line lies near the copying level, a plateau exit by it can time copying rather than inference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from statistics import mean

import matplotlib.pyplot as plt
import pyarrow.parquet as pq

from reasonlab.errors import StoreError
from reasonlab.files import read_json
from reasonlab.kinds.modular.data import split_pairs
from reasonlab.plots import save_figure
from reasonlab.records import read_yaml, run_metrics
from reasonlab.store import Metrics

EXIT_FRACTION = 0.9  # the plateau is left when the loss is at most this fraction of ln p
EXIT_TOLERANCE = 0.25  # plateau exits agree within this fraction of the reference's step
OOD_TOLERANCE = 0.1  # o.o.d. accuracies agree within this much at every matched step
LAST_SHOT = 15  # 16 shots: the last answer's position
REFERENCE_COLUMNS = ("step", "tr_loss", "ood_val_last_acc")


@dataclass(frozen=True)
class History:
    """One run's logged figures: the training-distribution loss and the o.o.d. last-shot accuracy by step; for a
    stored run also its modulus and its wall time with the CPU, as its code recorded them."""
    code: str  # "reference" or "reasonlab"
    seed: int
    loss: dict[int, float]
    ood: dict[int, float]
    p: int | None = None
    wall: str = "—"
    levels: tuple[float, float] | None = None  # (context-free, copying) loss levels of its tasks (``loss_levels``)

    def plateau_exit(self, p: int) -> int | None:
        """The first logged step from which every logged loss is at most ``EXIT_FRACTION`` · ln p (None: the last
        logged loss is above it)."""
        exit_step = None
        for step, loss in sorted(self.loss.items()):
            if loss > EXIT_FRACTION * math.log(p):
                exit_step = None
            elif exit_step is None:
                exit_step = step
        return exit_step


def loss_levels(tasks: list[list[int]], train_pairs: list[int], p: int,
                shots: int = LAST_SHOT + 1) -> tuple[float, float]:
    """Two training-distribution losses (mean over a row's answers) reachable without inferring the task:
    context-free, the entropy of z = a·x + b·y mod p over the i.d. tasks (a, b), averaged over the training pairs
    (pair = x·p + y) — the best prediction from the pair alone; copying, that loss where the row has not shown the
    pair before and 0 where it has, with a row's pairs drawn i.i.d. from the n training pairs (shot k repeats an
    earlier pair with probability 1 − (1 − 1/n)^k)."""
    entropies = []
    for pair in train_pairs:
        x, y = divmod(pair, p)
        counts = [0] * p
        for a, b in tasks:
            counts[(a * x + b * y) % p] += 1
        entropies.append(-sum(c / len(tasks) * math.log(c / len(tasks)) for c in counts if c))
    context_free = mean(entropies)
    new_pair = mean((1 - 1 / len(train_pairs)) ** k for k in range(shots))
    return context_free, new_pair * context_free


def _wall(seconds: float, cpu: str) -> str:
    return f"{seconds / 3600:.1f} h, {cpu}"


def reference_history(folder: Path) -> History:
    """A reference run as the side-by-side script stored it: ``config.json`` (its args, wall time and CPU) and
    ``metrics.parquet``."""
    config = read_json(folder / "config.json", "reference run config")
    path = folder / "metrics.parquet"
    try:
        table = pq.read_table(path, columns=list(REFERENCE_COLUMNS)).to_pydict()
    except (OSError, ValueError, KeyError) as e:  # pyarrow's errors for a missing column or a damaged file
        raise StoreError(f"{path}: not a reference history with columns {', '.join(REFERENCE_COLUMNS)} ({e})") from e
    steps = [int(s) for s in table["step"]]
    args = config["args"]
    p = int(args["p"])
    levels = None
    if (folder / "tasks.json").is_file():  # its α split is NumPy's permutation of its data seed (check b)
        train, _ = split_pairs(p, float(args["data_pct"]) / 100, int(args["data_seed"]), "numpy")
        levels = loss_levels(read_json(folder / "tasks.json", "reference tasks")["id"], train.tolist(), p)
    return History("reference", int(args["seed"]), dict(zip(steps, table["tr_loss"], strict=True)),
                   dict(zip(steps, table["ood_val_last_acc"], strict=True)), p,
                   _wall(config["wall_seconds"], config["cpu"]), levels)


def reasonlab_history(run_dir: Path) -> History:
    """A finished reasonlab run's training-distribution loss and o.o.d. last-shot accuracy by step (its
    ``config.yaml``, ``summary.json`` and metrics)."""
    rows = Metrics(run_metrics(run_dir))
    config = read_yaml(run_dir / "config.yaml", "run config")
    summary = read_json(run_dir / "summary.json", "run summary")
    p = int(config["task"]["p"])
    levels = None
    if (run_dir / "tasks.json").is_file():  # its task lists and α split, as the run recorded them
        tasks = read_json(run_dir / "tasks.json", "run tasks")
        levels = loss_levels(tasks["id"], tasks["train_pairs"], p)
    return History("reasonlab", int(config["seed"]), dict(rows.series("id/train:iid", "loss", clock="step")),
                   dict(rows.series("ood/test:iid", f"acc_pos_{LAST_SHOT}", clock="step")), p,
                   _wall(summary["wall_time_s"], summary.get("machine", {}).get("cpu", "?")), levels)


@dataclass(frozen=True)
class Comparison:
    """The two codes' plateau exits and o.o.d. accuracies side by side, and whether they agree."""
    exits: dict[str, list[int | None]]  # code → each seed's exit step
    exit_ratio: float | None  # reasonlab's mean exit / the reference's (None: a run never left its plateau)
    ood_steps: list[int]  # the steps every run of both codes logged
    ood_gap: float | None  # the largest |seed-mean difference| of the o.o.d. accuracy over those steps
    ood_gap_step: int | None

    @property
    def exits_agree(self) -> bool:
        return self.exit_ratio is not None and abs(self.exit_ratio - 1) <= EXIT_TOLERANCE

    @property
    def ood_agrees(self) -> bool:
        return self.ood_gap is not None and self.ood_gap <= OOD_TOLERANCE

    @property
    def holds(self) -> bool:
        return self.exits_agree and self.ood_agrees


def compare(histories: list[History], p: int) -> Comparison:
    """The side-by-side verdict over every run of both codes (see the module docstring)."""
    by_code = {code: [h for h in histories if h.code == code] for code in ("reference", "reasonlab")}
    if not all(by_code.values()):
        raise StoreError("the side by side needs runs of both codes, reference and reasonlab")
    exits = {code: [h.plateau_exit(p) for h in runs] for code, runs in by_code.items()}
    known = all(e is not None for es in exits.values() for e in es)
    ratio = mean(exits["reasonlab"]) / mean(exits["reference"]) if known else None
    steps = sorted(set.intersection(*(set(h.ood) for h in histories)))
    gaps = [(abs(mean(h.ood[s] for h in by_code["reasonlab"]) - mean(h.ood[s] for h in by_code["reference"])), s)
            for s in steps]
    gap, at = max(gaps) if gaps else (None, None)
    return Comparison(exits, ratio, steps, gap, at)


def verdict_lines(comparison: Comparison, p: int, complete: bool = True) -> list[str]:
    """The verdict as Markdown: each criterion with its figures, then the whole — pending until ``complete`` (every
    seed of both codes committed): a criterion read over fewer seeds is a reading so far, not the verdict."""
    def exits(code: str) -> str:
        return ", ".join("never" if e is None else f"{e:,}" for e in comparison.exits[code])

    ratio = "—" if comparison.exit_ratio is None else f"{comparison.exit_ratio:.2f}"
    gap = "no step logged by every run" if comparison.ood_gap is None else (
        f"largest gap of the seed means {comparison.ood_gap:.3f} at step {comparison.ood_gap_step:,}, over "
        f"{len(comparison.ood_steps)} steps")
    return [f"- plateau exit (first logged step from which the loss stays ≤ {EXIT_FRACTION}·ln {p}): "
            f"reference {exits('reference')}; reasonlab {exits('reasonlab')}; ratio of the seed means {ratio} "
            f"(within ±{EXIT_TOLERANCE:.0%} asked): "
            f"**{'held' if comparison.exits_agree else 'did not hold'}**",
            f"- o.o.d. last-shot accuracy at matched steps: {gap} (≤ {OOD_TOLERANCE} asked): "
            f"**{'held' if comparison.ood_agrees else 'did not hold'}**",
            f"- side by side: **{'the two codes agree' if comparison.holds else 'the two codes differ'}**" if complete
            else f"- side by side: pending ({RUNS_PER_CODE} seeds per code; the criteria above read what is committed)"]


def levels_line(histories: list[History], p: int) -> list[str]:
    """The exit line beside the runs' loss levels (none until every run has them): how close copying alone comes."""
    if any(h.levels is None for h in histories):
        return []
    line = EXIT_FRACTION * math.log(p)
    free, copying = ([h.levels[i] for h in histories] for i in (0, 1))
    gaps = [c - line for c in copying]
    where = (f"{min(gaps):.3f}–{max(gaps):.3f} below every run's copying level" if min(gaps) > 0 else
             f"at or above the copying level of {sum(g <= 0 for g in gaps)} of {len(gaps)} runs")
    return [f"- beside the verdict, the losses each run's tasks reach without inferring the task: context-free "
            f"{min(free):.3f}–{max(free):.3f}, with the answers of a row's repeated pairs copied "
            f"{min(copying):.3f}–{max(copying):.3f}; the exit line {line:.3f} lies {where}"]


COLORS = {"reference": "tab:orange", "reasonlab": "tab:blue"}


def draw(histories: list[History], p: int, out_base: Path) -> list[Path]:
    """Training-distribution loss (with the plateau-exit line) and o.o.d. last-shot accuracy over steps, every run
    of both codes, one line per seed."""
    fig, (loss_ax, ood_ax) = plt.subplots(1, 2, figsize=(11, 4), constrained_layout=True)
    styles = ("-", "--", ":", "-.")
    for h in histories:
        style = styles[sorted({g.seed for g in histories if g.code == h.code}).index(h.seed) % len(styles)]
        label = f"{h.code}, seed {h.seed}"
        loss_ax.plot(*zip(*sorted(h.loss.items()), strict=True), style, color=COLORS[h.code], label=label)
        ood_ax.plot(*zip(*sorted(h.ood.items()), strict=True), style, color=COLORS[h.code], label=label)
    loss_ax.axhline(EXIT_FRACTION * math.log(p), color="grey", lw=0.8)
    copying = [h.levels[1] for h in histories if h.levels is not None]
    if copying:
        loss_ax.axhline(mean(copying), color="grey", lw=0.8, ls=":")
    loss_ax.set(xlabel="step", ylabel="loss on the training distribution",
                title=f"training loss (grey: {EXIT_FRACTION}·ln {p}, the plateau exit"
                      + ("; dotted: copying level)" if copying else ")"))
    ood_ax.axhline(1 / p, color="grey", lw=0.8)
    ood_ax.set(xlabel="step", ylabel="accuracy", ylim=(0, 1),
               title="o.o.d. last-shot accuracy (grey: chance)")
    ood_ax.legend(fontsize=8)
    return save_figure(fig, out_base)


FOLDER = "results/modular/reference"  # reference-s<S>/ (the reference's runs) and reasonlab/<run_id>/ (reasonlab's)
FIGURE = "modular-side-by-side"
RUNS_PER_CODE = 2
COMMAND = ("for S in 1 2: `python scripts/reference/modular_side_by_side.py --reference REF --seed $S --out "
           "RUNS/reference-icl/s$S` (its config.json, tasks.json and metrics.parquet copied to "
           f"{FOLDER}/reference-s$S/), and `reasonlab sweep --family modular --profile reference --grid "
           "'seed+task.task_seed=[$S,$S]' --name modular-reference --out RUNS` (packed with `reasonlab pack RUN "
           f"{FOLDER}/reasonlab`)")


def one_p(histories: list[History]) -> int:
    """The modulus every run trained at (one, or the comparison means nothing)."""
    ps = {h.p for h in histories}
    if len(ps) != 1 or None in ps:
        raise StoreError(f"{FOLDER}: the side by side's runs trained at p {sorted(ps, key=str)}, not one p")
    return ps.pop()


@dataclass(frozen=True)
class Committed:
    """The side by side's runs committed in a repository: the reference's (``reference-s<S>/``, whose history the
    script writes only once the run is finished) and reasonlab's finished ones (``reasonlab/<run_id>/``; a packed
    unfinished run is not compared)."""
    root: Path

    def reference_folders(self) -> list[Path]:
        return sorted(d for d in (self.root / FOLDER).glob("reference-s*") if (d / "metrics.parquet").is_file())

    def reasonlab_folders(self) -> list[Path]:
        return sorted(d for d in (self.root / FOLDER / "reasonlab").glob("*")
                      if (d / "summary.json").is_file() and not d.name.endswith(".partial"))

    def inputs(self) -> list[str]:
        files = [d / name for d in self.reference_folders()
                 for name in ("config.json", "tasks.json", "metrics.parquet")]
        files += [d / name for d in self.reasonlab_folders()
                  for name in ("config.yaml", "summary.json", "tasks.json", "metrics.parquet")]
        return [str(f.relative_to(self.root)) for f in files if f.is_file()]  # tasks.json: where it was recorded

    def histories(self) -> list[History]:
        return ([reference_history(d) for d in self.reference_folders()]
                + [reasonlab_history(d) for d in self.reasonlab_folders()])

    def both_codes(self) -> bool:
        return bool(self.reference_folders()) and bool(self.reasonlab_folders())

    def render(self) -> str:
        """The runs committed so far, one row each, then (once both codes have a run) the verdict and the figure."""
        histories = self.histories()
        if not histories:
            return f"Not committed yet; to commit it: {COMMAND}.\n"
        p = one_p(histories)
        lines = ["| code | seed | last logged step | plateau exit | o.o.d. last-shot accuracy at the last step | "
                 "loss levels: context-free / copying | wall time (shared cores) |", "|---|---|---|---|---|---|---|"]
        for h in histories:
            last = max(h.ood)
            exit_step = h.plateau_exit(p)
            levels = "—" if h.levels is None else f"{h.levels[0]:.3f} / {h.levels[1]:.3f}"
            lines.append(f"| {h.code} | {h.seed} | {last:,} | {'never' if exit_step is None else f'{exit_step:,}'} | "
                         f"{h.ood[last]:.3f} | {levels} | {h.wall} |")
        counts = {code: sum(h.code == code for h in histories) for code in ("reference", "reasonlab")}
        if not all(counts.values()):
            return "\n".join([*lines, "", f"The verdict needs runs of both codes ({counts['reference']} reference, "
                              f"{counts['reasonlab']} reasonlab committed); to commit the rest: {COMMAND}.", ""])
        short = [f"{code} {n} of {RUNS_PER_CODE}" for code, n in counts.items() if n < RUNS_PER_CODE]
        note = ([f"Partial: {', '.join(short)} seeds committed; the criteria below read what is committed, the verdict "
                 "waits for every seed."] if short else [])
        return "\n".join([*lines, "", *note, *verdict_lines(compare(histories, p), p, complete=not short),
                          *levels_line(histories, p), "", f"![the two codes side by side](figures/{FIGURE}.png)", ""])

    def draw(self, scratch: Path) -> None:
        histories = self.histories()
        draw(histories, one_p(histories), scratch / FIGURE)
