"""Who may import whom: reasonlab's layers, from the ground up. A module imports only from its own layer or the
layers below it, and no import forms a circle (``tests/unit/test_layers.py`` parses every module's imports and checks
both, and the few arrows below that are forbidden even though they point down).

    errors      errors.py: UserError, ConfigError, StoreError (one-line messages; the CLI exits 2)
    ground      registry.py (the plug-in mechanism: task kinds, model kinds, studies; it names no module),
                arguments.py (the Python API's arguments checked at its boundary), signals.py (a command's
                answer to SIGINT and SIGTERM from its first import), seeds.py, numerics.py, allocator.py (glibc kept
                from returning a run's freed memory), version.py,
                terminal.py (stored strings shown, not obeyed), vocabulary.py (each figure's stored name and its
                kind's one label for it, as every surface shows them)
    config      config/: schemas (base, schema), run identity (identity), overrides and profiles (io)
    schedule    schedule.py: the learning rate per step, a law of the training config (trainer and Σlr clocks)
    store       files.py (each file written whole, read within its bound), store.py, staging.py, checkpoint.py,
                checkpoint_checks.py: run directories (folders written as one transaction), metrics, summaries,
                checkpoints and the checks of their files; raises StoreError
    records     record_schemas.py (a schema per file the store's readers use), records.py (the store read back:
                runs known by their id, the hash of their config, so it reads the config schema, which the store
                itself may not), describe.py (a run in one line)
    init        init.py: the γ rule (any torch module)
    tasks       tasks/: data and named evaluation sets
    models      models/
    build       build.py: a run's task data and initialized model (used by trainer, analyses and studies alike)
    evaluate    evaluate/: scoring and each task's summary
    train       train/: the one step and loop, ensembles
    sweep       sweep/: grids, executors, results tables
    plots       plots/: figures from plain arrays and records (never analysis)
    analysis    analysis/: probes on loaded runs (analysis.loading is the one loader; never the trainer)
    report      report/: HTML report, phase diagrams, summary markdown
    kinds       kinds/base.py (``Kind``: the contract, with its generic defaults), kinds/__init__.py and
                kinds/<kind>/__init__.py: each kind's class and registration, over its own modules
    studies     studies/: compositions of the above (never the trainer)
    facade      api.py: the public functions (make_config, run, load, open_store), over everything below, and
                reasonlab/__init__.py, which re-exports them (lazily: ``import reasonlab`` stays light)
    cli         cli/: the commands (training, reading, analyze) under one error boundary; __main__.py

A task kind is one folder, ``kinds/<kind>/``, whose modules take the layer of their role by file name (``ROLES``):
``config.py`` is config, ``record.py`` records (the kind's part of ``summary.json``), ``data.py`` tasks,
``evaluate.py`` and ``cells.py`` evaluate, ``results.py`` sweep, ``figures.py`` plots, ``analysis.py`` and
``probes.py`` analysis (so the analysis -> train ban holds for probes),
``phase.py`` and ``card.py`` report; its ``__init__`` (its ``Kind`` subclass and registration) sits on the kinds
layer above them all, beside ``kinds/base.py``. So a kind's figure module is held to what any figure module may
import, and the generic floors never reach up into a kind: they call a kind's methods through the registry, and no
module outside ``reasonlab.kinds`` imports a kind, but the studies (compositions over kinds) and the facade (its
loader imports the package ``reasonlab.kinds`` to register the built-ins; ``reasonlab.Kind`` is the base class).

Against the order first sketched in DESIGN.md two layers moved, both because the data path needs it: the store
sits below the trainer (the trainer writes run directories and checkpoints; the store itself imports no config),
and plots sit below analysis (probes draw their figures from plain arrays; plots import no analysis).
"""

from __future__ import annotations

LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("errors", ("reasonlab.errors",)),
    ("ground", ("reasonlab.registry", "reasonlab.arguments", "reasonlab.signals", "reasonlab.seeds",
                "reasonlab.numerics", "reasonlab.allocator", "reasonlab.layers",
                "reasonlab.version", "reasonlab.terminal", "reasonlab.vocabulary")),
    ("config", ("reasonlab.config",)),
    ("schedule", ("reasonlab.schedule",)),
    ("store", ("reasonlab.files", "reasonlab.store", "reasonlab.staging", "reasonlab.checkpoint",
               "reasonlab.checkpoint_checks")),
    ("records", ("reasonlab.record_schemas", "reasonlab.records", "reasonlab.describe")),
    ("init", ("reasonlab.init",)),
    ("tasks", ("reasonlab.tasks",)),
    ("models", ("reasonlab.models",)),
    ("build", ("reasonlab.build",)),
    ("evaluate", ("reasonlab.evaluate",)),
    ("train", ("reasonlab.train",)),
    ("sweep", ("reasonlab.sweep",)),
    ("plots", ("reasonlab.plots",)),
    ("analysis", ("reasonlab.analysis",)),
    ("report", ("reasonlab.report",)),
    ("kinds", ("reasonlab.kinds",)),
    ("studies", ("reasonlab.studies",)),
    ("facade", ("reasonlab.api", "reasonlab")),
    ("cli", ("reasonlab.cli", "reasonlab.__main__")),
]

# Arrows that point down yet are refused: analyses and studies build runs through ``build`` and load them through
# ``analysis.loading``, never through the trainer; the store raises its own errors and reads no config.
FORBIDDEN: list[tuple[str, str]] = [("analysis", "train"), ("studies", "train"), ("store", "config")]


# A kind's module takes the layer of its role, named by its file name (reasonlab.kinds.<kind>.<role>).
ROLES = {"config": "config", "record": "records", "data": "tasks", "evaluate": "evaluate", "cells": "evaluate",
         "results": "sweep", "figures": "plots", "analysis": "analysis", "probes": "analysis", "phase": "report",
         "card": "report"}
# Who may import a kind from outside reasonlab.kinds: the studies' modules, and the facade (its loader imports
# the package reasonlab.kinds, no kind's module). The base class, ``BASE``, is no kind: any kind, a study or the
# facade may import it.
KIND_IMPORTERS = ("reasonlab.studies", "reasonlab")
BASE = "reasonlab.kinds.base"


def layer_of(module: str) -> int:
    """The index in ``LAYERS`` of a module's layer: a kind's module by its role (``ROLES``), any other by the
    longest listed prefix of its dotted name."""
    parts = module.split(".")
    if parts[:2] == ["reasonlab", "kinds"] and len(parts) > 3:
        if parts[3] not in ROLES:
            raise KeyError(f"{module}: a kind's module is named by its role, one of {', '.join(ROLES)}")
        return [name for name, _ in LAYERS].index(ROLES[parts[3]])
    best, index = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, index = len(p), i
    if index < 0:
        raise KeyError(f"{module}: in no layer of reasonlab.layers.LAYERS; add it")
    return index
