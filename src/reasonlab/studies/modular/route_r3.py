"""Route R3 of the modular study (the p 11 line in a grokking regime), read from a repository's committed records:
its seeds, their shot curves and probes at the final and early-stopping checkpoints, the readings against ratio
matching and the verdict on what ratio matching cannot answer."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from statistics import mean

import numpy as np

from reasonlab.errors import UserError
from reasonlab.files import read_json
from reasonlab.kinds.modular import figures as modular_figures
from reasonlab.kinds.modular.evaluate import GOOD, SETS, phase_label
from reasonlab.kinds.modular.probes import PROBES
from reasonlab.plots import save_figure
from reasonlab.store import read_metrics
from reasonlab.studies.modular.docs import DOC, MODULAR, ModularDocs, packed_state, probe_lines
from reasonlab.studies.sections import FIGURES, Figures, Repository, Sections, Table
from reasonlab.sweep.results import markdown_table

GROK = f"{MODULAR}/grok"
GROK_CHECKPOINTS = ("final", "best")  # the analyses committed per seed: the last weights and the early-stopping pick
GROK_BAR = 0.5  # the bar for o.o.d.-test (strict, dense last-shot): a second seed, shots and probes past it
R3_NEW_SEEDS, R3_NEEDED, R3_CONTEXTS = (3, 4, 5), 2, 20  # the verdict's seeds, how many must pass, the grid's contexts


def _grok_step(repo: Repository, folder: Path) -> int:
    """The step of the weights an analysis read: its ``checkpoint.json``; analyses written before ``analyze``
    recorded it are of the final checkpoint, the run's last step."""
    if (folder / "checkpoint.json").is_file():
        return repo.json(folder / "checkpoint.json", "analysis checkpoint")["step"]
    if folder.name != "final":
        raise UserError(f"{folder}: no checkpoint.json to say which step it analysed; rerun reasonlab analyze")
    return repo.json(folder.parents[1] / "summary.json", "summary")["steps"]


def _grok_shots_name(seed: int, cp: str) -> str:
    return f"modular-grok-shots-s{seed}-{cp}"


@dataclass(frozen=True)
class GrokSeed:
    """One seed of route R3 as committed: how far it trained, when o.o.d.-test first reached the issue's bar, its
    peak, and the four sets and the spec's phase (τ_fit 0.9, τ_good 0.8) at the last evaluation."""
    run: Path
    state: str
    first: int | None
    peak: float
    peak_step: int
    last: dict[str, float]
    phase: str


def _span(values: list[float]) -> str:
    return f"{min(values):.2f}" if round(min(values), 2) == round(max(values), 2) else \
        f"{min(values):.2f}–{max(values):.2f}"


def _unseen_composition(grids: dict[int, dict]) -> tuple[float | None, int, list[dict]]:
    """The grid's composition cells on the unseen pairs alone, o.o.d. tasks at the last k, over every context:
    their accuracy weighted by each context's cells (None: no context has such cells), the cells, and each
    context's figures where it has some."""
    last = max(next(iter(grids.values()))["ood"], key=int)
    unseen = [g["ood"][last]["unseen"] for g in grids.values() if g["ood"][last]["unseen"]["composition_cells"]]
    cells = sum(u["composition_cells"] for u in unseen)
    return (sum(u["composition"] * u["composition_cells"] for u in unseen) / cells if cells else None), cells, unseen


def _r3_scores(repo: Repository, folder: Path) -> tuple[float | None, float | None]:
    """One analysis read on what ratio matching cannot answer: the shots probe's o.o.d.-test last-shot accuracy on
    the queries ratio matching cannot answer, and the grid's unseen-pair composition cells over at least
    ``R3_CONTEXTS`` contexts (None where the analysis lacks it)."""
    beyond = repo.json(folder / "shots.json", "shots")["ood/test"].get("beyond_rm", {}).get("last_shot")
    grids = _grok_grids(repo, folder)
    return beyond, (_unseen_composition(grids)[0] if len(grids) >= R3_CONTEXTS else None)


def r3_verdict(passed: dict[int, bool | None], bar: float = GROK_BAR) -> str:
    """The verdict over seeds (True: both scores ≥ ``bar`` at one checkpoint; False: scored, not both; None: not
    scored yet): modular regression when ``R3_NEEDED`` of the new seeds pass, ratio matching when they no longer
    can, else pending."""
    new = [passed.get(s) for s in R3_NEW_SEEDS]
    scored, composing = sum(v is not None for v in passed.values()), sum(v is True for v in passed.values())
    if sum(v is True for v in new) >= R3_NEEDED:
        return f"**a small analogue of o.o.d. generalization by modular regression**, {composing} of {scored} seeds"
    if sum(v is not False for v in new) < R3_NEEDED:
        return (f"**ratio matching**: fewer than {R3_NEEDED} of seeds {R3_NEW_SEEDS[0]}–{R3_NEW_SEEDS[-1]} reach "
                f"{bar} on both scores")
    return f"pending (seeds {R3_NEW_SEEDS[0]}–{R3_NEW_SEEDS[-1]} scored: {sum(v is not None for v in new)} of 3)"


def _grok_grids(repo: Repository, folder: Path) -> dict[int, dict]:
    """Probe-input seed → the grid probe's numbers in one analysis folder (seed 0 is the default)."""
    paths = {0: folder / "grid.json", **{int(d.name.removeprefix("seed-")): d / "grid.json"
                                          for d in sorted(folder.glob("seed-*")) if (d / "grid.json").is_file()}}
    return {s: repo.json(path, "grid") for s, path in sorted(paths.items()) if path.is_file()}


class RouteR3:
    """Route R3's sections over the records of ``docs`` (the modular study's, in its repository), each read once."""

    def __init__(self, docs: ModularDocs) -> None:
        self.docs, self.root = docs, docs.repo.root

    def _grok_seeds_inputs(self) -> list[str]:
        return [f"{run.relative_to(self.root)}/{f}" for run in self.docs.seeds(GROK).values()
                for f in ("config.yaml", "metrics.parquet")]

    def _draw_grok_seeds(self, scratch: Path) -> None:
        seeds = self.docs.seeds(GROK)
        runs = {seed: read_metrics(run / "metrics.parquet") for seed, run in seeds.items()}
        cfg = self.docs.repo.yaml(seeds[min(seeds)] / "config.yaml")
        states = "; ".join(f"seed {s}: {packed_state(run, runs[s])}" for s, run in sorted(seeds.items()))
        fig = modular_figures.seeds_figure(runs, cfg["task"]["p"],
                                           f"route R3 ({cfg['profile']}), every seed ({states})")
        save_figure(fig, scratch / "modular-grok-seeds")

    @cached_property
    def _grok_analyses(self) -> dict[tuple[int, str], Path]:
        """(seed, checkpoint) → the committed analysis folder of each R3 seed at its final and best checkpoints."""
        return {(seed, cp): run / "analysis" / cp for seed, run in sorted(self.docs.seeds(GROK).items())
                for cp in GROK_CHECKPOINTS if (run / "analysis" / cp / "shots.json").is_file()}

    def _grok_at(self, seed: int, cp: str) -> str:
        step = _grok_step(self.docs.repo, self._grok_analyses[seed, cp])
        pick = " (the early-stopping pick: its o.o.d.-test peak)" if cp == "best" else ""
        return f"seed {seed}, {cp} checkpoint{pick}, step {step:,}"

    def _grok_shots_inputs(self, seed: int, cp: str) -> list[str]:
        folder = self._grok_analyses[seed, cp].relative_to(self.root)
        return [f"{folder}/shots.json", f"{folder}/shots.npz", f"{folder.parents[1]}/config.yaml"]

    def _draw_grok_shots(self, seed: int, cp: str, scratch: Path) -> None:
        folder = self._grok_analyses[seed, cp]
        arrays = np.load(folder / "shots.npz")
        curves = {name: arrays[short] for short, name in SETS.items()}
        ceilings = {k.removeprefix("ceiling_"): arrays[k] for k in arrays.files if k.startswith("ceiling_")}
        modular_figures.plot_shot_curves(curves, ceilings, scratch / _grok_shots_name(seed, cp),
                                         f"route R3, run {folder.parents[1].name.removesuffix('.partial')}, "
                                         f"{self._grok_at(seed, cp)}: strict per-shot accuracy",
                                         modular_figures.PAPER_SHOTS,
                                         beyond=arrays["ood_test_beyond_rm"] if "ood_test_beyond_rm" in arrays.files
                                         else None)

    @cached_property
    def stats(self) -> dict[int, GrokSeed]:
        """Each seed as committed (``GrokSeed``)."""
        stats = {}
        for seed, run in sorted(self.docs.seeds(GROK).items()):
            metrics = read_metrics(run / "metrics.parquet")
            series = modular_figures.step_series(metrics)
            steps, ood = series["ood_test_last_shot"]
            last = {k: series[f"{k}_last_shot"][1][-1] for k in SETS}
            peak = max(range(len(ood)), key=ood.__getitem__)
            stats[seed] = GrokSeed(run, packed_state(run, metrics),
                                   next((s for s, v in zip(steps, ood, strict=True) if v >= GROK_BAR), None),
                                   ood[peak], steps[peak], last, phase_label(last))
        return stats

    def _grok_table(self) -> str:
        rows = [(str(seed), s.run.name, s.state, "never" if s.first is None else f"{s.first:,}",
                 f"{s.peak:.3f} (step {s.peak_step:,})", *(f"{s.last[k]:.3f}" for k in SETS), s.phase)
                for seed, s in self.stats.items()]
        return markdown_table(["seed", "run", "state", f"first step o.o.d.-test ≥ {GROK_BAR}", "o.o.d.-test peak",
                               *(f"{s} (last)" for s in SETS.values()), "spec phase (last)"], rows)

    def grok_headline(self) -> str:
        """Route R3 in one sentence for the README's and results.md's rows: how many seeds passed the issue's bar and
        the spec's phase bar, and each seed's figures."""
        stats, p = self.stats, self._grok_p()
        parts = [f"seed {seed}: " + (f"≥ {GROK_BAR} from step {s.first:,}, " if s.first is not None else "")
                 + f"peak {s.peak:.2f}, last {s.last['ood_test']:.2f} ({s.state})" for seed, s in stats.items()]
        done = [s for s in stats.values() if not s.run.name.endswith(".partial")]  # a training seed is no verdict yet
        passed = sum(s.first is not None for s in done)
        kept = sum(s.last["ood_test"] >= GROK_BAR for s in done)
        good = sum(s.peak >= GOOD for s in done)
        training = len(stats) - len(done)
        # at p 11 a context of 15 pairs puts most queries on a line through one of them: the bar is within reach of
        # ratio matching alone, which the sentence must say beside chance (each seed's final evaluation sequences)
        ceilings = [self.docs.repo.json(folder / "shots.json", "shots")["ceilings"]["rm"][-1]
                    for (_, cp), folder in self._grok_analyses.items() if cp == "final"]
        rm = (f"; ratio matching alone could answer {_span(ceilings)} of these queries" if ceilings else "")
        return (f"a p {p} grokking route (R3): strict o.o.d.-test last-shot ≥ {GROK_BAR} (chance {1 / p:.2f}{rm}) "
                f"in {passed} of {len(done)} finished seeds (still at the last evaluation in {kept}), ≥ {GOOD} (the "
                f"spec's o.o.d.-generalization bar) in {good}"
                + (f", {training} more training" if training else "") + " — " + "; ".join(parts))

    def _grok_probes(self) -> str:
        """The probes' one-line findings on each committed analysis (seed × final/best checkpoint), as the analysis
        wrote them into its committed JSON, with the grid over every context drawn for it."""
        blocks = []
        for (seed, cp), folder in self._grok_analyses.items():
            at = self._grok_at(seed, cp)
            lines = [f"**{at[:1].upper()}{at[1:]}** (`{folder.relative_to(self.root)}/`):", ""]
            lines += probe_lines(self.docs.repo, folder)
            grids = _grok_grids(self.docs.repo, folder)
            if len(grids) > 1:  # the grid's one fixed context, and the others its --seed drew
                lines.append(self._grok_contexts_line(folder, grids))
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks) + "\n"

    def _grok_beyond_rm(self) -> str:
        """Each committed analysis against ratio matching, at the last shot on o.o.d. tasks: the eval-set accuracy and
        the share ratio matching could answer, the accuracy on the queries it cannot, and the grid's composition cells
        (a multiple of no context pair) with its default context, a context of test pairs alone, and over every
        context drawn. Analyses written before a split existed read —."""
        def cell(value: float | None, n: int | None = None) -> str:
            return "—" if value is None else f"{value:.3f}" + (f" ({n:,})" if n is not None else "")

        rows, ks = [], set()
        for (seed, cp), folder in self._grok_analyses.items():
            shots = self.docs.repo.json(folder / "shots.json", "shots")
            test = shots["ood/test"]
            beyond = test.get("beyond_rm", {})
            grids = _grok_grids(self.docs.repo, folder)
            grid = grids[0]  # the default context's; the others are the grid's --seed contexts
            last = max(grid["ood"], key=int)
            ks.add(last)
            tests_only = grid.get("unseen_context", {}).get("ood", {}).get(last, {})
            comp = [g["ood"][last]["composition"] for g in grids.values()]
            rows.append((self._grok_at(seed, cp), cell(test["last_shot"]), cell(shots["ceilings"]["rm"][-1]),
                         cell(beyond.get("last_shot"), beyond.get("queries")), cell(grid["ood"][last]["on_rm"]),
                         cell(grid["ood"][last]["composition"]), cell(tests_only.get("on_rm")),
                         cell(tests_only.get("composition")),
                         f"{mean(comp):.3f} over {len(comp)}" if len(comp) > 1 else "—"))
        return markdown_table(["analysis", "o.o.d.-test last-shot", "RM could answer", "on queries RM cannot (n)",
                               "grid: RM cells", "grid: composition cells", "test-pair context: RM cells",
                               "test-pair context: composition cells", "grid composition, mean over contexts"],
                              rows) + \
            f"\nChance 1/{self._grok_p()} = {1 / self._grok_p():.3f}; the grid columns are o.o.d. tasks at k = " \
            f"{', '.join(sorted(ks, key=int))}.\n"

    def _grok_over_time(self) -> str:
        """Each R3 seed's committed ``--over-time`` analysis in one line: the range over its analysed steps of the
        o.o.d.-test accuracy on queries ratio matching cannot answer, and of the grid's o.o.d. and i.d. composition
        cells at the last k (the shots probe at the run's own evaluation batches there)."""
        lines = []
        for seed, run in sorted(self.docs.seeds(GROK).items()):
            path = run / "analysis" / "dynamics" / "dynamics.json"
            if not path.is_file():
                continue
            series = read_json(path, "dynamics")
            steps = sorted(map(int, series["grid"]))
            last = max(int(k.split(".")[1]) for k in series["grid"][str(steps[-1])] if k.startswith("ood."))

            def span(probe: str, key: str, series: dict = series) -> str:
                values = [v[key] for v in series[probe].values() if v.get(key) is not None]
                return f"{min(values):.3f}–{max(values):.3f}"

            lines.append(f"- seed {seed}, steps {steps[0]:,}–{steps[-1]:,} ({len(steps)} checkpoints): o.o.d.-test "
                         f"last-shot {span('shots', 'ood/test.last_shot')}, on the queries RM cannot answer "
                         f"{span('shots', 'ood/test.beyond_rm.last_shot')}; grid at k = {last}, o.o.d. composition "
                         f"cells {span('grid', f'ood.{last}.composition')} (a context of test pairs: "
                         f"{span('grid', f'unseen_context.ood.{last}.composition')}), i.d. composition cells "
                         f"{span('grid', f'id.{last}.composition')}")
        return "\n".join(lines) + "\n"

    def _grok_contexts_line(self, folder: Path, grids: dict[int, dict]) -> str:
        """The grid probe over every committed context, o.o.d. tasks at the last k: composition and RM cells over all
        queries, and composition on the unseen pairs alone, weighted by their cells (a context may have none)."""
        last = max(next(iter(grids.values()))["ood"], key=int)
        at = [g["ood"][last] for g in grids.values()]
        comp, rm = [s["composition"] for s in at], [s["on_rm"] for s in at]
        pooled, cells, unseen = _unseen_composition(grids)
        seeds = sorted(grids)
        named = (f"{seeds[0]}–{seeds[-1]}" if seeds == list(range(seeds[0], seeds[-1] + 1))
                 else ", ".join(map(str, seeds)))
        tasks = int(np.load(folder / "grid.npz")[f"ood_k{last}"].shape[0])  # the first axis of the k-shot grid
        return (f"- **the grid over {len(grids)} contexts** (`--probe grid --seed S`, S = {named}), "
                f"o.o.d. tasks at k = {last}: composition cells answered at {mean(comp):.3f} on average "
                f"(range {min(comp):.3f}–{max(comp):.3f}), RM cells at {mean(rm):.3f} ({min(rm):.3f}–{max(rm):.3f}); "
                f"on the unseen pairs alone, composition cells at {pooled:.3f} over {cells} cells × {tasks} tasks (per "
                f"context {min(u['composition'] for u in unseen):.3f}–{max(u['composition'] for u in unseen):.3f}; "
                f"≥ 0.5 in {sum(u['composition'] >= 0.5 for u in unseen)} of {len(unseen)} contexts that have such "
                f"cells); chance 1/{self._grok_p()}")

    def _r3_table(self) -> str:
        """Each seed at its early-stopping pick and at the end on the two scores, and the verdict."""
        def cell(value: float | None) -> str:
            return "—" if value is None else f"{value:.3f}"

        rows, both = [], {}
        analyses = self._grok_analyses
        for (seed, cp), folder in analyses.items():
            beyond, grid = _r3_scores(self.docs.repo, folder)
            both[seed, cp] = None if beyond is None or grid is None else beyond >= GROK_BAR and grid >= GROK_BAR
            rows.append((self._grok_at(seed, cp), cell(beyond), cell(grid),
                         {None: "not scored", True: "yes", False: "no"}[both[seed, cp]]))
        at = {seed: [both.get((seed, cp)) for cp in GROK_CHECKPOINTS] for seed, _ in analyses}
        passed = {seed: True if True in v else (False if None not in v else None) for seed, v in at.items()}
        table = markdown_table(["analysis", "o.o.d.-test last-shot on queries RM cannot answer",
                                f"grid: unseen-pair composition cells over ≥ {R3_CONTEXTS} contexts",
                                f"both ≥ {GROK_BAR}"], rows)
        p = self._grok_p()
        return (f"{table}\nVerdict (≥ {R3_NEEDED} of seeds {R3_NEW_SEEDS[0]}–{R3_NEW_SEEDS[-1]} with both ≥ "
                f"{GROK_BAR} at one of their two checkpoints; chance 1/{p} = {1 / p:.3f}): {r3_verdict(passed)}\n")

    def _grok_p(self) -> int:
        return self.docs.repo.yaml(self.docs.route_run("modular-grok") / "config.yaml")["task"]["p"]

    def _grok_probes_inputs(self) -> list[str]:
        return [str(p.relative_to(self.root)) for folder in self._grok_analyses.values()
                for p in [*(folder / f"{name}.json" for name in PROBES), folder / "grid.npz",
                          *(d / "grid.json" for d in sorted(folder.glob("seed-*")))]]

    def sections(self) -> Sections:
        return [
            ("modular-grok-seeds", Figures(self._grok_seeds_inputs,
                                           {f"{FIGURES}/modular-grok-seeds.png": "modular-grok-seeds.png"},
                                           self._draw_grok_seeds)),
            *((_grok_shots_name(*at),
               Figures(partial(self._grok_shots_inputs, *at),
                       {f"{FIGURES}/{_grok_shots_name(*at)}.png": f"{_grok_shots_name(*at)}.png"},
                       partial(self._draw_grok_shots, *at))) for at in self._grok_analyses),
            ("modular-grok", Table(DOC, self._grok_seeds_inputs, self._grok_table)),
            ("modular-grok-probes", Table(DOC, self._grok_probes_inputs, self._grok_probes)),
            ("modular-grok-beyond-rm", Table(DOC, self._grok_probes_inputs, self._grok_beyond_rm)),
            ("modular-grok-verdict", Table(DOC, self._grok_probes_inputs, self._r3_table)),
            ("modular-grok-over-time", Table(DOC, self._dynamics_inputs, self._grok_over_time)),
        ]

    def _dynamics_inputs(self) -> list[str]:
        return [str((run / "analysis/dynamics/dynamics.json").relative_to(self.root))
                for run in self.docs.seeds(GROK).values() if (run / "analysis/dynamics/dynamics.json").is_file()]
