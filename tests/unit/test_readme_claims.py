"""What the README (and the docs beside it) says of the tool holds: the anchor demo takes the time its help says,
every file the README gives each run is in a run that `train` wrote and in one a sweep wrote, the README links the
three papers, the extension guide, the config reference and the licence, and names the GPU setting; the licence is
the MIT one pyproject declares."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from conftest import tiny_run

import reasonlab
from reasonlab.config import TrainConfig
from reasonlab.studies.anchor.demo import ARM as ANCHOR_DEMO
from reasonlab.train.run import train_run

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _flowing(text: str) -> str:
    return " ".join(text.split())


def test_the_anchor_demo_takes_the_minutes_its_help_says_everywhere():
    minutes = re.search(r"about (\d+) minutes", ANCHOR_DEMO.demo.about).group(1)
    for path in ("README.md", "docs/reasoning-bias.md"):
        said = re.findall(r"reasonlab demo anchor`[^)]*?about (\d+) minutes", _flowing((ROOT / path).read_text()))
        assert said == [minutes], (path, said)


def test_every_file_the_readme_gives_each_run_is_in_a_run_train_wrote_and_in_one_a_sweep_wrote(tmp_path):
    sentence = _flowing(README).split("Each run lands in ", 1)[1].split(" with ", 1)[1].split(";", 1)[0]
    files = [f.split("/")[0] for f in re.findall(r"`([a-z_]+\.[a-z]+|[a-z]+/[^`]*)`", sentence)]
    assert {"config.yaml", "metrics.parquet", "summary.json", "checkpoints"} <= set(files), sentence
    trained = reasonlab.run(tiny_run(train={"epochs": 1}), out=tmp_path / "train").dir  # as `reasonlab train`
    swept, _ = train_run(tiny_run(train={"epochs": 1}, seed=2), tmp_path / "sweep", progress=False,
                         log=lambda _: None)  # as a sweep's worker trains it
    for run_dir in (trained, swept):
        assert all((run_dir / name).exists() for name in files), (run_dir, sorted(p.name for p in run_dir.iterdir()))
    assert (trained / "figures" / "run.png").is_file() and not (swept / "figures").exists()


def test_the_readme_links_the_papers_the_guides_and_the_licence():
    links = set(re.findall(r"\]\(([^)]+)\)", README))
    for paper in ("2405.05409", "2406.02550", "2502.04375"):
        assert f"https://arxiv.org/abs/{paper}" in links
    for page in ("docs/extending.md", "docs/config.md", "LICENSE"):
        assert page in links and (ROOT / page).is_file()
    licence = (ROOT / "LICENSE").read_text()
    assert licence.startswith("MIT License") and "the reasonlab authors" in licence
    assert tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"] == {"text": "MIT"}


def test_the_readme_and_the_config_reference_name_the_gpu_setting():
    assert "--set train.device=cuda" in README and "`train.device`" in README
    meaning = TrainConfig.model_fields["device"].description
    assert meaning and "GPU" in meaning
    row = next(x for x in (ROOT / "docs" / "config.md").read_text().splitlines() if x.startswith("| `train.device`"))
    assert meaning in row


def test_the_gpu_path_as_far_as_a_cpu_can_take_it(monkeypatch):
    """What the README's GPU line promises, checked without a GPU: auto takes CUDA when it is visible and the CPU
    otherwise, cuda is refused in one line where none is visible, and precision auto selects bf16 autocast on CUDA
    only."""
    import pytest
    import torch

    from reasonlab.config import ConfigError
    from reasonlab.train import device

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert device.resolve_device("auto") == torch.device("cpu") == device.resolve_device("cpu")
    with pytest.raises(ConfigError, match=r"^train\.device: cuda requested but no CUDA device is visible; use "):
        device.resolve_device("cuda")
    auto = TrainConfig(precision="auto")
    with pytest.warns(UserWarning, match="CUDA is not available"):  # built, not run: this torch has no CUDA
        on_cuda = device.autocast(auto, torch.device("cuda"))
    assert (on_cuda.device, on_cuda.fast_dtype) == ("cuda", torch.bfloat16)
    assert device.autocast(auto, torch.device("cpu")).__class__.__name__ == "nullcontext"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert device.resolve_device("auto") == torch.device("cuda") == device.resolve_device("cuda")
    assert device.resolve_device("cpu") == torch.device("cpu")
