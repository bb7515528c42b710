"""Pack and restore as transactions: a run is never lost (a pack written into or over what it packs, an unfinished
run's pack over a finished one's, a pack over another store's run folder, a signal between two renames, a folder
set aside that is not the run it names), never read or written through a link (in the run, the pack or the store,
a run or sweep folder given as one, a lock), and never half-written (a staged copy checked whole, published by one
rename; what a killed command left cleared by the next, nothing left by a refused one). The same kills with real
signals at each step: tests/e2e/test_faults.py."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import killed_after, tiny_modular, tiny_run_dict

from reasonlab.config import resolve
from reasonlab.errors import StoreError, UserError
from reasonlab.train.packs import pack_run, pack_runs, restore_pack
from reasonlab.train.run import train_run

DEAD = 999_999_999  # a pid no process has: what a killed command left is that of a process gone


def quiet(_msg: str) -> None:
    pass


@pytest.fixture(scope="module")
def cfg():
    """A modular run: it has task artifacts (tasks.json) and an early-stopping checkpoint (best.*) to pack."""
    data = tiny_modular()
    data["train"].update(epochs=4)
    return resolve(data)


@pytest.fixture(scope="module")
def reference(cfg, tmp_path_factory):
    """The run finished: tests that change it change a copy."""
    return train_run(cfg, tmp_path_factory.mktemp("reference"), progress=False, log=quiet)


@pytest.fixture(scope="module")
def unfinished_run(cfg, tmp_path_factory):
    """The run stopped after two epochs (checkpoints at steps 5 and 10): tests that change it change a copy."""
    with pytest.MonkeyPatch.context() as mp:
        return killed_after(cfg, tmp_path_factory.mktemp("unfinished"), 2, mp)


@pytest.fixture(scope="module")
def anchor_run(tmp_path_factory):
    """A finished run of another config, to sit beside the modular run in a sweep folder."""
    return train_run(resolve(tiny_run_dict()), tmp_path_factory.mktemp("anchor"), progress=False, log=quiet)[0]


def _linked(folder, name: str, outside) -> None:
    """``folder/name`` (a file or folder) moved out to ``outside`` and a link to it left in its place."""
    outside.mkdir(exist_ok=True)
    target = outside / name.replace("/", "_")
    shutil.move(folder / name, target)
    (folder / name).symlink_to(target)


def _tree(folder) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _cli(*args: str):
    from typer.testing import CliRunner

    from reasonlab.cli import app

    return CliRunner().invoke(app, list(args))


def _one_line_error(result, *words: str) -> None:
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1 and all(w in result.output for w in words), result.output


def test_a_pack_is_never_written_into_or_over_what_it_packs(reference, tmp_path):
    """`pack RUN <its sweep folder>` would put the pack in the run's place, and `pack STORE STORE` the runs' packs in
    theirs: a destination inside the source, or holding it, is refused in one line, and nothing is touched."""
    store = tmp_path / "store"
    run = shutil.copytree(reference[0], store / "sw" / reference[0].name)
    before = _tree(store)
    for source, dest in ((run, run.parent), (run, run / "packs"), (run.parent, run.parent), (store, store),
                         (run.parent, store)):
        with pytest.raises(UserError, match="inside|holds"):
            pack_runs(source, dest, log=quiet)
    assert _tree(store) == before and (run / "checkpoints" / "best.safetensors").is_file()
    _one_line_error(_cli("pack", str(run), str(run.parent)), str(run.parent), "holds")


def test_a_pack_is_never_restored_into_itself(unfinished_run, tmp_path):
    pack = pack_run(unfinished_run, tmp_path / "results")
    before = _tree(pack)
    with pytest.raises(UserError, match="holds"):
        restore_pack(pack, pack.parent)
    assert _tree(pack) == before and not (pack / "checkpoints").exists()


def test_an_unfinished_runs_pack_never_replaces_the_finished_runs(reference, unfinished_run, tmp_path):
    finished = pack_run(reference[0], tmp_path / "results")
    with pytest.raises(StoreError, match="the pack of the finished run"):
        pack_run(unfinished_run, tmp_path / "results")
    assert (finished / "summary.json").is_file() and sorted(p.name for p in finished.parent.iterdir()) == [
        finished.name]


def test_a_pack_stopped_as_it_is_renamed_in_keeps_the_earlier_pack(reference, tmp_path, monkeypatch):
    """A signal between setting the earlier pack aside and renaming the new one in: the earlier one is put back,
    the staged one removed (the earlier code had deleted the earlier pack by then)."""
    pack = pack_run(reference[0], tmp_path / "results")
    before = _tree(pack)
    real = os.replace

    def stopped(src, dst, *args, **kwargs):
        if ".tmp-" in os.fspath(src):  # the staged pack, as it is renamed into place
            raise KeyboardInterrupt
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", stopped)
    with pytest.raises(KeyboardInterrupt):
        pack_run(reference[0], tmp_path / "results")
    monkeypatch.undo()
    assert sorted(p.name for p in pack.parent.iterdir()) == [pack.name] and _tree(pack) == before


def test_what_a_killed_pack_left_is_undone_by_the_next_command(reference, unfinished_run, tmp_path):
    """A kill (no handler runs) between the two renames leaves the earlier pack set aside and the new one staged:
    the next command in that folder puts the earlier one back (its place is empty) and deletes the staged one; what
    a process still running stages is left alone."""
    from reasonlab.staging import clean_stale
    from reasonlab.train.packs import check_named

    pack = pack_run(reference[0], tmp_path / "results")
    before = _tree(pack)
    aside = pack.rename(pack.with_name(f".{pack.name}.aside-{DEAD}"))
    shutil.copytree(aside, pack.with_name(f".{pack.name}.tmp-{DEAD}"))
    running = pack.with_name(f".other.tmp-{os.getppid()}")
    running.mkdir()
    clean_stale(pack.parent, check_named)
    assert sorted(p.name for p in pack.parent.iterdir()) == sorted([pack.name, running.name])
    assert _tree(pack) == before
    # an aside whose replacement is in place goes
    shutil.copytree(pack, aside)
    clean_stale(pack.parent, check_named)
    assert not aside.exists() and _tree(pack) == before


def test_a_restore_clears_staging_folders_of_processes_gone(unfinished_run, tmp_path):
    pack = pack_run(unfinished_run, tmp_path / "results")
    root = tmp_path / "store"
    stale = root / f".{pack.name}.tmp-{DEAD}"  # a restore killed while it copied
    shutil.copytree(pack, stale)
    (stale / "resume" / "step-10.safetensors").write_bytes(b"")
    running = root / f".{pack.name}.tmp-{os.getppid()}"
    running.mkdir()
    assert "restored at step 10" in restore_pack(pack, root)
    assert not stale.exists() and running.is_dir()


@pytest.mark.parametrize("name", ["events.log", "tasks.json", "summary.json", "metrics.parquet", "config.yaml"])
def test_restore_refuses_a_finished_pack_holding_a_link(name, reference, tmp_path):
    """A link in a pack is refused, naming it: it is neither read (validated through) nor copied (the store would
    hold the outside file's content), nor left out (a finished run without its summary)."""
    pack = pack_run(reference[0], tmp_path / "results")
    _linked(pack, name, tmp_path / "outside")
    with pytest.raises(StoreError, match="symbolic link") as e:
        restore_pack(pack, tmp_path / "store")
    assert str(pack / name) in str(e.value)
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("name", ["events.log", "tasks.json", "metrics.parquet", "resume/step-10.safetensors",
                                  "resume/step-10.json", "resume/best.json", "resume"])
def test_restore_refuses_an_unfinished_pack_holding_a_link(name, unfinished_run, tmp_path):
    pack = pack_run(unfinished_run, tmp_path / "results")
    _linked(pack, name, tmp_path / "outside")
    with pytest.raises(StoreError, match="symbolic link") as e:
        restore_pack(pack, tmp_path / "store")
    assert str(pack / name) in str(e.value)
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("name", ["checkpoints", "events.log", "checkpoints/step-5.json"])
def test_restore_never_writes_through_a_link_in_the_store(name, unfinished_run, tmp_path):
    """The store's copy of the run (at step 5, older than the pack's 10) holds a link: restore refuses, naming it,
    and what the link points to is as it was."""
    pack = pack_run(unfinished_run, tmp_path / "results")
    partial = shutil.copytree(unfinished_run, tmp_path / "store" / unfinished_run.name)
    for old in (partial / "checkpoints").glob("step-10.*"):
        old.unlink()
    _linked(partial, name, tmp_path / "outside")
    before = _tree(tmp_path / "outside")
    with pytest.raises(StoreError, match="symbolic link") as e:
        restore_pack(pack, tmp_path / "store")
    assert str(partial / name) in str(e.value)
    assert _tree(tmp_path / "outside") == before


def test_pack_refuses_a_link_in_the_run_and_a_sweep_skips_that_run(reference, anchor_run, tmp_path):
    sweep = tmp_path / "sw"
    linked = shutil.copytree(reference[0], sweep / reference[0].name)
    shutil.copytree(anchor_run, sweep / anchor_run.name)
    _linked(linked, "events.log", tmp_path / "outside")
    with pytest.raises(StoreError, match="symbolic link"):
        pack_run(linked, tmp_path / "results")
    said: list[str] = []
    assert pack_runs(sweep, tmp_path / "results", log=said.append) == [tmp_path / "results" / anchor_run.name]
    assert len(said) == 1 and f"{linked / 'events.log'}: a symbolic link" in said[0]


def test_a_half_restored_checkpoint_is_not_kept_and_empty_weights_are_never_restored(unfinished_run, tmp_path):
    """What a restore that copied in name order left when killed (a complete marker beside zero-byte weights) is no
    checkpoint the store "already holds"; a pack whose weights are empty, or cut short, is refused even when its
    marker records the digest of what is there."""
    import hashlib
    import json

    pack = pack_run(unfinished_run, tmp_path / "results")
    partial = shutil.copytree(unfinished_run, tmp_path / "store" / unfinished_run.name)
    (partial / "checkpoints" / "step-10.safetensors").write_bytes(b"")
    assert "restored at step 10" in restore_pack(pack, tmp_path / "store")
    assert (partial / "checkpoints" / "step-10.safetensors").read_bytes() == \
        (pack / "resume" / "step-10.safetensors").read_bytes()
    assert (partial / "checkpoints" / "step-5.safetensors").is_file()  # the store's older checkpoint stays

    weights, marker = pack / "resume" / "step-10.safetensors", pack / "resume" / "step-10.json"
    data = weights.read_bytes()
    for content, why in ((b"", "empty"), (data[:-64], "not a whole safetensors file")):
        weights.write_bytes(content)
        marker.write_text(json.dumps(json.loads(marker.read_text()) | {
            "sha256": json.loads(marker.read_text())["sha256"] | {"weights": hashlib.sha256(content).hexdigest()}}))
        with pytest.raises(StoreError, match=why):
            restore_pack(pack, tmp_path / "other")
        assert not (tmp_path / "other").exists()


def test_a_damaged_checkpoint_is_one_line_and_a_sweep_packs_the_other_runs(unfinished_run, anchor_run, tmp_path):
    sweep = tmp_path / "sw"
    damaged = shutil.copytree(unfinished_run, sweep / unfinished_run.name)
    shutil.copytree(anchor_run, sweep / anchor_run.name)
    weights = damaged / "checkpoints" / "step-10.safetensors"
    weights.write_bytes(weights.read_bytes()[:-8])
    _one_line_error(_cli("pack", str(damaged), str(tmp_path / "results")), str(weights), "damaged")
    packed = _cli("pack", str(sweep), str(tmp_path / "results"))
    assert packed.exit_code == 0, packed.output
    assert f"skipped: {weights}: damaged" in packed.output and f"packed {tmp_path / 'results' / anchor_run.name}" in \
        packed.output
    assert sorted(p.name for p in (tmp_path / "results").iterdir()) == [anchor_run.name]


def test_a_huge_sparse_checkpoint_is_refused_before_it_is_read(unfinished_run, tmp_path):
    """A terabyte of holes in place of the weights is over the limit by its size alone: nothing of it is read."""
    pack = pack_run(unfinished_run, tmp_path / "results")
    run = shutil.copytree(unfinished_run, tmp_path / "run" / unfinished_run.name)
    for folder in (run / "checkpoints", pack / "resume"):
        os.truncate(folder / "step-10.safetensors", 2**40)
    with pytest.raises(UserError, match="over the 10 MB"):
        pack_run(run, tmp_path / "other")
    with pytest.raises(StoreError, match="over the 10 MB"):
        restore_pack(pack, tmp_path / "store")


def test_a_fifo_in_a_pack_is_refused_not_waited_on(reference, tmp_path):
    """A named pipe in place of a file would block the copy for ever: refused, naming it."""
    pack = pack_run(reference[0], tmp_path / "results")
    (pack / "events.log").unlink()
    os.mkfifo(pack / "events.log")
    with pytest.raises(StoreError, match="not a regular file"):
        restore_pack(pack, tmp_path / "store")
    assert not (tmp_path / "store").exists()


def test_pack_never_replaces_a_run_folder_of_another_store(reference, unfinished_run, anchor_run, tmp_path):
    """`pack SWEEP STORE`, STORE holding the same runs as folders of its own (trained there, checkpoints and all):
    each such run is refused in one line naming that folder and the fix, the others are packed (exit 0, as for any
    run skipped), and the store's folders are as they were; a lone run so refused is exit 2."""
    sweep = tmp_path / "sw"
    shutil.copytree(reference[0], sweep / reference[0].name)
    shutil.copytree(anchor_run, sweep / anchor_run.name)
    store = tmp_path / "store"
    live = shutil.copytree(unfinished_run, store / unfinished_run.name)  # the finished run's pack would delete it
    before = _tree(store)
    packed = _cli("pack", str(sweep), str(store))
    assert packed.exit_code == 0 and f"skipped: {live}: not a pack" in packed.output, packed.output
    assert f"packed {store / anchor_run.name}" in packed.output
    assert {k: v for k, v in _tree(store).items() if not k.startswith(anchor_run.name)} == before
    other = shutil.copytree(anchor_run, tmp_path / "other" / anchor_run.name)
    _one_line_error(_cli("pack", str(sweep / anchor_run.name), str(other.parent)), str(other), "not a pack")
    assert _tree(other) == _tree(anchor_run)


def test_pack_refuses_a_run_or_sweep_folder_given_as_a_link(reference, tmp_path):
    """A run, or the sweep folder that holds it, given to `pack` as a link is not read through it: one line naming
    the link, exit 2, nothing written."""
    run = shutil.copytree(reference[0], tmp_path / "sw" / reference[0].name)
    run_link, sweep_link = tmp_path / "links" / run.name, tmp_path / "sweep-link"
    run_link.parent.mkdir()
    run_link.symlink_to(run)
    sweep_link.symlink_to(run.parent)
    for given, link in ((run_link, run_link), (sweep_link, sweep_link), (sweep_link / run.name, sweep_link)):
        _one_line_error(_cli("pack", str(given), str(tmp_path / "results")), f"{link}: a symbolic link")
        assert not (tmp_path / "results").exists()


def test_restore_never_makes_its_lock_through_a_link(unfinished_run, tmp_path):
    """The store's `.locks` a link to a folder outside it, or the run's lock file a dangling link out of the store:
    restore refuses in one line naming the link, exit 2, and makes nothing outside the store, nor the run in it."""
    pack = pack_run(unfinished_run, tmp_path / "results")
    outside = tmp_path / "outside"
    outside.mkdir()
    linked, dangling = tmp_path / "a", tmp_path / "b" / ".locks" / f"{pack.name.removesuffix('.partial')}.lock"
    linked.mkdir()
    (linked / ".locks").symlink_to(outside)
    dangling.parent.mkdir(parents=True)
    dangling.symlink_to(outside / "planted.lock")
    for store, link in ((linked, linked / ".locks"), (tmp_path / "b", dangling)):
        _one_line_error(_cli("restore", str(pack), "--into", str(store)), f"{link}: a symbolic link")
        assert not list(outside.iterdir()) and not (store / pack.name).exists()


def test_an_aside_folder_goes_back_only_when_it_checks_as_the_run_it_names(reference, tmp_path):
    """A `.<name>.aside-<pid>` folder of a process gone, its place empty, is put back by the next command in its
    folder only when it reads as the run it names, as a restored run must: another run's pack so named, an empty
    folder, a link or a name of no run is left as it is, said in one line, and its place stays empty; the pack set
    aside by a killed pack goes back."""
    pack = pack_run(reference[0], tmp_path / "results")
    before = _tree(pack)
    aside = pack.rename(pack.with_name(f".{pack.name}.aside-{DEAD}"))
    foreign = [shutil.copytree(aside, pack.with_name(f".0123456789ab.aside-{DEAD}")),
               pack.with_name(f".0123456789ab.partial.aside-{DEAD}"), pack.with_name(f".fedcba987654.aside-{DEAD}"),
               shutil.copytree(aside, pack.with_name(f".notes.aside-{DEAD}"))]
    foreign[1].mkdir()
    foreign[2].symlink_to(shutil.copytree(aside, tmp_path / "outside" / pack.name))
    packed = _cli("pack", str(reference[0]), str(pack.parent))
    assert packed.exit_code == 0 and f"packed {pack}" in packed.output, packed.output
    said = [line.split(": left as it is")[0] for line in packed.output.splitlines() if "left as it is" in line]
    assert said == [str(p) for p in foreign], packed.output
    assert _tree(pack) == before and not aside.exists() and all(os.path.lexists(p) for p in foreign)
    assert sorted(p.name for p in pack.parent.iterdir() if not p.name.startswith(".")) == [pack.name]


def test_a_refused_pack_or_restore_leaves_no_folder_it_made(unfinished_run, tmp_path):
    """A pack or a restore refused into a folder that did not exist, nor its parents, leaves none of them behind."""
    run = shutil.copytree(unfinished_run, tmp_path / "run" / unfinished_run.name)
    (run / "events.log").write_bytes(b"\xff not text\n")
    _one_line_error(_cli("pack", str(run), str(tmp_path / "a" / "b" / "results")), str(run / "events.log"))
    pack = pack_run(unfinished_run, tmp_path / "results")
    (pack / "events.log").write_bytes(b"\xff not text\n")
    _one_line_error(_cli("restore", str(pack), "--into", str(tmp_path / "c" / "d" / "store")), str(pack / "events.log"))
    assert not (tmp_path / "a").exists() and not (tmp_path / "c").exists()
