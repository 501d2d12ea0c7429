import math

import pytest
import torch

from k2rl.loss import group_baseline, kimi_loss, sequence_logp


def test_kimi_loss_matches_hand_computed_example():
    # One group of K=2: rewards 1 and 0, so r̄ = 0.5 and advantages are +0.5 and -0.5.
    # log ratios: 0.2 and -0.4, tau = 0.5:
    #   sample 1: (0.5 - 0.5*0.2)^2 = 0.4^2 = 0.16
    #   sample 2: (-0.5 - 0.5*(-0.4))^2 = (-0.3)^2 = 0.09
    # loss = (0.16 + 0.09) / 2 = 0.125
    logp = torch.tensor([-1.0, -2.4])
    logp_old = torch.tensor([-1.2, -2.0])
    loss = kimi_loss(logp, logp_old, torch.tensor([1.0, 0.0]), k=2, tau=0.5)
    assert loss.item() == pytest.approx(0.125)


def test_loss_averages_over_groups():
    logp = torch.zeros(4)
    rewards = torch.tensor([1.0, 0.0, 1.0, 1.0])  # group 2 has no signal
    assert kimi_loss(logp, logp, rewards, k=2, tau=0.1).item() == pytest.approx((0.25 + 0.25 + 0 + 0) / 4)


def test_gradient_at_old_policy_is_reinforce_with_mean_baseline():
    # d/dlogp_i of 1/N Σ (A_i - tau*(logp_i - old_i))^2 at logp = old is -2 tau A_i / N.
    logp = torch.tensor([-3.0, -1.0, -2.0], requires_grad=True)
    rewards = torch.tensor([1.0, 0.0, 0.5])
    kimi_loss(logp, logp.detach().clone(), rewards, k=3, tau=0.2).backward()
    advantages = rewards - 0.5
    assert torch.allclose(logp.grad, -2 * 0.2 * advantages / 3)


def test_baseline_and_sequence_logp():
    assert group_baseline(torch.tensor([1.0, 0.0, 0.0, 0.0]), 2).tolist() == [0.5, 0.5, 0.0, 0.0]
    tok = torch.tensor([[-1.0, -2.0, -3.0]])
    mask = torch.tensor([[0.0, 1.0, 1.0]])
    assert sequence_logp(tok, mask, "sum").item() == -5.0
    assert sequence_logp(tok, mask, "mean").item() == -2.5


def test_group_size_must_divide_batch():
    with pytest.raises(ValueError, match="groups of 3"):
        kimi_loss(torch.zeros(4), torch.zeros(4), torch.zeros(4), k=3, tau=0.1)
    assert not math.isnan(kimi_loss(torch.zeros(3), torch.zeros(3), torch.ones(3), 3, 0.1).item())
