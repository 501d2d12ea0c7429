"""The reward of a trajectory, composed in one place from named components.

Each component is written where it is measured and kept on the trajectory
(`Trajectory.rewards`), so each is stored and logged on its own (after the `verifiers`
library's rubric of named reward functions):

    task        the environment's verifier, when it ends the episode (k2rl.step.rollout)
    truncation  the penalty of an episode that ran out of token budget (k2rl.step.rollout)
    critic      the pairwise win rate under the policy-as-critic, for critic-rewarded
                environments (k2rl.step.critic_engine)
    length      k1.5's group-relative length reward, already weighted (`add_length_rewards`)

The scalar the loss sees is `total`: the truncation penalty if the episode was cut, else the
critic's win rate if it was judged, else the task reward; plus the length reward.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # torch is imported where the length reward is computed, so that k2rl.step.group
    import torch   # and k2rl.runtime.store (which every CLI command loads) stay light

    from k2rl.step.group import Group

COMPONENTS = ("task", "truncation", "critic", "length")


def total(rewards: dict[str, float]) -> float:
    """The scalar reward from its components (see the module docstring).

    >>> total({"task": 1.0, "length": -0.25})
    0.75
    >>> total({"task": 0.0, "critic": 0.5})  # a critic-rewarded task: the reference check is kept
    0.5
    """
    base = rewards.get("truncation", rewards.get("critic", rewards.get("task", 0.0)))
    return base + rewards.get("length", 0.0)


def length_reward(lengths: torch.Tensor, correct: torch.Tensor, k: int) -> torch.Tensor:
    """k1.5's group-relative length reward λ (docs/method.md section 2), shape (N,).

    λ_i = 0.5 − (len_i − min_len) / (max_len − min_len) within each group (0 when all lengths are
    equal); correct answers get λ_i, wrong ones min(0, λ_i), so a wrong answer is never paid
    for being short.
    """
    import torch

    L = lengths.float().view(-1, k)  # (G, K)
    lo, hi = L.min(-1, keepdim=True).values, L.max(-1, keepdim=True).values
    span = (hi - lo).clamp(min=1e-9)
    lam = torch.where(hi > lo, 0.5 - (L - lo) / span, torch.zeros_like(L))
    lam = torch.where(correct.view(-1, k) > 0, lam, lam.clamp(max=0.0))
    return lam.flatten()


def add_length_rewards(groups: list[Group], weight: float) -> None:
    """Set each trajectory's `length` component to weight · λ within its group."""
    import torch

    for g in groups:
        lam = length_reward(torch.tensor([t.n_tokens for t in g]),
                            torch.tensor([float(t.correct) for t in g]), len(g))
        for t, x in zip(g, lam.tolist()):
            t.rewards["length"] = weight * x


def component_means(groups: list[Group]) -> dict[str, float]:
    """Mean of each component over the trajectories that have it, as `reward/<name>`."""
    values: dict[str, list[float]] = {}
    for g in groups:
        for t in g:
            for name, x in t.rewards.items():
                values.setdefault(name, []).append(x)
    return {f"reward/{name}": sum(xs) / len(xs) for name, xs in values.items()}
