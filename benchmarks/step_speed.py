"""One training step (forward, backward, clipping, AdamW) of reasonlab's transformer against the models users would
otherwise pick, at the studies' shapes, with the machine's fp32 matmul peak as the yardstick.

    .venv-bench/bin/python benchmarks/step_speed.py [--shape anchor|modular|all|SHAPE] [--repeats 5] [--steps 3]
                                                    [--clock wall|cpu] [--models a,b] [--compile] [--bf16]
                                                    [--fused-adamw] [--all-positions] [--malloc-env]
                                                    [--keep-freed]
                                                    [--json out.json]
    .venv/bin/python benchmarks/step_speed.py --from-run RUN_DIR [--steps 5] [--repeats 3] [--threads 1]
    .venv/bin/python benchmarks/step_speed.py --denormal-gemm --threads 1

(`.venv-bench`: `python3 -m venv .venv-bench && .venv-bench/bin/pip install -e ".[bench]"`.) Two families of shapes:

  anchor   (cpu, paper)   9-token sequences, loss on the last token; reasonlab as the anchor study builds it
                          (post-LN, learned positions, 1 head, untied head with a bias);
  modular  (mod-*)        in-context modular arithmetic: 3·shots − 1 tokens ``x y z x y z ...``, loss on the z
                          tokens only (every third target, the others ignored); reasonlab as the modular profiles
                          build it (pre-LN with a final LayerNorm, RoPE, 4 heads, bias-free, tied head);
                          ``mod-cell`` is read from the shipped profile modular-cell.yaml (route R1: p 29, 32
                          shots = 95 tokens, width 128, depth 2, batch 256, no clipping), and its row of data-side
                          work times the profile's own batch source (a balanced batch drawn per step).

Models, each with the same initialization (reasonlab's γ rule, γ 0.5), the same batch and the same loss:

  reasonlab          the study's model (post-LN, bias-free blocks, 1 head, d_k = d_v = d_model/2), its final
                     block computing queries, attention output, MLP and head for the last position only;
  hf-gpt2            transformers' GPT2LMHeadModel (pre-LN, biases, learned positions, heads of d_model/n_heads:
                     at the anchor shapes n_heads = d_model/d_k, so its Q/K/V are d_model wide, twice ours;
                     ``logits_to_keep=1``; at the modular shapes the same 4 heads and a tied head as ours);
  transformer-lens   HookedTransformer (pre-LN, d_head = d_k, our head count: the same Q/K/V widths as ours;
                     rotary positions at the modular shapes), logits of every position;
  torch-mha          (anchor shapes) a plain post-LN model on ``nn.MultiheadAttention`` (1 head of d_model,
                     the style of the studies' published code), logits of every position, the last one taken.

``--from-run RUN_DIR`` times reasonlab's real training step late in a real run instead: the run's newest
checkpoint (weights and AdamW state) and its own data, ``--steps`` consecutive batches of its next epoch, with
flush-to-zero on (the trainer's setting) and off, and counts the denormal values (nonzero, below 1.2e-38 in
magnitude) in the weights, gradients, AdamW moments and each module's activations and their gradients at that
point. A small-init plateau makes some of them denormal, and a CPU GEMM on denormal inputs is ~100× slower.

Every model's FLOPs are its own, counted by ``torch.utils.flop_counter`` over one forward and backward pass;
utilization = those FLOPs per second / the measured matmul peak. Models are timed round-robin, ``--repeats`` times
``--steps`` steps each after two warm-up steps; the table gives the median seconds per step and (min, max).

``--clock cpu`` times the process's CPU seconds (user + system, every thread: ``time.process_time``) instead of
wall seconds, for a machine other work keeps busy, where wall time measures the sharing. At more than one thread
it counts core-seconds, spin-waiting threads included, so a step of 2 threads that runs in t wall seconds on an
idle machine shows up to 2t. The matmul peak is timed with the same clock.

Variants of reasonlab's step, each an extra row timed in the same round-robin: ``--compile`` (torch.compile),
``--bf16`` (autocast), ``--fused-adamw`` (``AdamW(fused=True)``), ``--all-positions`` (the final block over every
position, as before the scored-positions block). ``--malloc-env`` adds two rows timed in a new process per repeat,
one plain and one with glibc's allocator told to keep freed memory (``MALLOC_MMAP_MAX_=0``,
``MALLOC_TRIM_THRESHOLD_=16 GiB``: read at process start, so only a new process can have them), so that large
activations are reused instead of mapped and zeroed by the kernel at every step. ``--keep-freed`` times every model
of the invocation inside ``reasonlab.allocator.keep_freed_memory``, the same allocator settings made at run time,
as reasonlab's trainer makes them for every run: like for like, each model as it would train under them.

Over 400 lines: one benchmark, side by side: the same step for reasonlab, HF GPT-2 and TransformerLens at every
studied shape, and the late-step denormal measurement that explains its slowest steps; split, the shared setup would
be copied.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils.flop_counter import FlopCounterMode

from reasonlab.allocator import keep_freed_memory
from reasonlab.build import build_task
from reasonlab.config import ModelConfig, RunConfig, load_profile, resolve
from reasonlab.init import apply_init_rate
from reasonlab.models.transformer import Transformer
from reasonlab.tasks.base import IGNORE
from reasonlab.train.step import training_loss

Loss = Callable[[nn.Module, Tensor, Tensor], Tensor]  # (model, inputs, targets) -> the step's loss
Clock = Callable[[], float]
CLOCKS: dict[str, Clock] = {"wall": time.perf_counter, "cpu": time.process_time}
MALLOC_ENV = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(16 * 2**30)}  # glibc, read at process start

GAMMA = 0.5
ANCHOR = {"family": "anchor", "vocab": 201, "seq": 9, "n_heads": 1}
MODULAR = {"family": "modular", "n_heads": 4}
SHAPES = {  # the anchor study's profiles (anchor-cpu.yaml, anchor-paper.yaml) and the modular search's range
    "cpu": {**ANCHOR, "d_model": 128, "depth": 2, "d_k": 64, "d_ff": 384, "batch": 256},
    "paper": {**ANCHOR, "d_model": 400, "depth": 2, "d_k": 200, "d_ff": 1200, "batch": 2048},
    # modular-cpu.yaml: p 11, 12 shots (35 tokens), width 64, batch 64
    "mod-s": {**MODULAR, "vocab": 11, "seq": 35, "d_model": 64, "depth": 2, "d_k": 16, "d_ff": 256, "batch": 64},
    # 24 shots (71 tokens), width 128, batch 128
    "mod-m": {**MODULAR, "vocab": 11, "seq": 71, "d_model": 128, "depth": 2, "d_k": 32, "d_ff": 512, "batch": 128},
    # p 13, 32 shots (95 tokens), width 128, depth 4, batch 256 (the spec's CPU suggestion)
    "mod-l": {**MODULAR, "vocab": 13, "seq": 95, "d_model": 128, "depth": 4, "d_k": 32, "d_ff": 512,
              "batch": 256},
}


def profile_shape(study: str, profile: str) -> dict:
    """A modular profile's shape, read from the shipped profile so the benchmark cannot drift from it."""
    cfg = resolve(load_profile(study, profile))
    m, t = cfg.model, cfg.train
    return {**MODULAR, "profile": (study, profile), "vocab": cfg.task.vocab_size or cfg.task.p,
            "seq": 3 * cfg.task.n_shots - 1, "d_model": m.d_model, "depth": m.depth, "n_heads": m.n_heads,
            "d_k": m.d_k, "d_ff": m.d_ff, "batch": t.batch_size, "clip": t.grad_clip}


SHAPES["mod-cell"] = profile_shape("modular", "cell")  # route R1 (issue 36)
GROUPS = {"anchor": ["cpu", "paper"], "modular": ["mod-s", "mod-m", "mod-l", "mod-cell"]}
GROUPS["all"] = GROUPS["anchor"] + GROUPS["modular"]


def gemm_seconds(a: Tensor, b: Tensor, repeats: int, warm_up: bool = True, clock: Clock = time.perf_counter
                 ) -> float:
    """Median seconds of ``a @ b`` over at least 3 repeats (after one untimed product if ``warm_up``)."""
    if warm_up:
        a @ b
    times = []
    for _ in range(max(repeats, 3)):
        start = clock()
        a @ b
        times.append(clock() - start)
    return statistics.median(times)


def matmul_peak(repeats: int, clock: Clock) -> float:
    """Best median fp32 GEMM rate (FLOP/s) over square sizes: the limit a training step is compared with."""
    return max(2 * n**3 / gemm_seconds(torch.randn(n, n), torch.randn(n, n), repeats, clock=clock)
               for n in (1024, 2048, 3072))


# ---- the models ------------------------------------------------------------------------------------------------
def loss_of(logits: Tensor, y: Tensor) -> Tensor:
    return F.cross_entropy(logits.flatten(0, -2), y.flatten(), ignore_index=IGNORE)


def reasonlab_model(s: dict) -> tuple[nn.Module, Loss]:
    """The study's model with the trainer's own loss (which skips positions the batch has no target at)."""
    shape = {k: s[k] for k in ("d_model", "depth", "n_heads", "d_k", "d_ff")}
    if s["family"] == "anchor":
        return Transformer(ModelConfig(**shape, d_v=s["d_k"]), s["vocab"]), training_loss
    cfg = ModelConfig(**shape, d_v=s["d_k"], norm="pre", final_norm=True, positions="rope", max_positions=s["seq"],
                      block_bias=False, head_bias=False, tied_head=True)
    return Transformer(cfg, s["vocab"]), training_loss


def reasonlab_all_positions(s: dict) -> tuple[nn.Module, Loss]:
    """reasonlab with its final block over every position: what the scored-positions block saves."""
    return reasonlab_model(s)[0], lambda m, x, y: loss_of(m(x, "all"), y)


def hf_gpt2(s: dict):
    from transformers import GPT2Config, GPT2LMHeadModel

    anchor = s["family"] == "anchor"
    cfg = GPT2Config(vocab_size=s["vocab"], n_positions=s["seq"], n_embd=s["d_model"], n_layer=s["depth"],
                     n_head=s["d_model"] // s["d_k"], n_inner=s["d_ff"], activation_function="relu",
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=not anchor,
                     use_cache=False)
    if anchor:
        return GPT2LMHeadModel(cfg), lambda m, x, y: loss_of(m(input_ids=x, logits_to_keep=1).logits[:, -1], y)
    return GPT2LMHeadModel(cfg), lambda m, x, y: loss_of(m(input_ids=x).logits, y)


def transformer_lens(s: dict):
    from transformer_lens import HookedTransformer, HookedTransformerConfig

    rotary = {} if s["family"] == "anchor" else {"positional_embedding_type": "rotary", "rotary_dim": s["d_k"]}
    cfg = HookedTransformerConfig(n_layers=s["depth"], d_model=s["d_model"], n_ctx=s["seq"], d_head=s["d_k"],
                                  n_heads=s["n_heads"], d_mlp=s["d_ff"], d_vocab=s["vocab"], act_fn="relu",
                                  normalization_type="LN", device="cpu", **rotary)
    if s["family"] == "anchor":
        return HookedTransformer(cfg), lambda m, x, y: loss_of(m(x, return_type="logits")[:, -1], y)
    return HookedTransformer(cfg), lambda m, x, y: loss_of(m(x, return_type="logits"), y)


class MHABlock(nn.Module):
    def __init__(self, d: int, d_ff: int):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, 1, bias=False, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(d, d_ff, bias=False), nn.ReLU(), nn.Linear(d_ff, d, bias=False))
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)

    def forward(self, x: Tensor, mask: Tensor) -> Tensor:
        x = self.ln1(x + self.attn(x, x, x, attn_mask=mask, need_weights=False)[0])
        return self.ln2(x + self.ff(x))


class MHAModel(nn.Module):
    def __init__(self, s: dict):
        super().__init__()
        self.embed, self.pos = nn.Embedding(s["vocab"], s["d_model"]), nn.Embedding(s["seq"], s["d_model"])
        self.blocks = nn.ModuleList(MHABlock(s["d_model"], s["d_ff"]) for _ in range(s["depth"]))
        self.head = nn.Linear(s["d_model"], s["vocab"])
        self.register_buffer("mask", torch.ones(s["seq"], s["seq"], dtype=torch.bool).triu(1), persistent=False)

    def forward(self, x: Tensor) -> Tensor:
        h = self.embed(x) + self.pos.weight
        for block in self.blocks:
            h = block(h, self.mask)
        return self.head(h)[:, -1]


def torch_mha(s: dict):
    return MHAModel(s), lambda m, x, y: loss_of(m(x), y)


MODELS = {"reasonlab": reasonlab_model, "hf-gpt2": hf_gpt2, "transformer-lens": transformer_lens,
          "torch-mha": torch_mha}
FAMILY_MODELS = {"anchor": list(MODELS), "modular": ["reasonlab", "hf-gpt2", "transformer-lens"]}


def batch(s: dict) -> tuple[Tensor, Tensor]:
    """Random tokens and targets of the shape's task: the last token's class, or every z token's (3k + 2, the
    target index 3k + 1 of the shifted sequence) with the x and y positions ignored."""
    gen = torch.Generator().manual_seed(1)
    x = torch.randint(s["vocab"], (s["batch"], s["seq"]), generator=gen)
    if s["family"] == "anchor":
        return x, torch.randint(s["vocab"], (s["batch"],), generator=gen)
    y = torch.randint(s["vocab"], (s["batch"], s["seq"]), generator=gen)
    y[:, torch.arange(s["seq"]) % 3 != 1] = IGNORE
    return x, y


# ---- measurement -----------------------------------------------------------------------------------------------
class Case:
    """One model with its optimizer and a step function that does what the trainer does."""

    def __init__(self, name: str, build, shape: dict, compile_model: bool = False, bf16: bool = False,
                 fused: bool = False):
        torch.manual_seed(0)
        self.name, self.bf16, self.clip = name, bf16, shape.get("clip", 1.0)
        self.model, self.loss = build(shape)
        apply_init_rate(self.model, GAMMA, generator=torch.Generator().manual_seed(0))
        if compile_model:
            self.model = torch.compile(self.model)
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.opt = torch.optim.AdamW(self.params, lr=1e-4, weight_decay=0.01, fused=fused or None)
        self.x, self.y = batch(shape)
        self.n_params = sum(p.numel() for p in self.params)
        self.flops = self._count_flops()

    def _count_flops(self) -> int:
        counter = FlopCounterMode(display=False)
        with counter:
            self._loss().backward()
        self.opt.zero_grad(set_to_none=True)
        return counter.get_total_flops()

    def _loss(self) -> Tensor:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.bf16):
            return self.loss(self.model, self.x, self.y)

    def step(self) -> None:
        loss = self._loss()
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        if self.clip is not None:  # the profile's own setting (the modular cell trains without clipping)
            nn.utils.clip_grad_norm_(self.params, self.clip)
        self.opt.step()

    def time_steps(self, steps: int, clock: Clock = time.perf_counter) -> float:
        start = clock()
        for _ in range(steps):
            self.step()
        return (clock() - start) / steps


def new_process_step(args: argparse.Namespace, shape_name: str, env: dict[str, str]) -> float:
    """Seconds per step of reasonlab alone in a new process (two warm-up steps, then ``--steps`` timed) with
    ``env`` added to its environment: how settings read at process start are compared."""
    cmd = [sys.executable, __file__, "--one-case", "--shape", shape_name, "--steps", str(args.steps),
           "--threads", str(args.threads), "--clock", args.clock]
    out = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def one_case(shape_name: str, steps: int, clock: Clock) -> float:
    case = Case("reasonlab", reasonlab_model, SHAPES[shape_name])
    case.time_steps(2)
    return case.time_steps(steps, clock)


def data_seconds(shape: dict, n: int, clock: Clock) -> list[float]:
    """Seconds the profile's own batch source takes to draw each of ``n`` training batches (none without a
    profile): the data-side work of a step."""
    if "profile" not in shape:
        return []
    cfg: RunConfig = resolve(load_profile(*shape["profile"]))
    batch_fn = build_task(cfg).batch_fn
    times = []
    for step in range(n):
        start = clock()
        batch_fn(step, cfg.train.batch_size)
        times.append(clock() - start)
    return times


def measure(shape_name: str, args: argparse.Namespace, peak: float) -> list[dict]:
    shape, clock = SHAPES[shape_name], CLOCKS[args.clock]
    cases = []
    for name in FAMILY_MODELS[shape["family"]]:
        if args.models and name != "reasonlab" and name not in args.models:
            continue
        try:
            cases.append(Case(name, MODELS[name], shape))
        except ImportError as e:
            print(f"  {name}: skipped ({e}); install the bench extra")
    variants = {"reasonlab+compile": ({"compile_model": True}, args.compile),
                "reasonlab+bf16": ({"bf16": True}, args.bf16),
                "reasonlab+fused-adamw": ({"fused": True}, args.fused_adamw)}
    cases += [Case(name, reasonlab_model, shape, **kw) for name, (kw, wanted) in variants.items() if wanted]
    if args.all_positions and shape["family"] == "modular":
        cases.append(Case("reasonlab, all positions", reasonlab_all_positions, shape))
    fresh = {"reasonlab, new process": {}, "reasonlab+malloc-env, new process": MALLOC_ENV} if args.malloc_env else {}
    for case in cases:  # warm-up: allocator, kernels, compilation
        case.time_steps(2)
    times: dict[str, list[float]] = {c.name: [] for c in cases} | {name: [] for name in fresh}
    for _ in range(args.repeats):
        for case in cases:
            times[case.name].append(case.time_steps(args.steps, clock))
        for name, env in fresh.items():
            times[name].append(new_process_step(args, shape_name, env))
    sizes = {c.name: (c.n_params, c.flops) for c in cases} | dict.fromkeys(fresh, (cases[0].n_params, cases[0].flops))
    data = data_seconds(shape, args.repeats * args.steps, clock)
    if data:
        times["data: the profile's batch source"], sizes["data: the profile's batch source"] = data, (0, 0)
    base = statistics.median(times["reasonlab"])
    rows = []
    for name, ts in times.items():
        med = statistics.median(ts)
        n_params, n_flops = sizes[name]
        rows.append({"shape": shape_name, "model": name, "params": n_params, "gflop_per_step": n_flops / 1e9,
                     "s_per_step": med, "min": min(ts), "max": max(ts), "utilization": n_flops / med / peak,
                     "time_vs_reasonlab": med / base})
    return rows


def denormal_count(t: Tensor) -> int:
    t = t.detach()
    return int(((t != 0) & (t.abs() < torch.finfo(t.dtype).tiny)).sum()) if t.is_floating_point() else 0


def denormals_late(trainer, x: Tensor, y: Tensor) -> dict[str, int]:
    """Denormal counts (flush-to-zero off) in one real step's tensors, by kind and by module."""
    counts: dict[str, int] = {}

    def add(name: str, n: int) -> None:
        if n:
            counts[name] = counts.get(name, 0) + n

    def hook(module: nn.Module, _inputs: tuple, output: Tensor | tuple) -> None:
        name = module_names[module]
        for out in output if isinstance(output, tuple) else (output,):
            if isinstance(out, Tensor) and out.requires_grad:
                add(f"activation {name}", denormal_count(out))
                out.register_hook(lambda g, name=name: add(f"activation grad {name}", denormal_count(g)))

    module_names = {m: n or "model" for n, m in trainer.model.named_modules()}
    handles = [m.register_forward_hook(hook) for m in trainer.model.modules()]
    loss = trainer._loss(x, y)
    trainer.opt.zero_grad(set_to_none=True)
    loss.backward()
    for h in handles:
        h.remove()
    for p in trainer.model.parameters():
        add("weights", denormal_count(p))
        add("gradients", denormal_count(p.grad) if p.grad is not None else 0)
        for key, value in trainer.opt.state.get(p, {}).items():
            add(f"adamw {key}", denormal_count(value) if isinstance(value, Tensor) else 0)
    return counts


def measure_late(run_dir: str, steps: int, repeats: int) -> dict:
    """Real steps from the newest checkpoint of ``run_dir`` (flush-to-zero on and off) and denormal counts."""
    import shutil
    import tempfile
    from pathlib import Path

    from reasonlab.checkpoint import complete_steps
    from reasonlab.config import load_yaml, resolve
    from reasonlab.schedule import lr_at
    from reasonlab.seeds import subseed
    from reasonlab.train.loop import Trainer
    from reasonlab.train.step import epoch_order

    path = Path(run_dir)
    cfg = resolve(load_yaml(path / "config.yaml"))
    copy = Path(tempfile.mkdtemp(prefix="late-step-"))  # the run may still be training: never write into it
    (copy / "checkpoints").mkdir()
    for name in ("config.yaml", "metrics.parquet"):
        shutil.copy(path / name, copy / name)
    newest = max(s for s in complete_steps(path / "checkpoints")
                 if (path / "checkpoints" / f"step-{s}.optim.pt").is_file())
    for f in (path / "checkpoints").glob(f"step-{newest}.*"):
        shutil.copy(f, copy / "checkpoints" / f.name)
    trainer = Trainer(cfg, copy, progress=False, log=lambda _: None)
    trainer.begin()
    shutil.rmtree(copy)
    t = cfg.train
    perm = epoch_order(trainer.n_train, subseed(cfg.seed, f"shuffle:{trainer.epoch}"), t.batch_size)
    batches = [(trainer.x[perm[b * t.batch_size:(b + 1) * t.batch_size]],
                trainer.y[perm[b * t.batch_size:(b + 1) * t.batch_size]]) for b in range(steps)]
    for group in trainer.opt.param_groups:
        group["lr"] = lr_at(trainer.step, t, trainer.steps_per_epoch)
    weights = {k: v.clone() for k, v in trainer.model.state_dict().items()}
    opt_state = trainer.opt.state_dict()
    torch.set_flush_denormal(False)
    counts = denormals_late(trainer, *batches[0])
    times: dict[str, list[float]] = {"flush-to-zero on": [], "flush-to-zero off": []}
    for _ in range(repeats):
        for mode in times:
            torch.set_flush_denormal(mode.endswith("on"))
            trainer.model.load_state_dict(weights)  # every repeat takes the same steps from the checkpoint
            trainer.opt.load_state_dict(opt_state)
            start = time.perf_counter()
            for x, y in batches:
                trainer.train_step(x, y)
            times[mode].append((time.perf_counter() - start) / steps)
    torch.set_flush_denormal(True)
    return {"run": str(path), "epoch": trainer.epoch, "step": trainer.step, "denormals": counts,
            "s_per_step": {m: {"median": statistics.median(v), "min": min(v), "max": max(v)}
                           for m, v in times.items()}}


def print_late(result: dict, threads: int) -> None:
    print(f"# late in a real run: {result['run']} at epoch {result['epoch']}, step {result['step']}, "
          f"{threads} threads")
    print("| flush-to-zero | s/step, median (min, max) |\n|---|---|")
    for mode, v in result["s_per_step"].items():
        print(f"| {mode.removeprefix('flush-to-zero ')} | {v['median']:.3f} ({v['min']:.3f}, {v['max']:.3f}) |")
    print("| tensors (flush-to-zero off) | denormal values |\n|---|---|")
    for name, n in sorted(result["denormals"].items(), key=lambda kv: -kv[1]) or [("none", 0)]:
        print(f"| {name} | {n:,} |")


def bf16_gemm(repeats: int, clock: Clock) -> dict[str, tuple[float, float]]:
    """Median seconds of one GEMM in fp32 and in bf16 at a few step shapes (rows = batch × tokens): what bf16
    could gain on this CPU before casts and the fp32 parts of a step are counted."""
    out = {}
    for m, k, n in ((2048 * 9, 400, 1200), (64 * 71, 64, 256), (256 * 95, 128, 512)):
        a, b = torch.randn(m, k), torch.randn(k, n)
        out[f"{m}×{k} by {k}×{n}"] = (gemm_seconds(a, b, repeats, clock=clock),
                                      gemm_seconds(a.bfloat16(), b.bfloat16(), repeats, clock=clock))
    return out


def denormal_gemm(repeats: int) -> dict[str, float]:
    """Median seconds of one float32 GEMM at the paper step's largest shape (2048×400 by 400×1200) on normal
    inputs, on denormal inputs, and on denormal inputs with flush-to-zero: why the trainer turns it on."""
    a, b = torch.randn(2048, 400), torch.randn(400, 1200)
    tiny = a * 1e-39  # every entry denormal (below 1.2e-38)
    out = {}
    for name, x, flush in (("normal", a, False), ("denormal", tiny, False), ("denormal, flush-to-zero", tiny, True)):
        torch.set_flush_denormal(flush)
        out[name] = gemm_seconds(x, b, repeats, warm_up=False)
    torch.set_flush_denormal(False)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", choices=[*GROUPS, *SHAPES], default="anchor")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--clock", choices=list(CLOCKS), default="wall",
                    help="cpu: the process's CPU seconds (every thread), for a machine other work keeps busy")
    ap.add_argument("--models", type=lambda v: v.split(","),
                    help="comma-separated models to compare with reasonlab (default: every model of the shape)")
    ap.add_argument("--compile", action="store_true", help="also time reasonlab under torch.compile")
    ap.add_argument("--bf16", action="store_true",
                    help="also time reasonlab under bf16 autocast, after fp32 and bf16 GEMMs alone")
    ap.add_argument("--fused-adamw", action="store_true", help="also time reasonlab with AdamW(fused=True)")
    ap.add_argument("--all-positions", action="store_true",
                    help="also time reasonlab with its final block over every position (modular shapes)")
    ap.add_argument("--malloc-env", action="store_true",
                    help="also time reasonlab in new processes, plain and with glibc's allocator keeping memory")
    ap.add_argument("--keep-freed", action="store_true",
                    help="time every model with glibc kept from returning freed memory, as reasonlab trains")
    ap.add_argument("--one-case", action="store_true", help=argparse.SUPPRESS)  # what --malloc-env's processes run
    ap.add_argument("--json", help="write the rows here as well")
    ap.add_argument("--from-run", help="time real steps late in this run (its newest checkpoint) instead")
    ap.add_argument("--denormal-gemm", action="store_true", help="time one GEMM on normal and denormal inputs")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.one_case:
        print(one_case(args.shape, args.steps, CLOCKS[args.clock]))
        return
    if args.denormal_gemm:
        for name, seconds in denormal_gemm(args.repeats).items():
            print(f"| {name} | {seconds:.4f} s |")
        return
    if args.from_run:
        result = measure_late(args.from_run, args.steps, args.repeats)
        print_late(result, args.threads)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"threads": args.threads, "torch": torch.__version__, **result}, f, indent=1)
        return
    peak = matmul_peak(args.repeats, CLOCKS[args.clock])
    print(f"# {platform.processor() or platform.machine()}, {args.threads} threads, torch {torch.__version__}, "
          f"{args.clock} clock; fp32 matmul peak {peak / 1e9:.1f} GFLOP/s")
    if args.bf16:
        print("| GEMM | fp32 s | bf16 s | fp32 ÷ bf16 |\n|---|---|---|---|")
        for name, (f32, b16) in bf16_gemm(args.repeats, CLOCKS[args.clock]).items():
            print(f"| {name} | {f32:.4f} | {b16:.4f} | {f32 / b16:.2f}× |")
    rows = []
    with keep_freed_memory() if args.keep_freed else contextlib.nullcontext():
        for shape in GROUPS.get(args.shape, [args.shape]):
            rows += measure(shape, args, peak)
    print("| shape | model | params | GFLOP/step | s/step, median (min, max) | utilization | time ÷ reasonlab |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        size = (f"{r['params'] / 1e6:.2f}M | {r['gflop_per_step']:.1f}" if r["params"] else "— | —")
        print(f"| {r['shape']} | {r['model']} | {size} | {r['s_per_step']:.3f} ({r['min']:.3f}, {r['max']:.3f}) | "
              f"{r['utilization']:.0%} | {r['time_vs_reasonlab']:.2f}× |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"peak_flops": peak, "threads": args.threads, "clock": args.clock, "torch": torch.__version__,
                       "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
