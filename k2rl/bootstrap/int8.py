"""Weights stored as int8 with one fp32 scale per row: how the default model's weights ship.

A matrix `w` is stored as `round(w / s)` in int8, with `s = max |row| / 127` for each row, under its
own name, and `s` under `<name>.scale`; a vector (a norm's weight, a bias) stays fp32. Widened back
(`unpack`), each weight is within half a step of its row's scale of the fp32 one. For the default
model this is 3.5 MB against 13.8 MB, and the widened weights judge the 357 fixed held-out pairs
exactly as the fp32 ones do (bench/archive/notebook.md, "The prebuilt default").

`python -m k2rl.bootstrap.int8 FP32.safetensors OUT.safetensors` packs a model's weights.
"""
from __future__ import annotations

import sys

import torch

SCALE = ".scale"


def pack(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Each matrix as int8 plus its rows' fp32 scales; every other tensor as it is."""
    out = {}
    for name, w in state.items():
        if w.dim() != 2:
            out[name] = w.float().contiguous()
            continue
        scale = w.float().abs().amax(dim=1).clamp(min=1e-12) / 127
        out[name] = torch.round(w.float() / scale[:, None]).clamp(-127, 127).to(torch.int8)
        out[name + SCALE] = scale.contiguous()
    return out


def unpack(tensors: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The fp32 weights `pack` stored: each int8 matrix times its rows' scales."""
    out = {}
    for name, t in tensors.items():
        if name.endswith(SCALE):
            continue
        if t.dtype == torch.int8:
            if name + SCALE not in tensors:
                raise ValueError(f"int8 weight {name} has no {name + SCALE}")
            t = t.float() * tensors[name + SCALE][:, None]
        out[name] = t
    return out


def main(argv: list[str]) -> int:
    from safetensors.torch import load_file, save_file

    if len(argv) != 2:
        print("usage: python -m k2rl.bootstrap.int8 FP32.safetensors OUT.safetensors",
              file=sys.stderr)
        return 2
    save_file(pack(load_file(argv[0])), argv[1], metadata={"format": "pt"})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
