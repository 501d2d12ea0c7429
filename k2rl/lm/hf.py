"""A Hugging Face model folder as k2rl takes it: checked before a run starts (`check_model_dir`:
one vLLM can load, with a tokenizer whose chat template k2rl can lay out), and sized
(`param_count`).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import torch

from k2rl.config import ConfigError
from k2rl.lm.chat import TemplateError, layout_of, load_tokenizer


def check_model_dir(path: str | Path, key: str = "model.path") -> list[str]:
    """A clear ConfigError, before any service starts, for a model folder k2rl cannot use: one
    that is missing, is not a Hugging Face model, has an architecture vLLM cannot load, or has
    a tokenizer without a chat template or with one that cannot lay out a reply or a tool
    result. Returns a line per way its conversations are laid out differently (k2rl.lm.chat.Layout:
    a system prompt folded into the first user turn, tool results as user turns)."""
    path = Path(path)
    if not path.is_dir():
        raise ConfigError(f"{key} {path} does not exist (or is not a folder)")
    if not (path / "config.json").exists():
        raise ConfigError(f"{key} {path} is not a Hugging Face model folder (no config.json)")
    archs = json.loads((path / "config.json").read_text()).get("architectures") or []
    from vllm import ModelRegistry  # heavy: only a user's model folder is checked

    supported = set(ModelRegistry.get_supported_archs())
    if not archs or not set(archs) & supported:
        raise ConfigError(f"{key} {path} is a {'/'.join(archs) or 'model of no architecture'} "
                          "model, which vLLM cannot load (config.json names no architecture it "
                          "supports)")
    try:
        tokenizer = load_tokenizer(path)
    except Exception as e:  # noqa: BLE001  (any loader failure is the same user error)
        raise ConfigError(f"{key} {path} has no tokenizer transformers can load: "
                          f"{type(e).__name__}: {e}") from None
    if not tokenizer.chat_template:
        raise ConfigError(f"the tokenizer in {key} {path} has no chat template: add one as "
                          "\"chat_template\" in tokenizer_config.json or as chat_template.jinja")
    try:
        return layout_of(tokenizer).notes(f"{key} {path}")
    except TemplateError as e:
        raise ConfigError(str(e)) from None


def built_recipe(model_dir: str | Path) -> dict | None:
    """The recipe.json of a model k2rl built (k2rl.bootstrap.model.default_model) or trained
    from one (a run's checkpoints keep it), None for any other model."""
    path = Path(model_dir) / "recipe.json"
    return json.loads(path.read_text()) if path.exists() else None


def param_count(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


# What a token of a micro-batch costs at the update's peak, per decoder layer, in units of
# (hidden, intermediate) 4-byte floats: fitted to SmolLM2-135M under bf16 autocast on the CPU,
# whose worker peaked at 8.5-9.8 GB with 2,048-token micro-batches (ru_maxrss; 4.8-5.9 GB
# resident between updates: bench/results/real_peer.json, configs/smollm2.yaml).
ACTIVATION_FLOATS = (11, 6)
# What the worker process holds besides weights and activations: torch, vLLM, Ray (measured
# about 1.5 GB on the CPU).
RUNTIME_GB = 1.5


def stored_params(model_dir: str | Path) -> int:
    """Parameters in a model folder's safetensors files, read from their headers."""
    from safetensors import safe_open

    total = 0
    for file in Path(model_dir).glob("*.safetensors"):
        with safe_open(file, "pt") as f:
            for name in f.keys():
                total += math.prod(f.get_slice(name).get_shape())
    return total


def peak_memory_gb(cfg, model_dir: str | Path) -> dict[str, float]:
    """A rough estimate of a hybrid worker's peak memory, in GB, by part: the trainer's fp32
    weights, gradients and AdamW moments; one micro-batch's activations; the engine's weights
    and KV cache; the runtime."""
    config = json.loads((Path(model_dir) / "config.json").read_text())
    params = stored_params(model_dir)
    layers = config.get("num_hidden_layers", 1)
    per_token = layers * 4 * (ACTIVATION_FLOATS[0] * config.get("hidden_size", 0)
                              + ACTIVATION_FLOATS[1] * config.get("intermediate_size", 0))
    tokens = cfg.train.micro_batch_tokens or 64 * cfg.engine.max_model_len
    engine_bytes = 2 if (cfg.engine.dtype or cfg.model.dtype) in ("bfloat16", "float16") else 4
    return {"trainer": params * 16 / 1e9, "activations": per_token * tokens / 1e9,
            "engine": (params * engine_bytes + cfg.engine.kv_cache_gib * 2**30) / 1e9,
            "runtime": RUNTIME_GB}


def memory_line(cfg, model_dir: str | Path) -> str:
    """One line before the run starts: the worker's estimated peak and the settings that
    lower it."""
    parts = peak_memory_gb(cfg, model_dir)
    detail = ", ".join(f"{name} {gb:.1f}" for name, gb in parts.items())
    return (f"k2rl: a hybrid worker's peak memory, estimated: {sum(parts.values()):.1f} GB "
            f"({detail}); train.micro_batch_tokens ({cfg.train.micro_batch_tokens}) and "
            f"engine.kv_cache_gib ({cfg.engine.kv_cache_gib}) lower it")
