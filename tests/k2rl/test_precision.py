"""Mixed precision in the trainer (k2rl.precision): bf16 matmuls under autocast, fp32 weights,
gradients and log-softmax; the attention kernel each device gets."""
import pytest
import torch

from k2rl import precision
from k2rl.config import ConfigError, ModelConfig, RolloutConfig
from k2rl.logprobs import token_logp, token_nll
from tests.k2rl.test_pi_old import small_model


def batch():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(10, 90, (4, 12), generator=g)
    mask = torch.ones_like(ids)
    mask[2, 8:] = 0
    return ids, mask


def test_settings_resolve_per_device():
    assert precision.autocast_dtype("float32", "cpu") == "float32"
    assert precision.autocast_dtype("bfloat16", "cpu") == "bfloat16"
    assert precision.autocast_dtype("auto", "cpu") == (
        "bfloat16" if precision.native_bf16("cpu") else "float32")
    assert precision.attention("auto", "cpu") == "eager"
    assert precision.attention("auto", "cuda") == "sdpa"
    assert precision.attention("sdpa", "cpu") == "sdpa"


def test_bf16_autocast_changes_the_matmuls_not_the_weights_or_the_output_dtype():
    model = small_model()
    ids, mask = batch()
    fp32 = token_logp(model, ids, mask)
    precision.enable(model, "float32")
    torch.testing.assert_close(token_logp(model, ids, mask), fp32, atol=0, rtol=0)
    precision.enable(model, "bfloat16")
    bf16 = token_logp(model, ids, mask)
    assert bf16.dtype == torch.float32
    assert (bf16 - fp32).abs().max() > 1e-6  # the matmuls did run in bf16
    torch.testing.assert_close(bf16, fp32, atol=0.05, rtol=0)
    loss = token_nll(model, {"input_ids": ids, "attention_mask": mask,
                             "loss_mask": mask.float()})
    loss.backward()
    assert all(p.dtype == torch.float32 and p.grad is not None and p.grad.dtype == torch.float32
               for p in model.parameters())


def test_the_chunked_output_head_autocasts_too():
    model = precision.enable(small_model(), "bfloat16")
    ids, mask = batch()
    whole = token_logp(model, ids, mask)
    chunked = token_logp(model, ids, mask, max_logits=1)
    torch.testing.assert_close(chunked, whole, atol=1e-5, rtol=0)
    assert (chunked - token_logp(precision.enable(model, "float32"), ids, mask)).abs().max() > 1e-6


def test_bad_settings_are_config_errors():
    with pytest.raises(ConfigError, match="model.autocast "):
        ModelConfig(autocast="fp8")
    with pytest.raises(ConfigError, match="model.attention "):
        ModelConfig(attention="flash")
    with pytest.raises(ConfigError, match="rollout.dtype "):
        RolloutConfig(dtype="int8")


def test_a_run_says_how_it_computes():
    from k2rl.cli import precision_line
    from k2rl.config import load_config

    line = precision_line(load_config("configs/tiny.yaml"))
    assert line == ("k2rl: trainer matmuls in float32 (model.autocast: float32), weights "
                    "float32, attention eager, engine float32")
    auto = precision_line(load_config("configs/default.yaml"))
    assert f"matmuls in {precision.autocast_dtype('auto', 'cpu')} (model.autocast: auto)" in auto
