"""Move optimizer state between devices, so the rollout engine can use the GPU memory it held.

AdamW keeps two moments per parameter in the parameter's dtype, twice the memory of the weights;
while the engine generates, that state can wait on the host.
"""
from __future__ import annotations

import torch


def offload_optimizer(optimizers: list[torch.optim.Optimizer], device: str | torch.device) -> int:
    """Move every state tensor of `optimizers` to `device` in place; returns the bytes moved.

    Scalar (0-dim) tensors stay where they are: torch keeps AdamW's `step` on the CPU unless
    the optimizer is capturable or fused, and expects it there. Copies to the CPU land in pinned
    memory and run asynchronously (`non_blocking`), so the call ends with a synchronize.
    """
    device = torch.device(device)
    moved = 0
    for opt in optimizers:
        for state in opt.state.values():
            for key, value in state.items():
                if not torch.is_tensor(value) or value.ndim == 0 or _on(value, device):
                    continue
                state[key] = value.to(device, non_blocking=True)
                moved += value.numel() * value.element_size()
    if moved and torch.cuda.is_available():
        torch.cuda.synchronize()  # the host copies must be complete before anyone reads them
    return moved


def _on(tensor: torch.Tensor, device: torch.device) -> bool:
    """Whether `tensor` is on `device`; "cuda" without an index matches any GPU's tensors."""
    return tensor.device.type == device.type and device.index in (None, tensor.device.index)


def trim_heap() -> bool:
    """Hand the C heap's free pages back to the OS (glibc's `malloc_trim`); False where there
    is no glibc.

    An update frees its micro-batches' activations, but glibc keeps most of those pages in the
    process, where they count in its resident memory (what Ray's memory monitor reads) until
    the next update reuses them, fragmented; trimmed after each update and rollout, the next
    peak starts from the live tensors alone.
    """
    import ctypes

    try:
        return bool(ctypes.CDLL("libc.so.6").malloc_trim(0))
    except (OSError, AttributeError):
        return False
