"""Token log-probs and NLL of right-padded (ids, mask) batches: what the trainer, the PTX and
critic losses and the warm-start all score with.

A mask is 1 on the tokens a loss counts (the model's own replies), 0 on prompts, tool
observations and padding.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F


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


def token_logp(model, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Log-prob of each token given its prefix, shape (B, T); position 0 gets 0."""
    logits = model(input_ids=input_ids, attention_mask=attention_mask).logits[:, :-1]  # (B, T-1, V)
    logp = torch.log_softmax(logits.float(), dim=-1)
    picked = logp.gather(-1, input_ids[:, 1:, None]).squeeze(-1)  # (B, T-1)
    return F.pad(picked, (1, 0))


def token_logp_sorted(model, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                      chunk: int = 64) -> torch.Tensor:
    """`token_logp` computed in chunks of similar length, each cut to its own longest row.

    The same values (and gradients) as one padded forward, for right-padded rows, without
    running a batch of mixed tasks at the length of its longest episode.
    """
    T = input_ids.shape[1]
    lengths = attention_mask.sum(-1)
    order = torch.argsort(lengths)
    parts = []
    for i in range(0, len(order), chunk):
        rows = order[i:i + chunk]
        L = max(2, int(lengths[rows].max()))
        logp = token_logp(model, input_ids[rows, :L], attention_mask[rows, :L])
        parts.append(F.pad(logp, (0, T - L)))
    inverse = torch.empty_like(order)
    inverse[order] = torch.arange(len(order), device=order.device)
    return torch.cat(parts)[inverse]


def token_nll(model, batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """Mean negative log-likelihood over the masked (assistant) tokens."""
    logp = token_logp(model, batch["input_ids"], batch["attention_mask"])
    mask = batch["loss_mask"]
    return -(logp * mask).sum() / mask.sum().clamp(min=1)
