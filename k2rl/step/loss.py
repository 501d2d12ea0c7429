"""Policy losses, one registry: `train.loss` picks one; all take a group-ordered batch of token
log-probs (docs/method.md section 1 has the formulas and papers).

- `kimi` (default; k1.5 sec. 2.3.2, reused by K2): the squared regression

      L(θ) = mean over groups [ 1/K Σ_i ( r_i − r̄ − τ · (log π_θ(y_i|x) − log π_old(y_i|x)) )² ]

  with r̄ the group's mean reward and log π(y|x) the sum of the response's token log-probs
  (`logp_norm="sum"`, the paper) or their mean (`"mean"`, a normalisation the paper leaves
  open).
- `grpo` (DeepSeekMath, arXiv 2402.03300): the PPO clipped surrogate per token with the
  group-normalised advantage (r − r̄) / std, averaged over a response's tokens, then over
  responses; no KL term (as in DAPO and Dr. GRPO).
- `dr_grpo` (Dr. GRPO, arXiv 2503.20783): the same surrogate with the advantage r − r̄ (no
  division by the group's std) and the token sum divided by a constant (the batch's longest
  response) instead of each response's length.
- `dapo` (DAPO, arXiv 2503.14476): token-level normalisation (the surrogate summed over every
  token of the batch, divided by their count) and clip-higher (ε_low 0.2, ε_high 0.28).
- `gspo` (GSPO, arXiv 2507.18071): one importance ratio per response,
  s_i = exp(mean_t (log π_θ − log π_old)), clipped at [1 − 3e-4, 1 + 4e-4], times the
  group-normalised advantage.

Only the model's own tokens count (the mask), not prompts or tool outputs. Adding a loss is one
function `(PolicyBatch, TrainConfig) -> scalar tensor` and one `LOSSES` entry.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch

STD_EPS = 1e-6  # keeps (r − r̄) / std finite for a group whose rewards are all equal


@dataclass
class Whole:
    """What a loss needs of the whole minibatch (whole groups) that a micro-batch of its rows
    cannot see: each row's group statistics, and the minibatch's totals that normalise."""

    baseline: torch.Tensor  # (n,) r̄: the mean reward of each row's group
    std: torch.Tensor  # (n,) the standard deviation of each row's group's rewards
    rows: int  # samples in the minibatch
    tokens: float  # masked tokens in the minibatch
    longest: float  # the minibatch's longest response, in masked tokens

    @classmethod
    def of(cls, rewards: torch.Tensor, mask: torch.Tensor, k: int) -> "Whole":
        """The statistics of a minibatch of whole groups: rewards (N,), mask (N, T)."""
        _check_groups(rewards.shape[0], k)
        return cls(group_baseline(rewards, k), group_std(rewards, k), rewards.shape[0],
                   max(1.0, mask.sum().item()), max(1.0, mask.sum(-1).max().item()))

    def take(self, rows) -> "Whole":
        """The same minibatch, seen from `rows` (an index or slice of its rows)."""
        return Whole(self.baseline[rows], self.std[rows], self.rows, self.tokens, self.longest)


@dataclass
class PolicyBatch:
    """Rows of one minibatch of whole groups, k consecutive samples a group: all of it, or one
    micro-batch of it (then `whole` holds the minibatch's statistics). Every loss is a sum over
    rows divided by the minibatch's totals, so the micro-batches' losses add up to the loss of
    the minibatch in one pass, and so do their gradients (k2rl.step.trainer)."""

    logp: torch.Tensor  # (n, T) token log-probs under θ
    logp_old: torch.Tensor  # (n, T) token log-probs under π_old (no gradient)
    mask: torch.Tensor  # (n, T) 1 on the model's own tokens
    rewards: torch.Tensor  # (n,)
    k: int  # samples per group
    whole: Whole | None = None  # None: these rows are the whole minibatch

    def __post_init__(self) -> None:
        if self.whole is None:
            self.whole = Whole.of(self.rewards, self.mask, self.k)

    def advantages(self, normalise_std: bool) -> torch.Tensor:
        """r − r̄ (n,), divided by the group's std for GRPO's normalisation."""
        adv = self.rewards - self.whole.baseline
        return adv / (self.whole.std + STD_EPS) if normalise_std else adv


def sequence_logp(token_logp: torch.Tensor, mask: torch.Tensor, norm: str = "sum") -> torch.Tensor:
    """Per-sequence log-prob (B,) from token log-probs (B, T) over the masked tokens."""
    total = (token_logp * mask).sum(-1)
    return total if norm == "sum" else total / mask.sum(-1).clamp(min=1)


def group_baseline(rewards: torch.Tensor, k: int) -> torch.Tensor:
    """r̄ for each sample (N,): the mean reward of its group of k consecutive samples."""
    return rewards.view(-1, k).mean(-1).repeat_interleave(k)


def group_std(rewards: torch.Tensor, k: int) -> torch.Tensor:
    """The standard deviation of each sample's group (N,), as GRPO normalises by it."""
    return rewards.view(-1, k).std(-1, unbiased=False).repeat_interleave(k)


def _check_groups(n: int, k: int) -> None:
    if n % k:
        raise ValueError(f"{n} samples do not split into groups of {k}")


def kimi_loss(logp: torch.Tensor, logp_old: torch.Tensor, rewards: torch.Tensor, k: int,
              tau: float) -> torch.Tensor:
    """The squared-regression policy loss; all inputs are (N,) with groups of k consecutive samples.

    At θ = π_old its gradient is −2τ (r − r̄) ∇log π averaged over samples: REINFORCE with a
    mean baseline, scaled by τ.
    """
    _check_groups(logp.shape[0], k)
    advantages = rewards - group_baseline(rewards, k)  # (N,)
    return ((advantages - tau * (logp - logp_old)) ** 2).mean()


def clipped_surrogate(ratio: torch.Tensor, advantages: torch.Tensor, eps_low: float,
                      eps_high: float) -> torch.Tensor:
    """PPO's pessimistic surrogate, as a loss (to minimise), elementwise."""
    clipped = ratio.clamp(1.0 - eps_low, 1.0 + eps_high)
    return -torch.minimum(ratio * advantages, clipped * advantages)


def _token_terms(b: PolicyBatch, normalise_std: bool, eps_low: float, eps_high: float
                 ) -> torch.Tensor:
    """The clipped surrogate of every token (n, T), zero off the mask."""
    adv = b.advantages(normalise_std)  # (n,)
    ratio = torch.exp(b.logp - b.logp_old.detach())  # (N, T)
    return clipped_surrogate(ratio, adv[:, None], eps_low, eps_high) * b.mask


def kimi(b: PolicyBatch, cfg) -> torch.Tensor:
    """`kimi_loss` over the rows, as their share of the minibatch's mean."""
    ratio = (sequence_logp(b.logp, b.mask, cfg.logp_norm)
             - sequence_logp(b.logp_old, b.mask, cfg.logp_norm))  # (n,)
    return ((b.advantages(False) - cfg.tau * ratio) ** 2).sum() / b.whole.rows


def grpo(b: PolicyBatch, cfg) -> torch.Tensor:
    eps = cfg.clip_eps if cfg.clip_eps is not None else 0.2
    terms = _token_terms(b, True, eps, eps)
    return (terms.sum(-1) / b.mask.sum(-1).clamp(min=1)).sum() / b.whole.rows


def dr_grpo(b: PolicyBatch, cfg) -> torch.Tensor:
    eps = cfg.clip_eps if cfg.clip_eps is not None else 0.2
    terms = _token_terms(b, False, eps, eps)
    return terms.sum() / (b.whole.longest * b.whole.rows)


def dapo(b: PolicyBatch, cfg) -> torch.Tensor:
    low = cfg.clip_eps if cfg.clip_eps is not None else 0.2
    high = cfg.clip_eps_high if cfg.clip_eps_high is not None else 0.28
    terms = _token_terms(b, True, low, high)
    return terms.sum() / b.whole.tokens


def gspo(b: PolicyBatch, cfg) -> torch.Tensor:
    low = cfg.clip_eps if cfg.clip_eps is not None else 3e-4
    high = cfg.clip_eps_high if cfg.clip_eps_high is not None else 4e-4
    log_ratio = sequence_logp(b.logp - b.logp_old.detach(), b.mask, "mean")  # (n,)
    terms = clipped_surrogate(torch.exp(log_ratio), b.advantages(True), low, high)  # (n,)
    return terms.sum() / b.whole.rows


Loss = Callable[[PolicyBatch, object], torch.Tensor]
LOSSES: dict[str, Loss] = {"kimi": kimi, "grpo": grpo, "dr_grpo": dr_grpo, "dapo": dapo,
                           "gspo": gspo}
