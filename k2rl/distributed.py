"""Data parallelism across hybrid workers: torch.distributed (gloo on CPU, NCCL on GPU).

Each worker holds a full copy of the policy and trains on its own whole groups of the step's
batch. After each backward the gradients are summed across workers (each worker scales its
loss by its share of the global minibatch), so every copy takes the same optimizer step as one
worker on the whole batch would. After the update, rank 0's weights are broadcast in buckets,
each bucket loaded into the local engine while the next one is in flight (the checkpoint-engine
idea of docs/method.md section 7); that also keeps replicas from drifting apart.
"""
from __future__ import annotations

import socket
from datetime import timedelta
from typing import Iterator

import torch
import torch.distributed as dist
from torch._utils import _flatten_dense_tensors, _unflatten_dense_tensors

BUCKET_BYTES = 32 * 2 ** 20
TIMEOUT = timedelta(minutes=10)


def free_address() -> str:
    """tcp://IP:PORT on this node for rank 0 to listen on."""
    ip = _node_ip()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))
        return f"tcp://{ip}:{s.getsockname()[1]}"


def _node_ip() -> str:
    try:
        import ray

        return ray.util.get_node_ip_address()
    except Exception:  # not inside Ray: loopback
        return "127.0.0.1"


def init(address: str, rank: int, world: int, device: str = "cpu") -> None:
    """Join the worker group (a no-op for a single worker)."""
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if device == "cuda" else "gloo", init_method=address,
                                rank=rank, world_size=world, timeout=TIMEOUT)


def world_size() -> int:
    return dist.get_world_size() if dist.is_initialized() else 1


def rank() -> int:
    return dist.get_rank() if dist.is_initialized() else 0


def all_sum(values: list[float]) -> list[float]:
    """Element-wise sum over workers (identity for one worker)."""
    if world_size() == 1:
        return list(values)
    device = "cuda" if dist.get_backend() == "nccl" else "cpu"  # NCCL reduces GPU tensors only
    t = torch.tensor(values, dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return t.tolist()


def all_reduce_grads(params: list[torch.nn.Parameter]) -> None:
    """Sum gradients over workers in one flat buffer; a missing gradient counts as zero."""
    if world_size() == 1:
        return
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = _flatten_dense_tensors(grads)
    dist.all_reduce(flat)
    for p, g in zip(params, _unflatten_dense_tensors(flat, grads)):
        if p.grad is None:
            p.grad = g
        else:
            p.grad.copy_(g)


def buckets(named: list[tuple[str, torch.Tensor]], bucket_bytes: int = BUCKET_BYTES
            ) -> list[list[tuple[str, torch.Tensor]]]:
    """Consecutive groups of parameters of at most bucket_bytes (one oversized tensor alone)."""
    out, cur, size = [], [], 0
    for name, t in named:
        n = t.numel() * t.element_size()
        if cur and size + n > bucket_bytes:
            out.append(cur)
            cur, size = [], 0
        cur.append((name, t))
        size += n
    return out + ([cur] if cur else [])


def broadcast_buckets(named: list[tuple[str, torch.Tensor]], bucket_bytes: int = BUCKET_BYTES,
                      src: int = 0) -> Iterator[list[tuple[str, torch.Tensor]]]:
    """Yield rank `src`'s parameters bucket by bucket, the next bucket already on the wire.

    The received values are written into the given tensors in place, so every rank ends with
    src's weights. With one worker it just yields the buckets.
    """
    groups = buckets(named, bucket_bytes)
    if world_size() == 1:
        yield from groups
        return
    flats = [_flatten_dense_tensors([t for _, t in g]) for g in groups]
    pending = dist.broadcast(flats[0], src, async_op=True)
    for i, group in enumerate(groups):
        pending.wait()
        if i + 1 < len(groups):  # pipelined: start the next transfer before loading this one
            pending = dist.broadcast(flats[i + 1], src, async_op=True)
        tensors = [t for _, t in group]
        for t, new in zip(tensors, _unflatten_dense_tensors(flats[i], tensors)):
            t.copy_(new)
        yield group


def shutdown() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()
