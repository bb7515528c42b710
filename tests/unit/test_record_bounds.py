"""What pack, restore, show and a resume take from a store is checked before it is used: records that do not read
(a damaged progress or metrics file) are not packed; a record far larger than any reasonlab writes (a sparse file of
terabytes) is refused by its size, none of it read; safetensors weights whose tensors' byte ranges overlap are not
weights, whatever checksum their marker records, nor is an optimizer state that does not load; a file with other
names (a hard link, perhaps to a file outside the store) is neither copied into a pack, nor given one more name by a
restore, nor written through by a resume."""

from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest
from test_pack_transactions import _cli, _one_line_error, anchor_run, cfg, quiet, reference, unfinished_run  # noqa: F401

from reasonlab.checkpoint_checks import check_safetensors
from reasonlab.errors import StoreError
from reasonlab.train.packs import pack_run, pack_runs, restore_pack
from reasonlab.train.run import train_run

HUGE = 20 * 2**30  # a sparse file: holes, no disk space; read whole it would need 20 GB of memory


def _copy(run, tmp_path, where: str = "run"):
    return shutil.copytree(run, tmp_path / where / run.name)


# ---- what a pack carries is what its readers read ------------------------------------------------------------------
DAMAGE = {
    "progress.json": (lambda p: p.write_text('{"epoch": "two"}'), "not a progress file"),
    "metrics.parquet": (lambda p: p.write_bytes(p.read_bytes()[:-100]), "damaged metrics file"),
    "events.log": (lambda p: p.write_bytes(b"\xff\xfe not text\n"), "not UTF-8 text"),
    "tasks.json": (lambda p: p.write_text("{"), "damaged tasks"),
}


@pytest.mark.parametrize("name", list(DAMAGE))
def test_pack_refuses_a_damaged_record_and_a_sweep_packs_the_others(name, unfinished_run, anchor_run, tmp_path):  # noqa: F811
    damage, why = DAMAGE[name]
    run = _copy(unfinished_run, tmp_path, "sw")
    shutil.copytree(anchor_run, tmp_path / "sw" / anchor_run.name)
    damage(run / name)
    with pytest.raises(StoreError, match=why) as e:
        pack_run(run, tmp_path / "results")
    assert str(run / name) in str(e.value) and not (tmp_path / "results").exists()
    said: list[str] = []
    assert pack_runs(tmp_path / "sw", tmp_path / "results", log=said.append) == [
        tmp_path / "results" / anchor_run.name]
    assert len(said) == 1 and str(run / name) in said[0]


@pytest.mark.parametrize("name", ["progress.json", "metrics.parquet"])
def test_restore_refuses_a_pack_whose_record_does_not_read(name, unfinished_run, tmp_path):  # noqa: F811
    pack = pack_run(unfinished_run, tmp_path / "results")
    DAMAGE[name][0](pack / name)
    with pytest.raises(StoreError, match=DAMAGE[name][1]) as e:
        restore_pack(pack, tmp_path / "store")
    assert str(pack / name) in str(e.value) and not (tmp_path / "store").exists()


@pytest.mark.parametrize("name", ["events.log", "progress.json", "config.yaml", "metrics.parquet", "tasks.json"])
def test_a_huge_sparse_record_is_refused_by_its_size_in_pack_and_restore(name, unfinished_run, tmp_path):  # noqa: F811
    pack = pack_run(unfinished_run, tmp_path / "results")
    run = _copy(unfinished_run, tmp_path)
    for folder in (run, pack):
        os.truncate(folder / name, HUGE)
    _one_line_error(_cli("pack", str(run), str(tmp_path / "other")), str(run / name), "20480.0 MB, over the")
    assert not (tmp_path / "other").exists()
    _one_line_error(_cli("restore", str(pack), "--into", str(tmp_path / "store")), str(pack / name),
                    "20480.0 MB, over the")
    assert not (tmp_path / "store").exists()


# ---- show and a resume bound every small record they read ----------------------------------------------------------
def test_show_refuses_a_huge_sparse_progress_file_by_its_size(unfinished_run, tmp_path):  # noqa: F811
    run = _copy(unfinished_run, tmp_path)
    os.truncate(run / "progress.json", HUGE)
    _one_line_error(_cli("show", str(run)), str(run / "progress.json"), "over the 16 MB")


def test_a_resume_skips_a_huge_sparse_marker_in_one_line_and_finishes(cfg, unfinished_run, tmp_path):  # noqa: F811
    """The newest checkpoint's marker is 20 GB of holes: refused by its size (never read), the run resumes from the
    checkpoint before it and finishes."""
    run = _copy(unfinished_run, tmp_path, "store")
    marker = run / "checkpoints" / "step-10.json"
    os.truncate(marker, HUGE)
    said: list[str] = []
    final, summary = train_run(cfg, tmp_path / "store", progress=False, log=said.append)
    assert summary["status"] == "finished"
    named = [line for line in said if str(marker) in line]
    assert len(named) == 1 and "over the 1 MB" in named[0] and "falling back" in named[0], said


def test_a_resume_refuses_weights_larger_than_the_model_can_be(cfg, unfinished_run, tmp_path):  # noqa: F811
    run = _copy(unfinished_run, tmp_path, "store")
    weights = run / "checkpoints" / "step-10.safetensors"
    os.truncate(weights, HUGE)
    said: list[str] = []
    train_run(cfg, tmp_path / "store", progress=False, log=said.append)
    named = [line for line in said if str(weights) in line]
    assert len(named) == 1 and "more than this model's weights can take" in named[0], said


# ---- safetensors headers -------------------------------------------------------------------------------------------
def _rewrite_header(path, change) -> None:
    """``path``'s safetensors header changed by ``change`` and written back at its length (padded with spaces,
    as safetensors pads), the tensors' bytes as they were."""
    data = path.read_bytes()
    n = int.from_bytes(data[:8], "little")
    header = json.loads(data[8:8 + n])
    change({k: v for k, v in header.items() if k != "__metadata__"})
    text = json.dumps(header, separators=(",", ":")).encode()
    assert len(text) <= n
    path.write_bytes(data[:8] + text.ljust(n) + data[8 + n:])


def _overlap(tensors) -> None:
    first, second = sorted(tensors.values(), key=lambda v: v["data_offsets"][0])[:2]
    shift = second["data_offsets"][0] - first["data_offsets"][0]
    second["data_offsets"] = [o - shift for o in second["data_offsets"]]  # over the first's bytes


def _gap(tensors) -> None:
    last = max(tensors.values(), key=lambda v: v["data_offsets"][0])
    last["shape"], last["data_offsets"] = [1], [last["data_offsets"][1] - 4, last["data_offsets"][1]]


def _wrong_size(tensors) -> None:
    entry = max(tensors.values(), key=lambda v: v["data_offsets"][0])
    entry["dtype"] = "F64"


HEADERS = {"overlap": (_overlap, "overlap another"), "gap": (_gap, "leave a gap"),
           "dtype": (_wrong_size, "does not hold its dtype and shape")}


@pytest.mark.parametrize("damage", list(HEADERS))
def test_weights_whose_tensor_ranges_overlap_are_refused_with_a_matching_checksum(damage, unfinished_run, tmp_path):  # noqa: F811
    change, why = HEADERS[damage]
    pack = pack_run(unfinished_run, tmp_path / "results")
    run = _copy(unfinished_run, tmp_path)
    for ckpt in (pack / "resume", run / "checkpoints"):
        weights, marker = ckpt / "step-10.safetensors", ckpt / "step-10.json"
        _rewrite_header(weights, change)
        with pytest.raises(StoreError, match=why):
            check_safetensors(ckpt, weights.name)
        record = json.loads(marker.read_text())
        record["sha256"]["weights"] = hashlib.sha256(weights.read_bytes()).hexdigest()
        marker.write_text(json.dumps(record))
    with pytest.raises(StoreError, match=why):
        restore_pack(pack, tmp_path / "store")
    assert not (tmp_path / "store").exists()
    with pytest.raises(StoreError, match=why):
        pack_run(run, tmp_path / "other")


# ---- hard links ----------------------------------------------------------------------------------------------------
def _hard_linked(folder, name: str, outside):
    """``folder/name`` moved to ``outside`` and a second name of it left in its place: its content is what it was
    (checksums match), but a file of that name elsewhere is the same file."""
    shutil.move(folder / name, outside)
    os.link(outside, folder / name)


@pytest.mark.parametrize("name", ["events.log", "tasks.json", "checkpoints/step-10.safetensors"])
def test_pack_refuses_a_file_with_other_names(name, unfinished_run, tmp_path):  # noqa: F811
    run = _copy(unfinished_run, tmp_path)
    _hard_linked(run, name, tmp_path / "outside")
    _one_line_error(_cli("pack", str(run), str(tmp_path / "results")), str(run / name), "hard links")
    assert not (tmp_path / "results").exists()


def test_restore_refuses_a_pack_file_with_other_names(unfinished_run, tmp_path):  # noqa: F811
    pack = pack_run(unfinished_run, tmp_path / "results")
    _hard_linked(pack, "events.log", tmp_path / "outside")
    with pytest.raises(StoreError, match="hard links"):
        restore_pack(pack, tmp_path / "store")
    assert not (tmp_path / "store").exists()


def test_a_resume_appends_to_its_own_events_log_never_through_a_hard_link(cfg, unfinished_run, tmp_path):  # noqa: F811
    """The unfinished run's events.log is a second name of a file outside the store: the resume makes the log a
    file of its own before appending (the earlier lines kept), and the outside file is as it was."""
    run = _copy(unfinished_run, tmp_path, "store")
    earlier = (run / "events.log").read_text()
    outside = tmp_path / "outside"
    _hard_linked(run, "events.log", outside)
    final, _ = train_run(cfg, tmp_path / "store", progress=False, log=quiet)
    assert outside.read_text() == earlier and os.stat(outside).st_nlink == 1
    log = (final / "events.log").read_text()
    assert log.startswith(earlier) and "finished" in log.splitlines()[-1]


def test_restore_never_gives_a_store_checkpoint_with_other_names_one_more(unfinished_run, tmp_path):  # noqa: F811
    """The store's older checkpoint, which a restore keeps beside the pack's newer one under one more name (a hard
    link), is a second name of a file outside the store: refused in one line naming it, and the store is as it was
    (that file still of two names, not three)."""
    pack = pack_run(unfinished_run, tmp_path / "results")
    partial = _copy(unfinished_run, tmp_path, "store")
    for newer in (partial / "checkpoints").glob("step-10.*"):
        newer.unlink()
    _hard_linked(partial, "checkpoints/step-5.safetensors", tmp_path / "outside")
    _one_line_error(_cli("restore", str(pack), "--into", str(partial.parent)),
                    str(partial / "checkpoints" / "step-5.safetensors"), "hard links")
    assert os.stat(tmp_path / "outside").st_nlink == 2 and not (partial / "checkpoints" / "step-10.json").exists()


def test_an_optimizer_state_that_does_not_load_is_neither_packed_nor_restored(unfinished_run, tmp_path):  # noqa: F811
    """The optimizer state cut short, or a pickle that would run code, under a marker whose checksum was updated to
    match: pack and restore refuse it in one line naming the file, writing nothing; it is loaded with
    weights_only=True, so the pickle's code never runs."""
    import pickle

    class Runs:
        def __reduce__(self):
            return os.mkdir, (str(tmp_path / "ran"),)

    pack = pack_run(unfinished_run, tmp_path / "results")
    run = _copy(unfinished_run, tmp_path)
    whole = (pack / "resume" / "step-10.optim.pt").read_bytes()
    for content in (whole[:len(whole) // 2], pickle.dumps(Runs())):
        for ckpt in (pack / "resume", run / "checkpoints"):
            (ckpt / "step-10.optim.pt").write_bytes(content)
            record = json.loads((ckpt / "step-10.json").read_text())
            record["sha256"]["optim"] = hashlib.sha256(content).hexdigest()
            (ckpt / "step-10.json").write_text(json.dumps(record))
        _one_line_error(_cli("restore", str(pack), "--into", str(tmp_path / "store")),
                        str(pack / "resume" / "step-10.optim.pt"), "does not load")
        _one_line_error(_cli("pack", str(run), str(tmp_path / "other")),
                        str(run / "checkpoints" / "step-10.optim.pt"), "does not load")
        assert not (tmp_path / "store").exists() and not (tmp_path / "other").exists()
        assert not (tmp_path / "ran").exists()
