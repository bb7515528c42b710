"""The γ rule: std = d_in^-γ for every weight, by group and glob overrides (spec §3)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from reasonlab.config import ModelConfig
from reasonlab.init import GROUPS, InitRecord, apply_init_rate
from reasonlab.models.transformer import Transformer

BIG = ModelConfig(d_model=256, d_k=128, d_v=128, d_ff=768, depth=2, n_heads=2)
VOCAB = 201
TOL = 0.04  # relative; the smallest weight has 201*256 ≈ 51k draws, so the std's sampling error is < 0.5 %


def big_model(gamma: float = 0.5, overrides=None, seed: int = 0, cfg: ModelConfig = BIG):
    torch.manual_seed(1234)  # PyTorch's own default init, overwritten below
    model = Transformer(cfg, VOCAB)
    records = apply_init_rate(model, gamma, overrides, generator=torch.Generator().manual_seed(seed))
    return model, records


@pytest.fixture(scope="module")
def model_and_records():
    return big_model(gamma=0.5)


def expected_d_in(name: str, cfg: ModelConfig) -> int:
    if name.endswith("W_O.weight"):
        return cfg.n_heads * cfg.d_v
    if name.endswith("W_out.weight"):
        return cfg.d_ff
    return cfg.d_model  # embeddings, positional table, W_Q/W_K/W_V, W_in, head


def rel_err(actual: float, expected: float) -> float:
    return abs(actual - expected) / expected


@pytest.mark.parametrize("gamma", [0.3, 0.5, 0.8])
def test_weight_std_follows_rule(gamma):
    model, records = big_model(gamma)
    weights = {n: p for n, p in model.named_parameters() if p.dim() >= 2}
    assert {
        "embed.weight",
        "pos_embed.weight",
        "head.weight",
        "blocks.0.attn.W_Q.weight",
        "blocks.1.attn.W_O.weight",
        "blocks.1.mlp.W_out.weight",
    } <= set(weights)
    for name, p in weights.items():
        d_in = expected_d_in(name, BIG)
        expected = d_in ** (-gamma)
        assert rel_err(p.std().item(), expected) < TOL, (name, p.std().item(), expected)
        assert abs(p.mean().item()) < 0.05 * expected, name
    by_name = {r.name: r for r in records}
    for name in weights:
        assert by_name[name].d_in == expected_d_in(name, BIG)
        assert by_name[name].gamma == gamma
        assert by_name[name].std == pytest.approx(expected_d_in(name, BIG) ** (-gamma))


def test_w_o_uses_heads_times_d_v():
    cfg = ModelConfig(d_model=64, d_k=16, d_v=48, d_ff=64, n_heads=4, depth=1)
    _, records = big_model(0.5, cfg=cfg)
    rec = {r.name: r for r in records}
    assert rec["blocks.0.attn.W_O.weight"].d_in == 4 * 48
    assert rec["blocks.0.attn.W_V.weight"].d_in == 64
    assert rec["embed.weight"].d_in == 64 and rec["pos_embed.weight"].d_in == 64  # d_model, not vocab/positions


def test_norms_and_biases(model_and_records):
    model, records = model_and_records
    for name, p in model.named_parameters():
        if ".ln" in name:
            target = torch.ones_like(p) if name.endswith("weight") else torch.zeros_like(p)
            assert torch.equal(p, target), name
    bias = model.head.bias
    bound = 1 / math.sqrt(BIG.d_model)
    assert bias.abs().max().item() <= bound
    assert bias.abs().max().item() > 0.5 * bound  # redrawn uniform, not zero
    rec = {r.name: r for r in records}
    assert rec["head.bias"].gamma is None and rec["head.bias"].d_in == BIG.d_model
    assert rec["blocks.0.ln1.weight"].rule.startswith("norm")


def test_records_cover_every_parameter(model_and_records):
    model, records = model_and_records
    assert [r.name for r in records] == [n for n, _ in model.named_parameters()]
    assert all(isinstance(r, InitRecord) and r.group in GROUPS for r in records)
    groups = {r.name: r.group for r in records}
    assert groups["embed.weight"] == groups["pos_embed.weight"] == "embedding"
    assert groups["blocks.0.attn.W_Q.weight"] == groups["blocks.0.attn.W_K.weight"] == "qk"
    assert groups["blocks.0.attn.W_V.weight"] == groups["blocks.0.attn.W_O.weight"] == "vo"
    assert groups["blocks.0.mlp.W_in.weight"] == groups["blocks.0.mlp.W_out.weight"] == "mlp"
    assert groups["head.weight"] == groups["head.bias"] == "head"


@pytest.mark.parametrize(
    ("overrides", "changed"),
    [
        ({"embedding": 1.0}, {"embed.weight", "pos_embed.weight"}),
        (
            {"qk": 1.0},
            {
                "blocks.0.attn.W_Q.weight",
                "blocks.0.attn.W_K.weight",
                "blocks.1.attn.W_Q.weight",
                "blocks.1.attn.W_K.weight",
            },
        ),
        (
            {"vo": 1.0},
            {
                "blocks.0.attn.W_V.weight",
                "blocks.0.attn.W_O.weight",
                "blocks.1.attn.W_V.weight",
                "blocks.1.attn.W_O.weight",
            },
        ),
        ({"attention": 1.0}, {f"blocks.{i}.attn.W_{m}.weight" for i in (0, 1) for m in "QKVO"}),
        ({"mlp": 1.0}, {f"blocks.{i}.mlp.W_{m}.weight" for i in (0, 1) for m in ("in", "out")}),
        ({"head": 1.0}, {"head.weight"}),
        (
            {"blocks.0.*": 1.0},
            {f"blocks.0.attn.W_{m}.weight" for m in "QKVO"} | {"blocks.0.mlp.W_in.weight", "blocks.0.mlp.W_out.weight"},
        ),
        # a glob wins over a group
        ({"mlp": 1.0, "blocks.1.mlp.*": 0.5}, {"blocks.0.mlp.W_in.weight", "blocks.0.mlp.W_out.weight"}),
    ],
)
def test_overrides_change_exactly_their_params(overrides, changed):
    base_cfg = ModelConfig(d_model=128, d_k=64, d_v=64, d_ff=256, depth=2)
    model, records = big_model(0.5, overrides, cfg=base_cfg)
    rec = {r.name: r for r in records}
    for name, p in model.named_parameters():
        if p.dim() < 2:
            assert rec[name].gamma is None
            continue
        want = 1.0 if name in changed else 0.5
        assert rec[name].gamma == want, name
        assert rel_err(p.std().item(), expected_d_in(name, base_cfg) ** (-want)) < 0.06, name


def test_plain_sequential():
    net = nn.Sequential(nn.Linear(300, 200), nn.ReLU(), nn.Linear(200, 100), nn.LayerNorm(100))
    records = apply_init_rate(net, 0.6, generator=torch.Generator().manual_seed(0))
    assert [r.name for r in records] == [n for n, _ in net.named_parameters()]
    assert rel_err(net[0].weight.std().item(), 300**-0.6) < TOL
    assert rel_err(net[2].weight.std().item(), 200**-0.6) < TOL
    assert net[0].bias.abs().max().item() <= 1 / math.sqrt(300)
    assert net[2].bias.abs().max().item() <= 1 / math.sqrt(200)
    assert torch.equal(net[3].weight, torch.ones(100)) and torch.equal(net[3].bias, torch.zeros(100))


def test_multihead_attention():
    mha = nn.MultiheadAttention(embed_dim=192, num_heads=4)
    records = apply_init_rate(mha, 0.7, generator=torch.Generator().manual_seed(0))
    rec = {r.name: r for r in records}
    assert [rec[f"in_proj_weight[{p}]"].d_in for p in "qkv"] == [192] * 3
    assert rel_err(mha.in_proj_weight.std().item(), 192**-0.7) < TOL
    assert rel_err(mha.out_proj.weight.std().item(), 192**-0.7) < 0.06
    assert mha.in_proj_bias.abs().max().item() <= 1 / math.sqrt(192)
    assert set(rec) == {n for n, _ in mha.named_parameters() if n != "in_proj_weight"} | {
        f"in_proj_weight[{p}]" for p in "qkv"}


@pytest.mark.slow
def test_fused_qkv_of_gpt2_is_split_so_overrides_reach_v():
    """GPT-2's c_attn holds Q, K and V in one Conv1D (in × 3·out): a ``vo`` override must reach its V third."""
    transformers = pytest.importorskip("transformers")
    model = transformers.GPT2Model(transformers.GPT2Config(n_embd=192, n_layer=2, n_head=4, vocab_size=50,
                                                           n_positions=16))
    records = apply_init_rate(model, 0.5, {"qk": 0.3, "vo": 0.9}, generator=torch.Generator().manual_seed(0))
    rec = {r.name: r for r in records}
    w = model.h[0].attn.c_attn.weight  # (192, 576): columns q | k | v
    q, k, v = w.chunk(3, dim=1)
    assert rel_err(q.std().item(), 192**-0.3) < TOL and rel_err(k.std().item(), 192**-0.3) < TOL
    assert rel_err(v.std().item(), 192**-0.9) < TOL
    assert [rec[f"h.0.attn.c_attn.weight[{p}]"].group for p in "qkv"] == ["qk", "qk", "vo"]
    assert rel_err(model.h[0].attn.c_proj.weight.std().item(), 192**-0.9) < TOL  # the output projection: vo
    assert rel_err(model.h[0].mlp.c_fc.weight.std().item(), 192**-0.5) < TOL


def test_a_module_can_declare_its_fused_parts():
    lin = nn.Linear(256, 3 * 256, bias=False)
    lin.fused_parts = {"weight": (0, ("q", "k", "v"))}
    apply_init_rate(lin, 0.5, {"vo": 1.0}, generator=torch.Generator().manual_seed(0))
    q, _, v = lin.weight.chunk(3, dim=0)
    assert rel_err(q.std().item(), 256**-0.5) < TOL and rel_err(v.std().item(), 256**-1.0) < TOL


def test_unknown_override_group_raises():
    with pytest.raises(ValueError, match="unknown group 'mpl'"):
        apply_init_rate(nn.Linear(4, 4), 0.5, {"mpl": 0.3})


def test_same_generator_seed_same_weights():
    a, _ = big_model(0.5, seed=7, cfg=ModelConfig(d_model=32, d_k=16, d_v=16, d_ff=64))
    b, _ = big_model(0.5, seed=7, cfg=ModelConfig(d_model=32, d_k=16, d_v=16, d_ff=64))
    c, _ = big_model(0.5, seed=8, cfg=ModelConfig(d_model=32, d_k=16, d_v=16, d_ff=64))
    sa, sb, sc = a.state_dict(), b.state_dict(), c.state_dict()
    assert all(torch.equal(sa[k], sb[k]) for k in sa)
    assert not torch.equal(sa["embed.weight"], sc["embed.weight"])


def test_overwrites_pytorch_default():
    torch.manual_seed(0)
    lin = nn.Linear(400, 400)
    default_std = lin.weight.std().item()  # kaiming-uniform: 1/sqrt(3*400) ≈ 0.029
    apply_init_rate(lin, 0.3, generator=torch.Generator().manual_seed(0))
    assert rel_err(lin.weight.std().item(), 400**-0.3) < TOL
    assert rel_err(default_std, 400**-0.3) > 0.5


def test_large_gamma_first_layer_attention_is_uniform():
    cfg = ModelConfig(d_model=64, d_k=32, d_v=32, d_ff=128, depth=2)
    model = Transformer(cfg, VOCAB)
    apply_init_rate(model, 2.0, generator=torch.Generator().manual_seed(0))
    tokens = torch.randint(20, 100, (4, 9), generator=torch.Generator().manual_seed(1))
    _, cache = model.run_with_cache(tokens)
    pattern = cache["blocks.0.attn.hook_pattern"]  # (batch, heads, query, key)
    assert pattern.shape == (4, 1, 9, 9)
    T = 9
    expected = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1).float()[:, None]
    assert torch.allclose(pattern, expected.expand_as(pattern), atol=1e-3)


def test_small_gamma_first_layer_attention_is_not_uniform():
    """The diagnostic can fail: at large init the pattern is far from uniform."""
    cfg = ModelConfig(d_model=64, d_k=32, d_v=32, d_ff=128, depth=2)
    model = Transformer(cfg, VOCAB)
    apply_init_rate(model, 0.1, generator=torch.Generator().manual_seed(0))
    tokens = torch.randint(20, 100, (4, 9), generator=torch.Generator().manual_seed(1))
    pattern = model.run_with_cache(tokens)[1]["blocks.0.attn.hook_pattern"]
    T = 9
    expected = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1).float()[:, None]
    assert (pattern - expected).abs().max() > 0.05


def test_zero_bias_option():
    from torch import nn

    from reasonlab.init import apply_init_rate

    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    records = apply_init_rate(model, 0.5, bias="zero")
    assert all(float(layer.bias.detach().abs().max()) == 0.0 for layer in (model[0], model[2]))
    assert {r.rule for r in records if r.name.endswith("bias")} == {"bias: 0"}
    with pytest.raises(ValueError, match="init.bias"):
        apply_init_rate(model, 0.5, bias="ones")


def test_gpt_scheme_fixed_std_and_scaled_mlp_output():
    """The modular study's reference init: every weight N(0, 0.02²), the MLP output projection further divided by
    √(2·depth), norms 1/0, biases 0; the tied unembedding is the embedding (std 0.02)."""
    from conftest import tiny_run

    from reasonlab.train.loop import build_model, build_task

    cfg = tiny_run(model={"d_model": 256, "d_k": 64, "d_v": 64, "d_ff": 1024, "depth": 4, "norm": "pre",
                          "tied_head": True, "head_bias": False}, init={"scheme": "gpt", "bias": "zero"})
    model = build_model(cfg, build_task(cfg))
    for name, p in model.named_parameters():
        if "ln" in name:
            assert torch.all(p == (1.0 if name.endswith("weight") else 0.0)), name
        elif name.endswith("mlp.W_out.weight"):
            assert p.std().item() == pytest.approx(0.02 / math.sqrt(8), rel=0.03), name
        elif p.dim() >= 2:
            assert p.std().item() == pytest.approx(0.02, rel=0.03), name
    assert model.head.weight is model.embed.weight
    assert cfg.run_id() != tiny_run(model=dict(cfg.model.model_dump(exclude={"kind"}))).run_id()


def test_gpt_scheme_std_scales_every_weight_and_is_hashed_only_when_set():
    """init.std replaces GPT-2's 0.02 (a narrower model scales it up); the MLP output keeps its 1/√(2·depth)."""
    from conftest import tiny_run

    from reasonlab.config import ConfigError
    from reasonlab.train.loop import build_model, build_task

    shape = {"d_model": 256, "d_k": 64, "d_v": 64, "d_ff": 1024, "depth": 2, "norm": "pre", "tied_head": True,
             "head_bias": False}
    cfg = tiny_run(model=shape, init={"scheme": "gpt", "bias": "zero", "std": 0.04})
    model = build_model(cfg, build_task(cfg))
    for name, p in model.named_parameters():
        if p.dim() >= 2:
            want = 0.04 / 2 if name.endswith("mlp.W_out.weight") else 0.04
            assert p.std().item() == pytest.approx(want, rel=0.03), name
    default = tiny_run(model=shape, init={"scheme": "gpt", "bias": "zero"})
    assert tiny_run(model=shape, init={"scheme": "gpt", "bias": "zero", "std": 0.02}).run_id() == default.run_id()
    assert cfg.run_id() != default.run_id()
    with pytest.raises(ConfigError, match="^init.std: init.std is the gpt scheme's"):
        tiny_run(init={"std": 0.04})


def test_gpt_scheme_is_refused_for_the_emb_mlp():
    from conftest import tiny_run_dict

    from reasonlab.config import ConfigError, resolve
    from reasonlab.train.loop import build_model, build_task

    data = tiny_run_dict(init={"scheme": "gpt"})
    data["task"] = {"kind": "mixture", "n_samples": 400, "emb_mlp_form": True}
    data["model"] = {"kind": "emb_mlp", "d_model": 8, "d_ff": 8}
    cfg = resolve(data)
    with pytest.raises(ConfigError, match="init.scheme"):
        build_model(cfg, build_task(cfg))
