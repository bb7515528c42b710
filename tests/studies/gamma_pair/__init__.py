"""A study of one's own, in one folder shaped like ``reasonlab/studies/<study>/`` but outside the package: its arm,
its summary and its docs section. ``reasonlab.register_study(GammaPair)`` registers it: here the fixture of
``test_gamma_pair.py`` does, and removes it after the module, since pytest imports this folder to collect the test
and other tests read every registered study's sections."""

from __future__ import annotations

import reasonlab
from reasonlab.config import load_yaml
from reasonlab.report.markdown import document, table
from reasonlab.studies.base import Arm, Records
from reasonlab.studies.sections import Repository, Sections, Table

PINS = "results/gamma-pair/pins.yaml"


class GammaPair(reasonlab.Study):
    """A large and a small initialization of the anchor task's cpu profile, one epoch each."""

    name = "gamma-pair"
    kind = "anchor"
    arms = {"cpu": Arm(profile="cpu", changes=("train.epochs=1",), grid={"init.gamma": [0.3, 0.8]},
                       cost="2 runs of one epoch, seconds each")}
    what = "a large and a small initialization, one epoch"

    def summarize(self, records: Records) -> str:
        return document(["# gamma-pair", ""], table(["γ", "label"], [(r["init.gamma"], r["label"])
                                                                      for r in records.rows]))

    def sections(self, repo: Repository) -> Sections:
        def render() -> str:
            return "".join(f"- γ {g}: run `{run}`\n" for g, run in load_yaml(repo.root / PINS)["runs"].items())

        return [("gamma-pair-runs", Table("docs/gamma-pair.md", lambda: [PINS], render))]

