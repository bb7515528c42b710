"""Config: override parsing, one-line errors, YAML IO and the run id."""

from __future__ import annotations

import pytest
import yaml

from reasonlab.config import (
    ConfigError,
    RunConfig,
    apply_overrides,
    deep_merge,
    load_yaml,
    parse_value,
    raw_config,
    resolve,
    to_yaml,
)
from reasonlab.sweep.grid import SweepSpec, sweep_configs

ANCHOR = {"task": {"kind": "anchor"}}  # a config names its task kind: these tests use the anchor task's defaults


def on_anchor(data: dict | None = None) -> dict:
    """``data`` on the anchor task, a fresh dict (overrides edit it in place)."""
    return deep_merge({"task": dict(ANCHOR["task"])}, data or {})


def test_override_types():
    data = apply_overrides(
        {}, ["task.kind=anchor", "init.gamma=0.8", "task.held_out_pairs=[[4,3]]", "model.depth=3", "train.tf32=true",
             "profile=cpu"]
    )
    assert data == {
        "init": {"gamma": 0.8},
        "task": {"kind": "anchor", "held_out_pairs": [[4, 3]]},
        "model": {"depth": 3},
        "train": {"tf32": True},
        "profile": "cpu",
    }
    assert isinstance(data["init"]["gamma"], float)
    assert isinstance(data["model"]["depth"], int)
    cfg = resolve(data)
    assert cfg.init.gamma == 0.8
    assert cfg.task.held_out_pairs == [(4, 3)]
    assert cfg.model.depth == 3 and cfg.train.tf32 is True


def test_override_replaces_nested_value_and_keeps_siblings():
    data = apply_overrides({"model": {"depth": 2, "d_model": 64}}, ["model.depth=4"])
    assert data == {"model": {"depth": 4, "d_model": 64}}


def test_parse_value():
    assert parse_value("0.5") == 0.5
    assert parse_value("[1, 2]") == [1, 2]
    assert parse_value("true") is True
    assert parse_value("post") == "post"
    assert parse_value("[unclosed") == "[unclosed"


def test_exponent_without_dot_still_resolves_to_float():
    # YAML 1.1 reads "1e-4" as a string; validation must still turn it into the float
    cfg = resolve(apply_overrides(on_anchor(), ["train.base_lr=1e-4"]))
    assert cfg.train.base_lr == pytest.approx(1e-4)
    assert isinstance(cfg.train.base_lr, float)


@pytest.mark.parametrize("bad", ["init.gamma", "=3", "init..gamma=1", ".gamma=1"])
def test_malformed_override(bad):
    with pytest.raises(ConfigError):
        apply_overrides({}, [bad])


def test_override_into_non_section():
    with pytest.raises(ConfigError, match="seed is not a section"):
        apply_overrides({"seed": 1}, ["seed.x=2"])


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({**ANCHOR, "model": {"dmodel": 64}}, "model.dmodel"),
        ({"task": {"kind": "anchor", "anchor": [1, 2]}}, "task.anchor"),
        ({**ANCHOR, "trian": {}}, "trian"),
    ],
)
def test_unknown_field_is_one_line_naming_it(data, field):
    with pytest.raises(ConfigError) as err:
        resolve(data)
    msg = str(err.value)
    assert msg.startswith(field + ":")
    assert "unknown field" in msg
    assert "\n" not in msg


def test_invalid_value_is_one_line_naming_it():
    with pytest.raises(ConfigError) as err:
        resolve(on_anchor({"init": {"gamma": -1}}))
    msg = str(err.value)
    assert msg.startswith("init.gamma:") and "\n" not in msg
    with pytest.raises(ConfigError) as err:
        resolve(on_anchor({"task": {"held_out_pairs": [[4, 9]]}}))
    msg = str(err.value)
    assert msg.startswith("task") and "held_out_pairs" in msg and "(4, 9)" in msg and "\n" not in msg


def test_bad_yaml_file(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("model:\n  depth: [1, 2\n  d_model: 3\n")
    with pytest.raises(ConfigError) as err:
        load_yaml(path)
    assert "invalid YAML" in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_yaml_top_level_must_be_mapping(tmp_path):
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_yaml(path)


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_yaml(tmp_path / "nope.yaml")
    assert "nope.yaml" in str(err.value) and "\n" not in str(err.value)


def test_empty_yaml_is_empty_dict(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("")
    assert load_yaml(path) == {}


def test_yaml_round_trip(tmp_path):
    cfg = resolve({"seed": 3, "task": {"kind": "anchor", "held_out_pairs": [[4, 3], [3, 4]]},
                   "init": {"overrides": {"qk": 0.9}}})
    path = tmp_path / "cfg.yaml"
    path.write_text(to_yaml(cfg))
    again = resolve(load_yaml(path))
    assert again == cfg
    assert again.run_id() == cfg.run_id()
    assert yaml.safe_load(to_yaml(cfg))["task"]["non_inferential"] == {"3,4": -6}


def test_deep_merge():
    merged = deep_merge({"a": {"x": 1, "y": 2}, "b": 1}, {"a": {"y": 3}, "c": 4})
    assert merged == {"a": {"x": 1, "y": 3}, "b": 1, "c": 4}


def test_non_inferential_key_forms():
    a = resolve(on_anchor({"task": {"non_inferential": {"3,4": -6}}}))
    assert a == resolve(ANCHOR)
    b = RunConfig.model_validate({"task": {"kind": "anchor", "non_inferential": {(3, 4): -6}}})
    assert b.task.non_inferential == {"3,4": -6}


def test_run_id_stable():
    a = resolve(on_anchor({"seed": 2, "model": {"depth": 3}}))
    b = resolve(on_anchor({"model": {"depth": 3}, "seed": 2}))
    assert a.run_id() == b.run_id()
    assert a.run_id() == resolve(on_anchor({"seed": 2, "model": {"depth": 3}})).run_id()
    assert len(a.run_id()) == 12 and all(c in "0123456789abcdef" for c in a.run_id())
    # explicit defaults hash like omitted ones
    assert resolve(ANCHOR).run_id() == resolve(on_anchor({"init": {"gamma": 0.5}})).run_id()


@pytest.mark.parametrize(
    "override",
    [
        "seed=2",
        "task.n_train_per_pair=100",
        "task.split_modulus=9",
        "task.held_out_pairs=[[4,3],[3,4]]",
        "task.non_inferential={}",
        "task.shifts={1: 5, 2: 1, 3: -2, 4: -7}",
        "model.d_model=64",
        "model.norm=pre",
        "init.gamma=0.8",
        "init.overrides={qk: 0.9}",
        "train.epochs=3",
        "train.lr_multiplier=10",
        "thresholds.fit=0.8",
        "train.weight_decay_on=matrices",
    ],
)
def test_run_id_changes_with_any_field(override):
    base = resolve(ANCHOR)
    changed = resolve(apply_overrides(on_anchor(), [override]))
    assert changed != base
    assert changed.run_id() != base.run_id()


def test_run_ids_of_existing_stores_never_change():
    """Pinned: a new field enters the hash only when set away from the default that keeps the old behaviour
    (its role ``late``), so runs already in a store are still found and skipped after an upgrade."""
    assert resolve(ANCHOR).run_id() == "d2f47d7a7091"
    assert resolve(on_anchor({"seed": 2, "model": {"depth": 3}, "init": {"gamma": 0.8}})).run_id() == "7e4abfe49705"


@pytest.mark.parametrize("override", ["train.threads=3", "train.checkpoint_every=7", "profile=mine"])
def test_run_id_ignores_how_a_run_is_executed(override):
    assert resolve(apply_overrides(on_anchor(), [override])).run_id() == resolve(ANCHOR).run_id()


def test_config_is_frozen():
    cfg = resolve(ANCHOR)
    with pytest.raises(Exception):  # noqa: B017 - pydantic raises ValidationError on frozen assignment
        cfg.seed = 4  # type: ignore[misc]


def test_profile_label_names_what_overrides_change(tmp_path):
    """A profile's label states its settings; a run that changes one must say so, or the label would lie."""
    plain = resolve(raw_config(None, "anchor-cpu", ["train.threads=1"])).profile
    assert plain.startswith("anchor-cpu (reduced") and "changed" not in plain  # execution fields change no numbers
    changed = resolve(raw_config(None, "anchor-cpu", ["train.weight_decay=0.28", "train.threads=1"])).profile
    assert changed == f"{plain}; changed: train.weight_decay=0.28"
    user = tmp_path / "user.yaml"
    user.write_text("model:\n  depth: 3\n")
    assert resolve(raw_config(user, "anchor-cpu", [])).profile == f"{plain}; changed: model.depth=3"
    assert resolve(raw_config(None, "anchor-cpu", ["profile=mine", "model.depth=3"])).profile == "mine"
    configs, _ = sweep_configs(SweepSpec(profile="anchor-cpu"), ["init.gamma=0.5,0.8"], ["train.weight_decay=0.1"])
    assert {c.profile for c in configs} == {f"{plain}; changed: train.weight_decay=0.1"}  # grid axes are not changes


def test_an_integer_too_long_to_convert_is_one_line(tmp_path):
    """Python refuses int() of more than 4,300 digits: a value or file holding one is a one-line error."""
    from reasonlab.config import ConfigError, load_yaml, raw_config, resolve

    with pytest.raises(ConfigError, match="^seed: "):
        resolve(raw_config(None, "anchor-cpu", ["seed=" + "7" * 5000]))
    path = tmp_path / "long.yaml"
    path.write_text("seed: " + "7" * 5000 + "\n")
    with pytest.raises(ConfigError, match=f"^{path}: "):
        load_yaml(path)
    from reasonlab import make_config  # the Python API's override mapping: the int itself, not its digits

    with pytest.raises(ConfigError, match=r"^make_config overrides\['seed'\]: an integer of 16,610 bits"):
        make_config("anchor-cpu", {"seed": 10**5000})


def test_field_roles_are_declared_once_and_every_list_follows():
    """Execution fields are neither hashed nor a change of the profile; members may differ in a stack."""
    from reasonlab.config import EXECUTION_FIELDS, fields_with, raw_config, resolve
    from reasonlab.train.ensemble import MEMBER_FIELDS

    assert EXECUTION_FIELDS == {"profile", "train.threads", "train.checkpoint_every", "train.checkpoint_log",
                                "train.checkpoint_minutes", "train.loggers", "train.snapshot_fractions",
                                "train.snapshot_steps"}
    assert {"seed", "init", "thresholds", "train.base_lr", "train.weight_decay"} <= fields_with("member")
    assert MEMBER_FIELDS["train"] >= {"lr_multiplier", "grad_clip", "threads"} and MEMBER_FIELDS["init"] is True
    base = resolve(raw_config(None, "anchor-cpu", []))
    for dotted in EXECUTION_FIELDS - {"profile"}:
        value = {"train.threads": 3, "train.checkpoint_every": 5, "train.checkpoint_log": 2,
                 "train.checkpoint_minutes": 0.5, "train.loggers": "[tensorboard]",
                 "train.snapshot_fractions": "[0.05]", "train.snapshot_steps": "[500]"}[dotted]
        changed = resolve(raw_config(None, "anchor-cpu", [f"{dotted}={value}"]))
        assert changed.run_id() == base.run_id() and "changed" not in changed.profile, dotted
    device = resolve(raw_config(None, "anchor-cpu", ["train.device=cpu"]))  # other kernels, other numbers: hashed
    assert device.run_id() != base.run_id() and "train.device" in device.profile


def test_built_in_profiles_keep_their_run_ids():
    """Run ids name directories in users' stores and runs cited in the docs: a refactor must not move them."""
    from reasonlab.config import raw_config, resolve

    ids = {("anchor", "cpu"): "3da591ec388f", ("anchor", "paper"): "d2f47d7a7091",
           ("anchor", "trajectory"): "4d2848961e74", ("modular", "cpu"): "17ea0f0afe30",
           ("scan", "cpu"): "906c71e78f05", ("mixture", "emb-mlp-cpu"): "0c4035dd302a"}
    for (study, profile), run_id in ids.items():
        assert resolve(raw_config(None, profile, [], study)).run_id() == run_id, (study, profile)


def test_a_derived_profile_is_its_base_with_its_own_fields(tmp_path, monkeypatch):
    """``base:`` merges the named profile under the derived one; the spec's-volume mixture profile is the same
    runs as the cpu one with the spec's sequence count."""
    volume = resolve(raw_config(None, "transformer-volume", ["seed=2"], "mixture"))
    by_hand = resolve(raw_config(None, "transformer-cpu", ["seed=2", "task.n_samples=200000"], "mixture"))
    assert volume.run_id() == by_hand.run_id() == "914c573ce5c0" and "spec's data volume" in volume.profile
    from reasonlab import registry

    (tmp_path / "profiles").mkdir()
    files = {"demo-a": "base: b\n", "demo-b": "base: a\n", "demo-c": "base: nope\nseed: 3\n",
             "demo-d": "base: e\nseed: 4\n", "demo-e": "seed: 5\ninit:\n  gamma: 0.9\n"}
    for name, text in files.items():
        (tmp_path / "profiles" / f"{name}.yaml").write_text(text)
    monkeypatch.setitem(registry._PROFILES, (tmp_path / "profiles").resolve(), None)
    assert raw_config(None, "d", [], "demo") == {"seed": 4, "init": {"gamma": 0.9}}
    with pytest.raises(ConfigError, match=r"^profile demo-a: its bases loop \(a → b → a\)"):
        raw_config(None, "a", [], "demo")
    with pytest.raises(ConfigError, match=r"^profile demo-c: base 'nope': unknown; choose one of a, b, c, d, e$"):
        raw_config(None, "c", [], "demo")


def test_gamma_with_the_gpt_scheme_is_refused():
    from reasonlab.config import ConfigError, raw_config, resolve

    with pytest.raises(ConfigError, match="^init.gamma: init.scheme gpt does not use"):
        resolve(raw_config(None, "gpu", ["init.gamma=0.8"], "modular"))


def test_an_unknown_field_suggests_the_closest_one():
    from reasonlab.config import ConfigError, raw_config, resolve

    for override, suggestion in (("init.gama=0.7", "did you mean init.gamma?"),
                                 ("task.n_train_per_pai=5", "did you mean task.n_train_per_pair?"),
                                 ("seed2=1", "did you mean seed?")):
        with pytest.raises(ConfigError, match=suggestion.replace("?", r"\?")):
            resolve(raw_config(None, "anchor-cpu", [override]))
    with pytest.raises(ConfigError, match=r"task.zzz: unknown field \(check the spelling"):
        resolve(raw_config(None, "anchor-cpu", ["task.zzz=1"]))


def test_a_name_of_other_tools_lists_the_fields_it_stands_for_and_the_fields_page():
    """``--set train.lr=1e-3``, the most common knob in ML under its common name: the fields that hold ``lr``, each
    with its meaning (the peak is train.base_lr × train.lr_multiplier), and the page of every field; a name close
    to nothing lists the fields beside it. On the command line, one error line."""
    from typer.testing import CliRunner

    from reasonlab.cli import app
    from reasonlab.config import TrainConfig
    from reasonlab.config.messages import FIELDS_PAGE

    result = CliRunner().invoke(app, ["train", "--profile", "mixture-emb-mlp-cpu", "--set", "train.lr=1e-3",
                                      "--dry-run"])
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    peak = TrainConfig.model_fields["lr_multiplier"].description  # "peak lr = multiplier x base_lr"
    assert result.output.startswith("error: train.lr: unknown field (did you mean train.base_lr")
    assert "peak" in peak and f", train.lr_multiplier ({peak}) or train.floor_lr" in result.output
    assert result.output.rstrip().endswith(f"every field: {FIELDS_PAGE})")
    with pytest.raises(ConfigError) as err:
        resolve(raw_config(None, "anchor-cpu", ["model.dept=3"]))
    assert str(err.value) == "model.dept: unknown field (did you mean model.depth?)"  # a slip: its spelling alone
    with pytest.raises(ConfigError) as err:
        resolve(raw_config(None, "anchor-cpu", ["train.learning_rate=1e-3"]))
    assert "the fields of train: epochs, batch_size, base_lr, lr_multiplier, " in str(err.value)
    assert str(err.value).endswith(f"every field: {FIELDS_PAGE})")


def test_a_logger_named_twice_is_refused_in_one_line():
    """Each logger once: named twice it would send every scalar twice."""
    from reasonlab.config import ConfigError, raw_config, resolve

    with pytest.raises(ConfigError, match=r"^train\.loggers: \['tensorboard', 'tensorboard'\] names a logger twice"):
        resolve(raw_config(None, "anchor-cpu", ["train.loggers=[tensorboard,tensorboard]"]))
