"""Token log-probs and NLL of right-padded (ids, mask) batches: what the trainer, the PTX and
critic losses and the warm-start all score with.

A mask is 1 on the tokens a loss counts (the model's own replies), 0 on prompts, tool
observations and padding.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

from k2rl.lm.precision import attention_for, autocast


def collate(seqs: list[tuple[list[int], list[int]]], pad_id: int,
            device: torch.device | str = "cpu") -> dict[str, torch.Tensor]:
    """Right-pad (ids, mask) pairs into tensors of shape (B, T) on `device`."""
    T = max(len(ids) for ids, _ in seqs)
    input_ids = torch.full((len(seqs), T), pad_id, dtype=torch.long)
    loss_mask = torch.zeros((len(seqs), T), dtype=torch.float32)
    attention = torch.zeros((len(seqs), T), dtype=torch.long)
    for i, (ids, mask) in enumerate(seqs):
        input_ids[i, : len(ids)] = torch.tensor(ids)
        loss_mask[i, : len(ids)] = torch.tensor(mask, dtype=torch.float32)
        attention[i, : len(ids)] = 1
    batch = {"input_ids": input_ids, "loss_mask": loss_mask, "attention_mask": attention}
    return {name: t.to(device) for name, t in batch.items()}


# Above this many logits in a batch (B·T·V), log-probs are computed chunk by chunk over the
# tokens (a 151,936-token vocabulary makes 0.6 GB of fp32 logits per 1,000 tokens).
CHUNK_LOGITS = 2 ** 26
# Logits in one chunk of the output head: 2^24 (64 MB in fp32) is 110 tokens of a 151,936-word
# vocabulary. The backward pass of a chunk holds its logits in the matmul's dtype, an fp32 copy
# and the fp32 softmax and gradient at once, about 4x that; chunks of whole rows (the earlier
# layout, 256 positions x every row: 16 rows of a 0.5B step were one 97 M-logit chunk) held
# 1.5 GB at once there.
CHUNK_HEAD = 2 ** 24


def token_logp(model, input_ids: torch.Tensor, attention_mask: torch.Tensor,
               max_logits: int = CHUNK_LOGITS, only: torch.Tensor | None = None) -> torch.Tensor:
    """Log-prob of each token given its prefix, shape (B, T); position 0 and padding get 0.
    With `only` (B, T), just the tokens where it is nonzero get theirs (the others 0), and the
    output head runs on those alone: a critic's verdict is a few tokens of a long prompt.

    A batch with more than `max_logits` logits never holds them all: the decoder's hidden
    states of the real (unpadded) tokens, flattened over the batch, go through the output head
    `chunk_tokens` tokens at a time, each chunk recomputed in the backward pass (activation
    checkpointing), so peak memory is one chunk of fp32 logits, and padding costs no head
    matmul. The values and gradients are those of the one-shot path.

    The model's matmuls run in the dtype `k2rl.lm.precision.enable` set (bf16 autocast by
    default where the hardware has it); the log-softmax is always fp32.
    """
    B, T = input_ids.shape
    head = model.get_output_embeddings()
    real = attention_mask[:, 1:] > 0  # (B, T-1): positions whose token is not padding
    if only is not None:
        real = real & (only[:, 1:] > 0)
    elif B * T * head.weight.shape[0] <= max_logits:
        with autocast(model), attention_for(model, T):
            logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1]
        logp = torch.log_softmax(logits.float(), dim=-1)  # (B, T-1, V)
        picked = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)  # (B, T-1)
        return F.pad(picked * real, (1, 0))
    with autocast(model), attention_for(model, T):
        hidden = model.get_decoder()(input_ids=input_ids,
                                     attention_mask=attention_mask).last_hidden_state  # (B, T, H)
    hidden, targets = hidden[:, :-1][real], input_ids[:, 1:][real]  # (N, H), (N,) real tokens
    step = chunk_tokens(head.weight.shape[0])
    parts = [checkpoint(_picked_logp, model, hidden[s:s + step], targets[s:s + step],
                        use_reentrant=False) for s in range(0, len(targets), step)]
    picked = hidden.new_zeros((B, T - 1), dtype=torch.float32)
    picked = picked.masked_scatter(real, torch.cat(parts)) if parts else picked
    return F.pad(picked, (1, 0))


def chunk_tokens(vocab: int) -> int:
    """Tokens per chunk of the output head: CHUNK_HEAD logits, at least 1.

    >>> chunk_tokens(151_936), chunk_tokens(100)
    (110, 167772)
    """
    return max(1, CHUNK_HEAD // vocab)


def _picked_logp(model, hidden: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """log p(target) for each token of a chunk: (N, H), (N,) -> (N,), as logit(target) minus
    the fp32 log-sum-exp, so no (N, V) log-softmax is kept beside the logits."""
    with autocast(model):
        logits = model.get_output_embeddings()(hidden).float()  # (N, V)
    return logits.gather(-1, targets[:, None]).squeeze(-1) - torch.logsumexp(logits, dim=-1)


def micro_batches(lengths: torch.Tensor, max_tokens: int | None = None, max_rows: int = 64
                  ) -> list[torch.Tensor]:
    """Row indices (on the CPU) sorted by length, cut into runs of at most `max_rows` rows
    whose padded size (rows x the run's longest row) is at most `max_tokens` (a longer row
    goes alone).

    >>> [r.tolist() for r in micro_batches(torch.tensor([5, 1, 4, 2]), max_tokens=8)]
    [[1, 3], [2], [0]]
    """
    lengths = lengths.cpu()
    order = torch.argsort(lengths, stable=True)
    runs, run = [], []
    for i in order.tolist():
        longest = int(lengths[i])  # sorted: the newcomer is the run's longest
        if run and (len(run) == max_rows
                    or (max_tokens is not None and (len(run) + 1) * longest > max_tokens)):
            runs.append(run)
            run = []
        run.append(i)
    return [torch.tensor(r, dtype=torch.long) for r in runs + [run] if r]


def cut(batch: dict[str, torch.Tensor], rows: torch.Tensor) -> dict[str, torch.Tensor]:
    """Rows `rows` of a right-padded batch, (B, T) tensors cut to their own longest row (at
    least 2 tokens); per-row values (B,) such as rewards come along."""
    L = max(2, int(batch["attention_mask"][rows].sum(-1).max()))
    return {name: t[rows, :L] if t.dim() > 1 else t[rows] for name, t in batch.items()}


def token_logp_sorted(model, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                      chunk: int = 64, max_tokens: int | None = None) -> torch.Tensor:
    """`token_logp` computed in micro-batches of similar length (`micro_batches`), each cut to
    its own longest row.

    The same values (and gradients) as one padded forward, for right-padded rows, without
    running a batch of mixed tasks at the length of its longest episode.
    """
    T = input_ids.shape[1]
    parts, index = [], []
    for rows in micro_batches(attention_mask.sum(-1), max_tokens, chunk):
        part = cut({"input_ids": input_ids, "attention_mask": attention_mask}, rows)
        parts.append(F.pad(token_logp(model, part["input_ids"], part["attention_mask"]),
                           (0, T - part["input_ids"].shape[1])))
        index.append(rows)
    if not parts:  # no rows
        return torch.zeros(input_ids.shape, dtype=torch.float32, device=input_ids.device)
    order = torch.cat(index)
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(len(order), device=order.device)
    return torch.cat(parts)[inverse]


def token_nll(model, batch: dict[str, torch.Tensor], total: float | None = None) -> torch.Tensor:
    """Mean negative log-likelihood over the masked (assistant) tokens; with `total`, their
    summed NLL over `total` (a micro-batch's share of a larger batch's mean)."""
    logp = token_logp(model, batch["input_ids"], batch["attention_mask"])
    mask = batch["loss_mask"]
    return -(logp * mask).sum() / (total or mask.sum().clamp(min=1))
