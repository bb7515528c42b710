"""The built-in task kinds, one folder each; importing this package registers them all.

A kind's folder holds everything of it: ``config.py`` (its ``task:`` section), ``data.py`` (its ``Task``),
``evaluate.py`` (its summary, best-of-run rule, extras, progress line), ``figures.py``, ``analysis.py`` and
``probes.py``, ``phase.py`` (its phase rule), ``results.py`` (its results columns), ``card.py`` (its card rows),
and ``__init__.py``, which registers it (``register_task``). Each module takes the layer of its role, by file
name (``reasonlab.layers``); no module outside ``reasonlab.kinds`` and the studies imports a kind.
"""

from reasonlab.kinds import anchor, mixture, modular, seq2seq, text_mixture  # noqa: F401 - each registers itself
