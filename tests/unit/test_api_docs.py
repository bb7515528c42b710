"""docs/api.md runs as written: its Python blocks are executed in order in one namespace, in a temporary directory,
without pandas; every run they train is small (seconds); the blocks from "Load a run" on run against a tiny run of
every built-in task kind, so they hold for any kind's runs, not the anchor's alone."""

from __future__ import annotations

import builtins
import re
from pathlib import Path

import pytest
from conftest import tiny_modular, tiny_run_dict

import reasonlab
from reasonlab.config import load_yaml, resolve

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
# Parameters × tokens (RunConfig.work) below which a run trains in seconds on one core: the doc's own run is 1.1e10
# (about 5 s); the anchor-cpu profile as shipped, 1.6e12 (about 1.5 minutes).
SECONDS_OF_WORK = 1e11


def _blocks(after: str | None = None) -> list[str]:
    """The page's Python blocks, or those after the heading ``after``."""
    text = DOC.read_text()
    if after is not None:
        text = text[text.index(f"\n## {after}\n"):]
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def _execute(blocks: list[str], namespace: dict) -> None:
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"docs/api.md block {i + 1}", "exec"), namespace)  # noqa: S102 - our own docs
        except Exception as e:  # noqa: BLE001 - name the block that failed
            pytest.fail(f"docs/api.md block {i + 1} failed: {type(e).__name__}: {e}\n{block}")


@pytest.fixture
def no_pandas(monkeypatch):
    """The base install: importing pandas fails, as it does without the dataframe extra."""
    real = builtins.__import__

    def refuse(name, *args, **kwargs):
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("No module named 'pandas'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)


def test_the_api_is_exported():
    assert set(reasonlab.__all__) >= {"make_config", "run", "load", "Run", "open_store", "apply_init_rate",
                                      "ConfigError", "RunConfig", "build_task", "build_model", "score"}
    for name in reasonlab.__all__:
        assert getattr(reasonlab, name) is not None


def test_the_examples_of_docs_api_run_as_written_in_seconds(tmp_path, monkeypatch, capsys, no_pandas):
    blocks = _blocks()
    assert len(blocks) >= 8
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    _execute(blocks, namespace)
    out = capsys.readouterr().out
    assert "did you mean init.gamma?" in out
    run = namespace["run"]
    assert run.dir.resolve().parent == tmp_path / "runs" / "api"
    assert (run.config.init.gamma, run.config.seed) == (1.0, 2)
    assert run.id in out  # the store's SQL found the run
    trained = [resolve(load_yaml(c)) for c in (tmp_path / "runs").glob("*/*/config.yaml")]
    assert trained and all(c.work() < SECONDS_OF_WORK for c in trained), [c.work() for c in trained]


def _tiny(kind: str) -> dict:
    """A run of ``kind`` that trains in a second or two."""
    data = tiny_run_dict(train={"epochs": 2})
    if kind == "modular":
        data = tiny_modular()
        data["train"]["epochs"] = 2
    if kind == "mixture":  # the demo's model: the Emb-MLP on the reasoning/memory mixture
        data["task"] = {"kind": "mixture", "n_samples": 1200, "emb_mlp_form": True, "memory_keying": "unordered"}
        data["model"] = {"kind": "emb_mlp", "d_model": 16, "d_ff": 24}
    if kind == "seq2seq":
        data["task"] = {"kind": "seq2seq", "n_train": 64, "eval_n": 8}
        data["model"]["max_positions"] = 64
        data["train"].update(batch_size=16)
    if kind == "text_mixture":
        data["task"] = {"kind": "text_mixture", "n_per_source": 24, "max_len": 32, "train_eval_n": 4}
        data["model"].update(norm="pre", final_norm=True, positions="rope", tied_head=True, max_positions=32,
                             n_heads=2)
        data["train"].update(batch_size=8)
    return data


@pytest.mark.parametrize("kind", ["anchor", "mixture", "modular", "seq2seq", "text_mixture"])
def test_the_load_examples_run_on_every_kinds_runs(kind, tmp_path, monkeypatch, capsys, no_pandas):
    """What failed on the demo's runs (an anchor set's name) cannot come back: the reading blocks run on a run of
    each kind, with ``small`` that run's config."""
    assert kind in reasonlab.registry.task_kinds()
    monkeypatch.chdir(tmp_path)
    run = reasonlab.run(resolve(_tiny(kind)), out="runs", name="api")
    namespace = {"reasonlab": reasonlab, "run": run, "small": run.config}
    _execute(_blocks(after="Load a run"), namespace)
    out = capsys.readouterr().out
    assert kind in out and run.id in out


def test_score_and_build_refuse_what_they_cannot_read_and_keep_the_models_mode():
    cfg = resolve(tiny_run_dict())
    data = reasonlab.build_task(cfg)
    model = reasonlab.build_model(cfg, data)
    model.train()
    held_out = reasonlab.score(model, data.eval_sets["heldout/4-3/train_keys"])  # scored against two targets
    seen = reasonlab.score(model, data.eval_sets["test/1-1"], limit=8)
    assert model.training and set(held_out) == {"inferential", "symmetric", "any"}
    assert set(seen) == {"designated", "loss"} and all(0 <= v <= 1 for v in (*held_out.values(), seen["designated"]))
    first = next(iter(reasonlab.build_model(cfg).parameters()))  # data built from the config when not given
    assert first.equal(next(iter(model.parameters())))  # the same seed: the same initial weights
    for call, message in ((lambda: reasonlab.build_task("anchor-cpu"), "^build_task config: expected a RunConfig"),
                          (lambda: reasonlab.build_model(cfg, {}), "^build_model data: expected the TaskData"),
                          (lambda: reasonlab.score(model, data), "^score eval_set: expected one of data.eval_sets"),
                          (lambda: reasonlab.score("model", data.eval_sets["train/1-1"]), "^score model:")):
        with pytest.raises(reasonlab.ConfigError, match=message):
            call()


def test_run_writes_what_the_command_line_writes(tmp_path):
    """The API's run directory holds the same files as `reasonlab train`'s."""
    from typer.testing import CliRunner

    from reasonlab.cli import app
    from reasonlab.config import resolve

    cfg = resolve(tiny_run_dict(train={"epochs": 1}))
    ours = reasonlab.run(cfg, out=tmp_path / "a")
    config = tmp_path / "c.yaml"
    config.write_text(reasonlab.config.to_yaml(cfg))
    assert CliRunner().invoke(app, ["train", str(config), "--out", str(tmp_path / "b"), "-q"]).exit_code == 0
    theirs = tmp_path / "b" / "adhoc" / cfg.run_id()

    def tree(root: Path) -> list[str]:
        return sorted(str(p.relative_to(root)) for p in root.rglob("*"))

    assert tree(ours.dir) == tree(theirs) and (ours.dir / "figures" / "run.png").is_file()
    with pytest.raises(reasonlab.ConfigError, match="--family 'anchr'"):
        reasonlab.make_config("cpu", family="anchr")
    with pytest.warns(DeprecationWarning, match="family="):  # the family's old name, kept for one release
        assert reasonlab.make_config("emb-mlp-cpu", study="mixture") == reasonlab.make_config("emb-mlp-cpu",
                                                                                             family="mixture")
