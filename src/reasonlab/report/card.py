"""A run's card (``reasonlab show``): a finished run's summary, or an unfinished run's progress read from the files
its trainer writes as it goes, as one two-column table. Kept apart from the CLI so that any front end (the CLI, a
notebook) draws the same card from the same files."""

from __future__ import annotations

from pathlib import Path

from rich.table import Table

from reasonlab.config import load_yaml, resolve
from reasonlab.errors import StoreError
from reasonlab.evaluate import summary_extras
from reasonlab.evaluate.modular import PLATEAU_LEVELS
from reasonlab.numerics import describe_machine
from reasonlab.records import check_identity, load_progress, load_run, progress_figures, run_metrics
from reasonlab.store import inside


def run_card(run_dir: Path) -> Table:
    """The card of a run directory, finished or not; a one-line error (StoreError) for a folder that is neither,
    or whose files are not what reasonlab wrote. Print it on a ``reasonlab.terminal`` console: its strings are
    stored text, shown as they are."""
    run_dir = Path(run_dir)
    if not (run_dir / "summary.json").is_file() and (run_dir / "progress.json").is_file():
        return _card(run_dir, _progress_rows(run_dir))
    return summary_card(run_dir, load_run(run_dir)[0])


def summary_card(run_dir: Path, summary: dict) -> Table:
    """A finished run's card from its summary (as ``train`` has it in hand when the run ends)."""
    return _card(Path(run_dir), _summary_rows(summary))


def _card(run_dir: Path, rows: list[tuple[str, object]]) -> Table:
    """Two columns, the run directory as the title."""
    table = Table(title=f"{run_dir}", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    for k, v in rows:
        table.add_row(k, str(v))
    return table


def _progress_rows(run_dir: Path) -> list[tuple[str, object]]:
    """An unfinished run's card, from the files its trainer writes as it goes (progress, config, metrics)."""
    progress = load_progress(run_dir)
    cfg = resolve(load_yaml(run_dir / "config.yaml")) if inside(run_dir / "config.yaml", run_dir) else None
    if cfg is None:
        raise StoreError(f"{run_dir / 'config.yaml'}: a symbolic link out of {run_dir}; not read")
    check_identity(run_dir, cfg)
    extras = summary_extras(cfg, run_metrics(run_dir)) if (run_dir / "metrics.parquet").is_file() else {}
    rows = [("run id", cfg.run_id()), ("profile", cfg.profile),
            ("status", f"unfinished: epoch {progress['epoch']} of {progress['epochs']} done, step {progress['step']}"
                       f"{f' of {total}' if (total := progress.get('steps')) else ''}; the same `reasonlab train` "
                       "command resumes it from its last checkpoint"),
            ("training loss (epoch mean so far)", _num(progress["loss"], ".4g"))]
    at = progress.get("evaluated_epoch")
    where = f"evaluation at epoch {at}" if at is not None else "last evaluation"
    rows += [(f"{where}: {k}", _num(v)) for k, v in progress_figures(progress).items()]
    rows += _history_rows(extras)
    rows.append(("wall time so far", f"{progress['wall_time_s']:.1f} s"))
    return rows


def _history_rows(summary: dict) -> list[tuple[str, str]]:
    """The lines read over a run's history: the anchor escape points, the modular plateau exits, ΔL̄."""
    rows = []
    for key, point in (summary.get("escape") or {}).items():
        rows.append((f"escape: seen-pair ≥ {int(key[2:]) / 100:g}", _escape_text(point) if point else "not reached"))
    for key, point in (summary.get("plateau") or {}).items():
        level = f"{PLATEAU_LEVELS[key]:g}·ln p" if key in PLATEAU_LEVELS else key
        rows.append((f"plateau: loss ≤ {level}", _plateau_text(point) if point else "not reached"))
    for split, value in (summary.get("delta_L_window") or {}).items():
        rows.append((f"ΔL̄ {split} (5–50 % of steps)", "—" if value is None else f"{value:.3f}"))
    return rows


def _escape_text(e: dict) -> str:
    """One escape point: where seen-pair accuracy first reached a level, and what the held-out pairs did there."""
    lr_sum = _num(e["lr_sum"], ".3g")
    pairs = ", ".join(f"{k} {v:.2f}" for k, v in e.get("heldout", {}).items() if "/train_keys/" in k)
    return f"epoch {e['epoch']}, step {e['step']}, Σlr {lr_sum}; {pairs}"


def _plateau_text(e: dict) -> str:
    """One plateau exit: where the training loss first fell to a fraction of chance, and the last-shot accuracies
    there."""
    lr_sum = _num(e["lr_sum"], ".3g")
    accs = ", ".join(f"{k} {v:.2f}" for k, v in e.get("last_shot", {}).items())
    return f"epoch {e['epoch']}, step {e['step']}, Σlr {lr_sum}, loss {e['loss']:.3f}; last shot: {accs}"


def _summary_rows(summary: dict) -> list[tuple[str, object]]:
    """A finished run's card: what it was, its outcome, its final figures (anchor runs: per held-out pair)."""
    cfg = summary.get("config", {})
    model = cfg.get("model", {})
    final = summary["final"]
    shape = " / ".join(str(model[k]) for k in ("kind", "depth", "d_model") if k in model)
    init = cfg.get("init", {})
    start = f"GPT-2 scheme (std {init.get('std', 0.02)})" if init.get("scheme") == "gpt" else f"γ {init.get('gamma')}"
    rows = [("run id", summary["run_id"]), ("profile", summary["profile"]),
            ("init; model kind / depth / d_model", f"{start}; {shape}"),
            ("outcome", summary["label"])]
    pairs = summary["outcome"].get("pairs")
    if pairs is not None:  # anchor runs
        rows += [("train accuracy", _num(final.get("train_acc"))),
                 ("seen-pair test-key accuracy", _num(final.get("seen_test_acc")))]
        for pair, o in pairs.items():
            clean = " (clean)" if o["clean"] else ""
            rows.append((f"held-out {pair}", f"{o['label']}{clean}: inferential {_num(o['inferential'])}, "
                                             f"symmetric {_num(o['symmetric'])} ({o['symmetric_target']}), "
                                             f"other {_num(o['other'])}"))
        rows += _history_rows(summary)
    else:
        rows += [(k, _num(v)) for k, v in final.items()]
        rows += _history_rows(summary)
        rows += [(f"best: {k}", f"{v:.3f}" if isinstance(v, float) else str(v))
                 for k, v in summary.get("best", {}).items() if not isinstance(v, dict)]
    rows += [("epochs / steps", f"{summary['epochs']} / {summary['steps']}"),
             ("wall time", f"{summary['wall_time_s']:.1f} s on {summary['device']}{_machine_text(summary)}"),
             ("version / git", f"{summary['versions']['reasonlab']} / {summary['git_revision']}")]
    return rows


def _num(value: float | None, spec: str = ".3f") -> str:
    """A figure as the card shows it; a missing one (NaN stored as null) as —."""
    return "—" if value is None else format(value, spec)


def _machine_text(summary: dict) -> str:
    """Where the run's rounding came from (summaries written before runs recorded it have none)."""
    m = summary.get("machine")
    return f" · {describe_machine(m, summary['threads'])}" if m else ""
