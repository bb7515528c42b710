"""``reasonlab analyze RUN_DIR --probe NAME``: load a saved run's weights and run named probes on them.

A probe writes ``RUN_DIR/analysis/<checkpoint>/<probe>.json`` (its numbers), ``.npz`` (its arrays) and its
figures (PNG + SVG), each by atomic rename, and returns the numbers. The probes of each task kind live with it
(``kinds/<kind>/probes.py``, its ``Kind.probes``); this module looks them up and runs them by name; runs are loaded
by ``analysis.loading``. It names no task kind.
"""

from __future__ import annotations

from pathlib import Path

import torch

from reasonlab.analysis.loading import Loaded, checkpoint_step, load_trained, save, task_data  # noqa: F401 - save: the probes' helper
from reasonlab.build import make_task
from reasonlab.checkpoint import complete_steps
from reasonlab.config import ConfigError
from reasonlab.files import finite, write_json
from reasonlab.records import load_run
from reasonlab.registry import task_kind, task_kinds
from reasonlab.tasks.base import TaskData


def analysis_dir(run_dir: Path, checkpoint: str, options: dict | None = None) -> Path:
    """Where the analyses of a checkpoint land: ``analysis/<checkpoint>/``, and ``.../seed-<s>/`` for probe inputs
    of another seed than the default 0, so that several seeds' numbers sit side by side instead of replacing
    each other."""
    seed = (options or {}).get("seed", 0)
    return Path(run_dir) / "analysis" / checkpoint / (f"seed-{seed}" if seed else "")


def analyze(run_dir: Path, probes: list[str], checkpoint: str = "final", options: dict | None = None,
            data: TaskData | None = None) -> dict[str, dict]:
    """Run the named probes (all of the run's kind when empty) and return their numbers by name, each with a
    one-line ``headline`` for the terminal. ``data``: the run's task data when already built."""
    if data is None and (options or {}).get("eval_batches") is not None:
        data = task_data(run_dir, options["eval_batches"])
    cfg, model, data, name = load_trained(run_dir, checkpoint, data)
    kind = task_kind(cfg.task.kind)
    known = kind.probes
    if not known:
        raise ConfigError(f"{run_dir}: no probes for task kind {cfg.task.kind!r} yet (probes exist for: "
                          f"{', '.join(k for k, entry in task_kinds().items() if entry.probes)})")
    unknown = [p for p in probes if p not in known]
    if unknown:
        raise ConfigError(f"--probe: unknown probe {unknown[0]!r} for a {cfg.task.kind} run; choose from "
                          f"{', '.join(known)}")
    run = Loaded(cfg, model, data, analysis_dir(run_dir, name, options), name, options or {}, make_task(cfg))
    step = checkpoint_step(run_dir, name)
    results = {}
    with torch.no_grad():
        for probe in probes or list(known):
            raw = known[probe](run)
            numbers = finite(raw)  # NaN (no such cell) as None: as the JSON has it, for the headline too
            try:
                line = kind.headline(probe, numbers)
            except TypeError:  # a headline that formats every value as a number: it shows nan instead of failing
                line = kind.headline(probe, raw)
            results[probe] = {**numbers, "headline": line}
            write_json(run.out / f"{probe}.json", results[probe])  # the headline too, for the report
    write_json(run.out / "checkpoint.json", {"checkpoint": name, "step": step})  # which weights, e.g. where best fell
    return results


def headline(kind: str, probe: str, numbers: dict) -> str:
    """A saved analysis's one-line headline: its own, or (files written before it was saved) derived from its
    numbers; empty when neither works."""
    if isinstance(numbers.get("headline"), str):
        return numbers["headline"]
    entry = task_kinds().get(str(kind))
    try:
        return entry.headline(probe, numbers) if entry is not None and probe in entry.probes else ""
    except (KeyError, TypeError, ValueError, IndexError, AttributeError):
        return ""


def scalars(numbers: dict, prefix: str = "") -> dict[str, float]:
    """The scalar leaves of a probe's numbers, by dotted path (what a dynamics plot can draw over time)."""
    out: dict[str, float] = {}
    for k, v in numbers.items():
        name = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(scalars(v, f"{name}."))
        elif isinstance(v, int | float) and not isinstance(v, bool):
            out[name] = float(v)
        elif isinstance(v, list) and v and all(isinstance(x, float) for x in v) and len(v) <= 8:
            out.update({f"{name}[{i}]": x for i, x in enumerate(v)})  # e.g. one value per layer
    return out


def analyze_over_time(run_dir: Path, probes: list[str], options: dict | None = None,
                      every: int | None = None) -> dict[str, dict[int, dict]]:
    """The analyses at every saved checkpoint (log-spaced with ``train.checkpoint_log``) or, with ``every``, at
    those whose step is a multiple of it and the last (a long run keeps hundreds), then per analysis a strip of its
    figure across time and its scalars over training steps, beside the run's accuracy curves with the checkpoints
    marked (``analysis/dynamics/``)."""
    from reasonlab.plots.dynamics import plot_accuracy_with_checkpoints, plot_scalars_over_time, plot_strip
    from reasonlab.store import Metrics

    steps = complete_steps(Path(run_dir) / "checkpoints")
    if not steps:
        raise ConfigError(f"{run_dir}: no saved checkpoints to follow over time")
    if every:
        steps = [s for s in steps if s % every == 0 or s == steps[-1]]
    by_probe: dict[str, dict[int, dict]] = {}
    data = task_data(run_dir, (options or {}).get("eval_batches"))  # the same for every checkpoint
    for step in steps:
        for probe, numbers in analyze(run_dir, probes, str(step), options, data).items():
            by_probe.setdefault(probe, {})[step] = numbers
    out = Path(run_dir) / "analysis" / "dynamics"
    kind = task_kind(load_run(run_dir)[1]["task"]["kind"])
    for probe, series in by_probe.items():
        main = kind.probe_figures.get(probe, probe)
        plot_strip([(f"step {s}", analysis_dir(run_dir, f"step-{s}", options) / f"{main}.png")
                    for s in series], out / f"{probe}-strip")
        plot_scalars_over_time({s: scalars(n) for s, n in series.items()}, probe, out / f"{probe}-scalars")
    plot_accuracy_with_checkpoints(Metrics.read(Path(run_dir) / "metrics.parquet").rows, steps,
                                   out / "accuracy", kind.accuracy_curve)
    write_json(out / "dynamics.json", {p: {str(s): scalars(n) for s, n in series.items()}
                                       for p, series in by_probe.items()})
    return by_probe
