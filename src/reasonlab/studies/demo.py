"""``reasonlab demo``: every demo by its name — what the command runs, its line in the command's help and the command
it suggests after. A study's arm is a demo where it says so (``Arm.demo``): the reasoning-bias study's ``demo`` arm
is ``reasonlab demo reasoning``, the default. The anchor study's two demos follow: ``anchor`` (the anchor study in
small, about 15 minutes) and ``trajectory`` (the anchor study's paper-scale runs drawn from the data shipped with the
package, in seconds, training nothing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from rich.console import Console

from reasonlab.registry import studies
from reasonlab.studies.anchor import demo as anchor_demo


def trajectory(out: Path, console: Console) -> list[Path]:
    """The anchor study's paper-scale picture without training: the authors' logged runs and reasonlab's own
    paper-scale runs of their settings on a 2-core CPU (both shipped with the package), on the Σlr clock."""
    from reasonlab.studies.anchor.demo import paper_scale_verdict
    from reasonlab.studies.anchor.figures import AUTHORS_PAIR, plot_regime  # matplotlib: only when drawing
    from reasonlab.studies.anchor.trajectory import authors_log, authors_lr_sums, paper_scale_runs, paper_scale_tally

    paper_scale = paper_scale_runs()
    figures = plot_regime({}, authors_log(), authors_lr_sums(), Path(out) / "demo-trajectory" / "trajectory",
                          "no reduced-profile runs (nothing trained here)", AUTHORS_PAIR, paper_scale)
    console.print(f"figure: {figures[0]}", highlight=False)
    console.print(paper_scale_verdict(paper_scale_tally(paper_scale["runs"])), highlight=False)  # wrapped to width
    return figures


@dataclass(frozen=True)
class Entry:
    """One ``reasonlab demo``, so the command, its help and its "next:" line come from one table: what it is, how it
    starts (``(out, seed, make_executor, console, overrides) -> paths``: the runs it trained, or the figures it
    drew) and the command it suggests after."""

    about: str
    start: Callable[[Path, int, Callable, Console, list[str]], list[Path]]
    next_step: Callable[[list[Path]], str]


ANCHOR_DEMOS: dict[str, Entry] = {
    "anchor": Entry("the anchor study in small (about 15 minutes)", anchor_demo.demo,
                    lambda runs: f"reasonlab analyze {runs[0]} --probe flow"),
    "trajectory": Entry("the anchor study's paper-scale runs, drawn from shipped data in seconds",
                        lambda out, seed, make_executor, console, overrides: trajectory(out, console),
                        lambda figures: "reasonlab reproduce anchor-trajectory --dry-run  ·  "
                                        "docs/anchor-composition.md"),
}


def demos() -> dict[str, Entry]:
    """Every demo by its name: the registered studies' arms that are demos, then the anchor study's two."""
    arms = {arm.demo.name: Entry(arm.demo.about, partial(study.run_demo, name), partial(study.next_step, name))
            for study in studies().values() for name, arm in study.arms.items() if arm.demo is not None}
    return arms | ANCHOR_DEMOS
