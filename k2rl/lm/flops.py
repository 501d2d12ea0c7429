"""Counting a training step's matmul FLOPs, so its speed can be read as a share of the
machine's matmul rate (bench/default_run.py --profile).

A forward pass over a sequence of n real tokens (padding excluded) costs

    2 · P · n  +  2 · L · d · n (n + 1)

with P the weights of the model's linear layers (the output head included: a tied head counts
once, as the head; the embedding lookup is no matmul), L layers and d the attention width
(heads · head dim): the second term is QKᵀ and AV under a causal mask. A backward pass costs
twice its forward, so a training forward-and-backward is 3x the forward.
"""
from __future__ import annotations

import torch


def matmul_params(model: torch.nn.Module) -> int:
    """Weights of the model's linear layers (each shared tensor once)."""
    seen = {}
    for module in model.modules():
        if isinstance(module, torch.nn.Linear):
            seen[id(module.weight)] = module.weight.numel()
    return sum(seen.values())


def forward_flops(model: torch.nn.Module, attention_mask: torch.Tensor) -> float:
    """Matmul FLOPs of one forward pass over a right-padded batch's real tokens."""
    return sequence_flops(model, attention_mask.sum(-1))


def sequence_flops(model: torch.nn.Module, lengths: torch.Tensor) -> float:
    """Matmul FLOPs of one forward pass over sequences of `lengths` tokens."""
    cfg = model.config
    heads = cfg.num_attention_heads
    width = heads * (getattr(cfg, "head_dim", None) or cfg.hidden_size // heads)
    n = lengths.double()
    dense = 2.0 * matmul_params(model) * n.sum().item()
    attention = 2.0 * cfg.num_hidden_layers * width * (n * (n + 1)).sum().item()
    return dense + attention
