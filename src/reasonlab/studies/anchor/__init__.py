"""The anchor-composition studies (docs/anchor-composition.md), one folder: ``study.py`` their classes and arms,
``phase.py`` the γ × depth phase diagram, ``trajectory.py`` the paper-scale runs beside the authors' log,
``complexity.py`` inferential complexity, ``lr_wd.py`` learning rate × weight decay, ``demo.py`` the profiles and
the two demos (``reasonlab demo anchor``, ``reasonlab demo trajectory``), ``figures.py`` the figures they draw,
their sections of the docs (``docs.py``, ``demo_docs.py``, ``trajectory_docs.py``) and their rows of the results
tables (``findings.py``).
"""

# the bar each target answer must reach for a run's label to count as the study's outcome: a label is the modal
# answer, which can be a minority of the answers (docs/anchor-composition.md)
STUDY_BAR = 0.8
# the paper the anchor studies (and the benchmarks, its real-task extensions) reproduce: its arXiv id
PAPER = "2405.05409"
