"""Mixed precision in the trainer (k2rl.lm.precision): bf16 matmuls under autocast, fp32 weights,
gradients and log-softmax; the attention kernel each device gets."""
import pytest
import torch

from k2rl.config import ConfigError, EngineConfig, ModelConfig
from k2rl.lm import precision
from k2rl.lm.logprobs import token_logp, token_nll
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
    with pytest.raises(ConfigError, match="engine.dtype "):
        EngineConfig(dtype="int8")


def test_a_run_says_how_it_computes():
    from k2rl.cli import precision_line
    from k2rl.config import load_config

    line = precision_line(load_config("configs/tiny.yaml"))
    assert line == ("k2rl: trainer matmuls in float32 (model.autocast: float32), weights "
                    "float32, attention eager (sdpa above 192 tokens), engine float32")
    auto = precision_line(load_config("configs/default.yaml"))
    assert f"matmuls in {precision.autocast_dtype('auto', 'cpu')} (model.autocast: auto)" in auto


def test_long_passes_run_sdpa_on_cpu_short_ones_eager_and_the_values_agree():
    assert precision.long_attention("auto", "cpu") == "sdpa"
    assert precision.long_attention("auto", "cuda") is None
    assert precision.long_attention("eager", "cpu") is None
    model = small_model()
    model.set_attn_implementation("eager")
    seen = []
    model.model.layers[0].self_attn.register_forward_pre_hook(
        lambda *_: seen.append(model.config._attn_implementation))
    g = torch.Generator().manual_seed(1)
    long_ids = torch.randint(10, 90, (3, precision.LONG_PASS + 8), generator=g)
    long_mask = torch.ones_like(long_ids)
    long_mask[1, 150:] = 0  # a right-padded row
    short_ids, short_mask = batch()

    eager = [token_logp(model, ids, mask) for ids, mask in
             ((long_ids, long_mask), (short_ids, short_mask))]
    precision.enable(model, "float32", "sdpa")
    assert model.k2rl_long_attention == "sdpa" and model.config._attn_implementation == "eager"
    seen.clear()
    mixed = [token_logp(model, ids, mask) for ids, mask in
             ((long_ids, long_mask), (short_ids, short_mask))]
    assert seen == ["sdpa", "eager"]
    assert model.config._attn_implementation == "eager"  # put back after the pass
    for a, b, mask in zip(mixed, eager, (long_mask, short_mask)):
        torch.testing.assert_close(a * mask, b * mask, atol=2e-5, rtol=0)

    model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    seen.clear()
    token_logp(model, long_ids, long_mask)
    assert seen == ["eager"]  # the backward's recompute must see the forward's kernel


def test_a_model_without_the_long_attention_keeps_its_own():
    class NoSdpa(torch.nn.Module):
        config = type("Config", (), {"_attn_implementation": "eager"})()

        def set_attn_implementation(self, name):
            raise ValueError(f"{name} is not supported")

    model = precision.enable(NoSdpa(), "float32", "sdpa")
    assert model.k2rl_long_attention is None
    with precision.attention_for(model, 10_000):
        assert model.config._attn_implementation == "eager"
