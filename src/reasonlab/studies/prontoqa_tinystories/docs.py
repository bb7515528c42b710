"""The PrOntoQA + TinyStories study's sections of docs/reasoning-bias.md, read from a repository's committed records:
the regime sweep (the spec's optimizer), the earlier cpu sweep (peak lr 1e-3) and the ΔL̄ search, and the results
tables' line."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from statistics import mean, median

from reasonlab.config import RunConfig
from reasonlab.studies import prontoqa_tinystories as lm
from reasonlab.studies.prontoqa_tinystories.figures import draw_figures
from reasonlab.studies.prontoqa_tinystories.measure import measure_sweep, per_gamma, stage_cosine, with_cosines
from reasonlab.studies.prontoqa_tinystories.report import ordering_verdict, report_sections, spread
from reasonlab.studies.sections import FIGURES, Figures, Repository, Sections, Table, train_pack
from reasonlab.sweep.results import markdown_table
from reasonlab.sweep.sql_query import query

LM = "results/reasoning-bias/prontoqa-tinystories-cpu"
LM_REGIME = "results/reasoning-bias/prontoqa-tinystories-regime"
LM_SWEEPS = {"cpu": LM, "regime": LM_REGIME}
DL_SEARCH = "results/reasoning-bias/dl-search"
DOC = "docs/reasoning-bias.md"


def chain(gammas: list[float]) -> str:
    return " < ".join(map(str, gammas))


def _command(profile: str) -> str:
    return train_pack("prontoqa-tinystories", profile, "results/reasoning-bias")


def _lm_figures(profile: str) -> dict[str, str]:
    return {f"{FIGURES}/prontoqa-tinystories-{profile}-{name}": name for name in ("delta-l.png", "cosine.png")}


class LmDocs:
    """The study's sections over the records committed in ``repo``; each profile's sweep is measured once."""

    def __init__(self, repo: Repository) -> None:
        self.repo, self.root = repo, repo.root

    def _sql_table(self, target: str, sql_root: str) -> str:
        return markdown_table(*query(self.root / target, (self.root / sql_root / "table.sql").read_text()))

    def groups(self, profile: str) -> dict[str, list[RunConfig]]:
        """The study's groups for a profile (``lm.study_configs``), made once per reading of the repository."""
        return self.repo.once((LM_SWEEPS[profile], "groups"), lambda: lm.study_configs(profile))

    def _lm(self, profile: str) -> tuple[dict[str, list[RunConfig]], dict[str, dict]]:
        """The study's groups for a profile and its committed finished runs as ``measure_sweep`` gives them (a
        ``.partial`` snapshot is no finished run), measured once per reading of the repository: every table, figure
        and row reads them, and a run whose cosines cannot be had is named once. Under ``--check`` a run's cosines
        file is not written into ``results/`` (``Repository.writes``: the check changes nothing): a run packed
        without one is measured each time."""
        def read() -> tuple[dict[str, list[RunConfig]], dict[str, dict]]:
            groups = self.groups(profile)
            return groups, measure_sweep([c for cs in groups.values() for c in cs], self.root / LM_SWEEPS[profile],
                                         keep=self.repo.writes)

        return self.repo.once((LM_SWEEPS[profile], "measured"), read)

    def per_gamma(self, profile: str, group: str = "main") -> dict[float, list[dict]]:
        groups, measured = self._lm(profile)
        return per_gamma(groups[group], measured)

    def window(self, profile: str, group: str = "main") -> dict[float, list[float]]:
        """γ → ΔL̄ on the training subsets over a group's finished seeds."""
        return {g: [v for m in ms if (v := m["delta_L_train_window"]) is not None]
                for g, ms in self.per_gamma(profile, group).items()}

    def lm_order(self, profile: str) -> tuple[list[float], str]:
        """The main group's γ in the order of their seed-mean ΔL̄, and the study's verdict on the paper's rising order
        over its own γ (0.3 < 0.5 < 0.8)."""
        window = {g: v for g, v in self.window(profile).items() if v}
        order = sorted(window, key=lambda g: mean(window[g]))
        return order, ordering_verdict({g: v for g, v in window.items() if g in lm.GAMMAS})

    def lm_finished(self, profile: str) -> str:
        """How many of the study's runs have finished in the committed sweep, and their seeds."""
        measured = self._lm(profile)[1]
        seeds = sorted({m["seed"] for m in measured.values()})
        return f"{len(measured)} finished runs, seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}"

    def lm_minutes(self, profile: str) -> str:
        """The finished runs' wall times, as committed in their summaries: range and median in minutes."""
        minutes = self.repo.minutes(LM_SWEEPS[profile])
        walls = sorted(minutes[r] for r in self._lm(profile)[1])
        return f"{walls[0]:.0f}–{walls[-1]:.0f} min per run, median {median(walls):.0f}"

    def _draw_lm(self, profile: str, scratch: Path) -> None:
        groups, measured = self._lm(profile)
        draw_figures(groups["main"], measured, scratch)

    def _lm_inputs(self) -> list[str]:
        """The cpu sweep is complete: every main run with its cosines."""
        return [f"{LM}/{c.run_id()}/{f}" for c in self.groups("cpu")["main"]
                for f in ("config.yaml", "summary.json", "metrics.parquet", "analysis/embedding-cosine.json")]

    def regime_inputs(self) -> list[str]:
        """The regime sweep grows: it, and what is measured of each run of the grid that has finished (a
        ``summary.json``), its cosines file being optional."""
        ids = dict.fromkeys(c.run_id() for cs in self.groups("regime").values() for c in cs)
        return [LM_REGIME, *(f"{LM_REGIME}/{r}/{f}" for r in ids
                             if (self.root / LM_REGIME / r / "summary.json").is_file()
                             for f in ("config.yaml", "summary.json", "metrics.parquet"))]

    def _lm_seeds_table(self) -> str:
        per = self.per_gamma("cpu")
        rows = []
        for g, ms in per.items():
            window = [m["delta_L_train_window"] for m in ms]
            rows.append((str(g), " / ".join(f"{v:.3f}" for v in window), spread(window),
                         spread([m["delta_L_train_final"] for m in ms])))
        seeds = " / ".join(str(m["seed"]) for m in next(iter(per.values())))
        return markdown_table(["γ", f"ΔL̄ train (5–50 %), seeds {seeds}", "mean [min, max]",
                               "final ΔL train, mean [min, max]"], rows)

    def _regime_report(self) -> str:
        """The regime sweep's report as ``summary.md`` has it below its header, its headings under the doc's section
        (two levels down) and its figures at the docs' copies."""
        text = "\n".join(report_sections(*self._lm("regime"))) + "\n"
        for target, made in _lm_figures("regime").items():
            text = text.replace(f"](figures/{made})", f"]({Path(target).relative_to('docs')})")
        return re.sub(r"^#", "###", text, flags=re.M)

    def regime_early(self) -> dict[float, list[dict]]:
        """γ → the early cosines of each main-grid run of the regime sweep that has them."""
        groups, measured = self._lm("regime")
        per = per_gamma(groups["main"], with_cosines(measured))
        return {g: [stage_cosine(m, "early") for m in ms] for g, ms in per.items()}

    def cosine_contrast(self) -> tuple[int, int]:
        """At how many γ of the regime sweep the paper's direction (PrOntoQA-only below TinyStories-only, early) shows
        in the seed means, and of how many γ measured."""
        early = self.regime_early()
        return sum(mean(e["prontoqa"] for e in es) < mean(e["tinystories"] for e in es) for es in early.values()), len(
            early)

    def _regime_cosines(self) -> str:
        """Early cosines per γ over the runs that have them, PrOntoQA-only vs TinyStories-only, and at how many γ the
        paper's direction (PrOntoQA-only below) shows in the seed means."""
        early = self.regime_early()
        below, _ = self.cosine_contrast()
        cells = "; ".join(f"γ {g} ({len(es)} seed{'s' if len(es) > 1 else ''}): "
                          f"{spread([e['prontoqa'] for e in es])} vs {spread([e['tinystories'] for e in es])}"
                          for g, es in early.items())
        return (f"{cells}; PrOntoQA-only below TinyStories-only at {below} of {len(early)} γ, where the paper has "
                f"{lm.PAPER_COSINE['prontoqa']} vs {lm.PAPER_COSINE['tinystories']} at small initialization")

    def _regime_reading(self) -> str:
        """What the committed regime runs show, in plain words from the study's own verdicts: what has finished, the
        order of ΔL̄ over γ, the early cosines beside the paper's, and each arm."""
        groups, measured = self._lm("regime")
        per = self.per_gamma("regime")
        runs = "; ".join(f"γ {g}: seed{'s' if len(ms) > 1 else ''} {', '.join(str(m['seed']) for m in ms)}"
                         for g, ms in per.items())
        lines = [f"- **Committed**: {sum(map(len, per.values()))} finished runs of the main grid's "
                 f"{len(groups['main'])} ({runs}), trained one thread each beside other work in "
                 f"{self.lm_minutes('regime')}; unfinished snapshots (`*.partial`) are not counted."]
        if lost := [c for cs in groups.values() for c in cs if (m := measured.get(c.run_id())) and m["cosine"] is None]:
            lines.append("- **Without embedding cosines**: " + ", ".join(f"`{c.run_id()}` (γ {c.init.gamma}, seed "
                         f"{c.seed})" for c in lost) + ": their cosines cannot be had from the committed files (the "
                         "generator prints why; such a run is retrained to get them), so their ΔL counts in every "
                         "table and in the ΔL figure and their cosines read —.")
        order, verdict = self.lm_order("regime")
        lines += [f"- **ΔL̄ over γ** (ΔL = (L_TinyStories − L_PrOntoQA) / L_PrOntoQA on the training subsets, averaged "
                  "over 5–50 % of the steps: how far below the stories' loss the reasoning text's is): the paper's "
                  f"rising order 0.3 < 0.5 < 0.8 {verdict}; the seed means order {chain(order)}, the largest at "
                  f"γ {order[-1]}.",
                  f"- **Early embedding cosines** (5 % of training), PrOntoQA-only vs TinyStories-only tokens: "
                  f"{self._regime_cosines()}."]
        for group in groups:
            if group != "main":
                window = self.window("regime", group)
                values = ", ".join(f"γ {g}: {spread(v)}" for g, v in window.items())
                lines.append(f"- **arm `{group}`** ({lm.TITLES[group]}): " + (
                    f"ΔL̄ {values}; rising with γ: {ordering_verdict(window)}" if window else "no finished run yet")
                    + ".")
        return "\n".join(lines) + "\n"

    def lm_setting(self, profile: str) -> str:
        """The main group's optimizer length and peak, from its configs."""
        train = self._lm(profile)[0]["main"][0].train
        return f"peak lr {train.base_lr * train.lr_multiplier:.0e}".replace("e-0", "e-") + f", {train.epochs} epochs"

    def lm_headline(self) -> str:
        """The results table's line: the regime sweep's verdicts first, then the earlier cpu sweep and the search."""
        rows = self._dl_search_orders()
        highest = sum(max(v, key=v.get) == 0.5 for v in rows)
        (order, verdict), (cpu_order, cpu_verdict) = self.lm_order("regime"), self.lm_order("cpu")
        return (f"`regime` ({self.lm_setting('regime')}): ΔL̄ over γ (paper: 0.3 < 0.5 < 0.8) {verdict} — seed means "
                f"{chain(order)}; early cosines, PrOntoQA-only vs TinyStories-only: {self._regime_cosines()}. "
                f"Earlier, `cpu` ({self.lm_setting('cpu')}): {cpu_verdict} — seed means {chain(cpu_order)}; γ 0.5 "
                f"highest in {highest} of {len(rows)} single-seed settings of the search")

    def _dl_search_orders(self) -> list[dict[float, float]]:
        """Per setting of the ΔL̄ search, γ → ΔL̄ on the training subsets."""
        columns, rows = query(self.root / DL_SEARCH, 'SELECT sweep, "init.gamma" AS g, "delta_L_window.train" AS dl '
                              "FROM runs ORDER BY sweep, g")
        out: dict[str, dict[float, float]] = {}
        for sweep, g, dl in rows:
            out.setdefault(sweep, {})[g] = dl
        return list(out.values())

    def sections(self) -> Sections:
        return [
            ("prontoqa-tinystories-cpu", Figures(self._lm_inputs, _lm_figures("cpu"), partial(self._draw_lm, "cpu"),
                                                 _command("cpu"))),
            ("prontoqa-tinystories-regime", Figures(self.regime_inputs, _lm_figures("regime"),
                                                    partial(self._draw_lm, "regime"), _command("regime"))),
            ("dl-search", Table(DOC, lambda: [DL_SEARCH, f"{DL_SEARCH}/table.sql"],
                                lambda: self._sql_table(DL_SEARCH, DL_SEARCH))),
            ("prontoqa-tinystories-seeds", Table(DOC, self._lm_inputs, self._lm_seeds_table, command=_command("cpu"))),
            ("prontoqa-tinystories-regime-reading", Table(DOC, self.regime_inputs, self._regime_reading,
                                                          command=_command("regime"))),
            ("prontoqa-tinystories-regime", Table(DOC, self.regime_inputs, self._regime_report,
                                                  command=_command("regime"))),
        ]
