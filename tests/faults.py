"""Crash-consistency harness: SIGKILL a training run and a sweep at random points, resume, and check the result.

The sweep scenario trains its four runs one by one, the ensemble scenario as two stacked pairs
(``--ensemble 2``), the ray scenario as tasks of a local Ray instance that the sweep starts (``--backend ray``).
Each trial starts from an empty store, kills the command one to three times — at a random moment (the whole
process group, workers included; or, in a sweep, the sweep's own process alone, after which its workers must end
by themselves) or halfway through a random atomic write (``REASONLAB_KILL_AT_WRITE``, read by the hook in
``fault_hook/sitecustomize.py`` that the harness alone installs: a checkpoint, a metrics file, the results table, a
marker) — then reruns it to completion and checks that: the run (every run of the
sweep) finished; its final figures, best figures, label and every metrics row equal those of an uninterrupted run
with the same seed; the results table has exactly one row per run; every file in the store parses (JSON, YAML,
Parquet, safetensors, optimizer state with ``weights_only``) and no temp file is left behind.

The input scenario feeds the command line random bad input — ``--set`` overrides, config and sweep files, grid
axes, store names, paths, experiments and profiles — and counts the outcomes: each must either work or fail with
exit code 2 and one ``error:`` line, never a traceback, and write nothing.

The full harness (figures quoted in docs/reliability.md)::

    .venv/bin/python tests/faults.py --kills 20 --inputs 2000 --out faults.json

The default test run (tests/e2e/test_faults.py) runs a few kill points per scenario and a few hundred inputs.

Over 400 lines: the crash-consistency harness: its scenarios (train, sweep, ensemble, Ray, store damage, inputs)
share the store checks and the report.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import torch
import yaml
from safetensors.torch import load as st_load

CLI = str(Path(sys.executable).with_name("reasonlab"))
SWEEP_RUNS = 4
SCENARIOS = ["run", "sweep", "ensemble", "ray", "input", "store"]
ORPHAN_GRACE_S = 15.0
# The processes that can write to the store: the command itself, local pool workers and Ray tasks training runs.
# Ray's own processes (its agents and other services, idle workers) touch no store; once the sweep and with it
# Ray's GCS are gone, some wait out their reconnect timeout and end by themselves, about 60 s later (measured).
# They are counted apart from workers.
WRITERS = re.compile(r"/reasonlab (sweep|train)\b|multiprocessing\.spawn|^ray::train_group")


def tiny_config() -> dict:
    """An anchor run of a few seconds with a checkpoint and an evaluation every epoch."""
    return {"seed": 1, "task": {"kind": "anchor", "n_train_per_pair": 64, "n_test_per_pair": 16},
            "model": {"d_model": 16, "d_k": 8, "d_v": 8, "d_ff": 32},
            "train": {"epochs": 6, "batch_size": 64, "warmup_epochs": 1, "checkpoint_every": 1, "eval_every": 1,
                      "threads": 1, "device": "cpu", "base_lr": 1e-3, "lr_multiplier": 3.0}}


def write_inputs(work: Path) -> dict[str, list[str]]:
    """The two scenarios' command lines (run from ``work``), with their config files written there."""
    (work / "run.yaml").write_text(yaml.safe_dump(tiny_config()))
    sweep_cfg = tiny_config()
    sweep_cfg["train"].pop("threads")
    (work / "sweep.yaml").write_text(yaml.safe_dump({"name": "sw", "config": sweep_cfg,
                                                     "grid": {"init.gamma": [0.3, 0.8], "seed": [1, 2]}}))
    sweep = [CLI, "sweep", "sweep.yaml", "--out", "store", "--workers", "2", "--threads", "1"]
    return {"run": [CLI, "train", "run.yaml", "--out", "store", "--name", "r", "-q"],
            "sweep": [*sweep, "--ensemble", "1"],
            "ensemble": [*sweep, "--ensemble", "2"],  # the four runs as two stacked pairs
            "ray": [*sweep, "--ensemble", "1", "--backend", "ray"]}  # as tasks of a local Ray instance


@dataclass
class Figures:
    scenario: str
    trials: int = 0
    kill_points: int = 0
    timed_kills: int = 0
    driver_only_kills: int = 0  # of the timed kills, those of the sweep's own process alone
    write_kills: int = 0
    resumes_completed: int = 0
    rows_lost: int = 0
    rows_duplicated: int = 0
    mismatches: int = 0
    unparseable_files: int = 0
    temp_files_left: int = 0
    orphans_left: int = 0
    ray_services_left: int = 0
    problems: list[str] = field(default_factory=list)


def run_cmd(cmd: list[str], cwd: Path, kill_after: float | None = None, kill_at_write: int | None = None,
            figures: Figures | None = None, driver_only: bool = False) -> int:
    """Run ``cmd``; SIGKILL it after ``kill_after`` seconds if still running: its whole process group, or with
    ``driver_only`` the command's own process alone, as an out-of-memory kill would, after which every process it
    started must end by itself within ``ORPHAN_GRACE_S`` (those still alive are counted in ``figures``).
    The exit code (-9 when killed)."""
    hook = str(Path(__file__).with_name("fault_hook"))  # its sitecustomize.py: the only reader of the variable
    env = {**os.environ, "REASONLAB_KILL_AT_WRITE": str(kill_at_write or ""),
           "PYTHONPATH": os.pathsep.join(filter(None, [hook, os.environ.get("PYTHONPATH")]))}
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        _, err = proc.communicate(timeout=kill_after)
    except subprocess.TimeoutExpired:
        if driver_only:
            proc.kill()
            proc.communicate()
            workers, services = _session_alive(proc.pid, ORPHAN_GRACE_S)
            if figures is not None:
                figures.orphans_left += len(workers)
                figures.ray_services_left += len(services)
                if workers:
                    figures.problems.append(f"alive {ORPHAN_GRACE_S} s after the sweep was killed: {workers}")
        else:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
        return -9
    finally:
        subprocess.run(["pkill", "-9", "-s", str(proc.pid)], capture_output=True)  # stragglers of the session
    if proc.returncode not in (0, -9) and kill_at_write is None:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {err.decode()[-2000:]}")
    return proc.returncode


def _session_alive(session: int, grace: float) -> tuple[list[str], list[str]]:
    """(workers, Ray services): command lines of the processes of ``session`` still alive once no worker is left
    or after ``grace`` seconds."""
    deadline = time.monotonic() + grace
    while True:
        found = subprocess.run(["pgrep", "-a", "-s", str(session)], capture_output=True, text=True).stdout
        alive = [line.split(maxsplit=1)[-1][:160] for line in found.splitlines()]
        workers = [c for c in alive if WRITERS.search(c)]
        if not workers or time.monotonic() > deadline:
            return workers, [c for c in alive if c not in workers]
        time.sleep(0.2)


def snapshot(store: Path) -> dict[str, dict]:
    """Per finished run: its summary's deterministic parts and its metrics rows."""
    out = {}
    for summary_path in sorted(store.glob("*/*/summary.json")):
        run_dir = summary_path.parent
        if run_dir.name.endswith(".partial"):
            continue
        s = json.loads(summary_path.read_text())
        out[run_dir.name] = {"final": s["final"], "best": s["best"], "label": s["label"], "steps": s["steps"],
                             "metrics": pq.read_table(run_dir / "metrics.parquet").to_pylist()}
    return out


def unparseable(store: Path) -> tuple[list[str], list[str]]:
    """(files that do not parse, temp files left behind) anywhere under ``store``."""
    bad, temps = [], []
    for path in store.rglob("*"):
        if not path.is_file() or ".locks" in path.parts:
            continue
        if ".tmp-" in path.name:
            temps.append(str(path))
            continue
        try:
            if path.suffix == ".json":
                json.loads(path.read_text())
            elif path.suffix == ".yaml":
                yaml.safe_load(path.read_text())
            elif path.suffix == ".parquet":
                pq.read_table(path)
            elif path.suffix == ".safetensors":
                st_load(path.read_bytes())
            elif path.suffix == ".pt":
                torch.load(path, weights_only=True, map_location="cpu")
            elif path.suffix in (".log", ".md", ".svg"):
                path.read_text()
        except Exception as e:  # noqa: BLE001 - any failure to parse is a finding
            bad.append(f"{path}: {type(e).__name__}")
    return bad, temps


def check(store: Path, reference: dict[str, dict], figures: Figures, scenario: str) -> None:
    got = snapshot(store)
    expected = set(reference)
    missing, extra = expected - set(got), set(got) - expected
    if missing or extra:
        figures.problems.append(f"runs missing {sorted(missing)} extra {sorted(extra)}")
    for run_id in expected & set(got):
        if got[run_id] != reference[run_id]:
            figures.mismatches += 1
            figures.problems.append(f"{run_id}: differs from the uninterrupted run")
    if scenario != "run":
        rows = pq.read_table(store / "sw" / "results.parquet").to_pylist()
        ids = [r["run_id"] for r in rows]
        figures.rows_lost += len(expected - set(ids))
        figures.rows_duplicated += len(ids) - len(set(ids))
    partials = list(store.glob("*/*.partial"))
    if partials:
        figures.problems.append(f"unfinished runs left: {[p.name for p in partials]}")
    bad, temps = unparseable(store)
    figures.unparseable_files += len(bad)
    figures.temp_files_left += len(temps)
    figures.problems += bad + temps


def harness(scenario: str, kills: int, seed: int = 0, work: Path | None = None) -> Figures:
    """At least ``kills`` kill points for ``scenario`` ("run", "sweep", "ensemble" or "ray"), each trial checked
    after its resume."""
    rng = random.Random(seed)
    own = work is None
    work = Path(tempfile.mkdtemp(prefix=f"faults-{scenario}-")) if own else work
    try:
        cmd = write_inputs(work)[scenario]
        started = time.monotonic()
        run_cmd(cmd, work)
        duration = time.monotonic() - started
        reference = snapshot(work / "store")
        expected = 1 if scenario == "run" else SWEEP_RUNS
        if len(reference) != expected:
            raise RuntimeError(f"reference {scenario}: {len(reference)} finished runs, expected {expected}")
        shutil.move(work / "store", work / "reference")
        figures = Figures(scenario)
        while figures.kill_points < kills:
            figures.trials += 1
            for _ in range(rng.randint(1, 3)):
                if rng.random() < 0.5:
                    driver_only = scenario != "run" and rng.random() < 0.5
                    code = run_cmd(cmd, work, kill_after=rng.uniform(0.2 * duration, duration), figures=figures,
                                   driver_only=driver_only)
                    figures.timed_kills += code == -9
                    figures.driver_only_kills += code == -9 and driver_only
                    figures.kill_points += code == -9
                else:  # a process (a sweep's worker, say) kills itself; the command then fails or dies
                    code = run_cmd(cmd, work, kill_at_write=rng.randint(1, 40))
                    figures.write_kills += code != 0
                    figures.kill_points += code != 0
            run_cmd(cmd, work)  # resume to the end
            figures.resumes_completed += len(snapshot(work / "store")) == expected
            check(work / "store", reference, figures, scenario)
            shutil.rmtree(work / "store")
        return figures
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


# ---- bad input ------------------------------------------------------------------------------------------------
FIELDS = ["seed", "init.gamma", "init.overrides", "model.depth", "model.d_model", "model.norm", "model.kind",
          "train.lr_multiplier", "train.epochs", "train.batch_size", "train.precision", "train.betas", "task.kind",
          "task.held_out_pairs", "task.non_inferential", "task.benchmark", "task.split", "task.n_train", "task.p",
          "task.hops", "thresholds.fit", "profile", "model", "init.gamma.x", "nope", "train..epochs", "", "=",
          "task.anchors", "task.shifts", "train.eps", "train.floor_lr", "train.grad_clip", "train.warmup_epochs",
          "model.ln_eps", "task.vocab_size", "model.d_ff", "task.seq_len", "task.n_train_per_pair",
          "model.max_positions", "task.n_samples", "task.n_shots"]
VALUES = ["0", "-1", "0.5", "1e309", "nan", "inf", "-inf", "1e-9", "99999999999", "true", "null", "~", "[]", "[1]",
          "[[4,3]]", "[[9,9]]", "{}", "{a: 1}", "{'3,4': -6}", "x", "'", '"', "[", "{", "- x", "!!python/none ''",
          "seq2seq", "modular", "mixture", "pre", "bf16", "cogs", "../x", "/etc", "é", "\t", "a=b", "29", "30",
          ".nan", ".inf", "-.inf", "[2,-1]", "[-1,2,3,4]", "[1,2,3,300]", "50", "1000000000", "{a: &x 1, b: *x}",
          "&a [1]", "{1: 5, 2: 1, 3: -2, 4: 150}", "1" * 12_000, "[" * 3000 + "]" * 3000, "{a: 1, a: 2}",
          "10000000000", "1e12"]
# Command-line options with a range, and values outside it (or not numbers at all).
NUMERIC = {"sweep": ["--workers", "--threads", "--max-runs", "--ensemble"], "demo": ["--workers", "--seed"],
           "results": ["--timeout", "--memory-limit", "--max-rows"],
           "analyze": ["--threshold", "--key", "--position", "--shot", "--max-tasks", "--seed", "--eval-batches"]}
BAD_NUMBERS = ["-3", "-1", "0", "nan", "inf", "-inf", "1e400", "x", "", "2.5"]
# SQL that would run for ever, hold more memory than the machine has, or return more rows than a terminal shows.
SQL_BOMBS = ["SELECT count(*) FROM range(1000000) a, range(1000000) b, range(1000000) c",
             "SELECT list(range) FROM range(200000000)", "SELECT * FROM range(10000000)",
             "WITH RECURSIVE t(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM t) SELECT count(*) FROM t",
             "SELECT string_agg(repeat('x', 1000000), '') FROM range(100000)"]


def _parsed(value: str):
    """An override value as the config would read it; an alias (refused there) stays text."""
    from reasonlab.config import ConfigError, parse_value

    try:
        return parse_value(value)
    except ConfigError:
        return value


def _random_yaml(rng: random.Random) -> str:
    if rng.random() < 0.1:  # nested far too deep, or a key given twice in one mapping
        depth = rng.choice([40, 3000])
        block = "a:\n" + "".join("  " * i + "b:\n" for i in range(1, depth))
        return rng.choice([f"seed: {'[' * depth}{']' * depth}\n", "train:\n  epochs: 2\ntrain:\n  epochs: 3\n",
                           "model: {depth: 2, depth: 3}\n", block])
    if rng.random() < 0.3:
        return "".join(rng.choice("abc:{}[]-!&*|>'\"\n\t 0123456789") for _ in range(rng.randint(0, 60)))
    data: dict = {}
    for _ in range(rng.randint(0, 4)):
        node = data
        parts = rng.choice(FIELDS).split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {}) if isinstance(node.get(part, {}), dict) else {}
        value = rng.choice(VALUES)
        node[parts[-1]] = _parsed(value) if rng.random() < 0.9 else value
    return yaml.safe_dump(data) if rng.random() < 0.9 else json.dumps(data, default=str)[:-1]


def random_invocation(rng: random.Random, work: Path, store: Path) -> list[str]:
    """One random command line that should be rejected cleanly or, if valid, change nothing (dry runs)."""
    def sets() -> list[str]:
        return [a for _ in range(rng.randint(1, 3)) for a in ("--set", f"{rng.choice(FIELDS)}={rng.choice(VALUES)}")]

    path = work / f"in-{rng.randrange(10**9)}.yaml"
    kind = rng.randrange(13)
    if kind == 8:  # a config file that is not UTF-8 text
        path.write_bytes(_random_yaml(rng).encode() + bytes([rng.randrange(128, 256)]) + b"\n")
        return ["train", str(path), "--dry-run", "--out", str(store)]
    if kind == 0:
        return ["train", "--dry-run", "--out", str(store), *sets()]
    if kind == 1:
        path.write_text(_random_yaml(rng))
        return ["train", str(path), "--dry-run", "--out", str(store), *(sets() if rng.random() < 0.3 else [])]
    if kind == 2:
        axes = [f"{rng.choice(FIELDS)}={','.join(rng.choice(VALUES) for _ in range(rng.randint(0, 3)))}"
                for _ in range(rng.randint(1, 2))]
        return ["sweep", "--dry-run", "--out", str(store), *(a for ax in axes for a in ("--grid", ax))]
    if kind == 3:
        spec = {"name": rng.choice(["ok", "../up", "/abs", "a b", "<script>", "x" * 200, ""]),
                "grid": {rng.choice(FIELDS): [_parsed(rng.choice(VALUES))]}}
        path.write_text(yaml.safe_dump(spec) if rng.random() < 0.8 else _random_yaml(rng))
        return ["sweep", str(path), "--dry-run", "--out", str(store)]
    if kind == 4:
        name = rng.choice(["../x", "/tmp/x", "a/b", ".hidden", "", " ", "ok\n", "<script>", "..", "-x", "x" * 300])
        return [rng.choice(["train", "sweep"]), "--dry-run", "--name", name, "--out", str(store),
                *(["--profile", "anchor-cpu"] if rng.random() < 0.5 else [])]
    if kind == 9:  # a numeric option outside its range
        command = rng.choice(list(NUMERIC))
        where = {"sweep": ["--dry-run", "--grid", "seed=1", "--out", str(store)], "demo": ["--dry-run", "--out",
                 str(store)], "results": [str(work / "sw")], "analyze": [str(work)]}[command]
        return [command, *where, rng.choice(NUMERIC[command]), rng.choice(BAD_NUMBERS)]
    if kind == 10:  # a grid of more points than the limit (or than exist), or a run config given as a sweep file
        if rng.random() < 0.5:
            path.write_text(_random_yaml(rng) if rng.random() < 0.3 else yaml.safe_dump(tiny_config()))
            return ["sweep", str(path), "--dry-run", "--out", str(store)]
        axes = [f"{f}={','.join(str(i) for i in range(rng.choice([2, 1000, 20_000])))}"
                for f in rng.sample(["seed", "train.base_lr", "init.gamma", "model.depth"], 2)]
        limit = ["--max-runs", rng.choice(["1", "5", "1000000000"])] if rng.random() < 0.3 else []
        return ["sweep", "--dry-run", "--out", str(store), "--profile", "anchor-cpu", *limit,
                *(a for ax in axes for a in ("--grid", ax))]
    if kind == 11:  # SQL that has no end, no memory bound or no row bound, over a sweep's table
        return ["results", str(work / "sw"), "--sql", rng.choice(SQL_BOMBS), "--timeout", "1", "--memory-limit", "0.5"]
    if kind == 12:  # a config that is not a file, an empty profile, a profile of nothing
        return ["train", rng.choice(["/dev/zero", "/dev/null", str(work), "/proc/self/mem"]), "--dry-run",
                "--out", str(store), *(["--profile", rng.choice(["", " ", "cpu "])] if rng.random() < 0.5 else [])]
    target = rng.choice([str(work / "missing"), str(work), str(path), "/", "", str(work / "in-0.yaml")])
    if kind == 5:
        return [rng.choice(["show", "results", "phase", "analyze"]), target]
    if kind == 6:
        return ["results", target, "--sql", rng.choice(["SELECT", "DROP TABLE runs", "SELECT * FROM nope", "'"])]
    return ["reproduce", rng.choice(["nope", "scan", "anchor-phase", ""]), "--profile",
            rng.choice(["nope", "paper-x", ""]), "--out", str(store), "--set", f"{rng.choice(FIELDS)}=["]


def input_harness(n: int, seed: int = 0, work: Path | None = None) -> dict:
    """Run ``n`` random bad (or harmless) invocations in-process; count how each ended."""
    from typer.testing import CliRunner

    from reasonlab.cli import app

    rng = random.Random(seed)
    own = work is None
    work = Path(tempfile.mkdtemp(prefix="faults-input-")) if own else work
    (work / "sw").mkdir()  # a sweep's results table for the SQL to read
    pq.write_table(pa.table({"run_id": ["0" * 12], "label": ["inferential"], "init.gamma": [0.3]}),
                   work / "sw" / "results.parquet")
    figures = {"scenario": "input", "inputs_tried": 0, "worked": 0, "rejected": 0, "tracebacks": 0,
               "multi_line_errors": 0, "wrote_something": 0, "problems": []}
    try:
        for _ in range(n):
            store = work / "store"
            args = random_invocation(rng, work, store)
            before = {p for p in work.rglob("*")}
            result = CliRunner().invoke(app, args)
            figures["inputs_tried"] += 1
            errors = [line for line in result.output.splitlines() if line.startswith("error:")]
            if result.exit_code == 0:
                figures["worked"] += 1
            elif result.exit_code == 2 and len(errors) == 1 and "Traceback" not in result.output:
                figures["rejected"] += 1
            elif result.exit_code == 2 and len(errors) != 1 and not isinstance(result.exception, SystemExit):
                figures["tracebacks"] += 1
                figures["problems"].append(f"{args}: {result.exception!r}")
            elif result.exit_code == 2:
                figures["multi_line_errors"] += 1
                figures["problems"].append(f"{args}: {result.output[-300:]!r}")
            else:
                figures["tracebacks"] += 1
                figures["problems"].append(f"{args}: exit {result.exit_code} {result.exception!r}")
            written = {p for p in work.rglob("*")} - before
            if store.exists() or any(p.suffix != ".yaml" for p in written):
                figures["wrote_something"] += 1
                figures["problems"].append(f"{args}: wrote {sorted(map(str, written))[:3]}")
                shutil.rmtree(store, ignore_errors=True)
        return figures
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


# ---- damaged, copied, linked and hostile store files --------------------------------------------------------
SECRET = "SECRET-OUTSIDE-THE-STORE"
HOSTILE = ["0.93", "[/bold]", "$\\frac{$", "cpu [reduced]", "\x1b]0;pwned\x07\x1b[2J", "\u202egnp.exe", [],
           [1, "x"], {}, {"a": {"b": None}}, None, True, -1, 10**30, 1e308, "", "x" * 300, "ab\ncd", "\udcff"]


def build_store(work: Path) -> Path:
    """A finished two-run sweep (two epochs each) with an analysis, a snapshot and a study summary, and beside it
    files outside the store that links may point to: the original every store case damages a copy of."""
    import io

    from rich.console import Console

    from reasonlab.analysis.probes import analyze
    from reasonlab.files import write_json
    from reasonlab.sweep.executors import LocalExecutor
    from reasonlab.sweep.grid import SweepSpec, sweep_configs
    from reasonlab.sweep.runner import run_sweep

    cfg = tiny_config()
    cfg["train"] |= {"epochs": 2}
    cfg["train"].pop("threads")
    configs, axes = sweep_configs(SweepSpec(name="sw", config=cfg, grid={"seed": [1, 2]}))
    run_sweep("sw", configs, work / "store", LocalExecutor(1, 1), axes, console=Console(file=io.StringIO()))
    sweep = work / "store" / "sw"
    run = sweep / configs[0].run_id()
    analyze(run, ["embedding"], "final", {})
    ckpt = run / "checkpoints"
    write_json(ckpt / "snapshot-2.json", {"step": 2, "fraction": 0.5, "epoch": 1, "sha256": {}})
    (ckpt / "snapshot-2.safetensors").write_bytes(next(ckpt.glob("step-*.safetensors")).read_bytes())
    (sweep / "summary.md").write_text("# sw\n\nstudy summary\n")
    (work / "outside" / "folder").mkdir(parents=True)
    for name in ("summary.md", "figure.png", "summary.json", "metrics.parquet", "sweep.json", "results.parquet"):
        (work / "outside" / name).write_text(SECRET)
    (work / "outside" / "folder" / "flow.json").write_text(json.dumps({"headline": SECRET}))
    return work / "store"


def _nodes(node, path=()):  # noqa: ANN001 - any JSON value
    """Every (path, value) of a JSON document, containers included."""
    yield path, node
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _nodes(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _nodes(v, (*path, i))


def _mutate_json(rng: random.Random, path: Path) -> str:
    """Replace one random node of a JSON file by a hostile value (often of another shape), or delete it."""
    data = json.loads(path.read_text())
    where, _ = rng.choice([x for x in _nodes(data) if x[0]])
    parent = data
    for key in where[:-1]:
        parent = parent[key]
    if rng.random() < 0.2:
        del parent[where[-1]]
        what = "deleted"
    else:
        parent[where[-1]] = value = rng.choice(HOSTILE)
        what = f"= {value!r}"[:40]
    path.write_bytes(json.dumps(data).encode("utf-8", "surrogateescape"))
    return f"{path.name}: {'.'.join(map(str, where))} {what}"


STORE_DAMAGES = 9


def damage_store(rng: random.Random, store: Path, outside: Path, kind: int) -> str:
    """One random damage of class ``kind`` (of ``STORE_DAMAGES``) that the store's readers must survive; says what
    it did."""
    import pyarrow as pa

    sweep = store / "sw"
    runs = sorted(p for p in sweep.iterdir() if re.fullmatch(r"[0-9a-f]{12}", p.name))
    run = rng.choice(runs)
    if kind == 0:  # a parseable file of the wrong shape
        target = rng.choice([run / "summary.json", sweep / "sweep.json", *run.glob("analysis/*/*.json"),
                             *run.glob("checkpoints/*.json")])
        return _mutate_json(rng, target)
    if kind == 1:  # a run directory copied or renamed under another run's name
        other = rng.choice(["0123456789ab", *(r.name for r in runs if r != run)])
        if (sweep / other).exists():
            shutil.rmtree(sweep / other)
        (shutil.copytree if rng.random() < 0.5 else shutil.move)(run, sweep / other)
        return f"{run.name} as {other}"
    if kind == 2:  # a link out of the run or sweep directory
        link, target = rng.choice([
            (sweep / "summary.md", outside / "summary.md"), (run / "figures" / "x.png", outside / "figure.png"),
            (run / "analysis" / "linked", outside / "folder"), (run / "summary.json", outside / "summary.json"),
            (run / "metrics.parquet", outside / "metrics.parquet"), (sweep / "sweep.json", outside / "sweep.json"),
            (sweep / "results.parquet", outside / "results.parquet"), (sweep / "0123456789ab", outside / "folder")])
        link.parent.mkdir(parents=True, exist_ok=True)
        if link.is_dir() and not link.is_symlink():
            shutil.rmtree(link)
        link.unlink(missing_ok=True)
        link.symlink_to(target)
        return f"{link.relative_to(store)} -> {target}"
    if kind == 3:  # a foreign Parquet table in place of the metrics or the results
        target = rng.choice([run / "metrics.parquet", sweep / "results.parquet"])
        columns = rng.sample(["epoch", "step", "split", "metric", "value", "run_id", "x"], rng.randint(1, 4))
        table = pa.table({c: rng.choice([pa.array([1, 2]), pa.array(["a", "b"]), pa.array([0.5, None])])
                          for c in columns})
        pq.write_table(table, target)
        return f"{target.name}: foreign table {columns}"
    if kind == 4:  # names and texts that are not UTF-8
        choice = rng.randrange(3)
        if choice == 0:
            (run / "figures").mkdir(exist_ok=True)
            (run / "figures" / os.fsdecode(b"\xff\xfe.png")).write_bytes(b"\x89PNG")
            return "a figure named in bytes"
        if choice == 1:
            shutil.copytree(sweep, store / os.fsdecode(b"sw\xff"), symlinks=True)
            return "a sweep folder named in bytes"
        target = rng.choice([sweep / "summary.md", sweep / "sweep.json", run / "summary.json"])
        data = target.read_bytes()
        target.write_bytes(data[:20] + b"\xff\xfe" + data[20:])
        return f"{target.name}: not UTF-8"
    if kind == 5:  # stored strings that are markup or terminal escapes
        summary = json.loads((run / "summary.json").read_text())
        key = rng.choice(["profile", "label", "device", "git_revision"])
        summary[key] = rng.choice([h for h in HOSTILE if isinstance(h, str)])
        (run / "summary.json").write_bytes(json.dumps(summary).encode("utf-8", "surrogateescape"))
        return f"summary.json: {key} = {summary[key]!r}"[:80]
    if kind == 6:  # an unfinished run: its progress file of the wrong shape, or its directory another run's
        partial = run.with_name(run.name + ".partial")
        shutil.copytree(run, partial)
        (partial / "summary.json").unlink()
        progress = {"epoch": 1, "epochs": 2, "step": 4, "loss": 1.0, "wall_time_s": 1.0, "evaluated_epoch": 1,
                    "train_acc": 0.5}
        (partial / "progress.json").write_text(json.dumps(progress))
        if rng.random() < 0.5:
            return _mutate_json(rng, partial / "progress.json")
        partial.rename(sweep / "0123456789ab.partial")
        return "an unfinished run under another id"
    if kind == 7:  # a summary whose config is not its run's
        summary = json.loads((run / "summary.json").read_text())
        summary["config"]["seed"] = rng.choice([7, "7", [7], None])
        (run / "summary.json").write_text(json.dumps(summary))
        return f"summary.json: config.seed = {summary['config']['seed']!r}"
    target = rng.choice([run / "summary.json", sweep / "sweep.json", run / "metrics.parquet"])
    data = target.read_bytes()
    target.write_bytes(data[: rng.randrange(len(data))])
    return f"{target.name}: cut short"


def store_invocations(store: Path) -> list[list[str]]:
    """Every command that reads the (damaged) store: of its first run (finished or not) and of its sweep."""
    sweep = store / "sw"
    runs = sorted(str(p) for p in sweep.iterdir() if re.fullmatch(r"[0-9a-f]{12}(\.partial)?", p.name))
    run = runs[0] if runs else str(sweep / "missing")
    return [["show", run], ["report", run], ["analyze", run, "--probe", "embedding"], ["report", str(sweep)],
            ["results", str(sweep)], ["results", str(store), "--all"], ["phase", str(sweep)],
            *(["results", str(sweep), "--sql", sql] for sql in (
                "SELECT * FROM runs", "SELECT count(*), count(DISTINCT run_id) FROM metrics",
                "SELECT count(*) FROM offsets"))]


def store_harness(n: int, seed: int = 0, work: Path | None = None) -> dict:
    """``n`` random damages of a finished sweep (one or two each), each followed by every command that reads it:
    each must work or fail in one line (exit 2), never with a traceback; no control character may reach the
    terminal, and nothing from outside the store (reached through a link) may show up in an output or a report."""
    from reasonlab.cli import app

    rng = random.Random(seed)
    own = work is None
    work = Path(tempfile.mkdtemp(prefix="faults-store-")) if own else work
    figures = {"scenario": "store", "stores_damaged": n, "cases_tried": 0, "worked": 0, "rejected": 0,
               "tracebacks": 0, "multi_line_errors": 0, "unescaped_output": 0, "read_outside": 0, "problems": []}
    try:
        original = build_store(work / "original")
        for i in range(n):
            store = work / f"case-{i}"
            shutil.copytree(original, store, symlinks=True)
            what = []
            for kind in [i % STORE_DAMAGES] + [rng.randrange(STORE_DAMAGES)] * rng.randint(0, 1):  # each class in turn
                try:
                    what.append(damage_store(rng, store, work / "original" / "outside", kind))
                except (OSError, ValueError, LookupError, TypeError, shutil.Error):
                    pass  # an earlier damage took away what this one changes
            for args in store_invocations(store):
                _store_case(figures, app, args, what)
            shutil.rmtree(store, ignore_errors=True)
        return figures
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


def _store_case(figures: dict, app, args: list[str], what: list[str]) -> None:  # noqa: ANN001 - a typer app
    """Run one command on a damaged store and count how it ended."""
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, args)
    figures["cases_tried"] += 1
    out = result.output
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    case = f"{what} {args[0]} {args[1:]}"
    if result.exit_code == 0:
        figures["worked"] += 1
    elif result.exit_code == 2 and len(errors) == 1 and isinstance(result.exception, SystemExit):
        figures["rejected"] += 1
    elif result.exit_code == 2 and isinstance(result.exception, SystemExit):
        figures["multi_line_errors"] += 1
        figures["problems"].append(f"{case}: {out[-300:]!r}")
    else:
        figures["tracebacks"] += 1
        figures["problems"].append(f"{case}: exit {result.exit_code} {result.exception!r}")
    if re.search("[\x00-\x08\x0b-\x1f\x7f\u202e]", out):
        figures["unescaped_output"] += 1
        figures["problems"].append(f"{case}: control characters printed: {out[-200:]!r}")
    report = Path(args[1]) / "report.html"
    if SECRET in out or (args[0] == "report" and report.is_file() and SECRET in report.read_text()):
        figures["read_outside"] += 1
        figures["problems"].append(f"{case}: read a file outside the store")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=20, help="kill points per scenario (at least)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--inputs", type=int, default=2000, help="random bad inputs for the input scenario")
    parser.add_argument("--stores", type=int, default=200, help="random store damages for the store scenario")
    parser.add_argument("--scenario", choices=[*SCENARIOS, "all"], default="all")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the clean-ups: kill the command under test
    scenarios = SCENARIOS if args.scenario == "all" else [args.scenario]
    results = []
    for sc in scenarios:
        t = time.monotonic()
        figures = input_harness(args.inputs, args.seed) if sc == "input" else store_harness(args.stores, args.seed) \
            if sc == "store" else asdict(harness(sc, args.kills, args.seed))
        results.append({**figures, "wall_s": round(time.monotonic() - t, 1)})
        print(json.dumps(results[-1], indent=2), flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2) + "\n")
    sys.exit(0 if all(not r["problems"] and r.get("resumes_completed", 0) == r.get("trials", 0)
                      for r in results) else 1)


if __name__ == "__main__":
    main()
