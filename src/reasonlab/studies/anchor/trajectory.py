"""The reading of ``reasonlab reproduce anchor-trajectory``: the authors' logged paper-scale runs retraced on this
CPU (spec §6b), read from run folders and replays of the authors' draws beside the shipped log.

Runs of the ``trajectory`` profile (the ``paper`` model and data with the settings of the authors' logs),
truncated where the log shows the outcome: γ 0.5 to epoch 9 (it fits within warm-up and is symmetric at once),
γ 0.8 to epoch 27 (it fits between epochs 18 and 24, composing while it fits). The ``paper`` arm is seed 1 of
each; the ``seeds`` arm adds γ 0.8 at seeds 2 and 3, since at γ 0.8 when and onto what a run leaves its plateau
depends on the random draw (docs/anchor-composition.md). Hours per run here: train them in the background; the
sweep resumes. The figure puts every evaluation beside the authors' logged points, one line per seed.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

from reasonlab.errors import UserError
from reasonlab.files import atomic_write_text, read_json
from reasonlab.kinds.anchor.config import Pair
from reasonlab.records import read_config
from reasonlab.store import Metrics
from reasonlab.studies.anchor.figures import AUTHORS_PAIR, SERIES, plot_trajectory

PAIR = AUTHORS_PAIR  # the study retraces the authors' logged runs, which hold out (4,3)
AUTHORS_STEPS_PER_EPOCH = 370  # 759,375 training sequences in batches of 2048, as their logs' setting states


# What each γ of the logged runs answers for (4,3) at paper scale, and the bar a run of ours must meet to count as
# showing it (issue bars: symmetric ≥ 0.95 at large init; inferential ≥ 0.9 with symmetric ≤ 0.05 at small init;
# every seen pair fitted, seen-pair test-key accuracy ≥ 0.95, in both).
LOGGED_OUTCOME = {"0.5": "symmetric", "0.8": "inferential"}
FITTED = 0.95
PAPER_SCALE_FILE = "reasonlab_cpu.json"  # made by scripts/trajectory_figure.py --ship from results/anchor-trajectory


def _shipped(name: str) -> dict:
    return json.loads((resources.files("reasonlab") / "data" / "anchor_trajectory" / name).read_text())


def authors_log() -> dict:
    """The shipped reference: the authors' logged evaluations and losses per γ (data/anchor_trajectory)."""
    return _shipped("authors_log.json")


def paper_scale_runs() -> dict:
    """reasonlab's own paper-scale runs on a 2-core CPU (the committed ``results/anchor-trajectory`` folders,
    finished and unfinished), shipped so that the demo can draw its reduced runs beside them without the repository:
    ``runs`` maps γ to a run's name to ``run_curves`` output plus ``folder`` and ``finished``."""
    return _shipped(PAPER_SCALE_FILE)


def shows_logged_outcome(gamma: str, evaluation: dict) -> bool:
    """Whether one evaluation of a γ of the log meets the bar for the log's outcome at that γ."""
    inf, sym = evaluation.get("heldout_inferential"), evaluation.get("heldout_symmetric")
    if evaluation.get("seen_test_acc", 0.0) < FITTED or inf is None or sym is None:
        return False
    if LOGGED_OUTCOME[gamma] == "symmetric":
        return sym >= 0.95
    return inf >= 0.9 and sym <= 0.05


def paper_scale_tally(runs: dict[str, dict[str, dict]]) -> dict[str, tuple[int, int, int]]:
    """Per γ of the log: (runs that met the log's outcome at some evaluation, runs followed until they fitted
    every seen pair, distinct seeds among those). A run stopped before it fitted says nothing of what its fit lands
    on, so it is not counted; a seed trained again (another machine's rounding) is another run of the same seed."""
    tally = {}
    for gamma, named in runs.items():
        if gamma not in LOGGED_OUTCOME:
            continue
        fitted = [r for r in named.values() if any(e.get("seen_test_acc", 0.0) >= FITTED for e in r["evaluations"])]
        met = [r for r in fitted if any(shows_logged_outcome(gamma, e) for e in r["evaluations"])]
        tally[gamma] = (len(met), len(fitted), len({r.get("seed") for r in fitted}))
    return tally


def paper_scale_record(run_dirs: list[Path], root: Path) -> dict:
    """The shipped file's content from committed run folders: each run's curves, its seed, its folder relative to
    ``root`` (the repository) and whether it finished (a ``summary.json``; ``.partial`` snapshots have none)."""
    runs: dict[str, dict[str, dict]] = {}
    for d, (gamma, name, seed) in _line_names(run_dirs).items():
        runs.setdefault(gamma, {})[name] = run_curves(d) | {
            "seed": seed, "folder": d.resolve().relative_to(root.resolve()).as_posix(),
            "finished": (d / "summary.json").is_file()}
    return {"what": "reasonlab's trajectory profile (the paper's model, data and logged settings) trained on a 2-core "
                    "CPU, one thread per run; evaluations every 3 epochs on the full groups",
            "made_by": "python scripts/trajectory_figure.py --ship --out results/anchor-trajectory RUN_DIR ...",
            "runs": runs}


def run_curves(run_dir: Path, pair: Pair = PAIR) -> dict:
    """A run's evaluations (seen-pair test-key accuracy, held-out train-key inferential and symmetric) and
    mean training loss per epoch, in the reference file's layout, each with the Σlr reached at its epoch
    (``lr_sum``) where the run logged it."""
    evals: dict[int, dict] = {}
    losses, sums = [], {}
    names = {("pooled", "seen_test_acc"): "seen_test_acc",
             (pair.eval_set("train_keys"), "acc_inferential"): "heldout_inferential",
             (pair.eval_set("train_keys"), "acc_symmetric"): "heldout_symmetric"}
    for r in Metrics.read(Path(run_dir) / "metrics.parquet"):
        if (r.split, r.metric) in names:
            evals.setdefault(r.epoch, {"epoch": r.epoch})[names[r.split, r.metric]] = r.value
        elif (r.split, r.metric) == ("train", "loss"):
            losses.append({"epoch": r.epoch, "loss": r.value})
        elif (r.split, r.metric) == ("train", "lr_sum"):
            sums[r.epoch] = r.value
    for row in [*evals.values(), *losses]:
        if row["epoch"] in sums:
            row["lr_sum"] = sums[row["epoch"]]
    return {"evaluations": [evals[e] for e in sorted(evals)], "train_loss": sorted(losses, key=lambda r: r["epoch"])}


def trajectories(run_dirs: list[Path]) -> dict[str, dict[str, dict]]:
    """``run_curves`` of each run folder, keyed by γ (as text) and its line's name (``seed S``), read from its
    ``config.yaml`` and ``metrics.parquet``: finished runs and unfinished ones alike (a ``.partial`` folder or a
    committed snapshot of one), so a figure can be drawn while the runs still train, or from committed results
    without training. A second run of the same γ and seed (the same config trained again, e.g. on another
    machine) is named after its parent folder: ``seed S (FOLDER)``."""
    out: dict[str, dict[str, dict]] = {}
    for d, (gamma, name, _) in _line_names(run_dirs).items():
        out.setdefault(gamma, {})[name] = run_curves(d)
    return out


def _line_names(run_dirs: list[Path]) -> dict[Path, tuple[str, str, int]]:
    """Each run folder's γ (as text), line name and seed, in the given order (see ``trajectories``); two folders
    that would draw as one line are refused, so no run is silently dropped."""
    names: dict[Path, tuple[str, str, int]] = {}
    for d in map(Path, run_dirs):
        cfg = read_config(d)
        gamma, name = f"{cfg.init.gamma:g}", f"seed {cfg.seed}"
        taken = {n for g, n, _ in names.values() if g == gamma}
        if name in taken:
            name = f"{name} ({d.parent.name})"
        if d in names or name in taken:
            raise UserError(f"{d}: another folder given already draws as γ {gamma} {name}; give each run once, "
                            "and a second run of the same seed from a folder with another name")
        names[d] = (gamma, name, cfg.seed)
    return names


def authors_lr_sums() -> dict[int, float]:
    """Σlr at the end of each epoch of the authors' logged runs: the ``trajectory`` profile's schedule (theirs,
    to 9e-5 relative) over 370 steps per epoch, to the last epoch either log reaches."""
    from reasonlab.config import raw_config, resolve
    from reasonlab.schedule import lr_sums

    last = max(r["epoch"] for run in authors_log()["runs"].values() for r in run["evaluations"] + run["train_loss"])
    train = resolve(raw_config(None, "anchor-trajectory", [f"train.epochs={last}"])).train
    sums = lr_sums(train, AUTHORS_STEPS_PER_EPOCH, last * AUTHORS_STEPS_PER_EPOCH)
    return {e: sums[e * AUTHORS_STEPS_PER_EPOCH] for e in range(last + 1)}


def draw(ours: dict[str, dict[str, dict]], out_dir: Path, profile: str, note: str = "") -> list[Path]:
    """The figure (``figures/trajectory.png``/``.svg``) and ``summary.md`` of the given trajectories (``note``:
    a caption line for any line that is not a run of the profile)."""
    reference = authors_log()
    figures = plot_trajectory(ours, reference, out_dir / "figures" / "trajectory", profile, note)
    atomic_write_text(out_dir / "summary.md", summary_markdown(ours, reference, profile))
    return [*figures, out_dir / "summary.md"]


def summary_markdown(ours: dict[str, dict[str, dict]], reference: dict, profile: str) -> str:
    """Each of our evaluations (per γ and seed) beside the authors' at the same epoch."""
    lines = ["# anchor-trajectory", "", f"Profile: {profile}.", "",
             f"Reference: the authors' logs ({reference['source']['repository']} at "
             f"{reference['source']['commit'][:12]}), {reference['setting']}.", "",
             "![trajectory](figures/trajectory.png)", "",
             "The authors' log is their seed 1; our seeds are other random draws (data, initial weights, batch "
             "order) of the same settings.", "",
             f"| γ | run | epoch | Σlr | seen-pair test acc (ours / log) | {PAIR.caption} inferential (ours / log) | "
             f"{PAIR.caption} symmetric (ours / log) |", "|---|---|---|---|---|---|---|"]
    for gamma, seeds in sorted(ours.items(), key=lambda kv: float(kv[0])):
        logged = {e["epoch"]: e for e in reference["runs"].get(gamma, {}).get("evaluations", [])}
        for name, run in sorted(seeds.items()):
            for e in run["evaluations"]:
                ref = logged.get(e["epoch"], {})
                cells = [f"{e.get(k, float('nan')):.3f} / " + (f"{ref[k]:.3f}" if k in ref else "—")
                         for k in ("seen_test_acc", "heldout_inferential", "heldout_symmetric")]
                lr_sum = f"{e['lr_sum']:.3f}" if "lr_sum" in e else "—"
                lines.append(f"| {gamma} | {name} | {e['epoch']} | {lr_sum} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _lr_sum(sums: dict[int, float], epoch: int) -> dict[str, float]:
    return {"lr_sum": sums[epoch]} if epoch in sums else {}


def replay_curves(path: Path, sums: dict[int, float], tag: str = "") -> tuple[str, str, dict, int]:
    """A replay's γ, line name (ending in ``tag``, which tells several replays of one draw apart), curves in
    ``run_curves``' layout and sequences evaluated per group, from its ``replay.json``; Σlr is the logged runs'
    (``sums``: ``authors_lr_sums``; a replay trains on their schedule and batch count)."""
    replay = read_json(path, "replay file")
    try:
        settings = replay["settings"]
        evaluations = [{"epoch": e["epoch"], **{k: e["replay"][k] for k, _, _ in SERIES}} | _lr_sum(sums, e["epoch"])
                       for e in replay["evaluations"]]
        losses = [{"epoch": e["epoch"], "loss": e["loss"]} for e in replay["epochs"]]
        name = f"step on the authors' draws ({settings['draws']}, init seed {settings['init_seed']}; replay{tag})"
        curves = {"evaluations": evaluations, "train_loss": losses, "marker": "D"}
        return settings["gamma"], name, curves, settings["eval_rows"]
    except (KeyError, TypeError) as e:
        raise UserError(f"{path}: not a replay.json of scripts/replay_authors_draws.py (no {e})") from None


def committed(runs: list[Path], replays: list[Path]) -> tuple[dict, str, str]:
    """``draw``'s trajectories, profile and note for run folders and replay files: what
    ``scripts/trajectory_figure.py`` and the docs' trajectory figure and summary draw."""
    profile = read_config(runs[0]).profile
    ours, rows, sums = trajectories(runs), set(), authors_lr_sums() if replays else {}
    for path in replays:
        gamma, name, curves, eval_rows = replay_curves(path, sums, f" {path.stem}" if len(replays) > 1 else "")
        ours.setdefault(gamma, {})[name] = curves
        rows.add(eval_rows)
    note = ("Replay: reasonlab's training step on the authors' own random draws (their data, initial weights and "
            f"batch order), evaluated on the first {', '.join(map(str, sorted(rows)))} sequences of each group."
            if rows else "")
    return ours, profile.split("; changed:")[0], note
