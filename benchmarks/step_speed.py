"""One training step (forward, backward, clipping, AdamW) of reasonlab's transformer against the models users would
otherwise pick, at the anchor study's shapes, with the machine's fp32 matmul peak as the yardstick.

    .venv-bench/bin/python benchmarks/step_speed.py [--shape anchor|modular|all|SHAPE] [--repeats 5] [--steps 3]
                                                    [--compile] [--bf16] [--json out.json]
    .venv/bin/python benchmarks/step_speed.py --from-run RUN_DIR [--steps 5] [--repeats 3] [--threads 1]
    .venv/bin/python benchmarks/step_speed.py --denormal-gemm --threads 1

(`.venv-bench`: `python3 -m venv .venv-bench && .venv-bench/bin/pip install -e ".[bench]"`.) Two families of shapes:

  anchor   (cpu, paper)   9-token sequences, loss on the last token; reasonlab as the anchor study builds it
                          (post-LN, learned positions, 1 head, untied head with a bias);
  modular  (mod-*)        in-context modular arithmetic: 3·shots − 1 tokens ``x y z x y z ...``, loss on the z
                          tokens only (every third target, the others ignored); reasonlab as the modular profiles
                          build it (pre-LN with a final LayerNorm, RoPE, 4 heads, bias-free, tied head).

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
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils.flop_counter import FlopCounterMode

from reasonlab.config import ModelConfig
from reasonlab.init import apply_init_rate
from reasonlab.models.transformer import Transformer
from reasonlab.tasks.base import IGNORE
from reasonlab.train.step import training_loss

Loss = Callable[[nn.Module, Tensor, Tensor], Tensor]  # (model, inputs, targets) -> the step's loss

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
GROUPS = {"anchor": ["cpu", "paper"], "modular": ["mod-s", "mod-m", "mod-l"]}
GROUPS["all"] = GROUPS["anchor"] + GROUPS["modular"]


def gemm_seconds(a: Tensor, b: Tensor, repeats: int, warm_up: bool = True) -> float:
    """Median seconds of ``a @ b`` over at least 3 repeats (after one untimed product if ``warm_up``)."""
    if warm_up:
        a @ b
    times = []
    for _ in range(max(repeats, 3)):
        start = time.perf_counter()
        a @ b
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def matmul_peak(repeats: int) -> float:
    """Best median fp32 GEMM rate (FLOP/s) over square sizes: the limit a training step is compared with."""
    return max(2 * n**3 / gemm_seconds(torch.randn(n, n), torch.randn(n, n), repeats) for n in (1024, 2048, 3072))


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

    def __init__(self, name: str, build, shape: dict, compile_model: bool = False, bf16: bool = False):
        torch.manual_seed(0)
        self.name, self.bf16 = name, bf16
        self.model, self.loss = build(shape)
        apply_init_rate(self.model, GAMMA, generator=torch.Generator().manual_seed(0))
        if compile_model:
            self.model = torch.compile(self.model)
        self.params = [p for p in self.model.parameters() if p.requires_grad]
        self.opt = torch.optim.AdamW(self.params, lr=1e-4, weight_decay=0.01)
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
        nn.utils.clip_grad_norm_(self.params, 1.0)
        self.opt.step()

    def time_steps(self, steps: int) -> float:
        start = time.perf_counter()
        for _ in range(steps):
            self.step()
        return (time.perf_counter() - start) / steps


def measure(shape_name: str, repeats: int, steps: int, compile_model: bool, bf16: bool, peak: float) -> list[dict]:
    shape = SHAPES[shape_name]
    cases = []
    for name in FAMILY_MODELS[shape["family"]]:
        try:
            cases.append(Case(name, MODELS[name], shape))
        except ImportError as e:
            print(f"  {name}: skipped ({e}); install the bench extra")
    if compile_model:
        cases.append(Case("reasonlab+compile", reasonlab_model, shape, compile_model=True))
    if bf16:
        cases.append(Case("reasonlab+bf16", reasonlab_model, shape, bf16=True))
    for case in cases:  # warm-up: allocator, kernels, compilation
        case.time_steps(2)
    times: dict[str, list[float]] = {c.name: [] for c in cases}
    for _ in range(repeats):
        for case in cases:
            times[case.name].append(case.time_steps(steps))
    base = statistics.median(times["reasonlab"])
    rows = []
    for case in cases:
        med = statistics.median(times[case.name])
        rows.append({"shape": shape_name, "model": case.name, "params": case.n_params, "gflop_per_step":
                     case.flops / 1e9, "s_per_step": med, "min": min(times[case.name]), "max": max(times[case.name]),
                     "utilization": case.flops / med / peak, "time_vs_reasonlab": med / base})
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
    from reasonlab.tasks.anchor import subseed
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


def bf16_gemm(repeats: int) -> dict[str, tuple[float, float]]:
    """Median seconds of one GEMM in fp32 and in bf16 at a few step shapes (rows = batch × tokens): what bf16
    could gain on this CPU before casts and the fp32 parts of a step are counted."""
    out = {}
    for m, k, n in ((2048 * 9, 400, 1200), (64 * 71, 64, 256), (256 * 95, 128, 512)):
        a, b = torch.randn(m, k), torch.randn(k, n)
        out[f"{m}×{k} by {k}×{n}"] = (gemm_seconds(a, b, repeats), gemm_seconds(a.bfloat16(), b.bfloat16(), repeats))
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
    ap.add_argument("--compile", action="store_true", help="also time reasonlab under torch.compile")
    ap.add_argument("--bf16", action="store_true",
                    help="also time reasonlab under bf16 autocast, after fp32 and bf16 GEMMs alone")
    ap.add_argument("--json", help="write the rows here as well")
    ap.add_argument("--from-run", help="time real steps late in this run (its newest checkpoint) instead")
    ap.add_argument("--denormal-gemm", action="store_true", help="time one GEMM on normal and denormal inputs")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
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
    peak = matmul_peak(args.repeats)
    print(f"# {platform.processor() or platform.machine()}, {args.threads} threads, torch {torch.__version__}; "
          f"fp32 matmul peak {peak / 1e9:.1f} GFLOP/s")
    if args.bf16:
        print("| GEMM | fp32 s | bf16 s | fp32 ÷ bf16 |\n|---|---|---|---|")
        for name, (f32, b16) in bf16_gemm(args.repeats).items():
            print(f"| {name} | {f32:.4f} | {b16:.4f} | {f32 / b16:.2f}× |")
    rows = []
    for shape in GROUPS.get(args.shape, [args.shape]):
        rows += measure(shape, args.repeats, args.steps, args.compile, args.bf16, peak)
    print("| shape | model | params | GFLOP/step | s/step, median (min, max) | utilization | time ÷ reasonlab |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['shape']} | {r['model']} | {r['params'] / 1e6:.2f}M | {r['gflop_per_step']:.1f} | "
              f"{r['s_per_step']:.3f} ({r['min']:.3f}, {r['max']:.3f}) | {r['utilization']:.0%} | "
              f"{r['time_vs_reasonlab']:.2f}× |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"peak_flops": peak, "threads": args.threads, "torch": torch.__version__, "rows": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
