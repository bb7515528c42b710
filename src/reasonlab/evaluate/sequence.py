"""Scoring sequence-to-sequence sets (any set marked ``seq2seq``): exact match, token accuracy, per-category
accuracy, and where a set carries answers (PrOntoQA) the true/false judgement read from the greedy decoding.

Exact match of the greedy decoding needs no decoding: a causal model's greedy output equals the target exactly
when, fed the target (teacher forcing), its argmax is right at every target position; by induction each decoded
prefix is then the target's prefix. So one forward pass scores a set, and ``greedy_decode`` runs only where the
output itself is needed (the judgement of rows that are not exact).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from reasonlab.evaluate.set_score import SetScore
from reasonlab.tasks.base import IGNORE, EvalSet, trim_padding

DECODE_SLACK = 16  # the judgement is read from at most this many tokens more than the longest target of a batch


@torch.no_grad()
def greedy_decode(model: nn.Module, inputs: Tensor, prompt_len: Tensor, max_new: int, eos: int, pad: int = 0
                  ) -> Tensor:
    """(B, max_new) tokens generated after each row's first ``prompt_len`` tokens of ``inputs`` (the rest of
    the row is ignored), ``pad`` after a row's ``eos``. Rows of different prompt lengths decode in one batch:
    each reads its logits at its own position of a right-padded buffer (causal, so padding is never read)."""
    if hasattr(model, "generate"):  # a key/value cache: one position per step
        return model.generate(inputs, prompt_len, max_new, eos, pad)
    B = len(inputs)
    limit = getattr(getattr(model, "cfg", None), "max_positions", None)
    if limit is not None:
        max_new = min(max_new, limit - int(prompt_len.max()) + 1)
    width = int(prompt_len.max()) + max_new
    buf = torch.full((B, width), pad, dtype=inputs.dtype, device=inputs.device)
    w = min(width, inputs.shape[1])
    cols = torch.arange(w, device=inputs.device)
    buf[:, :w] = torch.where(cols[None, :] < prompt_len[:, None], inputs[:, :w], pad)
    out = torch.full((B, max(max_new, 0)), pad, dtype=inputs.dtype, device=inputs.device)
    done = torch.zeros(B, dtype=torch.bool, device=inputs.device)
    rows = torch.arange(B, device=inputs.device)
    for s in range(max_new):
        pos = prompt_len - 1 + s
        logits = model(buf[:, : int(pos.max()) + 1], "all")
        nxt = torch.where(done, pad, logits[rows, pos].argmax(-1))
        out[:, s] = nxt
        buf[rows, pos + 1] = nxt
        done |= nxt == eos
        if bool(done.all()):
            break
    return out


def judgement_correct(decoded: Tensor, prefix: list[int], answer: Tensor) -> Tensor:
    """Per row: the token after the last occurrence of ``prefix`` ("… answer is") equals ``answer``."""
    k = len(prefix)
    hits = torch.zeros(len(decoded), dtype=torch.bool)
    pre = torch.tensor(prefix)
    for i, row in enumerate(decoded.cpu()):
        for j in range(len(row) - k - 1, -1, -1):
            if torch.equal(row[j : j + k], pre):
                hits[i] = bool(row[j + k] == answer[i])
                break
    return hits


@torch.no_grad()
def score_sequences(model: nn.Module, es: EvalSet, n: int, device: torch.device, batch: int = 256) -> SetScore:
    """Exact match (kind ``exact``), token accuracy (``token``), exact match per category (``cat:…``, ``prim:…``
    …) and the judgement when the set has answers; the loss is the mean cross-entropy per target token."""
    model.eval()
    x, y = es.inputs[:n], es.targets["designated"][:n]
    exact = torch.zeros(n, dtype=torch.bool)
    hits = tokens = 0
    loss = 0.0
    for i in range(0, n, batch):
        xb, yb = (v.to(device) for v in trim_padding(x[i : i + batch], y[i : i + batch]))
        logits = model(xb, "all")
        keep = yb != IGNORE
        loss += float(F.cross_entropy(logits[keep], yb[keep], reduction="sum"))
        right = logits.argmax(-1) == yb
        hits += int((right & keep).sum())
        tokens += int(keep.sum())
        exact[i : i + len(xb)] = (right | ~keep).all(1).cpu()
    correct = {"exact": int(exact.sum()), "token": hits}
    counts = {"token": tokens}
    for name, rows in es.info["categories"].items():
        rows = rows[rows < n]
        if len(rows):
            correct[name], counts[name] = int(exact[rows].sum()), len(rows)
    if "answer" in es.info:
        judged = exact.clone()
        wrong = (~exact).nonzero().flatten()
        for i in range(0, len(wrong), batch):
            idx = wrong[i : i + batch]
            longest = int((y[idx] != IGNORE).sum(1).max())
            decoded = greedy_decode(model, x[idx].to(device), es.info["prompt_len"][idx].to(device),
                                    longest + DECODE_SLACK, es.info["eos"])
            judged[idx] = judgement_correct(decoded, es.info["answer_prefix"], es.info["answer"][idx])
        correct["judgement"] = int(judged.sum())
    model.train()
    return SetScore(n, correct, None, loss / max(tokens, 1), counts=counts)
