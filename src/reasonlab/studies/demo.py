"""``reasonlab demo``: every demo by its name. A demo is a study's arm that says so (``Arm.demo``): the command runs
it through its study (``run_demo``), lists it in its help (``Demo.about``) and suggests what to try after
(``next_step``). The reasoning-bias study's ``demo`` arm is ``reasonlab demo reasoning``, the default; the anchor
studies' are ``anchor`` (the study in small, about 15 minutes) and ``trajectory`` (its paper-scale runs drawn from
the data shipped with the package, in seconds, training nothing).
"""

from __future__ import annotations

from reasonlab.registry import studies
from reasonlab.studies.base import Study

DEFAULT = "reasoning"  # what `reasonlab demo` runs without a name: the first in its help


def demos() -> dict[str, tuple[Study, str]]:
    """Every demo by its name -> (its study, its arm): the registered studies' arms that are demos, the default
    first, then in registration order."""
    arms = {arm.demo.name: (study, name) for study in studies().values() for name, arm in study.arms.items()
            if arm.demo is not None}
    return dict(sorted(arms.items(), key=lambda item: item[0] != DEFAULT))
