"""The embedded default model: tokenizer, recipe-keyed cache, determinism."""
from pathlib import Path

from k2rl.config import ModelConfig
from k2rl.model import build_tokenizer, default_model, recipe_dir

TINY = dict(hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64, sft_steps=5, sft_batch=4)


def test_char_tokenizer_round_trips_and_has_a_chat_template():
    tok = build_tokenizer()
    text = "calc(37*48)\n ok"
    ids = tok.encode(text, add_special_tokens=False)
    assert len(ids) == len(text) and tok.decode(ids) == text
    chat = tok.apply_chat_template([{"role": "user", "content": "1+1="}], tokenize=False,
                                   add_generation_prompt=True)
    assert chat == "<|user|>1+1=<|eos|><|assistant|>"


def test_build_is_cached_by_recipe_and_deterministic(tmp_path):
    a = default_model(ModelConfig(**TINY, cache_dir=str(tmp_path / "a")), progress=False)
    b = default_model(ModelConfig(**TINY, cache_dir=str(tmp_path / "b")), progress=False)
    weights = lambda d: (Path(d) / "model.safetensors").read_bytes()  # noqa: E731
    assert weights(a) == weights(b)  # same seed, same recipe: same bytes
    stamp = (Path(a) / "model.safetensors").stat().st_mtime_ns
    assert default_model(ModelConfig(**TINY, cache_dir=str(tmp_path / "a"))) == a  # reused
    assert (Path(a) / "model.safetensors").stat().st_mtime_ns == stamp
    other = ModelConfig(**{**TINY, "seed": 1}, cache_dir=str(tmp_path / "a"))
    assert recipe_dir(other) != a
    assert (Path(a) / "recipe.json").exists() and (Path(a) / "tokenizer.json").exists()
