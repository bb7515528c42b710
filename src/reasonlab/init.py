"""The initialization-rate rule: every weight drawn from N(0, std²) with std = d_in^-γ.

Large γ means small initialization. The rule, in one place:

| parameter                                   | d_in                         | std                     |
|---------------------------------------------|------------------------------|-------------------------|
| ``nn.Linear`` weight (out × in)              | in_features                  | in_features^-γ          |
| attention output W_O (d_model × heads·d_v)  | n_heads·d_v (its in_features)| (n_heads·d_v)^-γ        |
| ``nn.Embedding`` (token and learned position)| embedding_dim (= d_model)    | d_model^-γ              |
| HF ``Conv1D`` weight (in × out)             | weight.shape[0]              | shape[0]^-γ             |
| ``nn.MultiheadAttention`` in_proj_weight     | embed_dim                    | embed_dim^-γ            |
| fused Q/K/V (GPT-2 ``c_attn``, ``in_proj``)  | as above, per third          | q, k: ``qk``'s γ; v: ``vo``'s |
| ``nn.Conv*d`` weight                         | in_channels/groups · kernel  | fan_in^-γ               |
| other ≥2-D parameter                        | prod(shape[1:]) (PyTorch fan-in) | fan_in^-γ           |
| any bias                                    | —                            | PyTorch default U(±1/√fan_in), redrawn |
| LayerNorm / RMSNorm                          | —                            | weight 1, bias 0        |

Every parameter belongs to one group — ``embedding``, ``qk``, ``vo``, ``mlp``, ``head`` or ``other`` — and
``overrides`` may give a group (``attention`` covers qk and vo) or a parameter-name glob its own γ; a glob wins
over a group. Our transformer names its groups explicitly; other modules are grouped by module type and name.
"""

from __future__ import annotations

import fnmatch
import math
import numbers
from dataclasses import dataclass

import torch
from torch import nn

from reasonlab.arguments import shown
from reasonlab.errors import ConfigError

GROUPS = ("embedding", "qk", "vo", "mlp", "head", "other")
_NORM_TYPES = (nn.LayerNorm, nn.GroupNorm, nn.BatchNorm1d, nn.BatchNorm2d) + (
    (nn.RMSNorm,) if hasattr(nn, "RMSNorm") else ()
)


@dataclass(frozen=True)
class InitRecord:
    """What the rule did to one parameter: the plan, so tests and docs can read it back."""

    name: str
    group: str
    d_in: int | None
    gamma: float | None
    std: float | None
    rule: str


def _group_of(module_name: str, module: nn.Module) -> str:
    explicit = getattr(module, "init_group", None)
    if explicit is not None:
        return explicit
    if isinstance(module, nn.Embedding):
        return "embedding"
    low = module_name.lower()
    leaf = low.rsplit(".", 1)[-1]
    if leaf in ("head", "lm_head", "classifier", "unembed", "output", "fc_out") or leaf.endswith("_head"):
        return "head"
    if any(t in low for t in ("attn", "attention")):
        if any(t in leaf for t in ("q_proj", "k_proj", "query", "key", "c_attn", "in_proj", "qkv")) or leaf in (
            "q",
            "k",
        ):
            return "qk"
        return "vo"
    if any(t in low for t in ("mlp", "ffn", "feed_forward", "fc", "intermediate")):
        return "mlp"
    return "other"


# Fused Q/K/V matrices, split along their output axis so that ``qk`` and ``vo`` overrides reach each part: HF
# GPT-2's ``c_attn`` (a Conv1D, weight in × 3·out) and ``nn.MultiheadAttention``'s ``in_proj_weight`` (3·E × E).
# Any module can declare its own: ``module.fused_parts = {"weight": (axis, ("q", "k", "v"))}``.
_PART_GROUP = {"q": "qk", "k": "qk", "v": "vo"}


def _fused_parts(mname: str, module: nn.Module, pname: str, p: torch.Tensor) -> tuple[int, tuple[str, ...]] | None:
    declared = getattr(module, "fused_parts", None)
    if isinstance(declared, dict) and pname in declared:
        return declared[pname]
    if type(module).__name__ == "Conv1D" and mname.rsplit(".", 1)[-1] == "c_attn" and pname == "weight":
        return 1, ("q", "k", "v")
    if isinstance(module, nn.MultiheadAttention) and pname == "in_proj_weight":
        return 0, ("q", "k", "v")
    return None


def _is_group(key: str) -> bool:
    """An override key names a group (or ``attention``); anything else is a parameter-name glob."""
    return key in GROUPS or key == "attention"


def _gamma_for(name: str, group: str, gamma: float, overrides: dict[str, float]) -> float:
    for pattern, g in overrides.items():
        if not _is_group(pattern) and fnmatch.fnmatchcase(name, pattern):
            return g
    if group in overrides:
        return overrides[group]
    if group in ("qk", "vo") and "attention" in overrides:
        return overrides["attention"]
    return gamma


def _weight_fan_in(module: nn.Module, pname: str, p: torch.Tensor) -> tuple[int, str]:
    if isinstance(module, nn.Embedding):
        return module.embedding_dim, "embedding: d_model"
    if isinstance(module, nn.Linear):
        return module.in_features, "linear: in_features"
    if type(module).__name__ == "Conv1D" and p.dim() == 2:
        return p.shape[0], "HF Conv1D: weight.shape[0]"
    if isinstance(module, nn.MultiheadAttention) and pname == "in_proj_weight":
        return module.embed_dim, "multihead in_proj: embed_dim"
    return math.prod(p.shape[1:]), "fan-in: prod(shape[1:])"


def _number(value: object, what: str, positive: bool = False) -> None:
    """A finite real number (not a bool, not text), positive if asked: the rule's γ and stds."""
    try:
        bad = isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) or \
            value < 0 or (positive and value == 0)
    except OverflowError:  # an integer past any float
        bad = True
    if bad:
        raise ConfigError(f"{what}: expected a finite {'positive' if positive else 'non-negative'} number, got "
                          f"{shown(value)}")


def _check_arguments(module: object, gamma: object, overrides: object, generator: object, fixed_std: object,
                     std_scale: object) -> None:
    """Refuse arguments that would fail deep inside (a string γ) or draw NaN weights silently (γ = nan)."""
    if not isinstance(module, nn.Module):
        raise ConfigError(f"module: expected a torch.nn.Module, got {type(module).__name__}")
    _number(gamma, "gamma")
    for name, mapping, positive in (("overrides", overrides, False), ("std_scale", std_scale, True)):
        if mapping is None:
            continue
        if not isinstance(mapping, dict) or not all(isinstance(k, str) for k in mapping):
            raise ConfigError(f"{name}: expected a dict of group names or globs to numbers, got "
                              f"{type(mapping).__name__}")
        for key, value in mapping.items():
            _number(value, f"{name}[{key!r}]", positive)
    if fixed_std is not None:
        _number(fixed_std, "fixed_std", positive=True)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise ConfigError(f"generator: expected a torch.Generator or None, got {type(generator).__name__}")


@torch.no_grad()
def apply_init_rate(
    module: nn.Module,
    gamma: float,
    overrides: dict[str, float] | None = None,
    generator: torch.Generator | None = None,
    bias: str = "default",
    fixed_std: float | None = None,
    std_scale: dict[str, float] | None = None,
) -> list[InitRecord]:
    """Redraw every parameter of ``module`` by the γ rule and return what was done, parameter by parameter.

    Works on any ``torch.nn.Module``. Parameters are visited in ``named_parameters`` order, so a seeded
    generator (or the global seed) gives the same weights every time. Biases keep PyTorch's default law
    (``bias="default"``, the anchor study's code) or start at zero (``bias="zero"``, the reasoning-bias study).
    ``fixed_std`` replaces the rule by one std for every weight (GPT-2's 0.02, the modular study's reference
    init), and ``std_scale`` multiplies it for the weights whose names match a glob (GPT-2's 1/√(2L) on the
    MLP output).
    """
    _check_arguments(module, gamma, overrides, generator, fixed_std, std_scale)
    if bias not in ("default", "zero"):
        raise ConfigError(f"init.bias: {bias!r} is unknown; use default or zero")
    overrides = dict(overrides or {})
    unknown = [k for k in overrides if not _is_group(k) and not any(c in k for c in "*?[.")]
    if unknown:
        raise ConfigError(f"init.overrides: unknown group {unknown[0]!r}; use one of {', '.join(GROUPS)}, "
                         "attention, or a parameter-name glob such as 'blocks.0.*'")
    owners = {}
    for mname, mod in module.named_modules():
        for pname, _ in mod.named_parameters(recurse=False):
            owners[f"{mname}.{pname}" if mname else pname] = (mname, mod, pname)
    globs = {k for k in overrides if not _is_group(k)}
    used: set[str] = set()
    records = []
    for full, p in module.named_parameters():
        mname, mod, pname = owners[full]
        group = _group_of(mname, mod)
        if isinstance(mod, _NORM_TYPES):
            (p.fill_(1.0) if pname == "weight" else p.zero_())
            records.append(InitRecord(full, group, None, None, None, "norm: weight 1, bias 0"))
            continue
        if p.dim() < 2 and bias == "zero":
            p.zero_()
            records.append(InitRecord(full, group, None, None, None, "bias: 0"))
            continue
        if p.dim() < 2:
            fan_in = _bias_fan_in(mod, p)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
            p.uniform_(-bound, bound, generator=generator)
            records.append(InitRecord(full, group, fan_in, None, None, "bias: PyTorch default U(±1/√fan_in)"))
            continue
        used.update(k for k in globs if fnmatch.fnmatchcase(full, k))
        d_in, rule = _weight_fan_in(mod, pname, p)
        fused = _fused_parts(mname, mod, pname, p)
        parts = [(full, group, p)] if fused is None else [
            (f"{full}[{part}]", _PART_GROUP.get(part, group), chunk)
            for part, chunk in zip(fused[1], p.chunk(len(fused[1]), dim=fused[0]), strict=True)]
        for name, part_group, chunk in parts:  # a view: drawing into it draws into p
            g = _gamma_for(full, part_group, gamma, overrides)
            std, part_rule = float(d_in) ** (-g), rule + (" (fused part)" if fused else "")
            if fixed_std is not None:
                factor = next((f for k, f in (std_scale or {}).items() if fnmatch.fnmatchcase(full, k)), 1.0)
                std, g, part_rule = fixed_std * factor, None, f"fixed std {fixed_std} × {factor:.4g}"
            chunk.normal_(0.0, std, generator=generator)
            records.append(InitRecord(name, part_group, d_in, g, std, part_rule))
    if globs - used:
        raise ValueError(f"init.overrides: pattern {sorted(globs - used)[0]!r} matches no weight; check the "
                         "parameter names (e.g. 'blocks.0.*')")
    return records


def _bias_fan_in(module: nn.Module, p: torch.Tensor) -> int:
    weight = getattr(module, "weight", None)
    if isinstance(module, nn.Linear):
        return module.in_features
    if type(module).__name__ == "Conv1D" and weight is not None:
        return weight.shape[0]
    if isinstance(module, nn.MultiheadAttention):
        return module.embed_dim
    if isinstance(weight, torch.Tensor) and weight.dim() >= 2:
        return math.prod(weight.shape[1:])
    return p.numel()
