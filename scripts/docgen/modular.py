"""The modular study's generators: the routes' figures (R1-R3), the probes' findings, the cpu grid's memorizer
(route R3's seeds, shots, probes and verdict are in ``route_r3``)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np

from docgen.common import CELL, FIGURES, MODULAR, REPO, Figures, Table, analyze_pack, run_folders
from reasonlab.config import load_yaml
from reasonlab.errors import UserError
from reasonlab.kinds.modular import figures as modular_figures
from reasonlab.kinds.modular import probes as modular_probes
from reasonlab.kinds.modular.probes import PROBES, TITLES
from reasonlab.plots import save_figure
from reasonlab.store import read_json, read_metrics
from reasonlab.studies import modular_phase

# ---- the modular routes (R1, R2: the paper's cell; R3: the p 11 grokking line): four sets over steps, as packed ----

ROUTES = {"modular-cell": (CELL, "route R1"), "modular-cell-r2": (f"{MODULAR}/cell-r2", "route R2"),
          "modular-grok": (f"{MODULAR}/grok", "route R3")}


def _seeds(folder: str) -> dict[int, Path]:
    """Seed → run folder of a route's committed runs (finished or packed), one per seed."""
    runs: dict[int, Path] = {}
    for run in run_folders(folder):
        seed = load_yaml(run / "config.yaml")["seed"]
        if seed in runs:
            raise UserError(f"{folder}: two runs of seed {seed} ({runs[seed].name}, {run.name}) where a route has one")
        runs[seed] = run
    return runs


def _route_run(figure: str) -> Path:
    """The route's first seed: the run its figure draws."""
    folder, route = ROUTES[figure]
    runs = _seeds(folder)
    if not runs:
        raise UserError(f"{folder}: no run where the figure draws {route}'s")
    return runs[min(runs)]


def _packed_state(run: Path, rows: list) -> str:
    state = "training, packed" if run.name.endswith(".partial") else "finished"
    return f"{state} at step {max(r.step for r in rows):,}"


def _route_inputs(figure: str) -> list[str]:
    run = _route_run(figure).relative_to(REPO)
    return [f"{run}/config.yaml", f"{run}/metrics.parquet"]


def _draw_route(figure: str, scratch: Path) -> None:
    run = _route_run(figure)
    cfg, rows = load_yaml(run / "config.yaml"), read_metrics(run / "metrics.parquet")
    fig = modular_figures.run_figure(rows, {"config": cfg})
    fig.suptitle(f"{ROUTES[figure][1]}, run {run.name.removesuffix('.partial')} ({_packed_state(run, rows)}) · "
                 f"{cfg['profile']}", fontsize=8)
    save_figure(fig, scratch / figure)


# ---- the probes' one-line findings, as each analysis wrote them -------------------------------------------------

def _probe_files(folder: Path) -> dict[str, Path]:
    """Probe name → its committed JSON in one analysis folder, for the probes that were run there."""
    return {name: folder / f"{name}.json" for name in PROBES if (folder / f"{name}.json").is_file()}


def probe_lines(folder: Path) -> list[str]:
    """Each probe's one-line finding on one analysis folder, as the analysis wrote it into its committed JSON."""
    return [f"- **{TITLES[name]}** (`{name}`): {read_json(path, name)['headline']}"
            for name, path in _probe_files(folder).items()]


# ---- the modular cpu memorizer's k-shot grid (i.d. tasks), from its committed analysis --------------------------

GRID_MEMORIZER = f"results/{modular_phase.spec_for('cpu').name}/183d5f788a34/analysis/final"  # 8 tasks, α 0.5, d 2, s 2
_MEMORIZER_COMMAND = analyze_pack("modular-phase", [GRID_MEMORIZER.split("/")[2]])  # every probe of its kind


def _draw_memorizer_grid(scratch: Path) -> None:
    folder = REPO / GRID_MEMORIZER
    with np.load(folder / "grid.npz") as arrays:
        modular_probes.draw_grid(read_json(folder / "grid.json", "grid"), dict(arrays), scratch)


def _memorizer_probes_inputs() -> list[str]:
    return [str(path.relative_to(REPO)) for path in _probe_files(REPO / GRID_MEMORIZER).values()]


def _memorizer_probes() -> str:
    return "\n".join([f"`{GRID_MEMORIZER}/`:", "", *probe_lines(REPO / GRID_MEMORIZER)]) + "\n"


# ---- what this module registers ----------------------------------------------------------------------------------

FIGURE_GENERATORS: dict[str, Figures] = {
    **{name: Figures(partial(_route_inputs, name), {f"{FIGURES}/{name}.png": f"{name}.png"},
                     partial(_draw_route, name)) for name in ROUTES},
    "modular-grid-id-cpu": Figures(lambda: [f"{GRID_MEMORIZER}/grid.json", f"{GRID_MEMORIZER}/grid.npz"],
                                   {f"{FIGURES}/modular-grid-id-cpu.png": "grid-id.png"}, _draw_memorizer_grid,
                                   _MEMORIZER_COMMAND),
}
TABLES: dict[str, Table] = {
    "modular-memorizer-probes": Table("docs/modular-icl.md", _memorizer_probes_inputs, _memorizer_probes,
                                      command=_MEMORIZER_COMMAND),
}
