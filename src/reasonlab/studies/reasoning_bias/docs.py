"""The reasoning-bias study's sections of the docs, read from a repository's committed records: the demo (its
figure, its seeds and the README's sample), the mixture transformer at the spec's volume and at the spec's learning
rate, the synthetic cpu sweep (criteria, geometry, Fig. 8), and the results tables' lines."""

from __future__ import annotations

import math
from functools import cached_property
from pathlib import Path

from reasonlab.config import RunConfig, load_profile, resolve
from reasonlab.files import read_json
from reasonlab.kinds.mixture.evaluate import reasoning_bias_criteria
from reasonlab.plots.mixture import plot_source_accuracy
from reasonlab.report.markdown import epoch_cell, held_in
from reasonlab.schedule import lr_sums
from reasonlab.studies import reasoning_bias
from reasonlab.studies.prontoqa_tinystories.report import spread
from reasonlab.studies.reasoning_bias import demo
from reasonlab.studies.sections import FIGURES, Figures, Repository, Sections, Table, counts, train_pack
from reasonlab.sweep.results import markdown_table
from reasonlab.sweep.sql_query import query

MIXTURE = "results/reasoning-bias"
MIXTURE_SWEEPS = ("mixture-transformer-full", "mixture-transformer-seeds")
DEMO = "results/demo"
RB_CPU = "results/reasoning-bias-cpu"  # the synthetic study's cpu profile, committed
DOC = "docs/reasoning-bias.md"


def _demo_cell(r: dict) -> str:
    return f"{r['label']}, {r['reasoning_test_acc']:.2f}, {r['t50_memory']} / {r['t50_reasoning_train']}"


DEMO_COMMAND = f"python benchmarks/demo_seeds.py --seeds 1 2 3 --store /tmp/demo-seeds --out {DEMO}"


RB_COMMAND = train_pack("reasoning-bias")  # the geometry is kept with each run when its summary is first read


SPEC_LR_COMMAND = ("reasonlab sweep --family mixture --profile transformer-spec-lr --grid seed=1,2,3 --grid "
                   "init.gamma=0.3,0.8 --workers 1 --threads 1 --ensemble 1 --name mixture-transformer-spec-lr --out "
                   "~/reasonlab-runs && reasonlab pack ~/reasonlab-runs/mixture-transformer-spec-lr "
                   "results/reasoning-bias/mixture-transformer-spec-lr")


RB_FIGURES = {"reasoning-bias-cpu-curves": "curves", "reasoning-bias-cpu-label-distribution": "label-distribution",
              "reasoning-bias-cpu-cosine-emb_mlp-g0.8": "cosine-emb_mlp-g0.8"}


def _held(per_claim: dict[str, dict[int, bool]], claim: str) -> str:
    return reasoning_bias.fig8_verdict(per_claim[claim], bold=False) if claim in per_claim else "not run"


def _epochs_range(values: list[int | None], horizon: int) -> str:
    """First epochs over seeds: one value in every seed, a range, or beyond the horizon in every seed."""
    if all(v is None for v in values):
        return f"beyond {horizon} in every seed"
    if None in values:
        return f"{min(v for v in values if v is not None)}–never"
    return f"{values[0]} in every seed" if len(set(values)) == 1 else f"{min(values)}–{max(values)}"


ACCURACIES = (reasoning_bias.MEMORY, reasoning_bias.RULE_TRAINED, reasoning_bias.RULE_UNSEEN)  # a column each


def _finals() -> tuple[str, str]:
    """The headers of the final accuracies the tables show, in the study's words."""
    return tuple(f"final {reasoning_bias.words(f)}" for f in (reasoning_bias.MEMORY, reasoning_bias.RULE_UNSEEN))


def _t50s() -> tuple[str, str]:
    """The headers of the first epochs at 0.5 the tables show: memory's and the trained rule's."""
    return tuple(f"t50 {reasoning_bias.words(f)}" for f in (reasoning_bias.MEMORY, reasoning_bias.RULE_TRAINED))


def _mixture_inputs() -> list[str]:
    return [*(f"{MIXTURE}/{s}" for s in MIXTURE_SWEEPS), f"{MIXTURE}/mixture-transformer-seeds/table.sql"]


SPEC_LR = f"{MIXTURE}/mixture-transformer-spec-lr"


SPEC_LR_SEEDS, SPEC_LR_NEEDED = (1, 2, 3), 2  # the verdict asks for every criterion in at least 2 of the 3 seeds


def spec_lr_verdict(held: dict[str, list[bool]], finished: int) -> str:
    """The verdict over seeds: reproduced when every criterion held in ``SPEC_LR_NEEDED`` seeds, not reproduced
    when some criterion can no longer reach that count with the seeds still to finish, else pending."""
    left = len(SPEC_LR_SEEDS) - finished
    if all(sum(h) >= SPEC_LR_NEEDED for h in held.values()) and finished:
        return "**reproduced**"
    failed = [reasoning_bias.CRITERIA[k].split(" (")[0] for k, h in held.items() if sum(h) + left < SPEC_LR_NEEDED]
    if failed:
        return f"**not reproduced** ({'; '.join(failed)}: fewer than {SPEC_LR_NEEDED} of {len(SPEC_LR_SEEDS)} seeds)"
    return f"pending (seeds with both γ finished: {finished} of {len(SPEC_LR_SEEDS)})"


class RbDocs:
    """The study's sections over the records committed in ``repo``, each record read once (one instance per reading
    of the repository: ``ReasoningBias.docs``)."""

    def __init__(self, repo: Repository) -> None:
        self.repo, self.root = repo, repo.root

    @cached_property
    def cpu_configs(self) -> list[RunConfig]:
        """The configs of the committed cpu sweep (``reasoning_bias.study_configs``)."""
        return reasoning_bias.study_configs("cpu")

    def rb_inputs(self) -> list[str]:
        """Every run's record and, for each mixture run, the geometry it kept (no checkpoint is committed): the runs
        ``reasoning_bias.measure`` reads."""
        cfgs, files = self.cpu_configs, ("config.yaml", "summary.json", "metrics.parquet")
        return [f"{RB_CPU}/{c.run_id()}/{f}" for c in cfgs for f in files] + [
            f"{RB_CPU}/{c.run_id()}/analysis/geometry/geometry.{ext}" for c in cfgs for ext in ("json", "npz")
            if reasoning_bias.is_fig8(c) is None]

    @cached_property
    def demo_seeds(self) -> dict[int, dict[float, dict]]:
        return {int(d.name.removeprefix("seed-")): demo.read_demo_runs(d)
                for d in sorted((self.root / DEMO).glob("seed-*"))}

    @cached_property
    def _demo_index(self) -> dict | None:
        """The demo benchmark's JSON (``demo-seeds.json``), None before it is committed."""
        index = self.root / DEMO / "demo-seeds.json"
        return read_json(index, "demo benchmark") if index.is_file() else None

    def _demo_inputs(self) -> list[str]:
        """The benchmark's JSON and, per seed it names, the two runs' records it found."""
        if self._demo_index is None:
            return [f"{DEMO}/demo-seeds.json"]
        return [f"{DEMO}/demo-seeds.json", *(f"{DEMO}/seed-{seed}/{run['run_id']}/{f}"
                                            for seed, result in self._demo_index["seeds"].items()
                                            for run in result["runs"].values()
                                            for f in ("config.yaml", "summary.json", "metrics.parquet"))]

    def _draw_demo(self, scratch: Path) -> None:
        runs = self.demo_seeds[1]
        demo.draw_demo(runs, next(iter(runs.values()))["cfg"].profile, 1, scratch / "demo")

    def demo_walls(self) -> dict[str, float]:
        """Seed → the demo's wall time as the benchmark measured it (seconds)."""
        return {s: v["wall_s"] for s, v in self._demo_index["seeds"].items()}

    def _demo_seeds_table(self) -> str:
        walls = self.demo_walls()
        large, small = demo.DEMO_GAMMAS
        rows = []
        for seed, runs in self.demo_seeds.items():
            criteria = reasoning_bias_criteria(runs[small], runs[large])
            rows.append((str(seed), f"{walls[str(seed)]:.0f} s", _demo_cell(runs[large]),
                         _demo_cell(runs[small]), f"{sum(criteria[k] for k in demo.CRITERIA)} of {len(demo.CRITERIA)}",
                         "shows" if all(criteria[k] for k in demo.CONTRAST) else "does not show"))
        return markdown_table(["seed", "demo wall time", f"γ {large}: label, masked tuples, t50 memory / rule",
                               f"γ {small}: label, masked tuples, t50 memory / rule", "E1 criteria held", "contrast"],
                              rows)

    def _demo_sample(self) -> str:
        """The README's sample of what the demo prints: its closing table and verdict for the committed seed 1, rendered
        by the demo's own code on the demo's console (``reasonlab.terminal``) at a fixed width (so every number in it is
        the committed run's, and every character as the demo prints it)."""
        from io import StringIO

        from reasonlab.terminal import SafeConsole
        runs = self.demo_seeds[1]
        console = SafeConsole(file=StringIO(), width=100, color_system=None, legacy_windows=False, markup=False)
        console.print(demo.demo_table(runs, "runs/demo"))
        console.print("figure: runs/demo/figures/demo.png", highlight=False)
        console.print(demo.demo_verdict(runs), highlight=False)
        lines = ["demo: 2 runs (init.gamma) with 2 workers × 1 threads; store runs/demo",
                 "…   (a live table of both runs from the first seconds: step, steps/s, ETA, loss, accuracies)",
                 *(line.rstrip() for line in console.file.getvalue().splitlines())]
        walls = list(self.demo_walls().values())
        return (f"It takes {min(walls):.0f}–{max(walls):.0f} s (about {round(max(walls) / 60)} minutes) over "
                f"{len(walls)} seeds on 2 quiet cores (`benchmarks/demo_seeds.py`, committed in `results/demo/`) and "
                "prints a live table from the first seconds, then (seed 1):\n\n```text\n" + "\n".join(lines)
                + "\n```\n")

    def demo_headline(self) -> str:
        large, small = demo.DEMO_GAMMAS
        seeds = self.demo_seeds
        shows = [all(reasoning_bias_criteria(r[small], r[large])[k] for k in demo.CONTRAST) for r in seeds.values()]
        unseen = {g: [r[g]["reasoning_test_acc"] for r in seeds.values()] for g in (large, small)}
        walls = list(self.demo_walls().values())
        return (f"the contrast shows in {sum(shows)} of {len(shows)} seeds: γ {small} learns the rule first and "
                f"answers the masked tuples ({min(unseen[small]):.2f}–{max(unseen[small]):.2f}), γ {large} learns rule "
                f"and table together ({min(unseen[large]):.2f}–{max(unseen[large]):.2f}); "
                f"{min(walls):.0f}–{max(walls):.0f} s per demo on 2 cores")

    @cached_property
    def results(self) -> dict:
        """``reasoning_bias.measure`` of the committed cpu sweep."""
        return reasoning_bias.measure(self.cpu_configs, self.root / RB_CPU, keep=False)

    def _draw_rb(self, scratch: Path) -> None:
        reasoning_bias.draw(self.results, self.cpu_configs, scratch)

    def _rb_e1(self) -> str:
        results, minutes = self.results, sum(self.repo.minutes(RB_CPU).values())
        return "\n".join([f"Committed: {counts(self.repo, [RB_CPU])}; {minutes:.0f} min of training summed "
                          f"over the runs (one thread each, beside other work).", "",
                          *reasoning_bias.runs_table(results["runs"]),
                          "", "(t50 = first evaluated epoch, every 2 epochs, with accuracy ≥ 0.5; — = never within the "
                          "run.) E1's criteria (spec §6), per model over the seeds:", "",
                          *reasoning_bias.criteria_table(results["criteria"])]) + "\n"

    def rb_headline(self) -> str:
        """The results table's line for the committed cpu sweep: E1's criteria and the theory checks, in how many
        seeds each held, and Fig. 8's two claims likewise."""
        results = self.results
        parts = []
        for model, name in (("emb_mlp", "Emb-MLP"), ("transformer", "transformer")):
            mine = {s: c for (m, s), c in results["criteria"].items() if m == model}
            parts.append(f"{name}, E1 criteria held in (of {len(mine)} seeds): " + ", ".join(
                f"{label.split(' (')[0]} {sum(c[key] for c in mine.values())}"
                for key, label in reasoning_bias.CRITERIA.items()))
        checks = [f"{name} ({m}) {held_in(per_seed)}" for (name, m), per_seed in sorted(results["checks"].items())]
        fig8 = reasoning_bias.fig8_held(results["fig8"])
        t1 = {None: "not testable", True: "passed", False: "did not pass"}[
            reasoning_bias.t1_passed(results["attention"])]
        return ("; ".join(parts) + f"; T1 (at initialization) {t1}; theory checks at γ {reasoning_bias.SMALL_INIT}, "
                f"passed in: {', '.join(checks)}; Fig. 8: (i) {_held(fig8, 'ranges')}, (ii) {_held(fig8, 'rules')}")

    @cached_property
    def mixture_rows(self) -> list[dict]:
        """The rows of the committed query over the mixture transformer's sweeps (``table.sql``)."""
        sql = (self.root / MIXTURE / "mixture-transformer-seeds" / "table.sql").read_text()
        columns, rows = query(self.root / MIXTURE, sql)
        return [dict(zip(columns, r, strict=True)) for r in rows]

    def _mixture_runs_table(self) -> str:
        rows = [(r["g"], r["seed"],
                 *(f"{epoch_cell(r[f'{x}50'])} / {epoch_cell(r[f'{x}90'])}" for x in ("mem", "rsn", "test")),
                 f"{r['memory']:.3f}", f"{r['test']:.3f}", f"{r['s']:.0f}", r["run_id"]) for r in self.mixture_rows]
        return markdown_table(["γ", "seed", *(f"t50 / t90 {reasoning_bias.words(f)}" for f in ACCURACIES),
                               *_finals(), "s", "run"], rows)

    def _mixture_horizon(self) -> int:
        return max(self.repo.yaml(d / "config.yaml")["train"]["epochs"] for s in MIXTURE_SWEEPS
                   for d in self.repo.runs(f"{MIXTURE}/{s}"))

    def _mixture_means_table(self) -> str:
        horizon, by_gamma = self._mixture_horizon(), {}
        for r in self.mixture_rows:
            by_gamma.setdefault(r["g"], []).append(r)
        rows = [(f"{g} ({'large' if g == min(by_gamma) else 'small'} init)", spread([r["memory"] for r in rs]),
                 spread([r["test"] for r in rs]), _epochs_range([r["mem50"] for r in rs], horizon),
                 _epochs_range([r["rsn50"] for r in rs], horizon)) for g, rs in sorted(by_gamma.items())]
        return markdown_table(["γ", *(f"{h}, mean [min, max]" for h in _finals()), *_t50s()], rows)

    def mixture_headline(self) -> str:
        by_gamma: dict[float, list[dict]] = {}
        for r in self.mixture_rows:
            by_gamma.setdefault(r["g"], []).append(r)
        cells = [f"γ {g}: memory {min(r['memory'] for r in rs):.2f}–{max(r['memory'] for r in rs):.2f}, reasoning-test "
                 f"{min(r['test'] for r in rs):.2f}–{max(r['test'] for r in rs):.2f}, the rule at 0.5 before the facts "
                 f"in {sum(r['mem50'] is None or r['rsn50'] < r['mem50'] for r in rs)} of {len(rs)} seeds"
                 for g, rs in sorted(by_gamma.items())]
        return "with the spec's data volume (`transformer-volume`, 200,000 sequences): " + "; ".join(cells)

    def _spec_lr_inputs(self) -> list[str]:
        return [f"{SPEC_LR}/{d.name}/{f}" for d in self.repo.runs(SPEC_LR) if not d.name.endswith(".partial")
                for f in ("config.yaml", "summary.json", "metrics.parquet")]

    @cached_property
    def spec_lr_runs(self) -> dict[tuple[float, int], dict]:
        """Each finished run of the spec-lr sweep as the E1 criteria read it, keyed by (γ, seed)."""
        runs = {}
        for d in self.repo.runs(SPEC_LR):
            if not d.name.endswith(".partial"):
                cfg = resolve(self.repo.yaml(d / "config.yaml"))
                runs[(cfg.init.gamma, cfg.seed)] = reasoning_bias.read_mixture_run(cfg, d)
        return runs

    def spec_lr_criteria(self) -> dict[int, dict]:
        """E1's criteria of each seed of the spec-lr sweep whose two γ runs are finished."""
        runs, small, large = self.spec_lr_runs, reasoning_bias.SMALL_INIT, reasoning_bias.LARGE_INIT
        return {s: reasoning_bias_criteria(runs[(small, s)], runs[(large, s)]) for s in SPEC_LR_SEEDS
                if (small, s) in runs and (large, s) in runs}

    def spec_lr_sums(self) -> tuple[float, float, int] | None:
        """(Σlr at the end of the spec-lr runs, Σlr at the end of the spec's recipe, the recipe's steps), or None
        before a run finishes. The recipe (profile ``transformer-paper``) walks the same training sequences in its
        own batches, so its steps per epoch are the runs' sequences per epoch over its batch size."""
        if not self.spec_lr_runs:
            return None
        cfg, steps = next((r["cfg"], r["steps"]) for r in self.spec_lr_runs.values())
        recipe = resolve(load_profile("mixture", "transformer-paper")).train
        per_epoch = steps // cfg.train.epochs
        recipe_per_epoch = math.ceil(per_epoch * cfg.train.batch_size / recipe.batch_size)
        recipe_steps = recipe_per_epoch * recipe.epochs
        return (lr_sums(cfg.train, per_epoch, steps)[-1], lr_sums(recipe, recipe_per_epoch, recipe_steps)[-1],
                recipe_steps)

    def _draw_spec_lr(self, scratch: Path) -> None:
        """Accuracy per source of every finished spec-lr run: a row per γ, a column per seed."""
        runs = self.spec_lr_runs
        grid = [[(f"γ={g} (seed {s})", runs[(g, s)]["rows"]) for s in SPEC_LR_SEEDS if (g, s) in runs]
                for g in sorted({g for g, _ in runs})]
        profile = next(iter(runs.values()))["cfg"].profile
        plot_source_accuracy(grid, scratch / "spec-lr", f"Profile: {profile}.")

    def _spec_lr_table(self) -> str:
        runs, criteria = self.spec_lr_runs, self.spec_lr_criteria()
        seeds = list(criteria)
        rows = [(g, s, epoch_cell(r["t50_memory"]), epoch_cell(r["t50_reasoning_train"]), f"{r['memory_acc']:.3f}",
                 f"{r['reasoning_test_acc']:.3f}", f"{r['wall_time_s']:.0f}", r["dir"].name)
                for (g, s), r in sorted(runs.items())]
        runs_table = markdown_table(["γ", "seed", *_t50s(), *_finals(), "s", "run"], rows)
        held = {k: [bool(criteria[s][k]) for s in seeds] for k in reasoning_bias.CRITERIA}
        verdict_rows = [(name, f"{sum(held[k])} of {len(seeds)}", ", ".join(
            f"{s}: {reasoning_bias.criterion_detail(criteria[s], k)}" for s in seeds) or "—")
            for k, name in reasoning_bias.CRITERIA.items()]
        verdicts = markdown_table(['criterion', 'held in (seeds with both γ)', 'per seed'], verdict_rows)
        sums = self.spec_lr_sums()
        clock = "" if sums is None else (f"\nΣlr at the end: {sums[0]:.2f} (these runs) against {sums[1]:.2f} (the "
                                         f"spec's recipe, {sums[2]:,} steps).\n")
        return (f"{runs_table}\n{verdicts}{clock}"
                f"\nVerdict (every criterion in ≥ {SPEC_LR_NEEDED} of {len(SPEC_LR_SEEDS)} seeds): "
                f"{spec_lr_verdict(held, len(seeds))}\n")

    def sections(self) -> Sections:
        return [
            ("demo", Figures(self._demo_inputs, {f"{FIGURES}/demo.png": "demo.png"}, self._draw_demo, DEMO_COMMAND)),
            *((name, Figures(self.rb_inputs, {f"{FIGURES}/{name}.png": f"{made}.png"}, self._draw_rb, RB_COMMAND))
              for name, made in RB_FIGURES.items()),
            ("mixture-transformer-runs", Table(DOC, _mixture_inputs, self._mixture_runs_table)),
            ("mixture-transformer-means", Table(DOC, _mixture_inputs, self._mixture_means_table)),
            ("mixture-transformer-spec-lr", Figures(self._spec_lr_inputs, {
                f"{FIGURES}/mixture-transformer-spec-lr.png": "spec-lr.png"}, self._draw_spec_lr, SPEC_LR_COMMAND)),
            ("mixture-transformer-spec-lr", Table(DOC, self._spec_lr_inputs, self._spec_lr_table,
                                                  command=SPEC_LR_COMMAND)),
            ("demo-seeds", Table(DOC, self._demo_inputs, self._demo_seeds_table, command=DEMO_COMMAND)),
            ("demo-sample", Table("README.md", self._demo_inputs, self._demo_sample, command=DEMO_COMMAND)),
            ("reasoning-bias-cpu-e1", Table(DOC, self.rb_inputs, self._rb_e1, command=RB_COMMAND)),
            ("reasoning-bias-cpu-geometry", Table(DOC, self.rb_inputs, command=RB_COMMAND, render=lambda: "\n".join(
                reasoning_bias.geometry_lines(self.results)) + "\n")),
            ("reasoning-bias-cpu-fig8", Table(DOC, self.rb_inputs, command=RB_COMMAND, render=lambda: "\n".join(
                reasoning_bias.fig8_lines(self.results["fig8"])) + "\n")),
        ]
