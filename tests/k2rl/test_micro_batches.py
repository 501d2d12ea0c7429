"""train.micro_batch_tokens: a minibatch's passes in micro-batches with the gradients
accumulated take the step one pass would take (every loss, PTX and the critic's NLL too)."""
import copy

import numpy as np
import pytest
import torch

from k2rl.bootstrap.model import build_tokenizer
from k2rl.config import ConfigError, TrainConfig
from k2rl.lm import logprobs
from k2rl.lm.logprobs import Passes, micro_batches
from k2rl.step import trainer
from k2rl.step.loss import LOSSES, Whole
from tests.k2rl.test_pi_old import sampled, small_model


def gradient(model, groups, cfg, pad) -> dict[str, torch.Tensor]:
    """The policy loss's gradient over the whole batch, θ = π_old."""
    model.zero_grad(set_to_none=True)
    model.train()
    batch = trainer.batch_of(groups, pad)
    _, tok_old = trainer.old_logp(model, batch, "sum")
    rows = torch.arange(len(batch["input_ids"]))
    whole = Whole.of(batch["rewards"], batch["loss_mask"], len(groups[0].trajectories))
    pending = torch.zeros(len(rows), dtype=torch.bool)
    old = tok_old + 0.01 * torch.arange(tok_old.shape[1])  # off θ, so the ratio terms count
    trainer.policy_backward(model, batch, rows, old, whole, cfg, whole.rows // len(groups),
                            1.0, {}, pending)
    return {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize("loss", sorted(LOSSES))
def test_micro_batches_take_the_gradient_of_one_pass(loss):
    model = small_model()
    groups, _ = sampled(model)
    pad = build_tokenizer().pad_token_id
    one = gradient(model, groups, TrainConfig(loss=loss, micro_batch_tokens=None), pad)
    micro = gradient(model, groups, TrainConfig(loss=loss, micro_batch_tokens=24), pad)
    assert one.keys() == micro.keys() and one
    assert any(g.abs().max() > 1e-4 for g in one.values())  # a gradient worth comparing
    for name, g in one.items():
        torch.testing.assert_close(micro[name], g, atol=1e-6, rtol=1e-5, msg=name)


def test_micro_batches_hold_at_most_their_tokens_and_every_row_once():
    lengths = torch.tensor([30, 5, 12, 12, 7, 40, 3, 9])
    runs = micro_batches(lengths, max_tokens=24)
    assert sorted(torch.cat(runs).tolist()) == list(range(8))
    for run in runs:  # a row longer than the budget goes alone
        assert len(run) * lengths[run].max() <= 24 or len(run) == 1
    assert [len(r) for r in micro_batches(lengths, None, max_rows=3)] == [3, 3, 2]


def test_an_update_in_micro_batches_takes_the_same_steps_with_ptx(monkeypatch):
    """update() end to end: two inner steps, two minibatches, PTX, π_old from the trainer."""
    base = small_model()
    groups, _ = sampled(base, noise=0.5)  # a gap: π_old recomputed, first rows from their pass
    pad = build_tokenizer().pad_token_id
    ptx = [([1, 5, 6, 7, 2], [0, 1, 1, 1, 1]), ([1, 8, 9, 2, 4, 4, 4], [0, 0, 1, 1, 1, 1, 1])] * 2
    passes, results = [], {}
    real = logprobs.token_logp
    monkeypatch.setattr(logprobs, "token_logp",
                        lambda m, ids, mask: passes.append(ids.numel()) or real(m, ids, mask))
    for tokens in (None, 20):
        model = copy.deepcopy(base)
        cfg = TrainConfig(lr=1e-3, inner_steps=2, minibatches=2, micro_batch_tokens=tokens,
                          optimizer="adamw", shared_prefix=False)
        passes.clear()
        metrics = trainer.update(model, trainer.make_optimizer(model, cfg), groups, cfg, pad,
                                 aux={"ptx": (ptx, 0.5, 3)}, rng=np.random.default_rng(0))
        results[tokens] = (metrics, model.state_dict(), max(passes))
    (m1, w1, _), (m2, w2, biggest) = results[None], results[20]
    assert biggest <= 20
    assert m1["old_logp_recomputed"] == m2["old_logp_recomputed"] == 1.0
    for key in ("loss", "loss_first", "ptx_loss"):
        assert m2[key] == pytest.approx(m1[key], abs=1e-6)
    for name, w in w1.items():
        torch.testing.assert_close(w2[name], w, atol=2e-6, rtol=1e-5)
    assert any((w1[n] != base.state_dict()[n]).any() for n in w1)


def test_the_critic_step_in_micro_batches_is_the_same_step():
    pad = build_tokenizer().pad_token_id
    samples = [([1, 5, 6, 7, 2], [0, 1, 1, 1, 1]), ([1, 8, 9, 2, 4, 4], [0, 0, 1, 1, 1, 1]),
               ([1, 3, 2], [0, 1, 1])]
    base, states, losses = small_model(), [], []
    for tokens in (None, 6):
        model = copy.deepcopy(base)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        loss, _ = trainer.critic_step(model, opt, samples, pad, 1.0, Passes(tokens))
        states.append(model.state_dict())
        losses.append(loss)
    assert losses[1] == pytest.approx(losses[0], abs=1e-6)
    for name, w in states[0].items():
        torch.testing.assert_close(states[1][name], w, atol=1e-6, rtol=1e-5)


def test_a_bad_micro_batch_size_is_a_config_error():
    with pytest.raises(ConfigError, match="train.micro_batch_tokens"):
        TrainConfig(micro_batch_tokens=0)
