"""``reasonlab reproduce scan | cogs | addition | prontoqa``: the real-task comparisons of the anchor study (spec §8).

Each benchmark runs one grid through the sweep machinery: three settings — large init + small weight decay,
small init + large weight decay, and small init + small weight decay (γ alone) — over nested training-set sizes.
The summary states, per size, the headline accuracy of each setting (exact match on the generalization set; the
true/false judgement for PrOntoQA), the accuracy per category, the steps to converge, and whether small
initialization generalized better at this scale, with the numbers (``report.py``); the docs show each benchmark's
committed ``cpu`` arm (``docs.py``) and the results tables their claims and their shared row (``findings.py``).
"""

from __future__ import annotations

from pathlib import Path

from reasonlab.config import raw_config
from reasonlab.studies.base import CPU_HOURS, Arm, Records, Study
from reasonlab.studies.benchmarks import findings
from reasonlab.studies.benchmarks.docs import committed
from reasonlab.studies.benchmarks.plan import Plan
from reasonlab.studies.benchmarks.report import benchmark_figure, runs_table, summary_markdown
from reasonlab.studies.claims import Claim, Finding
from reasonlab.studies.sections import Repository, Sections, sweep_sections
from reasonlab.sweep.grid import SweepSpec


class BenchmarkStudy(Study):
    """One benchmark: an arm per ``Plan`` (its profile), each writing the benchmark's figure and ``summary.md``;
    ``about`` is one line on the benchmark for the summary; ``claim``, the paper's claim on it, makes it a row of the
    README's verdict table, named ``title`` (its name unless given)."""

    def __init__(self, *, name: str, plans: dict[str, Plan], about: str, title: str = "", claim: str = "") -> None:
        self.name, self.kind, self.plans, self.about = name, name, plans, about
        self.title, self.claim = title or name, claim
        self.arms = {profile: Arm(profile=profile, grid=plan.grid(), cost=plan.cost)
                     for profile, plan in plans.items()}
        self.what = f"{name}: initialization and weight decay over nested training sizes"
        self.figures = (name,)

    def spec(self, arm: str) -> SweepSpec:
        """The arm's sweep, whose label names each setting's γ and weight decay."""
        label = f"{raw_config(None, arm, [], self.name)['profile']}; {self.name}: " + ", ".join(
            f"{s} (γ {g:g}, wd {wd:g})" for s, (g, wd) in self.plans[arm].settings().items())
        return SweepSpec(name=f"{self.name}-{arm}", family=self.name, profile=self.arms[arm].profile,
                         config={"profile": label}, grid=self.arms[arm].grid)

    def draw(self, records: Records, out: Path) -> list[Path]:
        return benchmark_figure(runs_table(records.rows, self.plans[records.arm]), self.name, out / self.name,
                                records.configs[0].profile)

    def summarize(self, records: Records) -> str:
        return summary_markdown(self, records.arm, records.configs[0].profile,
                                runs_table(records.rows, self.plans[records.arm]), records.report)

    def sections(self, repo: Repository) -> Sections:
        return sweep_sections([committed(self, repo)])

    def claims(self, repo: Repository) -> list[Claim]:
        return [findings.claim(repo, self)] if self.claim else []

    def findings(self, repo: Repository) -> list[Finding]:
        return [findings.shared_finding(repo, STUDIES.values())]

    def finding_inputs(self, repo: Repository) -> list[str]:
        return committed(self, repo).inputs()


# γ 0.3 / 0.7 and weight decay 0.01 / 0.1 on the CPU (width 128: std 0.23 vs 0.034); on the GPU the spec's
# PrOntoQA pair (γ 0.5, wd 0.01 vs γ 0.7, wd 0.1) at width 400 (std 0.05 vs 0.015) for every benchmark.
CPU_INIT, GPU_INIT = ((0.3, 0.7), (0.01, 0.1)), ((0.5, 0.7), (0.01, 0.1))
# the cpu arms' costs: their committed runs' wall times summed
STUDIES = {
    "addition": BenchmarkStudy(name="addition", plans={
        "cpu": Plan(*CPU_INIT, sizes=((10_000, 60, 10), (50_000, 12, 2)),
                    cost=f"18 runs of 4,680 steps: 1.7 {CPU_HOURS}"),
        "gpu": Plan(*GPU_INIT, sizes=((20_000, 200, 20), (100_000, 40, 4), (500_000, 8, 1)),
                    cost="27 runs of 15,600–15,624 steps (421,416 in all)"),
    }, about="a + b = c with a, b in 0..999; the o.o.d. test holds out every pair with both operands in 400..600 "
       "(40,401 pairs); i.d. test: training-pool pairs outside the subset.", title="addition",
       claim="small init + large wd carries a + b into the held-out 400–600 box where large init + small wd "
       "memorizes (§6, App. F; figure-only)"),
    "scan": BenchmarkStudy(name="scan", plans={
        "cpu": Plan(*CPU_INIT, sizes=((5_000, 40, 8), (21_890, 10, 2)),
                    cost=f"18 runs of 1,560–1,710 steps: 1.0 {CPU_HOURS}"),
        "gpu": Plan(*GPU_INIT, sizes=((2_000, 400, 40), (8_000, 100, 10), (21_890, 40, 4)),
                    cost="27 runs of 2,800–3,400 steps (83,700 in all)"),
    }, about="SCAN add-primitive 'turn left' split: 'turn left' is trained only as the bare command; the o.o.d. "
       "test is the 1,208 composite commands that use it.", title="SCAN",
       claim="small init + large wd generalizes to the held-out \"turn left\" compositions better than large init + "
       "small wd (§6; figure-only)"),
    "cogs": BenchmarkStudy(name="cogs", plans={
        "cpu": Plan(*CPU_INIT, sizes=((6_000, 20, 4), (24_155, 5, 1)),
                    cost=f"18 runs of 920–940 steps: 2.2 {CPU_HOURS}"),
        "gpu": Plan(*GPU_INIT, sizes=((5_000, 400, 40), (12_000, 160, 16), (24_155, 80, 8)),
                    cost="27 runs of 7,360–7,600 steps (202,320 in all)"),
    }, about="COGS: i.d. test = its test part; o.o.d. = the gen set, 21 categories (lexical and structural).",
       title="COGS", claim="with 20k rows both settings exceed 99 % i.d. while small init + large wd stays far ahead "
       "o.o.d. (§6)"),
    "prontoqa": BenchmarkStudy(name="prontoqa", plans={
        "cpu": Plan(*CPU_INIT, sizes=((2_000, 60, 10), (16_000, 8, 1)),
                    cost=f"18 runs of 3,720–4,000 steps: 1.3 {CPU_HOURS}"),
        "gpu": Plan(*GPU_INIT, sizes=((500, 400, 40), (2_000, 100, 10), (8_000, 25, 3), (32_000, 8, 1)),
                    cost="36 runs of 2,800–4,000 steps (117,225 in all)"),
    }, about="PrOntoQA-style 1–5 hop questions from the project's generator, trained next-token on context, question, "
       "chain of thought and answer; scored on the final true/false judgement of the greedy decoding (chance "
       "0.5) on 500 fresh examples.", title="PrOntoQA",
       claim="small init (γ 0.7, wd 0.1) judges fresh questions better than large init (γ 0.5, wd 0.01) at every "
       "training size; chance 0.5 (§6)"),
}
