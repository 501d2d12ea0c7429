"""Weight sync as a memory copy: each trainer parameter copied straight into the engine's tensor.

vLLM on CPU packs every linear weight into a oneDNN handle at load time and frees the plain
weight; the handle owns its packed copy (writing new values into the weight changes nothing),
so its in-place reload (`reload_weights`) rebuilds and re-packs the whole model on every push,
at 10-20% of memory-copy bandwidth (bench/scale.py). Re-packing alone takes 2.7x a copy of the
same bytes (123 M parameters), so no packed engine can sync near memory speed. k2rl's engines
load with vLLM's own plain GEMM (`torch.nn.functional.linear`) on weights they hold unpacked
(k2rl.device.engine.plain_gemm); an engine loaded packed is switched to it at its first push. Then
a push is one `copy_` per trainer parameter into a view fixed in advance: the parameter
itself, its rows of a fused projection (q/k/v in `qkv_proj`, gate/up in `gate_up_proj`), or
the first rows of a padded vocabulary. A tied output head shares the embedding's tensor, so
it follows with no step of its own. The plain GEMM matches the packed one at 1 and at 256+
rows and is slower at 8-64 (up to 2x at hidden 1024 on one thread); in rollouts of the
default model that cost 3-5% (bench/rollout.py: 9.5-9.6k tokens/s packed, 9.1-9.3k plain,
load 2-3 on 2 cores).

The switch happens only if every trainer parameter has a place and every engine parameter is
covered; otherwise `adopt` answers False, once says why in the log, and the caller keeps the
reload path. A switched engine must only be written through `copy`: a `reload_weights` outside
`plain_gemm` would pack the layers it touches again and leave the plan's tensors unused.
"""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from weakref import WeakKeyDictionary

import torch

log = logging.getLogger(__name__)

# engine model -> {trainer parameter name: engine view}, or None where the plan failed
_PLANS: WeakKeyDictionary = WeakKeyDictionary()


def adopt(worker, shapes: list[tuple[str, tuple[int, ...]]]) -> bool:
    """Plan this worker's engine for trainer parameters of these names and shapes, once.

    Returns whether pushes can go through `copy`.
    """
    model = worker.model_runner.get_model()
    if model not in _PLANS:
        try:
            places = _places(model, shapes, worker.model_config.quantization)
        except LookupError as e:
            log.warning("k2rl weight sync: %s; pushing through vLLM's reload_weights", e)
            _PLANS[model] = None
        else:
            _PLANS[model] = _switch(model, places, worker.model_config.dtype)
    return _PLANS[model] is not None


def copy(worker, named: list[tuple[str, torch.Tensor]]) -> None:
    """Copy trainer tensors into the engine through its plan (`adopt` first).

    As many Python threads as torch has, each copying its share of the tensors on one torch
    thread: the memory bandwidth of torch's parallel copy, with one join per push where
    tensor-by-tensor parallel copies wake an OpenMP team per tensor, and on a busy machine
    each wake-up waits for a scheduler slice (2 cores at load 8: 6.4 GB/s this way, as fast
    as one flat copy of the same bytes; 0.6-1.8 GB/s tensor by tensor).
    """
    views = _PLANS[worker.model_runner.get_model()]
    threads = torch.get_num_threads()
    shares = [[] for _ in range(threads)]
    sizes = [0] * threads
    for name, tensor in sorted(named, key=lambda nt: -nt[1].numel()):  # largest first
        i = sizes.index(min(sizes))
        shares[i].append((views[name], tensor))
        sizes[i] += tensor.numel()
    try:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(_copy_share, shares))
    finally:
        torch.set_num_threads(threads)  # the shares ran on one thread each


@torch.no_grad()
def _copy_share(pairs: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
    torch.set_num_threads(1)
    for view, tensor in pairs:
        view.copy_(tensor)


def _places(model, shapes, quantization) -> dict[str, tuple[torch.nn.Module, str, int, int]]:
    """Trainer name -> (engine module, its parameter's name, first row, rows); a LookupError
    says what does not fit."""
    if quantization is not None:
        raise LookupError(f"the engine is quantized ({quantization})")
    if any(p.device.type != "cpu" for p in model.parameters()):
        raise LookupError("the engine is not on the CPU")  # GPU: sleep mode frees the weights
    packed = getattr(model, "packed_modules_mapping", {})
    fused = {part: (name, i) for name, parts in packed.items() for i, part in enumerate(parts)}
    places, covered = {}, {}
    for name, shape in shapes:
        path, _, leaf = name.rpartition(".")
        parent, _, proj = path.rpartition(".")
        try:
            if proj in fused:  # rows of a fused projection
                into, shard = fused[proj]
                module = model.get_submodule(f"{parent}.{into}")
                sizes = module.output_partition_sizes
                first, fits = sum(sizes[:shard]), shape[:1] == (sizes[shard],)
            else:
                module, first, fits = model.get_submodule(path), 0, True
            full = _full_shape(module, leaf)
        except (AttributeError, IndexError):
            raise LookupError(f"trainer parameter {name} has no place in the engine") from None
        if not (fits and shape and shape[1:] == full[1:] and first + shape[0] <= full[0]):
            raise LookupError(f"trainer parameter {name} {shape} does not fit the engine's "
                              f"{full}")
        places[name] = (module, leaf, first, shape[0])
        key = id(getattr(module, leaf))
        covered[key] = covered.get(key, 0) + shape[0]
    for module_name, module in model.named_modules():
        for leaf, param in module.named_parameters(recurse=False):
            full = _full_shape(module, leaf)  # a padded vocabulary needs its real rows only
            needed = getattr(module, "org_vocab_size", None) or (full[0] if full else 1)
            if covered.get(id(param), 0) != needed:
                raise LookupError(f"engine parameter {module_name}.{leaf} is not covered by "
                                  "the trainer's parameters")
    return places


def _switch(model, places, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    """Give packed layers their plain weights back and the plain GEMM; return the views.

    Weight and bias come back in the engine's dtype (`dtype`): a bf16 engine on CPU keeps
    the packed layers' biases in fp32, and the plain GEMM needs one dtype.
    """
    for module in model.modules():
        if hasattr(module, "cpu_linear"):
            if module.weight.numel() == 0:  # freed after packing; the first push fills it
                module.weight = torch.nn.Parameter(
                    torch.zeros(_full_shape(module, "weight"), dtype=dtype),
                    requires_grad=False)
            if getattr(module, "bias", None) is not None and module.bias.dtype != dtype:
                module.bias = torch.nn.Parameter(module.bias.data.to(dtype), requires_grad=False)
            module.cpu_linear = torch.nn.functional.linear
    return {name: getattr(module, leaf).data.narrow(0, first, rows)
            for name, (module, leaf, first, rows) in places.items()}


def _full_shape(module, leaf: str) -> tuple[int, ...]:
    """The parameter's logical shape, also for a linear weight freed after packing."""
    param = getattr(module, leaf)
    if leaf == "weight" and param.numel() == 0 and hasattr(module, "input_size_per_partition"):
        return (module.output_size_per_partition, module.input_size_per_partition)
    return tuple(param.shape)
