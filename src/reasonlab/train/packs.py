"""Run packs: a run's record with its newest resume checkpoint, small enough to commit, so that a run spanning
several sittings survives the loss of the machine that trains it.

``pack_run`` copies a run directory's record (config, metrics, summary or progress, events, the task's artifacts,
small analysis files) into a results folder, and for an unfinished run also its newest resumable checkpoint under
``resume/`` (weights, optimizer state, marker, and the best-so-far checkpoint a task keeps for early stopping),
replacing the pack written before (analysis files an earlier pack of the same finished run holds are kept).
``restore_pack`` seeds a store's ``<run_id>.partial`` from such a pack, so the
run's usual ``train`` or ``sweep`` command resumes from it: the same steps, hence the same numbers, as a run that
was never stopped (on the same machine kind and thread count); from a finished run's pack it writes the finished
record, so a sweep on a new machine skips that run instead of training it again.

Both are transactions (``reasonlab.staging``): the folder is built under a staging name beside its place, every
file copied without following a link (a link in the run, the pack or the store is refused, naming it) and fsynced,
the copy checked, then published by one rename; a kill at any point leaves the folder as it was or as it is meant
to be, and the next pack or restore into that folder clears what the killed one left (a folder it set aside goes
back only once it checks as the run it names). A pack is never written into what it packs, nor over it; an
unfinished run's pack never replaces a finished one's; a pack replaces or deletes no folder but a pack (never a
store's run folder of the same run); a run or sweep folder given as a link is not read through it.

A pack is not trusted because it is in the repository: its config must hash to its name, its checkpoint's files
must be whole (a safetensors file of the right length, nothing empty), of the digests in its marker, read in
chunks after a size check, and name the same run; its metrics must read as a metrics table, its summary as the
run's. What is checked is the copy that is published.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from reasonlab.checkpoint import complete_steps, resumable_steps
from reasonlab.checkpoint_checks import check_best, check_checkpoint
from reasonlab.config import RunConfig
from reasonlab.errors import StoreError, UserError
from reasonlab.files import MAX_RECORD_BYTES, TMP, link_error, read_bounded, read_json, warn
from reasonlab.records import load_progress, read_config, read_summary
from reasonlab.staging import (
    clean_stale,
    copy_below,
    made_for,
    plain_files,
    publish,
    refuse_other_names,
    refuse_overlap,
    remove,
    staging,
)
from reasonlab.store import PARTIAL, RUN_ID, append_event, read_metrics, run_lock, run_paths

RESUME = "resume"
LIMIT_BYTES = 10 * 2**20  # a resume checkpoint is committed only up to this size (larger ones are not packed)
METRICS_BYTES = 256 * 2**20  # a run's metrics file (tens of kB at the reduced profiles; read whole when checked)
RECORD = ("config.yaml", "metrics.parquet", "summary.json", "progress.json", "events.log")
ARTIFACTS = ("tasks.json", "tokenizer.json")  # the task's own files (TaskData.artifacts), written at the start
ANALYSIS_SUFFIXES = (".json", ".npz", ".md")
PACK_ENTRIES = frozenset((*RECORD, *ARTIFACTS, "analysis", RESUME))  # all a pack folder holds


def run_config(run_dir: Path, name: str | None = None) -> RunConfig:
    """The run's config, checked to hash to ``name`` (by default the directory's name; a copied or renamed folder
    is no run)."""
    path = run_dir / "config.yaml"
    if path.is_symlink():
        raise link_error(path)
    if not path.is_file():
        raise StoreError(f"{path}: missing; {run_dir} is not a run directory")
    cfg = read_config(run_dir)
    name = run_dir.name.removesuffix(PARTIAL) if name is None else name
    if cfg.run_id() != name:
        raise StoreError(f"{path}: its config hashes to run {cfg.run_id()}, not {name}; not a run of this "
                         "name (copied or renamed?)")
    return cfg


def _stage(source: Path, names: list[Path], staged: Path, limit: int | None = None) -> None:
    """Copy the files ``names`` (relative paths) of ``source`` into ``staged``, none through a link, each refused
    by its size before it is read when over its bound (``record_limit``; ``limit`` for any other file)."""
    for name in names:
        copy_below(source, name, staged / name, record_limit(name, limit))


def record_limit(name: Path, limit: int | None) -> int | None:
    """The most bytes the file ``name`` of a pack may hold: the metrics ``METRICS_BYTES``, every other record and
    artifact (config, summary, progress, events, tasks, tokenizer) ``MAX_RECORD_BYTES``, else ``limit``."""
    if name == Path("metrics.parquet"):
        return METRICS_BYTES
    return MAX_RECORD_BYTES if len(name.parts) == 1 and name.name in (*RECORD, *ARTIFACTS) else limit


def check_records(staged: Path, run_id: str, finished: bool) -> None:
    """The records staged for a pack or a restore read as their readers read them, or a one-line StoreError naming
    the file: the config hashes to ``run_id``, the metrics are a metrics table, the summary (of a finished run) is
    the run's, the progress file is one, the event log and the task's artifacts are UTF-8
    text (the artifacts JSON). A damaged record is not worth carrying: a pack or a store would keep it."""
    run_config(staged, run_id)
    read_metrics(staged / "metrics.parquet", run_id)
    if finished:
        read_summary(staged / "summary.json", run_id)
    if (staged / "progress.json").exists():
        load_progress(staged)
    for name in ("events.log", *ARTIFACTS):
        if (staged / name).exists():
            _check_text(staged / name)


def _check_text(path: Path) -> None:
    try:
        if path.suffix == ".json":
            read_json(path, path.stem)
        else:
            read_bounded(path, "run's text record").decode("utf-8")
    except UnicodeDecodeError:
        raise StoreError(f"{path}: not UTF-8 text, as reasonlab writes it; remove it or replace it by the run's "
                         "own") from None


def _present(source: Path, names: tuple[str, ...]) -> list[Path]:
    """Those of ``names`` that ``source`` holds (a link counts, so that copying it is refused, naming it)."""
    return [Path(n) for n in names if os.path.lexists(source / n)]


def _stage_analysis(source: Path, staged: Path, limit: int) -> None:
    """Copy the small analysis files of ``source`` (a run directory or an earlier pack) into ``staged``, each at
    most ``limit`` bytes, leaving any file already staged as it is."""
    if os.path.lexists(source / "analysis"):
        files = [Path("analysis") / p for p in plain_files(source / "analysis") if p.suffix in ANALYSIS_SUFFIXES]
        _stage(source, [p for p in files if not (staged / p).exists()], staged, limit)


def _resume_files(ckpt: Path, run_id: str, limit: int) -> list[Path]:
    """The files of the newest resumable checkpoint (and the best-so-far one), checked whole and within ``limit``
    before any is read: the best-so-far weights are left out (said in one line) when only they put it over."""
    if ckpt.is_symlink():
        raise link_error(ckpt)
    steps = resumable_steps(ckpt)
    if not steps:
        raise StoreError(f"{ckpt}: no resumable checkpoint yet; pack the run after its first checkpoint")
    core = [ckpt / f"step-{steps[-1]}.{ext}" for ext in ("safetensors", "optim.pt", "json")]
    best = [p for p in (ckpt / "best.json", ckpt / "best.safetensors") if os.path.lexists(p)]
    size = sum(p.lstat().st_size for p in core + best)
    if size > limit and best and sum(p.lstat().st_size for p in core) <= limit:
        warn(f"{ckpt}: the best-so-far weights are left out of the pack (with them it is {size / 2**20:.1f} MB, "
             f"over {limit / 2**20:.0f} MB); a run resumed from it chooses its best again from the pack's step")
        best, size = [], sum(p.lstat().st_size for p in core)
    if size > limit:
        raise UserError(f"{ckpt / f'step-{steps[-1]}'}: the resume checkpoint is {size / 2**20:.1f} MB, over "
                        f"the {limit / 2**20:.0f} MB a pack may commit; pack the finished run instead")
    check_checkpoint(ckpt, steps[-1], run_id, limit)  # damaged files are not worth committing
    if best:
        check_best(ckpt, run_id, limit)
    return core + best


def pack_run(run_dir: Path, dest: Path, limit: int = LIMIT_BYTES) -> Path:
    """Write the pack of ``run_dir`` into ``dest`` (``dest/<run_id>`` for a finished run, ``dest/<run_id>.partial``
    with ``resume/`` for an unfinished one), replacing any earlier pack of the same run (but a finished run's by an
    unfinished one's, and never a run folder); returns its path. The run is read from its own folder in its own
    sweep folder, neither given as a link."""
    run_dir, dest = Path(run_dir), Path(dest)
    for given in (run_dir, run_dir.parent):
        _not_a_link(given)
    refuse_overlap(run_dir, dest)
    cfg = run_config(run_dir)
    finished = not run_dir.name.endswith(PARTIAL)
    final, partial = run_paths(dest, cfg.run_id())
    for place in (final, partial):  # the one the pack goes to and the one it replaces or deletes
        _only_a_pack(place)
    if not finished and os.path.lexists(final):
        raise StoreError(f"{final}: the pack of the finished run, which the pack of {run_dir} (unfinished) would "
                         "replace; not packed (pack the finished run instead)")
    resume = [] if finished else _resume_files(run_dir / "checkpoints", cfg.run_id(), limit)
    target = final if finished else partial
    with made_for(dest), staging(dest, target.name) as staged:
        clean_stale(dest, check_named)
        _stage(run_dir, _present(run_dir, (*RECORD, *ARTIFACTS)), staged)
        with _named_as(staged, run_dir):
            check_records(staged, cfg.run_id(), finished)
        _stage_analysis(run_dir, staged, limit)
        if finished and final.is_dir() and not final.is_symlink():
            # what an earlier pack of this finished run holds beyond the run directory (computed from the committed
            # record, e.g. by scripts/regenerate_docs.py) stays: a finished record does not change, so neither does
            # it; an unfinished run's pack carries none over (its record grows)
            _stage_analysis(final, staged, limit)
        for path in resume:
            copy_below(path.parent, path.name, staged / RESUME / path.name, limit)
        publish(staged, target)
    if finished:
        remove(partial)  # the unfinished run's pack, replaced by the finished one's
    return target


def pack_runs(source: Path, dest: Path, limit: int = LIMIT_BYTES,
              log: Callable[[str], None] = print) -> list[Path]:
    """Pack one run directory, or every run (finished or not) of a sweep or store folder. In a folder, a run that
    cannot be packed (no checkpoint yet, one over ``limit``, damaged files, a link) is named through ``log`` and
    skipped: the others are still worth committing."""
    source, dest = Path(source), Path(dest)
    _not_a_link(source)
    refuse_overlap(source, dest)
    if RUN_ID.fullmatch(source.name.removesuffix(PARTIAL)):
        return [pack_run(source, dest, limit)]
    runs = sorted(p for p in source.iterdir() if p.is_dir() and RUN_ID.fullmatch(p.name.removesuffix(PARTIAL)))
    if not runs:
        raise StoreError(f"{source}: holds no run directories (<run_id> or <run_id>.partial)")
    packed = []
    for run in runs:
        try:
            packed.append(pack_run(run, dest, limit))
        except UserError as e:
            log(f"skipped: {e}")
    return packed


def _not_a_link(given: Path) -> None:
    """A run or sweep folder given to ``pack`` as a link is refused: what is packed is read from the folder named,
    never through a link to one elsewhere."""
    if given.is_symlink():
        raise StoreError(f"{given}: a symbolic link; pack reads no run through a link (give the folder it points to, "
                         f"{os.path.realpath(given)})")


def _only_a_pack(place: Path) -> None:
    """``place``, which a pack is to replace or delete, holds nothing, or a pack: a folder of nothing but what a
    pack holds (``PACK_ENTRIES``). A run folder (its ``checkpoints/``), a file or a link there is no pack — another
    store's copy of the run, say — and is never replaced: the run is refused, naming it."""
    if not os.path.lexists(place):
        return
    if place.is_symlink():
        raise link_error(place)
    other = sorted(set(os.listdir(place)) - PACK_ENTRIES) if place.is_dir() else ["a file, not a folder"]
    if other:
        raise StoreError(f"{place}: not a pack (it holds {other[0]}), which pack never replaces nor deletes; not "
                         "packed (pack into a results folder that holds no runs, not into a store)")


def check_named(folder: Path, name: str) -> None:
    """``folder`` checks as the run or pack ``name`` (``<run_id>`` or ``<run_id>.partial``) it is to be put back
    as, by the checks a restored run passes: no link or special file in it, its records read as the run's, an
    unfinished one's newest whole checkpoint (under ``resume/`` in a pack, ``checkpoints/`` in a store) and its
    best-so-far one whole. StoreError naming what does not."""
    run_id, finished = name.removesuffix(PARTIAL), not name.endswith(PARTIAL)
    if not RUN_ID.fullmatch(run_id):
        raise StoreError(f"{name} is not the name of a run or of a pack")
    plain_files(folder)
    check_records(folder, run_id, finished)
    if not finished:
        ckpt = folder / (RESUME if os.path.lexists(folder / RESUME) else "checkpoints")
        if _newest_whole(ckpt, run_id) is None:
            raise StoreError(f"{ckpt}: no whole checkpoint to resume from")
        check_best(ckpt, run_id)


@contextmanager
def _named_as(staged: Path, source: Path) -> Iterator[None]:
    """Within: an error naming a file of ``staged`` names the file of ``source`` it was copied from (the copy is
    what is checked; the source is what the user knows)."""
    try:
        yield
    except UserError as e:
        raise type(e)(str(e).replace(str(staged), str(source))) from None


def _stage_pack(pack: Path, staged: Path, run_id: str, finished: bool, limit: int) -> int | None:
    """Copy ``pack`` into ``staged`` as it is laid out and check the copy: config, metrics, and the summary of a
    finished run's pack or the checkpoint of an unfinished one's (returning its step)."""
    record = [n for n in _present(pack, (*RECORD, *ARTIFACTS)) if finished or n.name != "summary.json"]
    _stage(pack, record, staged)
    if not finished and os.path.lexists(pack / RESUME):
        _stage(pack, [RESUME / p for p in plain_files(pack / RESUME)], staged, limit)
    with _named_as(staged, pack):
        check_records(staged, run_id, finished)
        if finished:
            _stage_analysis(pack, staged, limit)
            return None
        steps = complete_steps(staged / RESUME)
        if not steps:
            raise StoreError(f"{pack}: not a pack of an unfinished run (no {RESUME}/ checkpoint); nothing to "
                             "restore")
        check_checkpoint(staged / RESUME, steps[-1], run_id, limit)
        check_best(staged / RESUME, run_id, limit)
    return steps[-1]


def _newest_whole(ckpt: Path, run_id: str) -> int | None:
    """The step of the newest resumable checkpoint in ``ckpt`` whose files are whole (None if there is none)."""
    for step in reversed(resumable_steps(ckpt)):
        try:
            check_checkpoint(ckpt, step, run_id)
            return step
        except StoreError:
            continue
    return None


def _carry(partial: Path, files: list[Path], staged: Path) -> None:
    """Give ``staged`` the files of the store's unfinished run that the pack does not replace (older checkpoints,
    figures): checkpoint files hard-linked (only ever replaced by a rename, never written in place), the others
    copied (an event log is appended to); temp files of killed writers left behind."""
    for rel in files:
        target = staged / rel
        if os.path.lexists(target) or TMP in rel.name:
            continue
        if rel.parts[0] == "checkpoints":
            refuse_other_names(partial / rel, os.lstat(partial / rel))  # the new name would be one more
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(partial / rel, target, follow_symlinks=False)
                continue
            except OSError:  # a file system without hard links: copied
                pass
        copy_below(partial, rel, target)


def restore_pack(pack: Path, root: Path, limit: int = LIMIT_BYTES) -> str:
    """Seed ``root/<run_id>.partial`` from an unfinished run's pack, unless the store already holds the run
    finished or a whole checkpoint as new as the pack's, or ``root/<run_id>`` from a finished run's pack (an
    unfinished copy the store holds is stale once the run has finished, and goes); returns a line saying what was
    done. The pack is copied beside its place, checked, and published by one rename."""
    pack, root = Path(pack), Path(root)
    refuse_overlap(pack, root)
    rid = run_config(pack).run_id()
    finished = not pack.name.endswith(PARTIAL) and os.path.lexists(pack / "summary.json")
    if not finished and not pack.name.endswith(PARTIAL):
        raise StoreError(f"{pack}: not a pack of an unfinished run (no {RESUME}/ checkpoint); nothing to restore")
    final, partial = run_paths(root, rid)
    with made_for(root), run_lock(root, rid), staging(root, (final if finished else partial).name) as staged:
        clean_stale(root, check_named)
        if final.is_symlink():
            raise link_error(final)
        if final.is_dir():
            return f"{final} is finished; nothing to restore"
        step = _stage_pack(pack, staged, rid, finished, limit)
        if finished:
            append_event(staged, f"restored from the finished pack {pack}")
            publish(staged, final)
            remove(partial)
            return f"{final}: restored as a finished run; its sweep skips it"
        files = plain_files(partial) if os.path.lexists(partial) else []  # a link in it is refused, naming it
        have = _newest_whole(partial / "checkpoints", rid) if files else None
        if have is not None and have >= step:
            return f"{partial} already holds a checkpoint at step {have} (the pack's is {step}); kept as it is"
        (staged / RESUME).rename(staged / "checkpoints")
        _carry(partial, files, staged)
        append_event(staged, f"restored from the pack {pack} at step {step}")
        publish(staged, partial)
    return f"{partial}: restored at step {step}; run the run's train or sweep command to resume it"
