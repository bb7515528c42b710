"""Every public API argument is checked at the boundary (``reasonlab.arguments``): a value of the wrong type, out of
range, a name with a control character, an over-long path or one that is a file where a folder belongs is one line
naming the function's argument, a ``ConfigError``, before anything runs or is written."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from conftest import tiny_run

import reasonlab
from reasonlab import api
from reasonlab.config import ConfigError
from reasonlab.registry import ModelKind, unregister_study
from reasonlab.studies.base import Study

SRC = str(Path(__file__).parents[2] / "src")


@pytest.fixture(scope="module")
def parts():
    """A tiny config, its data, its untrained model and one evaluation set."""
    cfg = tiny_run()
    data = reasonlab.build_task(cfg)
    return cfg, data, reasonlab.build_model(cfg, data), next(iter(data.eval_sets.values()))


def refused(call, starts: str, *words: str) -> str:
    with pytest.raises(ConfigError) as e:
        call()
    message = str(e.value)
    assert "\n" not in message and message.startswith(starts), message
    assert all(w in message for w in words), message
    assert "\x1b" not in message, message
    return message


def test_the_odd_arguments_of_the_third_pass_are_one_line_each(parts, tmp_path):
    """The examples of issue 57: a 5,000-character path, ``run(out=<a file>)``, ``score(limit=-1)``,
    ``series(None, None)``, ``run(progress="yes")``, a seed of -5 however it is given."""
    cfg, _, model, eval_set = parts
    a_file = tmp_path / "afile"
    a_file.write_text("x")
    store = tmp_path / "store"
    refused(lambda: reasonlab.load("a" * 5000), "load run_dir:", "5,000 bytes")
    refused(lambda: reasonlab.run(cfg, out=a_file), "run out:", "not a folder")
    refused(lambda: reasonlab.run(cfg, out=a_file / "sub"), "run out:", "not a folder")
    refused(lambda: reasonlab.score(model, eval_set, limit=-1), "score limit:", "-1", "from 1")
    refused(lambda: reasonlab.score(model, eval_set, limit=0), "score limit:", "from 1")
    refused(lambda: api.MetricTable([]).series(None, None), "MetricTable.series split:")
    refused(lambda: reasonlab.run(cfg, out=store, progress="yes"), "run progress:", "True or False")
    refused(lambda: reasonlab.make_config("anchor-cpu", {"seed": -5}), "seed:")
    refused(lambda: reasonlab.RunConfig(**{**cfg.model_dump(), "seed": -5}), "seed:")
    unchecked = cfg.model_copy(update={"seed": -5})  # pydantic's model_copy validates nothing
    refused(lambda: reasonlab.build_task(unchecked), "build_task config: seed:", "model_copy")
    refused(lambda: reasonlab.run(unchecked, out=store), "run config: seed:")
    assert not store.exists()


def test_seeds_names_folders_and_models_are_config_errors(parts, tmp_path):
    """A seed past the config's bound (2**63; 2**70 was taken), a group name that is a path ('a/b', '..'), a folder
    that is no finished run for ``load`` and a module reasonlab did not build for ``score`` (it failed inside torch)
    are each a one-line ConfigError naming the argument, nothing written: a StoreError is for what is damaged in a
    store, never for an argument."""
    cfg, _, model, eval_set = parts
    store = tmp_path / "store"
    for seed in (2**70, 2**63):
        refused(lambda seed=seed: reasonlab.make_config("anchor-cpu", {"seed": seed}), "seed:", "less than")
    assert reasonlab.make_config("anchor-cpu", {"seed": 2**63 - 1}).seed == 2**63 - 1
    refused(lambda: reasonlab.make_config("modular-cpu", {"task.task_seed": -1}), "task.task_seed:")
    refused(lambda: reasonlab.make_config("modular-cpu", {"task.split_seed": 2**40, "task.split_draw": "numpy"}),
            "task.split_seed:", "RandomState")
    for name in ("a/b", "..", "../up"):
        refused(lambda name=name: reasonlab.run(cfg, out=store, name=name), f"run name {name!r}:", "no '/' or '..'")
    partial = tmp_path / "0123456789ab.partial"
    partial.mkdir()
    refused(lambda: reasonlab.load(tmp_path), "load run_dir:", "not a finished run", "no summary.json")
    refused(lambda: reasonlab.load(partial), "load run_dir:", "unfinished")
    refused(lambda: reasonlab.score(torch.nn.Linear(2, 2), eval_set), "score model:", "Linear", "run.model()")
    assert not store.exists()
    assert set(reasonlab.score(copy.deepcopy(model), eval_set, limit=2)) >= {"designated"}  # a copy is the model


@pytest.mark.parametrize("name", ["bad\x1bname", "line\nfeed", "bell\x07", "rtl\u202eo", "", "x" * 65, 5, None,
                                  "with space", "-dash"])
def test_a_registered_name_is_a_plain_word(name):
    """``register_study``, ``register_model`` and ``register_task`` refuse a name with an ESC byte, another control
    character or a bidirectional override, an empty, over-long or non-string name, before registering anything."""
    study = type("Odd", (Study,), {"name": name, "kind": "anchor", "arms": {"a": None}, "run": lambda self: None})
    refused(lambda: reasonlab.register_study(study), "study name:", "not a name")
    refused(lambda: reasonlab.register_model(name, config=type, build=print), "model kind name:")
    kind = type("OddKind", (), {"name": name, "config": object, "task": None, "summarize": None})
    refused(lambda: reasonlab.register_task(kind), "task kind name:")
    assert name not in reasonlab.registry._STUDIES and name not in reasonlab.registry._MODELS  # noqa: SLF001


def test_a_registration_s_other_arguments_are_checked():
    study = type("Fine", (Study,), {"name": "fine-name", "kind": "anchor", "arms": {"a": None}, "run": 5})
    refused(lambda: reasonlab.register_study(study), "study 'fine-name': run is int")
    good = type("Good", (Study,), {"name": "good-name", "kind": "anchor", "arms": {"a": None},
                                   "run": lambda self: None})
    refused(lambda: reasonlab.register_study(good, replace="yes"), "register study replace:", "True or False")
    refused(lambda: reasonlab.register_model("rnn", config=5, build=None), "model kind 'rnn': give config=")
    refused(lambda: reasonlab.register_model("rnn"), "model kind 'rnn': give config=")
    assert reasonlab.register_model(ModelKind("transformer", *_transformer_parts()), replace=True)
    unregister_study("good-name")


def _transformer_parts():
    from reasonlab.registry import model_kinds

    entry = model_kinds()["transformer"]
    return entry.config, entry.build


def test_a_lone_surrogate_in_a_config_is_refused_before_training(tmp_path):
    """``--set profile="\\udcff"`` trained and then failed writing its files; it is refused with the field named,
    exit 2, nothing written — on the command line, by ``make_config`` and by ``run`` of a config copied unchecked."""
    out = tmp_path / "store"
    done = subprocess.run([sys.executable, "-m", "reasonlab", "train", "--profile", "anchor-cpu", "--set",
                           'profile="\\udcff"', "--out", str(out)], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": SRC, "COLUMNS": "200"}, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: profile:") and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr and not out.exists()
    refused(lambda: reasonlab.make_config("anchor-cpu", {"profile": "\udcff"}), "profile:", "surrogate")
    refused(lambda: reasonlab.make_config("anchor-cpu", {"init.overrides": {"\udcff": 1.0}}), "init.overrides:")
    copied = tiny_run().model_copy(update={"profile": "\udcff"})
    refused(lambda: reasonlab.run(copied, out=out), "run config: profile:")
    assert not out.exists()


def test_paths_names_and_numbers_of_every_function_are_checked(parts, tmp_path):
    """The neighbours: each public function's paths (too long, a NUL, a file for a folder, under a file, a
    dangling link), names (control characters, empty, over-long), numbers (negative, NaN, huge, True) and types."""
    cfg, data, model, eval_set = parts
    a_file = tmp_path / "afile"
    a_file.write_text("x")
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere")
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    store = tmp_path / "store"
    cases = [  # (the call, how its message starts, words in it)
        (lambda: reasonlab.load("a\0b"), "load run_dir:", "NUL"),
        (lambda: reasonlab.load(a_file), "load run_dir:", "not a folder"),
        (lambda: reasonlab.load(tmp_path / "missing"), "load run_dir:", "does not exist"),
        (lambda: reasonlab.load(5), "load run_dir:", "expected"),
        (lambda: reasonlab.open_store("b" * 5000), "open_store path:", "5,000 bytes"),
        (lambda: reasonlab.open_store(a_file), "open_store path:", "not a folder"),
        (lambda: reasonlab.open_store(tmp_path, memory_gib=10 ** 5000), "open_store memory_gib:", "bits"),
        (lambda: reasonlab.open_store(tmp_path, memory_gib=float("nan")), "open_store memory_gib:"),
        (lambda: reasonlab.run(cfg, out=dangling), "run out:", "not a folder"),
        (lambda: reasonlab.run(cfg, out=loop), "run out:", "not a folder"),
        (lambda: reasonlab.run(cfg, out="c" * 300), "run out:", "255 a part"),
        (lambda: reasonlab.run(cfg, out=store, name="a\x1b[2J"), "run name:", "control character", "\\x1b"),
        (lambda: reasonlab.run(cfg, out=store, name="n" * 300), "run name:", "300 characters"),
        (lambda: reasonlab.run(cfg, out=store, progress=1), "run progress:"),
        (lambda: reasonlab.run("anchor-cpu", out=store), "run config:", "RunConfig"),
        (lambda: reasonlab.make_config("anc\x1bhor-cpu"), "make_config profile:", "\\x1b"),
        (lambda: reasonlab.make_config("x" * 5000), "make_config profile:", "5,000 characters"),
        (lambda: reasonlab.make_config("cpu", family="\u202e"), "make_config family:", "\\u202e"),
        (lambda: reasonlab.make_config("anchor-cpu", file="d" * 5000), "make_config file:", "5,000 bytes"),
        (lambda: reasonlab.make_config("anchor-cpu", file=tmp_path), "make_config file:", "is a folder"),
        (lambda: reasonlab.make_config("anchor-cpu", file=tmp_path / "none.yaml"), "make_config file:",
         "does not exist"),
        (lambda: reasonlab.score(model, eval_set, limit=True), "score limit:"),
        (lambda: reasonlab.score(model, eval_set, limit=2.5), "score limit:"),
        (lambda: reasonlab.build_model(cfg, "data"), "build_model data:"),
        (lambda: reasonlab.TaskDataset(data, split=5), "TaskDataset split:"),
        (lambda: reasonlab.TaskDataset(data, split="x\x1b"), "TaskDataset split:", "\\x1b"),
        (lambda: reasonlab.TaskDataset(data, target=None), "TaskDataset target:"),
        (lambda: api.Run(tmp_path, cfg, {}).model(-1), "Run.model checkpoint:", "from 0"),
        (lambda: api.Run(tmp_path, cfg, {}).model("\x1b"), "Run.model checkpoint:", "\\x1b"),
        (lambda: api.MetricTable([]).series("train", "loss", None), "MetricTable.series clock:"),
        (lambda: api.MetricTable([]).last(None, "loss"), "MetricTable.last split:"),
        (lambda: api.MetricTable([]).at(-1, "train", "loss"), "MetricTable.at epoch:", "-1"),
        (lambda: api.MetricTable([]).at("1", "train", "loss"), "MetricTable.at epoch:"),
        (lambda: api.MetricTable([]).at_epoch(1, 7), "MetricTable.at_epoch split:"),
        (lambda: api.MetricTable([]).first_epoch("train", "loss", float("nan")), "MetricTable.first_epoch reaching:"),
        (lambda: api.MetricTable([]).where(split=3), "MetricTable.where split:"),
        (lambda: api.MetricTable([]).last_epoch("\n"), "MetricTable.last_epoch split:"),
        (lambda: reasonlab.TaskDataset.splits("x"), "TaskDataset.splits data:"),
        (lambda: reasonlab.registry.register_profiles(5), "register_profiles folder:"),
        (lambda: reasonlab.registry.register_profiles("p" * 5000), "register_profiles folder:", "5,000 bytes"),
        (lambda: reasonlab.registry.register_profiles(a_file), "register_profiles folder:", "not a folder"),
        (lambda: reasonlab.apply_init_rate(model, 10 ** 5000), "gamma:", "16,610 bits"),
        (lambda: reasonlab.make_config("anchor-cpu", {"init.gam\nma": 1}), "make_config overrides:", "\\n"),
        (lambda: reasonlab.make_config("anchor-cpu", ["init.gam\x1bma=1"]), "make_config overrides:", "\\x1b"),
        (lambda: reasonlab.make_config("anchor-cpu", {"a" * 5000: 1}), "make_config overrides:", "5,000 characters"),
    ]
    for call, starts, *words in cases:
        refused(call, starts, *words)
    assert not store.exists()
    assert api.MetricTable([(1, 10, "train", "loss", 0.5)]).series("train", "loss") == [(1, 0.5)]
    assert api.MetricTable([(1, 10, "train", "loss", 0.5)]).where() != []  # None still means every split
