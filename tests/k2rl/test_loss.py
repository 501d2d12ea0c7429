import math

import pytest
import torch

from k2rl.step.loss import group_baseline, kimi_loss, sequence_logp


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


# ------------------------------------------------------------------ the loss registry

from k2rl.config import TrainConfig  # noqa: E402
from k2rl.step.loss import LOSSES, PolicyBatch, clipped_surrogate  # noqa: E402


def batch(logp=None, logp_old=None, rewards=(1.0, 0.0, 0.0, 1.0), k=2):
    # two groups of two responses; the first response has 3 tokens, the rest 2
    mask = torch.tensor([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    old = torch.full((4, 3), -1.0) if logp_old is None else logp_old
    new = old.clone() if logp is None else logp
    return PolicyBatch(new.clone().requires_grad_(True), old, mask, torch.tensor(rewards), k)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_every_loss_raises_the_log_prob_of_above_baseline_responses(name):
    b = batch()
    loss = LOSSES[name](b, TrainConfig(loss=name))
    assert torch.isfinite(loss)
    loss.backward()
    g = b.logp.grad * b.mask
    # rewards 1, 0 | 0, 1: gradient descent raises the winners' tokens, lowers the losers'
    assert (g[0, :3] < 0).all() and (g[3, :2] < 0).all()
    assert (g[1, :2] > 0).all() and (g[2, :2] > 0).all()
    assert (b.logp.grad[1:, 2] == 0).all()  # padding and prompt tokens get nothing


def test_kimi_through_the_registry_is_the_kimi_loss():
    b = batch(logp=torch.full((4, 3), -0.9))
    cfg = TrainConfig()
    expected = kimi_loss(sequence_logp(b.logp, b.mask), sequence_logp(b.logp_old, b.mask),
                         b.rewards, 2, cfg.tau)
    assert LOSSES["kimi"](b, cfg).item() == expected.item()


def test_grpo_normalises_by_the_group_std_and_dr_grpo_does_not():
    cfg_g, cfg_d = TrainConfig(loss="grpo"), TrainConfig(loss="dr_grpo")
    def grad(name, cfg, rewards):
        b = batch(rewards=rewards)
        LOSSES[name](b, cfg).backward()
        return b.logp.grad

    small, large = (0.2, 0.0, 0.0, 0.2), (1.0, 0.0, 0.0, 1.0)
    assert torch.allclose(grad("grpo", cfg_g, small), grad("grpo", cfg_g, large), rtol=1e-4)
    assert torch.allclose(grad("dr_grpo", cfg_d, large), 5 * grad("dr_grpo", cfg_d, small))
    # GRPO averages each response over its own length; Dr. GRPO divides by one constant, so
    # the 3-token winner counts 3/2 as much as a 2-token one
    b = batch()
    LOSSES["dr_grpo"](b, cfg_d).backward()
    assert b.logp.grad[0, 0].item() == pytest.approx(b.logp.grad[3, 0].item())
    b = batch()
    LOSSES["grpo"](b, cfg_g).backward()
    assert b.logp.grad[0, 0].item() == pytest.approx(b.logp.grad[3, 0].item() * 2 / 3)


def test_clipping_stops_the_gradient_past_the_trust_region():
    # a winner whose ratio is already 1.5 > 1 + 0.2: no more push (PPO's clip)
    ratio = torch.tensor([1.5, 1.1, 0.5], requires_grad=True)
    clipped_surrogate(ratio, torch.tensor([1.0, 1.0, -1.0]), 0.2, 0.2).sum().backward()
    assert ratio.grad.tolist() == [0.0, -1.0, 0.0]
    # DAPO's clip-higher lets a winner's ratio rise to 1.28 before it stops
    old = torch.full((4, 3), -1.0)
    new = old.clone()
    new[0] += math.log(1.25)
    b = batch(logp=new, logp_old=old)
    LOSSES["dapo"](b, TrainConfig(loss="dapo")).backward()
    assert b.logp.grad[0, 0] < 0
    b = batch(logp=new, logp_old=old)
    LOSSES["grpo"](b, TrainConfig(loss="grpo")).backward()
    assert b.logp.grad[0, 0] == 0


def test_gspo_uses_one_ratio_per_response():
    old = torch.full((4, 3), -1.0)
    new = old.clone()
    new[0, 0] += 0.1  # one token moved: the whole response's ratio moves by exp(0.1 / 3)
    b = batch(logp=new, logp_old=old)
    loss = LOSSES["gspo"](b, TrainConfig(loss="gspo", clip_eps=0.5, clip_eps_high=0.5))
    loss.backward()
    g = b.logp.grad[0]
    assert g[0].item() == pytest.approx(g[1].item()) == pytest.approx(g[2].item())
    # past GSPO's tiny default clip (4e-4) that response gets no gradient at all
    b = batch(logp=new, logp_old=old)
    LOSSES["gspo"](b, TrainConfig(loss="gspo")).backward()
    assert (b.logp.grad[0] == 0).all() and (b.logp.grad[3] != 0).any()


def test_unknown_loss_and_bad_clip_are_config_errors():
    from k2rl.config import ConfigError, load_config

    with pytest.raises(ConfigError, match="train.loss must be one of kimi, grpo"):
        load_config(None, ["train.loss=ppo"])
    with pytest.raises(ConfigError, match="train.clip_eps"):
        load_config(None, ["train.clip_eps=1.5"])
