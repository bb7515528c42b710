"""The built-in model kinds, registered on import (``register_model``): the decoder transformer and the
reasoning-bias study's Emb-MLP. A model kind of one's own registers the same way, from its own package."""

from torch import nn

from reasonlab.config import EmbMLPConfig, ModelConfig
from reasonlab.errors import ConfigError
from reasonlab.models.emb_mlp import EmbMLP
from reasonlab.models.transformer import Transformer
from reasonlab.registry import ModelKind, register_model


def _transformer(cfg: ModelConfig, vocab_size: int, seq_len: int) -> nn.Module:
    if seq_len > cfg.max_positions:
        raise ConfigError(f"model.max_positions: {cfg.max_positions} < sequence length {seq_len}; raise it")
    return Transformer(cfg, vocab_size)


def _emb_mlp(cfg: EmbMLPConfig, vocab_size: int, seq_len: int) -> nn.Module:
    return EmbMLP(cfg, vocab_size)


register_model(ModelKind("transformer", ModelConfig, _transformer))
register_model(ModelKind("emb_mlp", EmbMLPConfig, _emb_mlp))
