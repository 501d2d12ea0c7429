"""How the trainer computes: the dtype of its matmuls (autocast) and its attention kernel.

Mixed precision the usual way: weights, gradients, optimizer state and the log-softmax stay in
the model's dtype (fp32 on CPU), while the forward pass's matmuls run in bfloat16 under
`torch.autocast` and the backward pass follows them. On a CPU with AMX a bf16 matmul runs
about 7x faster than an fp32 one (bench/README.md), so the default is bf16 wherever the
hardware computes it natively, and fp32 elsewhere (emulated bf16 is slower than fp32).

Only the forward pass is autocast (`logprobs.token_logp` enters it): an optimizer step inside
`torch.autocast` on CPU trained a warm-start several times slower (loss 4.13 against 2.68
after 40 steps), so `autocast` must never wrap an optimizer. The RL worker enables it
(k2rl.runtime.hybrid); the default model's warm-start stays fp32 (k2rl.bootstrap.model.default_model).
"""
from __future__ import annotations

import contextlib

import torch


def native_bf16(device: str) -> bool:
    """Whether `device` ("cpu", "cuda", "cuda:0") computes bf16 matmuls natively."""
    if device.startswith("cuda"):
        return torch.cuda.is_available() and torch.cuda.is_bf16_supported()
    cpu = torch.cpu
    return bool(getattr(cpu, "_is_amx_tile_supported", lambda: False)()
                or getattr(cpu, "_is_avx512_bf16_supported", lambda: False)())


def autocast_dtype(name: str, device: str) -> str:
    """The `model.autocast` setting resolved for `device`: "bfloat16" or "float32"."""
    if name == "auto":
        return "bfloat16" if native_bf16(device) else "float32"
    return name


# Training passes longer than this many tokens use SDPA under `model.attention: auto` on CPU.
# Forward and backward of the default model in bf16 (bench/archive/notebook.md, "The update's FLOP
# rate"): eager against SDPA at 48 tokens 0.29 against 0.44 s (128 rows), 160 tokens 0.45 against
# 0.50 s (48 rows), 256 tokens 0.53 against 0.48 s (32 rows), 450 tokens 1.5-2.1 against 0.91-0.96 s
# (32 rows): policy episodes are short, critic examples long.
LONG_PASS = 192


def attention(name: str, device: str) -> str:
    """The `model.attention` setting resolved for `device`: HF's `attn_implementation`, the
    one the model loads with.

    auto: "eager" on CPU, where the SDPA kernel's backward took 28% of a default-model update
    under bf16 (eager: 1.14 s an update against 1.49 s), and "sdpa" on a GPU. On CPU, auto
    also runs passes longer than LONG_PASS tokens with SDPA (`long_attention`).
    """
    if name == "auto":
        return "sdpa" if device.startswith("cuda") else "eager"
    return name


def long_attention(name: str, device: str) -> str | None:
    """The attention of passes longer than LONG_PASS tokens, where it differs from
    `attention`'s: SDPA on CPU under auto; None otherwise."""
    return "sdpa" if name == "auto" and not device.startswith("cuda") else None


def enable(model: torch.nn.Module, dtype: str, long: str | None = None) -> torch.nn.Module:
    """Make every training forward pass of `model` (k2rl.lm.logprobs) autocast to `dtype`, and
    those longer than LONG_PASS tokens use the attention `long` (if the model supports it)."""
    model.k2rl_autocast = dtype
    model.k2rl_long_attention = None
    base = model.config._attn_implementation
    if long and long != base:
        try:
            model.set_attn_implementation(long)
        except (ValueError, ImportError):  # this architecture lacks it: every pass keeps `base`
            return model
        model.set_attn_implementation(base)
        model.k2rl_long_attention = long
    return model


@contextlib.contextmanager
def attention_for(model: torch.nn.Module, length: int):
    """Within it, a forward pass of `length` tokens runs with the attention `enable` chose for
    it. Under gradient checkpointing the backward pass recomputes the forward after this
    context has closed, so such a model keeps one attention throughout."""
    long = getattr(model, "k2rl_long_attention", None)
    if not long or length <= LONG_PASS or getattr(model, "is_gradient_checkpointing", False):
        yield
        return
    base = model.config._attn_implementation
    model.set_attn_implementation(long)
    try:
        yield
    finally:
        model.set_attn_implementation(base)


def autocast(model: torch.nn.Module):
    """The context a forward pass of `model` runs in: bf16 autocast if `enable`d, else none."""
    dtype = getattr(model, "k2rl_autocast", "float32")
    param = next(model.parameters(), None)
    if dtype == "float32" or param is None or param.dtype == getattr(torch, dtype):
        return contextlib.nullcontext()
    return torch.autocast(param.device.type, dtype=getattr(torch, dtype))
