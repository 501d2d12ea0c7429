"""A Hugging Face model folder as k2rl takes it: checked before a run starts (`check_model_dir`:
one vLLM can load, with a tokenizer whose chat template k2rl can lay out), and sized
(`param_count`).
"""
from __future__ import annotations

import json
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
