"""The anchor-trajectory study's sections of the docs, read from a repository's committed records: its figure and
its ``summary.md`` (``results/anchor-trajectory/``), drawn from the pinned runs and replays of the authors' draws,
and the results tables' reading of them (the last committed evaluation of each line, the replays against the log,
and what γ 0.8 landed on from our own draws). The runs and replays it reads are pinned in
``results/anchor/pins.yaml``."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from reasonlab.studies.anchor.trajectory import (
    FITTED,
    authors_log,
    committed,
    draw,
    shows_logged_outcome,
    summary_markdown,
)
from reasonlab.studies.sections import Figures, Repository, Sections, Table
from reasonlab.terminal import counted

TRAJECTORY = "results/anchor-trajectory"
PINS = "results/anchor/pins.yaml"  # the run ids the anchor studies' docs cite


def pinned(repo: Repository, which: str) -> list[str]:
    """One list of the anchor pins (``trajectory_runs`` or ``trajectory_replays``): paths under ``TRAJECTORY``."""
    return list(repo.yaml(PINS)[which])


def trajectory(repo: Repository) -> tuple[dict, str, str]:
    """``committed``'s trajectories, profile and note of the pinned runs and replays, read once per reading of the
    repository: the figure, the summary and the results tables' rows show them."""
    root = repo.root
    return repo.once((TRAJECTORY, "trajectory"), lambda: committed(
        [root / TRAJECTORY / r for r in pinned(repo, "trajectory_runs")],
        [root / TRAJECTORY / r for r in pinned(repo, "trajectory_replays")]))


def trajectory_inputs(repo: Repository) -> list[str]:
    return ([f"{TRAJECTORY}/{r}/{f}" for r in pinned(repo, "trajectory_runs")
             for f in ("config.yaml", "metrics.parquet")]
            + [f"{TRAJECTORY}/{r}" for r in pinned(repo, "trajectory_replays")] + [PINS])


def _draw(repo: Repository, scratch: Path) -> None:
    ours, profile, note = trajectory(repo)
    draw(ours, scratch, profile, note)


def _summary(repo: Repository) -> str:
    ours, profile, _ = trajectory(repo)
    return summary_markdown(ours, authors_log(), profile)


def trajectory_sections(repo: Repository) -> Sections:
    """The figure and the whole ``summary.md`` of the committed trajectory folder."""
    inputs = partial(trajectory_inputs, repo)
    return [("anchor-trajectory", Figures(inputs, {f"{TRAJECTORY}/figures/trajectory.png": "figures/trajectory.png"},
                                          partial(_draw, repo))),
            ("anchor-trajectory-summary", Table(f"{TRAJECTORY}/summary.md", inputs, partial(_summary, repo), True))]


def _replay_agreement(repo: Repository, path: Path) -> str:
    """How one replay's epoch losses stand against the authors' log: to the log's 4 decimals through epoch 2, then
    the largest ratio either way (and where it is)."""
    epochs = repo.json(path, "replay file")["epochs"]
    early = max(abs(e["loss"] - e["log_loss"]) for e in epochs if e["epoch"] <= 2)
    later = [(max(e["loss"] / e["log_loss"], e["log_loss"] / e["loss"]), e) for e in epochs if e["epoch"] > 2]
    text = f"{path.stem}: {len(epochs)} epochs, within {early:.1e} of the log through epoch 2"
    if later:
        ratio, e = max(later, key=lambda t: t[0])
        text += (f", later up to {ratio:.2f}× apart (epoch {e['epoch']}: {e['loss']:.3f} vs the log's "
                 f"{e['log_loss']:.3f})")
    return text


def trajectory_headline(repo: Repository) -> str:
    """The results table's line: each line's last committed evaluation (beside the log's at γ 0.8), the replays'
    losses against the log and each other, and what our own draws landed on at γ 0.8."""
    ours, _, _ = trajectory(repo)
    logged = {e["epoch"]: e for e in authors_log()["runs"]["0.8"]["evaluations"]}
    keys = ("seen_test_acc", "heldout_inferential", "heldout_symmetric")
    parts = []
    for gamma, lines in sorted(ours.items(), key=lambda kv: float(kv[0])):
        for name, run in sorted(lines.items()):
            e = run["evaluations"][-1]
            log = logged.get(e["epoch"]) if gamma == "0.8" else None
            parts.append(f"γ {gamma} {name}: epoch {e['epoch']}, " + "{:.3f}, {:.3f} / {:.3f}".format(
                *(e[k] for k in keys)) + ("" if log is None else " (log {:.3f}, {:.3f} / {:.3f})".format(
                    *(log[k] for k in keys))))
    replays = [repo.root / TRAJECTORY / r for r in pinned(repo, "trajectory_replays")]
    a, b = ({e["epoch"]: e["loss"] for e in repo.json(path, "replay file")["epochs"]} for path in replays)
    both = sorted(set(a) & set(b))
    apart = max(max(a[e] / b[e], b[e] / a[e]) for e in both)
    return ("at each line's last committed evaluation, seen-pair test acc, (4,3) inferential / symmetric: "
            + "; ".join(parts) + ". Our step on the authors' draws, epoch losses against their log: "
            + "; ".join(_replay_agreement(repo, path) for path in replays)
            + f"; the two replays (1 and 2 threads) are themselves up to {apart:.2f}× apart through epoch "
            f"{both[-1]}, so float rounding plausibly explains the gap. Seeds other than the log's are other "
            f"draws; {own_draws_g08(ours.get('0.8', {}))}")


def own_draws_composed(lines: dict[str, dict]) -> dict[str, bool | None]:
    """Each γ 0.8 run from our own draws (``lines``: the committed γ 0.8 lines, as ``trajectory`` reads them):
    whether it met the log's outcome at some evaluation, None when it was not followed until it fitted (a run
    stopped before it fitted says nothing of what its fit lands on)."""
    return {n: any(shows_logged_outcome("0.8", e) for e in r["evaluations"])
            if any(e.get("seen_test_acc", 0.0) >= FITTED for e in r["evaluations"]) else None
            for n, r in lines.items() if "authors' draws" not in n}


def own_draws_g08(lines: dict[str, dict]) -> str:
    """What γ 0.8 landed on from our own draws, counted over the runs followed until they fitted, and whether one
    draw trained twice (a rerun on another machine) landed on two answers: then not the draw alone decides."""
    composed = {n: c for n, c in own_draws_composed(lines).items() if c is not None}
    by_seed: dict[str, set[bool]] = {}
    for n, c in composed.items():
        by_seed.setdefault(n.split(" (")[0], set()).add(c)
    split = [s for s, outcomes in by_seed.items() if len(outcomes) > 1]
    text = (f"on our own draws γ 0.8 composed in {sum(composed.values())} of the {counted(len(composed), 'run')} "
            f"followed until they fitted ({len(by_seed)} seeds)")
    if split:
        text += (f"; {', '.join(split)} composed in one run and not in its rerun on another machine, so at γ 0.8 "
                 "the landing depends on the draw and, beyond it, on float rounding")
    return text
