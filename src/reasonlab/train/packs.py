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

A pack is not trusted because it is in the repository: its config must hash to its name, its checkpoint must
match the digests in its marker and name the same run, and its metrics must read as a metrics table.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

from reasonlab.checkpoint import complete_steps, resumable_steps, verified
from reasonlab.config import RunConfig
from reasonlab.config.io import load_yaml, resolve
from reasonlab.errors import StoreError, UserError
from reasonlab.records import read_summary
from reasonlab.store import (
    PARTIAL,
    RUN_ID,
    TMP,
    append_event,
    read_json,
    read_metrics,
    remove_temps,
    run_lock,
    run_paths,
    warn,
)

RESUME = "resume"
LIMIT_BYTES = 10 * 2**20  # a resume checkpoint is committed only up to this size (larger ones are not packed)
RECORD = ("config.yaml", "metrics.parquet", "summary.json", "progress.json", "events.log")
ARTIFACTS = ("tasks.json", "tokenizer.json")  # the task's own files (TaskData.artifacts), written at the start
ANALYSIS_SUFFIXES = (".json", ".npz", ".md")


def run_config(run_dir: Path) -> RunConfig:
    """The run's config, checked to hash to the directory's name (a copied or renamed folder is no run)."""
    path = run_dir / "config.yaml"
    if not path.is_file() or path.is_symlink():
        raise StoreError(f"{path}: missing; {run_dir} is not a run directory")
    cfg = resolve(load_yaml(path))
    if cfg.run_id() != run_dir.name.removesuffix(PARTIAL):
        raise StoreError(f"{path}: its config hashes to run {cfg.run_id()}, not {run_dir.name}; not a run of this "
                         "name (copied or renamed?)")
    return cfg


def _resume_files(ckpt: Path, step: int) -> list[Path]:
    files = [ckpt / f"step-{step}.{ext}" for ext in ("safetensors", "optim.pt", "json")]
    return files + [p for p in (ckpt / "best.json", ckpt / "best.safetensors") if p.is_file()]


def _copy_analysis(source: Path, staging: Path) -> None:
    """Copy the small analysis files of ``source`` (a run directory or an earlier pack) into ``staging``, leaving any
    file already staged as it is."""
    analysis = source / "analysis"
    if not analysis.is_dir() or analysis.is_symlink():
        return
    for path in sorted(analysis.rglob("*")):
        target = staging / path.relative_to(source)
        if path.is_file() and not path.is_symlink() and path.suffix in ANALYSIS_SUFFIXES and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target)


def _staged_record(source: Path, parent: Path, name: str) -> Path:
    """A fresh staging folder in ``parent`` (renamed into place once complete) holding ``source``'s record, task
    artifacts and small analysis files; links are not followed."""
    staging = parent / f".{name}{TMP}{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    for file in (*RECORD, *ARTIFACTS):
        if (source / file).is_file() and not (source / file).is_symlink():
            shutil.copy2(source / file, staging / file)
    _copy_analysis(source, staging)
    return staging


def pack_run(run_dir: Path, dest: Path, limit: int = LIMIT_BYTES) -> Path:
    """Write the pack of ``run_dir`` into ``dest`` (``dest/<run_id>`` for a finished run, ``dest/<run_id>.partial``
    with ``resume/`` for an unfinished one), replacing any earlier pack of the same run; returns its path."""
    run_dir, dest = Path(run_dir), Path(dest)
    cfg = run_config(run_dir)
    finished = not run_dir.name.endswith(PARTIAL)
    ckpt = run_dir / "checkpoints"
    resume: list[Path] = []
    if not finished:
        steps = resumable_steps(ckpt)
        if not steps:
            raise StoreError(f"{ckpt}: no resumable checkpoint yet; pack the run after its first checkpoint")
        verified(ckpt, steps[-1])  # damaged files are not worth committing
        resume = _resume_files(ckpt, steps[-1])
        size = sum(p.stat().st_size for p in resume)
        core = [p for p in resume if not p.name.startswith("best.")]
        if size > limit and core != resume and sum(p.stat().st_size for p in core) <= limit:
            warn(f"{ckpt}: the best-so-far weights are left out of the pack (with them it is {size / 2**20:.1f} MB, "
                 f"over {limit / 2**20:.0f} MB); a run resumed from it chooses its best again from the pack's step")
            resume, size = core, sum(p.stat().st_size for p in core)
        if size > limit:
            raise UserError(f"{ckpt / f'step-{steps[-1]}'}: the resume checkpoint is {size / 2**20:.1f} MB, over "
                            f"the {limit / 2**20:.0f} MB a pack may commit; pack the finished run instead")
    name = cfg.run_id() + ("" if finished else PARTIAL)
    dest.mkdir(parents=True, exist_ok=True)
    staging = _staged_record(run_dir, dest, name)
    earlier = dest / cfg.run_id()
    if finished and earlier.is_dir() and not earlier.is_symlink():
        # what an earlier pack of this finished run holds beyond the run directory (computed from the committed
        # record, e.g. by scripts/regenerate_docs.py) stays: a finished record does not change, so neither does it;
        # an unfinished run's pack carries none over (its record grows)
        _copy_analysis(earlier, staging)
    if resume:
        (staging / RESUME).mkdir()
        for path in resume:
            shutil.copy2(path, staging / RESUME / path.name)
    for old in run_paths(dest, cfg.run_id()):  # the pack replaces the last one, finished or not
        shutil.rmtree(old, ignore_errors=True)
    os.replace(staging, dest / name)
    return dest / name


def pack_runs(source: Path, dest: Path, limit: int = LIMIT_BYTES,
              log: Callable[[str], None] = print) -> list[Path]:
    """Pack one run directory, or every run (finished or not) of a sweep or store folder. In a folder, an
    unfinished run that cannot be packed yet (no checkpoint, or one over ``limit``) is named through ``log`` and
    skipped: the others are still worth committing."""
    source = Path(source)
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
            if not run.name.endswith(PARTIAL):
                raise
            log(f"skipped: {e}")
    return packed


def restore_pack(pack: Path, root: Path) -> str:
    """Seed ``root/<run_id>.partial`` from an unfinished run's pack, unless the store already holds the run
    finished or a checkpoint as new as the pack's, or ``root/<run_id>`` from a finished run's pack; returns a line
    saying what was done."""
    pack, root = Path(pack), Path(root)
    cfg = run_config(pack)
    rid = cfg.run_id()
    if not pack.name.endswith(PARTIAL) and (pack / "summary.json").is_file():
        return _restore_finished(pack, root, rid)
    resume = pack / RESUME
    steps = complete_steps(resume)
    if not pack.name.endswith(PARTIAL) or not steps:
        raise StoreError(f"{pack}: not a pack of an unfinished run (no {RESUME}/ checkpoint); nothing to restore")
    step = steps[-1]
    marker = verified(resume, step)[0]
    if marker.get("run_id", rid) != rid:
        raise StoreError(f"{resume / f'step-{step}.json'}: a checkpoint of run {marker['run_id']}, not of {rid}")
    read_metrics(pack / "metrics.parquet")  # a table reasonlab can read, or a one-line StoreError
    if (resume / "best.json").is_file():
        read_json(resume / "best.json", "best-checkpoint marker")
    final, partial = run_paths(root, rid)
    with run_lock(root, rid):
        if final.is_dir():
            return f"{final} is finished; nothing to restore"
        have = resumable_steps(partial / "checkpoints")
        if have and have[-1] >= step:
            return f"{partial} already holds a checkpoint at step {have[-1]} (the pack's is {step}); kept as it is"
        (partial / "checkpoints").mkdir(parents=True, exist_ok=True)
        remove_temps(partial, recursive=True)
        for file in (*RECORD, *ARTIFACTS):
            if (pack / file).is_file() and file != "summary.json":
                shutil.copy2(pack / file, partial / file)
        for path in sorted(resume.iterdir()):
            shutil.copy2(path, partial / "checkpoints" / path.name)
        append_event(partial, f"restored from the pack {pack} at step {step}")
    return f"{partial}: restored at step {step}; run the run's train or sweep command to resume it"


def _restore_finished(pack: Path, root: Path, rid: str) -> str:
    """Write a finished run's record from its pack into ``root/<run_id>`` (checked as the store checks its own:
    the summary's schema and run id, the metrics table), atomically; an unfinished copy the store holds is stale
    once the run has finished, and goes."""
    read_summary(pack / "summary.json", rid)
    read_metrics(pack / "metrics.parquet")
    final, partial = run_paths(root, rid)
    root.mkdir(parents=True, exist_ok=True)
    with run_lock(root, rid):
        if final.is_dir():
            return f"{final} is finished; nothing to restore"
        staging = _staged_record(pack, root, rid)
        append_event(staging, f"restored from the finished pack {pack}")
        os.replace(staging, final)
        shutil.rmtree(partial, ignore_errors=True)
    return f"{final}: restored as a finished run; its sweep skips it"
