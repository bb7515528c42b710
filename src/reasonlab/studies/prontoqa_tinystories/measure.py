"""The study's measurement of one run and of a sweep: ΔL̄ and the final ΔL from the run's metrics, each source's
training loss, and the embedding cosines per stage. A run logs the trained cosines itself (every epoch and at every
snapshot, in its metrics), so they survive a stop on one machine and a resume on another; runs trained before that
are read from their saved weights. The stages are kept in each run's ``analysis/embedding-cosine.json``, so a
committed sweep (no checkpoints) regenerates its summary and figures without training."""

from __future__ import annotations

from pathlib import Path

from torch import nn

from reasonlab.analysis.loading import load_trained
from reasonlab.build import build_model
from reasonlab.checkpoint import complete_steps, snapshot_steps
from reasonlab.config import RunConfig
from reasonlab.errors import StoreError
from reasonlab.files import read_json, warn, write_json
from reasonlab.kinds.text_mixture import evaluate as text_evaluate
from reasonlab.kinds.text_mixture.data import SOURCES, TextMixtureTask, load_tokenizer
from reasonlab.records import load_run, run_metrics
from reasonlab.store import MetricRow, Metrics

EARLY = 0.05  # spec §4: the "early" point of the embedding cosines
COSINE_KEYS = {"run_id", "cosine", "n_exclusive"}


def measure_run(cfg: RunConfig, run_dir: Path, keep: bool = True) -> dict:
    """ΔL̄ and the final ΔL of a finished run, and its embedding cosines (``cosine`` None, said in one line, when
    they cannot be had: its ΔL still counts); ``keep`` as ``embedding_cosines``."""
    rows = Metrics(run_metrics(run_dir))
    final = load_run(run_dir)[0]["final"]
    window = text_evaluate.delta_l_summary(rows, cfg)["delta_L_window"]  # also in newer summaries; older ones lack it
    total = max((r.step for r in rows), default=0)
    # each source's own training loss over the ΔL̄ window and at the end: ΔL is their ratio, and which of the two
    # moves with γ is what the ratio cannot say
    losses = {f"loss_{src}_{when}": (rows.last("pooled", f"{src}_train_loss") if when == "final" else
                                     text_evaluate.window_mean(rows, total, f"{src}_train_loss") if total else None)
              for src in SOURCES for when in ("window", "final")}
    return {"delta_L_train_window": window["train"], "delta_L_eval_window": window["eval"],
            "delta_L_train_final": final.get("delta_L_train"), "delta_L_eval_final": final.get("delta_L_eval"),
            "seed": cfg.seed, "rows": rows, **losses} | cosines_or_none(cfg, run_dir, keep)


def cosines_or_none(cfg: RunConfig, run_dir: Path, keep: bool = True) -> dict:
    """``embedding_cosines``, or None in their place (said in one line) for a run whose cosines cannot be had."""
    try:
        return embedding_cosines(cfg, run_dir, keep)
    except StoreError as e:
        warn(f"{cfg.run_id()}: its ΔL counts, its embedding cosines are left out: {e}")
        return {"cosine": None, "n_exclusive": None, "tokens": None}


def with_cosines(measured: dict) -> dict:
    """The measured runs that have embedding cosines."""
    return {k: m for k, m in measured.items() if m["cosine"] is not None}


def _is_early(fraction: float) -> bool:
    """Whether a snapshot's fraction of training is the "early" one (fractions are stored as floats)."""
    return abs(fraction - EARLY) < 1e-9


def logged_stages(cfg: RunConfig, rows: list[MetricRow]) -> dict[str, dict[str, float]]:
    """Stage label → cosine per source, from the cosines the run logged while training (``weights`` rows, every
    epoch and every snapshot): early (the logged step nearest to 5 % of training: exactly there with a 5 %
    snapshot), every absolute snapshot step and the end; empty for a run trained before they were logged."""
    logged: dict[int, dict[str, float]] = {}
    for r in rows:
        if r.split == "weights" and r.metric.startswith("cosine:"):
            logged.setdefault(r.step, {})[r.metric.removeprefix("cosine:")] = r.value
    if not logged:
        return {}
    total = max(logged)  # every epoch logs them, the last at the run's last step
    plan = cfg.train.snapshot_plan(total)
    if missing := [s for s in plan if s not in logged]:
        raise StoreError(f"{cfg.run_id()}: logged no embedding cosines at its snapshot steps {sorted(missing)} "
                         "(resumed from a checkpoint of a run trained before they were logged); train the run again")
    early = next((s for s, f in plan.items() if _is_early(f)), None)
    at = EARLY
    if early is None:  # no 5 % snapshot: the evaluation nearest to it, named by its own fraction
        early = min(logged, key=lambda s: abs(s - EARLY * total))
        at = early / total
    found = {early: f"early (step {early}, {at:.0%})", total: f"final (step {total})"}
    found |= {s: f"step {s}" for s in cfg.train.snapshot_steps if s in logged and s not in found}
    return {label: logged[s] for s, label in sorted(found.items())}


def cosine_checkpoints(run_dir: Path, cfg: RunConfig) -> list[tuple[str, str]]:
    """(stage label, checkpoint name for ``load_trained``) of the trained weights the cosines are read at, in order
    of step, for a run that logged no cosines: early (the 5 % snapshot), every other snapshot the run saved
    (``snapshot_steps``: absolute steps) and the end. Refused when a snapshot the run was configured to save is
    not in the store (a run restored from a pack keeps only its newest checkpoint): the stages would be a different
    set, silently."""
    ckpt = run_dir / "checkpoints"
    steps = complete_steps(ckpt)
    saved = snapshot_steps(ckpt)
    if (not steps or any(s not in saved for s in cfg.train.snapshot_plan(steps[-1]))
            or not any(_is_early(f) for f in saved.values())):
        raise StoreError(f"{ckpt}: the run logged no embedding cosines, and the weights they are read from (the 5 % "
                         "snapshot, its snapshot steps and the end) are not all in the store; train the run again")
    found = [(s, f"early (step {s}, {EARLY:.0%})" if _is_early(f) else f"step {s}", f"snapshot-{s}")
             for s, f in saved.items()]
    found.append((steps[-1], f"final (step {steps[-1]})", "final"))
    return [(label, name) for _, label, name in sorted(found)]


def embedding_cosines(cfg: RunConfig, run_dir: Path, keep: bool = True) -> dict:
    """Mean pairwise cosine of the PrOntoQA-only and TinyStories-only input embeddings per stage (initialization,
    then the run's ``logged_stages``, or ``cosine_checkpoints`` for a run that logged none), measured once and then
    read from ``analysis/embedding-cosine.json`` (older files of the cpu profile hold init, early and final by
    epoch); ``keep`` False measures without writing that file (a check that must leave the run as it found it)."""
    cached = run_dir / "analysis" / "embedding-cosine.json"
    if cached.is_file():
        kept = read_json(cached, "embedding-cosine file")
        if not isinstance(kept, dict) or not COSINE_KEYS <= set(kept) <= COSINE_KEYS | {"tokens"}:
            raise StoreError(f"{cached}: not an embedding-cosine file reasonlab wrote; delete it to measure again")
        if kept["run_id"] != cfg.run_id():
            raise StoreError(f"{cached}: written for run {kept['run_id']!r}, not {cfg.run_id()}; delete it")
        return {"cosine": kept["cosine"], "n_exclusive": tuple(kept["n_exclusive"]), "tokens": kept.get("tokens")}
    tok = load_tokenizer((run_dir / "tokenizer.json").read_text())
    data = TextMixtureTask(cfg.task).build(cfg.seed)  # the run's own data, with its exclusive token sets

    def stage(model: nn.Module) -> dict[str, float]:  # the statistic the run logs while training
        return {k.removeprefix("cosine:"): v for k, v in text_evaluate.embedding_cosines(model, data).items()}

    cosine = {"init": stage(build_model(cfg, data))}  # the initialization: same seed, same draw
    logged = logged_stages(cfg, run_metrics(run_dir))
    cosine |= logged
    for label, name in [] if logged else cosine_checkpoints(run_dir, cfg):
        cosine[label] = stage(load_trained(run_dir, name, data)[1])
    ids = data.info["exclusive"]
    out = {"cosine": cosine, "n_exclusive": (len(ids["prontoqa"]), len(ids["tinystories"])),
           "tokens": {source: [tok.decode([i]) for i in ids[source]] for source in SOURCES}}
    if keep:
        cached.parent.mkdir(exist_ok=True)
        write_json(cached, {"run_id": cfg.run_id(), **out})
    return out


def measure_sweep(cfgs: list[RunConfig], sweep_dir: Path, keep: bool = True) -> dict[str, dict]:
    """run id → ``measure_run`` of each finished run of ``cfgs`` in ``sweep_dir`` (read from the committed files
    alone when the runs keep their ``analysis/embedding-cosine.json``, as ``results/`` does; ``keep`` as
    ``embedding_cosines``)."""
    measured = {}
    for c in cfgs:
        if (sweep_dir / c.run_id() / "summary.json").is_file():
            try:
                measured[c.run_id()] = measure_run(c, sweep_dir / c.run_id(), keep)
            except StoreError as e:  # one run's damaged files leave it out of the tables, said in one line
                warn(f"{c.run_id()} left out: {e}")
    return measured


def by_peak_lr(cfgs: list[RunConfig]) -> dict[float, list[RunConfig]]:
    """A group's runs split by peak learning rate (the ``lr`` groups vary it beside γ), in order of lr."""
    out: dict[float, list[RunConfig]] = {}
    for c in sorted(cfgs, key=lambda c: c.train.base_lr * c.train.lr_multiplier):
        out.setdefault(c.train.base_lr * c.train.lr_multiplier, []).append(c)
    return out


def per_gamma(cfgs: list[RunConfig], measured: dict) -> dict[float, list[dict]]:
    """γ → the measured runs of a group (its seeds), in γ order."""
    out: dict[float, list[dict]] = {}
    for c in sorted(cfgs, key=lambda c: (c.init.gamma, c.seed)):
        if c.run_id() in measured:
            out.setdefault(c.init.gamma, []).append(measured[c.run_id()])
    return out


def stage_cosine(m: dict, when: str) -> dict[str, float]:
    """The cosines of one stage (``init``, ``early`` or ``final``) of a measured run."""
    return next(v for k, v in m["cosine"].items() if k.startswith(when))
