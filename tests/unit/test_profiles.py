"""No default task kind, and built-in profiles found by name: a config that names no ``task.kind`` is one line
naming it (API and command line); ``find_profile`` reads a full name alone, a bare one with its family or when one
family has it, and refuses an ambiguous or unknown one; a sweep file's old ``study:`` is read as ``family:``."""

from __future__ import annotations

import pytest
import yaml
from typer.testing import CliRunner

from reasonlab import registry
from reasonlab.api import make_config
from reasonlab.cli import app
from reasonlab.config import ConfigError, families, family_profiles, find_profile, raw_config, resolve
from reasonlab.sweep.grid import SweepSpec, load_sweep, sweep_configs

runner = CliRunner()


# ---- no default task kind ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("data", [{}, {"task": {}}, {"task": {"n_train_per_pair": 64}}, {"seed": 2, "model": {}}])
def test_a_config_without_a_task_kind_names_the_field_and_the_kinds(data):
    with pytest.raises(ConfigError) as caught:
        resolve(data)
    message = str(caught.value)
    assert message.startswith("task.kind: missing; name the task kind (") and "\n" not in message
    assert all(kind in message for kind in registry.task_kinds()) and "--profile" in message


def test_the_api_without_a_profile_or_a_kind_is_refused_and_with_a_kind_is_not():
    with pytest.raises(ConfigError, match=r"^task\.kind: missing"):
        make_config()
    with pytest.raises(ConfigError, match=r"^task\.kind: missing"):
        make_config(family="anchor")  # a family only finds a profile: it names no task
    assert make_config(overrides={"task.kind": "modular"}).task.kind == "modular"
    assert make_config(overrides=["task.kind=anchor"]).model.kind == "transformer"  # the model keeps its default


def test_the_command_line_without_a_task_kind_is_one_line_exit_2(tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("seed: 3\ntask:\n  n_train_per_pair: 64\n")
    for args in (["train", str(config)], ["train", "--set", "seed=2"], ["sweep", "--grid", "seed=1,2"]):
        result = runner.invoke(app, [*args, "--dry-run", "--out", str(tmp_path / "store")])
        lines = [x for x in result.output.splitlines() if x.strip()]
        assert result.exit_code == 2 and len(lines) == 1, result.output
        assert lines[0].startswith("error: ") and "Traceback" not in result.output
        assert "task.kind: missing; name the task kind (" in lines[0]  # a sweep's names its grid point first
    assert not (tmp_path / "store").exists()


# ---- find_profile ---------------------------------------------------------------------------------------------------
def test_a_full_name_needs_no_family():
    assert find_profile("anchor-cpu") == ("anchor", "cpu")
    assert find_profile("anchor-cpu-wide") == ("anchor", "cpu-wide")
    assert find_profile("mixture-emb-mlp-cpu") == ("mixture", "emb-mlp-cpu")
    assert find_profile("anchor-cpu", "anchor") == ("anchor", "cpu")  # a full name with its own family


def test_a_bare_name_with_its_family():
    assert find_profile("cpu", "anchor") == ("anchor", "cpu")
    assert find_profile("cpu", "modular") == ("modular", "cpu")
    assert find_profile("paper", "modular") == ("modular", "paper")


def test_a_bare_name_only_one_family_has_needs_none():
    assert find_profile("trajectory") == ("anchor", "trajectory")
    assert find_profile("emb-mlp-cpu") == ("mixture", "emb-mlp-cpu")
    assert find_profile("cell-r2") == ("modular", "cell-r2")


def test_an_ambiguous_bare_name_lists_the_full_names():
    owners = [f for f in families() if "cpu" in family_profiles(f)]
    assert len(owners) > 1
    with pytest.raises(ConfigError) as caught:
        find_profile("cpu")
    message = str(caught.value)
    assert message.startswith("--profile 'cpu': ambiguous") and "\n" not in message and "--family" in message
    assert all(f"{f}-cpu" in message for f in owners)


def test_an_unknown_name_is_refused_with_the_closest():
    with pytest.raises(ConfigError, match=r"^--profile 'anchor-cpu-wid': unknown; did you mean anchor-cpu-wide\?"):
        find_profile("anchor-cpu-wid")
    with pytest.raises(ConfigError, match=r"^--profile 'trajectory' of the modular family: unknown; "):
        find_profile("trajectory", "modular")
    with pytest.raises(ConfigError, match=r"^--profile 'modular-cpu': a profile of the modular family, not of anchor"):
        find_profile("modular-cpu", "anchor")
    with pytest.raises(ConfigError, match=r"^--family 'anchr': unknown; did you mean anchor\?"):
        find_profile("cpu", "anchr")


def test_the_api_and_the_command_line_find_the_same_profile(tmp_path):
    full = make_config("anchor-cpu")
    assert make_config("cpu", family="anchor") == full == resolve(raw_config(None, "cpu", [], "anchor"))
    assert make_config("trajectory") == make_config("anchor-trajectory")
    with pytest.raises(ConfigError, match=r"^--profile 'cpu': ambiguous"):
        make_config("cpu")
    for args in (["--profile", "anchor-cpu"], ["--family", "anchor", "--profile", "cpu"]):
        result = runner.invoke(app, ["train", *args, "--dry-run", "--out", str(tmp_path)])
        assert result.exit_code == 0 and f"# run {full.run_id()}" in result.output, result.output
    result = runner.invoke(app, ["train", "--profile", "cpu", "--dry-run", "--out", str(tmp_path)])
    assert result.exit_code == 2 and "error: --profile 'cpu': ambiguous" in result.output
    assert "anchor-cpu" in result.output


# ---- the sweep file's family ---------------------------------------------------------------------------------------
def test_a_sweep_file_names_its_family_and_reads_study_as_its_old_name(tmp_path, capsys):
    new, old = tmp_path / "new.yaml", tmp_path / "old.yaml"
    new.write_text(yaml.safe_dump({"family": "anchor", "profile": "cpu", "grid": {"seed": [1, 2]}}))
    old.write_text(yaml.safe_dump({"study": "anchor", "profile": "cpu", "grid": {"seed": [1, 2]}}))
    assert load_sweep(new).family == "anchor" and "deprecated" not in capsys.readouterr().err
    spec = load_sweep(old)
    assert spec.family == "anchor" and "study" not in spec.model_dump()
    assert "warning: the sweep field study: is deprecated" in capsys.readouterr().err
    ids = [[c.run_id() for c in sweep_configs(load_sweep(path))[0]] for path in (new, old)]
    assert ids[0] == ids[1] and len(ids[0]) == 2
    both = tmp_path / "both.yaml"
    both.write_text(yaml.safe_dump({"study": "anchor", "family": "modular", "profile": "cpu"}))
    with pytest.raises(ConfigError, match=r"both\.yaml: study: the old name of family; give family only$"):
        load_sweep(both)
    assert SweepSpec().family is None


# ---- reasonlab profiles, reasonlab profile show ----------------------------------------------------------------------
def test_every_built_in_profile_opens_with_one_line_saying_what_it_is():
    from reasonlab.config import profile_about, profile_text

    for family in families():
        for profile in family_profiles(family):
            first = profile_text(family, profile).splitlines()[0]
            about = profile_about(family, profile)
            assert first == f"# {about}" and about.endswith(".") and len(about) <= 80, (family, profile, about)


def test_a_profiles_label_opens_with_the_name_it_is_asked_for_by():
    """A run line names its profile by the label's first word: the transformer at the spec's lr read "profile cpu",
    the Emb-MLP's cpu profile had three names (mixture-emb-mlp-cpu, emb-mlp-cpu, cpu). It is the full name."""
    from reasonlab.config import load_profile

    for family in families():
        for profile in family_profiles(family):
            label = str(load_profile(family, profile)["profile"])
            assert label.split(" (", 1)[0] == f"{family}-{profile}", label


def test_profiles_lists_each_profile_in_a_line_with_what_it_is_for_and_its_cost(screen, monkeypatch):
    from pathlib import Path

    from reasonlab.config import profile_about

    built_in = [(family, profile) for family in families() for profile in family_profiles(family)]
    folder = Path(__file__).parents[1] / "kinds" / "parity" / "profiles"  # a plug-in's profiles, its kind unloaded
    monkeypatch.setitem(registry._PROFILES, folder.resolve(), None)
    screen(160, False)
    result = runner.invoke(app, ["profiles"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for family, profile in built_in:
        line = next(x for x in lines if x.split() and x.split()[0] == f"{family}-{profile}")
        assert profile_about(family, profile) in line  # name, cost and what it is for on one line
    anchor = next(x for x in lines if x.split() and x.split()[0] == "anchor-cpu").split()
    assert anchor[1] == f"{6 * make_config('anchor-cpu').work():.1e}"  # FLOPs ≈ 6 × parameters × tokens
    assert next(x for x in lines if x.split() and x.split()[0] == "scan-cpu").split()[1] == "—"  # a study sizes it
    assert any(x.split()[:2] == ["parity-cpu", "—"] and "Parity of 6 bits" in x for x in lines if x)


def test_profile_show_prints_the_yaml_with_its_comments_and_refuses_an_unknown_name():
    from reasonlab.config import profile_text

    result = runner.invoke(app, ["profile", "show", "anchor-cpu"])
    assert result.exit_code == 0 and result.output == profile_text("anchor", "cpu")
    assert result.output.startswith("# Anchor composition") and "n_train_per_pair: 4000" in result.output
    bare = runner.invoke(app, ["profile", "show", "emb-mlp-cpu"])  # a bare name one family has
    assert bare.exit_code == 0 and bare.output == profile_text("mixture", "emb-mlp-cpu")
    wrong = runner.invoke(app, ["profile", "show", "anchr-cpu"])
    lines = [x for x in wrong.output.splitlines() if x.strip()]
    assert wrong.exit_code == 2 and len(lines) == 1 and "did you mean anchor-cpu?" in lines[0]
    assert yaml.safe_load(result.output)["task"]["kind"] == "anchor"  # a YAML file one can save and edit


# ---- each kind owns its profiles -----------------------------------------------------------------------------------
def test_every_built_in_profile_lives_in_the_folder_of_the_kind_it_trains():
    from pathlib import Path

    from reasonlab.config import load_profile

    package = Path(registry.__file__).resolve().parent
    kinds = {name: kind for name, kind in registry.task_kinds().items()
             if kind.profiles is not None and package in kind.profiles.resolve().parents}
    assert set(kinds) == {p.parent.name for p in package.glob("kinds/*/profiles")}
    assert not (package / "profiles").exists()
    for name, kind in kinds.items():
        assert kind.profiles.resolve() == package / "kinds" / name / "profiles"
        for path in kind.profiles.glob("*.yaml"):
            family, _, profile = path.stem.partition("-")
            assert load_profile(family, profile)["task"]["kind"] == name, path
