"""Load the in-context modular arithmetic reference code (``ablghtianyi/ICL_Modular_Arithmetic``, MIT) from a
checkout the user gives, and build its pieces on the CPU in fp32: shared by the fixture script and the side-by-side
driver in this folder. Nothing of the reference is copied here; its modules are imported from ``--reference``.

The reference needs ``rotary_embedding_torch``, ``schedulefree``, ``pandas`` and ``tqdm`` (pip), none of which the
package depends on. Its training script reads its data through ``DistributedSampler``, so a one-process ``gloo``
group is started on a local file (no network) before its data loaders are built.
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType, SimpleNamespace

import torch
import torch.distributed as dist

PINNED_COMMIT = "d520c0cb8dfa0cbde5d8c80eb7448330ded4b7f7"
REPOSITORY = "https://github.com/ablghtianyi/ICL_Modular_Arithmetic"


def load(reference: Path) -> SimpleNamespace:
    """The reference's modules (``_src.*`` and ``pre_training/icl_grokking.py``) imported from the checkout at
    ``reference``, after checking that it is the pinned commit."""
    reference = reference.resolve()
    if not (reference / "_src" / "models.py").is_file():
        sys.exit(f"--reference {reference}: not a checkout of {REPOSITORY} (no _src/models.py); clone it and pass "
                 "its folder")
    head = subprocess.run(["git", "-C", str(reference), "rev-parse", "HEAD"], capture_output=True, text=True)
    if head.returncode == 0 and head.stdout.strip() != PINNED_COMMIT:
        sys.exit(f"--reference {reference}: at commit {head.stdout.strip()[:12]}, the fixtures pin "
                 f"{PINNED_COMMIT[:12]}; run `git -C {reference} checkout {PINNED_COMMIT}`")
    for path in (reference, reference / "pre_training"):
        if str(path) not in sys.path:
            sys.path.insert(0, str(path))
    names = {"models": "_src.models", "datasets": "_src.datasets", "tasks": "_src.task_utils",
             "scheduler": "_src.scheduler", "train": "_src.train_utils", "script": "icl_grokking"}
    modules: dict[str, ModuleType] = {k: importlib.import_module(v) for k, v in names.items()}
    return SimpleNamespace(**modules)


def fixture_command(doc: str) -> tuple[argparse.Namespace, SimpleNamespace]:
    """A fixture script's command line (``--reference`` checkout, ``--out`` folder) and the reference it loads, one
    thread: what every script that writes fixtures from the reference starts with."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--reference", type=Path, required=True, help="a checkout of ICL_Modular_Arithmetic")
    parser.add_argument("--out", type=Path, default=Path("tests/reference/fixtures/modular"))
    opts = parser.parse_args()
    torch.set_num_threads(1)
    return opts, load(opts.reference)


def arguments(ref: SimpleNamespace, **changes: object) -> argparse.Namespace:
    """The reference script's own argument defaults (its parser), on the CPU in fp32, with ``changes``."""
    args = ref.script.parser.parse_args([])
    args.device, args.mixed_precision, args.num_workers, args.tqdm_bar = "cpu", False, 0, False
    for key, value in changes.items():
        if not hasattr(args, key):
            raise KeyError(f"the reference's parser has no argument {key!r}")
        setattr(args, key, value)
    args.dtype, args.ngpu_per_node = torch.float32, 1
    return args


def start_process_group() -> None:
    """A one-process gloo group on a local file, which the reference's ``DistributedSampler`` needs."""
    if not dist.is_initialized():
        store = Path(tempfile.mkdtemp(prefix="reference-pg-")) / "store"
        dist.init_process_group("gloo", init_method=f"file://{store}", rank=0, world_size=1)
