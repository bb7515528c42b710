"""docs/api.md runs: its Python blocks are executed in order in one namespace, on tiny configs (every config the
examples build gets the tiny sizes of conftest over its own overrides), in a temporary directory."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import tiny_run_dict

import reasonlab
from reasonlab import api

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


def _dotted(data: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in data.items():
        out.update(_dotted(v, f"{prefix}{k}.") if isinstance(v, dict) else {f"{prefix}{k}": v})
    return out


TINY = {k: v for k, v in _dotted(tiny_run_dict(train={"epochs": 2})).items() if k not in ("seed", "init.gamma")}


def test_the_api_is_exported():
    assert set(reasonlab.__all__) >= {"make_config", "run", "load", "Run", "open_store", "apply_init_rate",
                                      "ConfigError", "RunConfig"}
    for name in reasonlab.__all__:
        assert getattr(reasonlab, name) is not None


def test_the_examples_of_docs_api_run(tmp_path, monkeypatch, capsys):
    pytest.importorskip("pandas")
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) >= 6
    real = api.make_config

    def tiny(profile=None, overrides=(), **kw):
        given = dict(overrides) if isinstance(overrides, dict) else dict(o.split("=", 1) for o in overrides)
        return real(profile, {**given, **TINY}, **kw)

    monkeypatch.setattr(api, "make_config", tiny)
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    for i, block in enumerate(blocks):
        try:
            exec(compile(block, f"docs/api.md block {i + 1}", "exec"), namespace)  # noqa: S102 - our own docs
        except Exception as e:  # noqa: BLE001 - name the block that failed
            pytest.fail(f"docs/api.md block {i + 1} failed: {type(e).__name__}: {e}\n{block}")
    out = capsys.readouterr().out
    assert "did you mean init.gamma?" in out
    run = namespace["run"]
    assert run.dir.resolve().parent == tmp_path / "runs" / "api"
    assert (run.config.init.gamma, run.config.seed) == (1.0, 2)
    assert run.id in out  # the store's SQL found the run


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
