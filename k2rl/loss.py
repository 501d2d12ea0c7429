"""The Kimi policy loss (k1.5 sec. 2.3.2, reused by K2; docs/method.md section 1).

    L(θ) = mean over groups [ 1/K Σ_i ( r_i − r̄ − τ · (log π_θ(y_i|x) − log π_old(y_i|x)) )² ]

with r̄ the group's mean reward. log π(y|x) is the sum of the response's token log-probs
(`logp_norm="sum"`, the paper) or their mean (`"mean"`, a per-token normalisation the paper
leaves open); only the model's own tokens count, not prompts or tool outputs.
"""
from __future__ import annotations

import torch


def sequence_logp(token_logp: torch.Tensor, mask: torch.Tensor, norm: str = "sum") -> torch.Tensor:
    """Per-sequence log-prob (B,) from token log-probs (B, T) over the masked tokens."""
    total = (token_logp * mask).sum(-1)
    return total if norm == "sum" else total / mask.sum(-1).clamp(min=1)


def group_baseline(rewards: torch.Tensor, k: int) -> torch.Tensor:
    """r̄ for each sample (N,): the mean reward of its group of k consecutive samples."""
    return rewards.view(-1, k).mean(-1).repeat_interleave(k)


def kimi_loss(logp: torch.Tensor, logp_old: torch.Tensor, rewards: torch.Tensor, k: int,
              tau: float) -> torch.Tensor:
    """The squared-regression policy loss; all inputs are (N,) with groups of k consecutive samples.

    At θ = π_old its gradient is −2τ (r − r̄) ∇log π averaged over samples: REINFORCE with a
    mean baseline, scaled by τ.
    """
    if logp.shape[0] % k:
        raise ValueError(f"{logp.shape[0]} samples do not split into groups of {k}")
    advantages = rewards - group_baseline(rewards, k)  # (N,)
    return ((advantages - tau * (logp - logp_old)) ** 2).mean()
