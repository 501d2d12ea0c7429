"""Data parallelism across hybrid workers: a gloo (CPU) or NCCL (GPU) group of their own.

Each worker holds a full copy of the policy and trains on its own whole groups of the step's
batch. After each backward the gradients are summed across workers (each worker scales its
loss by its share of the global minibatch), so every copy takes the same optimizer step as one
worker on the whole batch would. After the update, rank 0's weights are broadcast in buckets,
each bucket loaded into the local engine while the next one is in flight (the checkpoint-engine
idea of docs/method.md section 7); that also keeps replicas from drifting apart.

The workers' group is a process group object of its own (a TCPStore and a ProcessGroupGloo or
ProcessGroupNCCL), not torch.distributed's default group: a worker's in-process vLLM engine
initialises the default group for itself, with a world of one, so `init_process_group` would
find it taken and leave the workers training alone (which it once did: with two workers each
trained on its own half of the batch, and the engines drifted apart from the trainers by
1e-3 to 1e-2 nats a token).
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

_GROUP = None  # this process's worker group (a ProcessGroup), None for a single worker
_STORE = None  # its rendezvous store (rank 0 serves it), kept alive with it
_DEVICE = "cpu"  # where the group's tensors live: NCCL reduces GPU tensors only


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
    """Join the worker group at `address` (tcp://HOST:PORT, where rank 0 listens); a no-op
    for a single worker."""
    global _GROUP, _STORE, _DEVICE
    if world <= 1 or _GROUP is not None:
        return
    if device == "cuda" and not (torch.cuda.is_available() and hasattr(dist, "ProcessGroupNCCL")):
        raise RuntimeError("data-parallel workers on ray.device cuda need a CUDA build of torch "
                           "with NCCL and a visible GPU; this worker has neither")
    host, port = address.removeprefix("tcp://").rsplit(":", 1)
    _STORE = dist.TCPStore(host, int(port), world, rank == 0, timeout=TIMEOUT)
    store = dist.PrefixStore("k2rl-dp", _STORE)
    if device == "cuda":
        _GROUP = dist.ProcessGroupNCCL(store, rank, world)
    else:
        _GROUP = dist.ProcessGroupGloo(store, rank, world, TIMEOUT)
    _DEVICE = device


def world_size() -> int:
    return _GROUP.size() if _GROUP is not None else 1


def rank() -> int:
    return _GROUP.rank() if _GROUP is not None else 0


def _all_reduce(t: torch.Tensor) -> None:
    _GROUP.allreduce([t]).wait()  # the default op: sum


def all_sum(values: list[float]) -> list[float]:
    """Element-wise sum over workers (identity for one worker)."""
    if world_size() == 1:
        return list(values)
    t = torch.tensor(values, dtype=torch.float64, device=_DEVICE)
    _all_reduce(t)
    return t.tolist()


def all_reduce_grads(params: list[torch.nn.Parameter]) -> None:
    """Sum gradients over workers in one flat buffer; a missing gradient counts as zero."""
    if world_size() == 1:
        return
    grads = [p.grad if p.grad is not None else torch.zeros_like(p) for p in params]
    flat = _flatten_dense_tensors(grads)
    _all_reduce(flat)
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
    pending = _broadcast(flats[0], src)
    for i, group in enumerate(groups):
        pending.wait()
        if i + 1 < len(groups):  # pipelined: start the next transfer before loading this one
            pending = _broadcast(flats[i + 1], src)
        tensors = [t for _, t in group]
        for t, new in zip(tensors, _unflatten_dense_tensors(flats[i], tensors)):
            t.copy_(new)
        yield group


def _broadcast(t: torch.Tensor, src: int):
    """Start sending rank `src`'s `t` into every rank's `t`; returns the work to wait on."""
    opts = dist.BroadcastOptions()
    opts.rootRank, opts.rootTensor = src, 0
    return _GROUP.broadcast([t], opts)


def shutdown() -> None:
    global _GROUP, _STORE
    _GROUP = _STORE = None
