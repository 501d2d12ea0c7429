"""π_old from the engine's sampling-time log-probs: used when they agree with the trainer's
first forward pass, recomputed where they do not (train.old_logp)."""
import copy

import pytest
import torch

from k2rl.bootstrap.model import build_config, build_tokenizer
from k2rl.bootstrap.recipe import Recipe
from k2rl.config import TrainConfig
from k2rl.step.trainer import batch_of, make_optimizer, old_logp, pi_old, update
from tests.k2rl.test_distributed import batch as make_groups


def small_model():
    from transformers import Qwen2ForCausalLM

    torch.manual_seed(0)
    mcfg = Recipe(hidden_size=32, num_layers=2, num_heads=2, intermediate_size=64)
    return Qwen2ForCausalLM(build_config(mcfg, build_tokenizer())).eval()


def sampled(model, noise: float = 0.0):
    """The test batch with logp_engine set to the trainer's log-probs (plus `noise`), as an
    engine holding the same weights would have sampled them."""
    groups = make_groups()
    pad = build_tokenizer().pad_token_id
    batch = batch_of(groups, pad)
    _, tok = old_logp(model, batch, "sum")
    for i, t in enumerate(g for group in groups for g in group.trajectories):
        t.logp_engine = (tok[i][batch["loss_mask"][i] > 0] + noise).tolist()
    return groups, batch


def first_pass(model, batch):
    from k2rl.lm.logprobs import token_logp_sorted

    return token_logp_sorted(model, batch["input_ids"], batch["attention_mask"]).detach()


def test_agreeing_engine_log_probs_are_used_without_a_recomputation(monkeypatch):
    from k2rl.step import trainer

    model = small_model()
    groups, batch = sampled(model)
    calls = []
    monkeypatch.setattr(trainer, "recompute", lambda *a: calls.append(a))
    everything = slice(0, len(batch["input_ids"]))
    tok, checks, _ = pi_old(model, batch, groups, everything, first_pass(model, batch),
                         TrainConfig())
    assert calls == [] and checks["old_logp_recomputed"] == 0.0 and checks["logp_gap"] < 1e-5
    _, trainer_tok = old_logp(model, batch, "sum")
    mask = batch["loss_mask"] > 0
    torch.testing.assert_close(tok[mask], trainer_tok[mask], atol=1e-5, rtol=0)


def test_a_gap_above_the_tolerance_recomputes_every_row():
    model = small_model()
    groups, batch = sampled(model, noise=0.01)
    everything = slice(0, len(batch["input_ids"]))
    tok, checks, _ = pi_old(model, batch, groups, everything, first_pass(model, batch),
                         TrainConfig(old_logp_tolerance=1e-3))
    assert checks["old_logp_recomputed"] == 1.0
    assert checks["logp_gap"] == pytest.approx(0.01, abs=1e-4)
    _, trainer_tok = old_logp(model, batch, "sum")
    torch.testing.assert_close(tok, trainer_tok)
    # the same gap under a looser tolerance keeps the engine's values
    tok, checks, _ = pi_old(model, batch, groups, everything, first_pass(model, batch),
                         TrainConfig(old_logp_tolerance=0.1))
    assert checks["old_logp_recomputed"] == 0.0
    mask = batch["loss_mask"] > 0
    torch.testing.assert_close(tok[mask], trainer_tok[mask] + 0.01, atol=1e-5, rtol=0)


def test_rows_from_an_older_policy_are_recomputed_alone():
    model = small_model()
    groups, batch = sampled(model)
    stale = groups[1].trajectories[2]
    stale.stale = 2  # its first two tokens came from an earlier segment (partial rollout)
    stale.logp_engine[:2] = [-9.0, -9.0]
    everything = slice(0, len(batch["input_ids"]))
    tok, checks, _ = pi_old(model, batch, groups, everything, first_pass(model, batch),
                         TrainConfig())
    assert checks["old_logp_recomputed"] == pytest.approx(1 / 16)
    assert checks["logp_gap"] < 1e-5  # the stale tokens are not part of the check
    _, trainer_tok = old_logp(model, batch, "sum")
    mask = batch["loss_mask"][6] > 0
    torch.testing.assert_close(tok[6][mask], trainer_tok[6][mask])


def test_trainer_mode_always_recomputes_and_still_reports_the_gap():
    model = small_model()
    groups, batch = sampled(model, noise=0.5)
    everything = slice(0, len(batch["input_ids"]))
    tok, checks, _ = pi_old(model, batch, groups, everything, first_pass(model, batch),
                         TrainConfig(old_logp="trainer"))
    assert checks == {"logp_gap": pytest.approx(0.5, abs=1e-4), "old_logp_recomputed": 1.0,
                      "old_logp_extra_pass": 0.0}  # every row is in the first pass


def test_the_first_pass_is_reused_and_only_other_rows_take_a_pass(monkeypatch):
    """A recomputed π_old takes the first minibatch's rows from its own forward pass; only
    rows outside it cost an extra pass (minibatches > 1)."""
    from k2rl.step import trainer

    model = small_model()
    groups, batch = sampled(model, noise=0.5)
    seen = []
    real = trainer.recompute
    monkeypatch.setattr(trainer, "recompute",
                        lambda m, b, *t: seen.append(len(b["input_ids"])) or real(m, b, *t))
    first = slice(0, 8)
    tok, checks, _ = pi_old(model, batch, groups, first, first_pass(model, batch)[first],
                         TrainConfig(old_logp_tolerance=1e-3))
    assert seen == [8] and checks["old_logp_recomputed"] == 1.0
    assert checks["old_logp_extra_pass"] == pytest.approx(0.5)
    _, trainer_tok = old_logp(model, batch, "sum")
    torch.testing.assert_close(tok, trainer_tok, atol=1e-5, rtol=0)


def test_a_model_with_dropout_recomputes_its_first_rows_too(monkeypatch):
    """In train mode dropout makes the first pass noisy, so it is not taken as π_old."""
    from k2rl.step import trainer

    model = small_model()
    groups, batch = sampled(model, noise=0.5)
    model.model.layers[0].mlp.act_fn = torch.nn.Sequential(torch.nn.SiLU(), torch.nn.Dropout(0.1))
    assert not trainer.same_in_train_mode(model)
    seen = []
    monkeypatch.setattr(trainer, "recompute",
                        lambda m, b, *t: seen.append(len(b["input_ids"])) or torch.zeros_like(
                            b["loss_mask"]))
    everything = slice(0, len(batch["input_ids"]))
    _, checks, _ = pi_old(model, batch, groups, everything, first_pass(model, batch),
                       TrainConfig(old_logp_tolerance=1e-3))
    assert seen == [16] and checks["old_logp_extra_pass"] == 1.0


@pytest.mark.parametrize("minibatches", [1, 3])
def test_the_update_is_the_same_from_engine_or_trainer_log_probs(minibatches):
    """With agreeing log-probs both modes take the same optimizer steps."""
    base = small_model()
    groups, _ = sampled(base)
    pad = build_tokenizer().pad_token_id
    weights, metrics = [], []
    for mode in ("engine", "trainer"):
        model = copy.deepcopy(base)
        cfg = TrainConfig(lr=1e-3, inner_steps=2, minibatches=minibatches, old_logp=mode)
        metrics.append(update(model, make_optimizer(model, cfg), groups, cfg, pad))
        weights.append(model.state_dict())
    assert metrics[0]["old_logp_recomputed"] == 0.0 and metrics[1]["old_logp_recomputed"] == 1.0
    assert metrics[0]["loss"] == pytest.approx(metrics[1]["loss"], abs=1e-5)
    for name, w in weights[1].items():
        torch.testing.assert_close(weights[0][name], w, atol=1e-5, rtol=1e-4)
    assert any((weights[0][n] != base.state_dict()[n]).any() for n in weights[0])  # it moved


def test_bad_settings_are_config_errors():
    from k2rl.config import ConfigError

    with pytest.raises(ConfigError, match="train.old_logp "):
        TrainConfig(old_logp="cache")
    with pytest.raises(ConfigError, match="train.old_logp_tolerance"):
        TrainConfig(old_logp_tolerance=-1)


def test_ptx_backward_runs_after_the_policy_s_and_takes_the_same_step(monkeypatch):
    """Each term's backward runs before the next term's forward pass (one graph held at a time:
    a LoRA step's peak memory), and the step equals one backward of the summed loss."""
    import numpy as np

    from k2rl.step import trainer

    base = small_model()
    groups, _ = sampled(base)
    pad = build_tokenizer().pad_token_id
    ptx = [([1, 5, 6, 7, 2], [0, 1, 1, 1, 1]), ([1, 8, 9, 2], [0, 0, 1, 1])] * 2
    cfg = TrainConfig(lr=1e-3, inner_steps=2, minibatches=1)

    def run(model):
        aux = {"ptx": (ptx, 0.5, 3)}
        return update(model, make_optimizer(model, cfg), groups, cfg, pad, aux=aux,
                      rng=np.random.default_rng(0))

    graded_at_ptx = []
    nll = trainer.token_nll
    monkeypatch.setattr(trainer, "token_nll", lambda model, data, *total: (
        graded_at_ptx.append(any(p.grad is not None for p in model.parameters())),
        nll(model, data, *total))[1])
    split = copy.deepcopy(base)
    split_metrics = run(split)
    assert graded_at_ptx == [True, True]  # the policy's gradient was in before PTX's pass

    terms = []  # one backward of the summed terms, as before per-term backward
    monkeypatch.setattr(trainer, "backward", lambda loss: (terms.append(loss), loss.item())[1])
    step = trainer.step_optimizers

    def joint_step(params, optimizers, clip):
        sum(terms).backward()
        terms.clear()
        return step(params, optimizers, clip)

    monkeypatch.setattr(trainer, "step_optimizers", joint_step)
    joint = copy.deepcopy(base)
    joint_metrics = run(joint)
    assert split_metrics["ptx_loss"] == pytest.approx(joint_metrics["ptx_loss"], abs=1e-6)
    for name, w in joint.state_dict().items():
        torch.testing.assert_close(split.state_dict()[name], w, atol=1e-6, rtol=1e-5)
    assert any((split.state_dict()[n] != base.state_dict()[n]).any() for n in base.state_dict())
