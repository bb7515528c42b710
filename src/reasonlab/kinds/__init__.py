"""The built-in task kinds, one folder each; importing this package registers them all.

A kind is a ``Kind`` (``base.py``) declared and registered in its folder's ``__init__.py``, over one module per
role: ``config.py`` (its ``task:`` section), ``record.py`` (its ``Report``, its part of ``summary.json``),
``data.py`` (its ``Task``), ``evaluate.py`` (its summary, best-of-run rule, extras, progress line), ``figures.py``,
``analysis.py`` and ``probes.py``, ``phase.py`` (its phase diagram), ``results.py`` (its results columns),
``card.py`` (its card rows), and ``profiles/``, its built-in profiles. Each module takes the layer of its role, by
file name (``reasonlab.layers``); no module outside ``reasonlab.kinds`` and the studies imports a kind.
"""

from reasonlab.kinds import anchor, mixture, modular, seq2seq, text_mixture  # noqa: F401 - each registers itself
