"""The GPU code path on a CPU machine: engine arguments, the colocation order, optimizer
offload and the GPU configs. No vLLM engine is started (a fake records the calls)."""
import os
import subprocess
import sys

import pytest
import torch

from k2rl.config import load_config
from k2rl.device import engine
from k2rl.device.colocate import Colocation
from k2rl.device.offload import offload_optimizer


def test_engine_kwargs_cpu_is_eager_without_sleep_or_gpu_share():
    kw = engine.engine_kwargs("/m", 256, 7)
    assert kw == {"model": "/m", "dtype": "float32", "max_model_len": 256, "seed": 7,
                  "max_num_seqs": 512, "enable_prefix_caching": True, "enforce_eager": True,
                  "block_size": 32}


def test_engine_kwargs_cuda_sleeps_in_bf16_with_cuda_graphs():
    kw = engine.engine_kwargs("/m", 256, 7, dtype="bfloat16", device="cuda", sleep_mode=True,
                              gpu_memory_utilization=0.4)
    assert kw["dtype"] == "bfloat16"
    assert kw["enforce_eager"] is False
    assert kw["enable_sleep_mode"] is True
    assert kw["gpu_memory_utilization"] == 0.4
    assert engine.engine_kwargs("/m", 256, 7, device="cuda")["enable_sleep_mode"] is False


def test_engine_kwargs_rejects_sleep_on_cpu_and_unknown_devices():
    with pytest.raises(ValueError, match="sleep_mode needs ray.device cuda"):
        engine.engine_kwargs("/m", 256, 7, sleep_mode=True)
    with pytest.raises(ValueError, match="cpu or cuda"):
        engine.engine_kwargs("/m", 256, 7, device="tpu")


class FakeLLM:
    """Records sleep/wake calls like vllm.LLM; fully awake once both tags are back."""

    def __init__(self, calls: list):
        self.calls, self.asleep = calls, set()

    def sleep(self, level):
        self.calls.append(("sleep", level))
        self.asleep = {"weights", "kv_cache"}

    def wake_up(self, tags=None):
        self.calls.append(("wake", tuple(tags)))
        self.asleep -= set(tags)
        return not self.asleep


def adamw_after_one_step():
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model(torch.randn(5, 4)).square().sum().backward()
    opt.step()
    return model, opt


def moments(opt):
    return [(s["exp_avg"], s["exp_avg_sq"]) for s in opt.state.values()]


def test_colocation_order_sleep_then_train_then_wake_push_wake():
    calls = []
    colo = Colocation(FakeLLM(calls), sleep_mode=True, device="cpu")
    _, opt = adamw_after_one_step()
    train_metrics = colo.before_train([opt])
    calls.append("update")
    gen_metrics = colo.before_generate([opt], lambda: calls.append("push") or {"sync_seconds": 0.5})
    assert calls == [("sleep", 2), "update", ("wake", ("weights",)), "push",
                     ("wake", ("kv_cache",))]
    assert gen_metrics["sync_seconds"] == 0.5
    assert {"colocate/sleep_seconds", "colocate/optimizer_load_seconds"} <= train_metrics.keys()
    assert {"colocate/optimizer_offload_seconds", "colocate/wake_weights_seconds",
            "colocate/wake_kv_cache_seconds"} <= gen_metrics.keys()
    assert all(v >= 0 for v in {**train_metrics, **gen_metrics}.values())
    assert not colo.asleep


def test_colocation_does_not_sleep_twice_nor_wake_an_awake_engine():
    calls = []
    colo = Colocation(FakeLLM(calls), sleep_mode=True, device="cpu")
    colo.before_generate([], lambda: {})  # a push before any update: the engine is awake
    colo.before_train([])
    colo.before_train([])
    assert calls == [("sleep", 2)]


def test_colocation_raises_if_engine_stays_asleep():
    class HalfAwake(FakeLLM):
        def wake_up(self, tags=None):
            super().wake_up(tags)
            return False

    colo = Colocation(HalfAwake([]), sleep_mode=True, device="cpu")
    colo.before_train([])
    with pytest.raises(RuntimeError, match="partly asleep"):
        colo.before_generate([], lambda: {})


def test_colocation_off_only_pushes():
    calls = []
    colo = Colocation(FakeLLM(calls), sleep_mode=False)
    assert colo.before_train([]) == {}
    assert colo.before_generate([], lambda: {"sync_bytes": 8.0}) == {"sync_bytes": 8.0}
    assert calls == []


def test_offload_moves_every_state_tensor_and_counts_bytes():
    _, opt = adamw_after_one_step()
    expected = sum(t.numel() * t.element_size() for pair in moments(opt) for t in pair)
    steps = [s["step"] for s in opt.state.values()]
    assert expected == 2 * 4 * (4 * 3 + 3 + 3 * 2 + 2)  # two fp32 moments per parameter
    # "meta" is the one other device a CPU machine has: it keeps shapes, not values
    assert offload_optimizer([opt], "meta") == expected
    assert all(t.is_meta for pair in moments(opt) for t in pair)
    assert [s["step"] for s in opt.state.values()] == steps  # scalars stay put
    assert offload_optimizer([opt], "meta") == 0  # already there


def test_offload_round_trip_keeps_values_and_optimizer_steps_on():
    model, opt = adamw_after_one_step()
    before = [(a.clone(), b.clone()) for a, b in moments(opt)]
    assert offload_optimizer([opt], "cpu") == 0  # already on the CPU: nothing to copy
    after = moments(opt)
    assert all(torch.equal(a, a0) and torch.equal(b, b0) for (a, b), (a0, b0) in zip(after, before))
    model(torch.randn(5, 4)).square().sum().backward()
    opt.step()
    assert not torch.equal(moments(opt)[0][0], before[0][0])


@pytest.mark.parametrize("path,workers", [("configs/gpu-1x.yaml", 1), ("configs/gpu-8x.yaml", 8)])
def test_gpu_configs_load(path, workers):
    cfg = load_config(path)
    assert (cfg.ray.device, cfg.ray.num_workers) == ("cuda", workers)
    assert (cfg.model.dtype, cfg.engine.sleep_mode) == ("bfloat16", True)
    assert 0 < cfg.engine.gpu_memory_utilization < 1
    kw = engine.engine_kwargs("/m", cfg.engine.max_model_len, 0, cfg.model.dtype,
                              cfg.ray.device, cfg.engine.sleep_mode,
                              cfg.engine.gpu_memory_utilization)
    assert kw["enable_sleep_mode"] and kw["dtype"] == "bfloat16"


def test_gpu_modules_import_without_cuda_or_vllm():
    code = ("import sys; import k2rl.device.colocate, k2rl.device.offload, k2rl.device.engine; "
            "assert 'vllm' not in sys.modules, 'vllm imported eagerly'")
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr
