"""LoRA adapters on the policy (`model.lora`): peft wraps the trainer's model, only the adapter
trains, and the engine samples from the base with the adapter merged in.

The trainer: `wrap` injects peft's LoRA layers into the HF model in place, so the model the
rest of k2rl holds is still the HF model (its config, decoder and output head, its forward)
with `q_proj` and the like now `peft` LoRA layers; every base parameter is frozen, the adapter
(A (r, in), B (out, r), fp32 even over a bf16 base) is all that has `requires_grad`, so the
optimizers (k2rl.step.trainer.make_optimizer) hold state for it alone.

The engine, two ways (`model.lora.serve`):
- "adapter" (default): vLLM's own LoRA serving. The engine loads the base with LoRA layers
  (`engine_settings`); `push_adapter` writes the adapter in peft's format to a memory-backed
  folder and has vLLM load it in place (`load_inplace`), and every request runs with it
  (engine.adapter_request). A push is the adapter's bytes alone; the engine computes
  base(x) + (alpha / r) · B(A(x)) as peft does, within 1e-6 nats of the trainer.
- "merged": `push` writes W + (alpha / r) · B @ A of every target layer into the engine's own
  weight through the copy plan of a full push (k2rl.device.weight_sync), so the engine computes the
  trainer's policy exactly, up to fp32 rounding of the merge, with no LoRA kernels. The first
  push (and every push of an engine that sleeps, whose weights are discarded) writes every
  tensor; later ones only the target layers', since the rest is the frozen base.

Checkpoints hold the adapter in peft's format (adapter_config.json naming the base folder,
adapter_model.safetensors); `base_of` finds the base of such a folder and `wrap` resumes it.
`export_merged` writes base + merged adapter as a plain HF folder (`k2rl export`).
"""
from __future__ import annotations

import contextlib
import json
import shutil
import tempfile
import time
from pathlib import Path

import torch

from k2rl.config import ConfigError, LoraConfig
from k2rl.device import distributed, engine, weight_sync
from k2rl.lm.chat import load_tokenizer

ADAPTER = "default"  # peft's name for the one adapter
PUSH_BYTES = 2 ** 28  # merged tensors held at once during a push (one bucket of copies)


def is_adapter(folder: str | Path) -> bool:
    """Whether `folder` is a peft adapter checkpoint (not a full HF model)."""
    return (Path(folder) / "adapter_config.json").exists()


def base_of(folder: str | Path) -> str:
    """The base model folder of an adapter checkpoint; `folder` itself for a full model."""
    if not is_adapter(folder):
        return str(folder)
    return json.loads((Path(folder) / "adapter_config.json").read_text())[
        "base_model_name_or_path"]


def wrap(model: torch.nn.Module, cfg: LoraConfig | None, base_dir: str,
         adapter_dir: str | None = None):
    """Inject LoRA layers into `model` in place; returns the PeftModel around it (for saving).

    A fresh adapter from `cfg` (B = 0, so the policy starts as the base), or the trainable
    adapter saved in `adapter_dir` (resume; its own adapter_config then rules).
    """
    import peft

    if adapter_dir:
        wrapped = peft.PeftModel.from_pretrained(model, adapter_dir, is_trainable=True)
    else:
        wrapped = peft.get_peft_model(model, peft.LoraConfig(
            r=cfg.rank, lora_alpha=cfg.alpha, lora_dropout=cfg.dropout,
            target_modules=list(cfg.target_modules), task_type="CAUSAL_LM"))
    wrapped.peft_config[ADAPTER].base_model_name_or_path = str(Path(base_dir).resolve())
    return wrapped


def adapter_params(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The trainable (adapter) parameters by name."""
    return {name: p for name, p in model.named_parameters() if p.requires_grad}


def broadcast_adapter(model: torch.nn.Module) -> None:
    """Rank 0's adapter written into every data-parallel worker's, in place; a no-op for one
    worker. The workers' adapter gradients are summed (k2rl.device.distributed.all_reduce_grads), so
    each takes rank 0's step already: this keeps rounding from drifting them apart, as the
    broadcast of a full push does, for the adapter's bytes alone."""
    if distributed.world_size() > 1:
        named = [(name, p.detach()) for name, p in adapter_params(model).items()]
        for _ in distributed.broadcast_buckets(named):
            pass


def _lora_layers(model: torch.nn.Module) -> dict[str, torch.nn.Module]:
    from peft.tuners.lora import LoraLayer

    return {name: m for name, m in model.named_modules() if isinstance(m, LoraLayer)}


def merged_shapes(model: torch.nn.Module) -> list[tuple[str, tuple[int, ...]]]:
    """(HF name, shape) of every tensor of the merged model: what the engine holds."""
    return [(name, tuple(t.shape)) for name, t in _named_base(model)]


def _named_base(model: torch.nn.Module) -> list[tuple[str, torch.Tensor]]:
    """The base parameters under their plain HF names (`q_proj.base_layer.weight` ->
    `q_proj.weight`), adapter parameters left out."""
    out = []
    for name, p in model.named_parameters():
        if ".lora_" in name:
            continue
        out.append((name.replace(".base_layer.", "."), p.detach()))
    return out


@torch.no_grad()
def merged(model: torch.nn.Module, targets_only: bool = False
           ) -> list[tuple[str, torch.Tensor | None]]:
    """(HF name, tensor) of the merged model: base + (alpha / r) · B @ A on target weights,
    in fp32 there; the other tensors as the base holds them (skipped with `targets_only`).

    Target weights come back as None, to be merged by `merge_one`, so a caller can hold a
    bucket of them at a time instead of a second copy of every target layer.
    """
    layers = _lora_layers(model)
    out = []
    for name, t in _named_base(model):
        owner, _, leaf = name.rpartition(".")
        if owner in layers and leaf == "weight":
            out.append((name, None))
        elif not targets_only:
            out.append((name, t))
    return out


@torch.no_grad()
def merge_one(model: torch.nn.Module, name: str) -> torch.Tensor:
    """W + (alpha / r) · B @ A of the target layer whose weight is `name`, in fp32: (out, in)."""
    layer = model.get_submodule(name.rpartition(".")[0])
    base = layer.get_base_layer().weight
    return base.float() + layer.get_delta_weight(ADAPTER).float()


def push(llm, model: torch.nn.Module, full: bool) -> dict[str, float]:
    """Copy the merged policy into the engine in place; returns seconds and bytes as
    engine.push_weights does. `full`: every tensor (first push, or an engine that slept);
    else only the target layers' weights.

    An engine the copy plan cannot map takes every merged tensor through vLLM's reload.
    """
    start = time.perf_counter()
    planned = all(llm.collective_rpc(weight_sync.adopt, args=(merged_shapes(model),)))
    named = merged(model, targets_only=planned and not full)
    nbytes, bucket, size = 0, [], 0
    for i, (name, t) in enumerate(named):
        t = merge_one(model, name) if t is None else t
        bucket.append((name, t))
        size += t.numel() * t.element_size()
        if planned and (size >= PUSH_BYTES or i == len(named) - 1):
            llm.collective_rpc(weight_sync.copy, args=(bucket,))
            nbytes, bucket, size = nbytes + size, [], 0
    if not planned:
        llm.collective_rpc(engine._reload, args=(bucket,))
        nbytes = size
    llm.reset_prefix_cache()
    seconds = time.perf_counter() - start
    return {"sync_seconds": seconds, "sync_bytes": float(nbytes),
            "sync_gb_per_s": nbytes / max(seconds, 1e-9) / 1e9}


ENGINE_ADAPTER = "policy"  # the adapter's name and id (1) in vLLM's LoRA serving


VLLM_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)  # the max_lora_rank values vLLM takes


def engine_settings(cfg: LoraConfig) -> dict:
    """`vllm.LLM` arguments for serving the adapter with vLLM's own LoRA layers (`push_adapter`):
    its slot is the smallest rank vLLM takes that holds `cfg.rank` (a smaller adapter is padded).

    >>> engine_settings(LoraConfig(rank=4))["max_lora_rank"], engine_settings(LoraConfig())["max_lora_rank"]
    (8, 16)
    """
    fits = [r for r in VLLM_RANKS if r >= cfg.rank]
    if not fits:
        raise ConfigError(f"model.lora.rank {cfg.rank} is above vLLM's largest LoRA rank "
                          f"{VLLM_RANKS[-1]}; use model.lora.serve: merged")
    return {"enable_lora": True, "max_lora_rank": fits[0], "max_loras": 1, "max_cpu_loras": 1}


def push_folder() -> Path:
    """A folder of this process for the adapter it hands the engine: in /dev/shm (memory) where
    there is one, removed at exit."""
    import atexit

    shm = Path("/dev/shm")
    folder = Path(tempfile.mkdtemp(prefix="k2rl-adapter-", dir=shm if shm.is_dir() else None))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def push_adapter(llm, wrapped, folder: str | Path) -> dict[str, float]:
    """Hand the engine the adapter itself (vLLM's LoRA serving): written in peft's format to
    `folder` (a memory-backed one, /dev/shm, where it exists) and loaded in place of the
    previous one (`load_inplace`); every later request runs with it (engine.adapter_request).
    Returns seconds and bytes as engine.push_weights does: the bytes are the adapter's."""
    from vllm.lora.request import LoRARequest

    start = time.perf_counter()
    folder = Path(folder)
    wrapped.save_pretrained(str(folder))
    nbytes = (folder / "adapter_model.safetensors").stat().st_size
    request = LoRARequest(ENGINE_ADAPTER, 1, str(folder), load_inplace=True)
    llm.llm_engine.add_lora(request)
    llm.k2rl_adapter = LoRARequest(ENGINE_ADAPTER, 1, str(folder))
    llm.reset_prefix_cache()
    seconds = time.perf_counter() - start
    return {"sync_seconds": seconds, "sync_bytes": float(nbytes),
            "sync_gb_per_s": nbytes / max(seconds, 1e-9) / 1e9}


def save(wrapped, folder: str | Path) -> None:
    """The adapter in peft's format (adapter_config.json, adapter_model.safetensors)."""
    wrapped.save_pretrained(str(folder))


def export_merged(checkpoint: str | Path, out: str | Path, dtype: str = "float32") -> Path:
    """Base + merged adapter of an adapter checkpoint as a plain HF model folder (with the
    checkpoint's tokenizer, else the base's), which transformers and vLLM load like any model.
    The merge is peft's `merge_and_unload` in fp32: W + (alpha / r) · B @ A, as `push` makes."""
    import peft
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(base_of(checkpoint), dtype=torch.float32)
    model = peft.PeftModel.from_pretrained(base, str(checkpoint)).merge_and_unload()
    model.to(getattr(torch, dtype)).save_pretrained(str(out))
    has_own = (Path(checkpoint) / "tokenizer_config.json").exists()
    load_tokenizer(checkpoint if has_own else base_of(checkpoint)).save_pretrained(str(out))
    return Path(out)


# Files of a checkpoint that are k2rl's own, not the model's.
RUN_FILES = ("optimizer.pt", "trainer_state.json")


def run_checkpoint(run_dir: Path, step: int | None = None) -> Path:
    """The checkpoint folder of `step` in a run (default: the newest); a FileNotFoundError
    names the steps there are (a run keeps its newest checkpoint only)."""
    folders = sorted(p for p in (run_dir / "checkpoints").glob("step-*")
                     if p.is_dir() and not p.name.endswith(".tmp"))
    if step is None and folders:
        return folders[-1]
    want = run_dir / "checkpoints" / f"step-{step or 0:05d}"
    if step is not None and want in folders:
        return want
    steps = ", ".join(str(int(p.name.removeprefix("step-"))) for p in folders) or "none"
    raise FileNotFoundError(f"run {run_dir} has no checkpoint"
                            + (f" of step {step}" if step is not None else "")
                            + f" (checkpoints: {steps})")


def export(checkpoint: Path, out: Path) -> Path:
    """A checkpoint as a plain HF model folder at `out`: a LoRA checkpoint merged into its
    base (`export_merged`), a full one copied without k2rl's optimizer and run state."""
    if is_adapter(checkpoint):
        return export_merged(checkpoint, out)
    shutil.copytree(checkpoint, out, ignore=shutil.ignore_patterns(*RUN_FILES),
                    dirs_exist_ok=True)
    return out


@contextlib.contextmanager
def as_model_folder(folder: str | Path):
    """`folder` if it is an HF model; a LoRA checkpoint merged into a temporary one."""
    if not is_adapter(folder):
        yield str(folder)
        return
    with tempfile.TemporaryDirectory(prefix="k2rl-merged-") as tmp:
        yield str(export_merged(folder, tmp))
