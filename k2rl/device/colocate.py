"""Engine and trainer taking turns on one GPU: the order of one RL step in sleep mode.

    before_train:     engine sleeps (weights + KV cache freed) -> optimizer state back on the GPU
    (update)
    before_generate:  optimizer state to the host -> wake weights -> push -> wake KV cache
    (rollouts)

The weights wake before the push and the KV cache only after it (as vLLM's sleep-mode guide
advises), so the push never competes with the KV cache for memory. With sleep mode off (the
CPU default) both calls do nothing but the push.
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Callable

import torch

from k2rl.device import engine
from k2rl.device.offload import offload_optimizer

GIB = 2 ** 30


class Colocation:
    """Sequences one worker's engine and trainer on a shared GPU; call `before_train` at the
    start of each update and `before_generate` in place of the bare weight push."""

    def __init__(self, llm, sleep_mode: bool, device: str = "cuda"):
        self.llm = llm
        self.sleep_mode = sleep_mode
        self.device = device
        self.asleep = False

    def before_train(self, optimizers: list[torch.optim.Optimizer]) -> dict[str, float]:
        """Free the engine's GPU memory and bring the optimizer state back; returns metrics."""
        if not self.sleep_mode:
            return {}
        metrics = {}
        if not self.asleep:  # asleep already if no push came since the last update
            with _timed(metrics, "colocate/sleep_seconds"):
                engine.sleep(self.llm)
            self.asleep = True
        with _timed(metrics, "colocate/optimizer_load_seconds"):
            metrics["colocate/optimizer_gib"] = offload_optimizer(optimizers, self.device) / GIB
        _reset_peak()
        return {**metrics, **_memory("train")}

    def before_generate(self, optimizers: list[torch.optim.Optimizer],
                        push: Callable[[], dict]) -> dict[str, float]:
        """Offload the optimizer state, wake the engine around `push()`; returns its metrics
        and push's."""
        if not self.sleep_mode:
            return push()
        metrics = _peak("train")
        with _timed(metrics, "colocate/optimizer_offload_seconds"):
            offload_optimizer(optimizers, "cpu")
            _empty_cache()  # blocks cached by torch are invisible to vLLM's allocator
        with _timed(metrics, "colocate/wake_weights_seconds"):
            self._wake(["weights"])
        metrics |= push()
        with _timed(metrics, "colocate/wake_kv_cache_seconds"):
            awake = self._wake(["kv_cache"])
        if not awake:
            raise RuntimeError("the vLLM engine is still partly asleep after waking weights "
                               "and KV cache")
        self.asleep = False
        return {**metrics, **_memory("generate")}

    def _wake(self, tags: list[str]) -> bool:
        return engine.wake(self.llm, tags) if self.asleep else True


@contextmanager
def _timed(metrics: dict, key: str):
    """Puts the block's wall seconds in metrics[key]."""
    start = time.perf_counter()
    yield
    metrics[key] = time.perf_counter() - start


def _memory(phase: str) -> dict[str, float]:
    """This process's torch memory and the whole device's use (vLLM's pool included)."""
    if not torch.cuda.is_available():
        return {}
    free, total = torch.cuda.mem_get_info()
    return {f"gpu/mem_{phase}_gib": torch.cuda.memory_allocated() / GIB,
            f"gpu/reserved_{phase}_gib": torch.cuda.memory_reserved() / GIB,
            f"gpu/used_{phase}_gib": (total - free) / GIB}


def _peak(phase: str) -> dict[str, float]:
    if not torch.cuda.is_available():
        return {}
    return {f"gpu/peak_{phase}_gib": torch.cuda.max_memory_allocated() / GIB}


def _reset_peak() -> None:
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()


def _empty_cache() -> None:
    if torch.cuda.is_available():
        torch.cuda.empty_cache()
