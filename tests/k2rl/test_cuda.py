"""The trainer's GPU code paths, run for real on a CUDA device: bf16 autocast with SDPA, the
update with AdamW and Muon, LoRA, chunked log-probs, optimizer offload, NCCL collectives and the
default model's warm-start. Skipped where torch sees no GPU (the development and CI machines);
run on a lent GPU with `pytest tests/k2rl/test_cuda.py` (docs/scaling.md, "What has run on a GPU").
test_gpu_path.py covers the same paths' CPU-side logic everywhere."""
import copy

import pytest
import torch

from k2rl.bootstrap.model import build_config, build_tokenizer
from k2rl.bootstrap.recipe import Recipe
from k2rl.config import LoraConfig, TrainConfig
from k2rl.lm import precision
from k2rl.lm.logprobs import token_logp
from k2rl.step.trainer import batch_of, make_optimizer, update
from tests.k2rl.test_distributed import batch as make_groups

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
PAD = build_tokenizer().pad_token_id


def small_model(attention: str = "eager"):
    from transformers import Qwen2ForCausalLM

    torch.manual_seed(0)
    cfg = Recipe(hidden_size=64, num_layers=2, num_heads=4, intermediate_size=128)
    config = build_config(cfg, build_tokenizer())
    config._attn_implementation = attention
    return Qwen2ForCausalLM(config).eval()


def on_cuda(model, autocast: str = "float32"):
    return precision.enable(copy.deepcopy(model).cuda(), autocast)


def moved(before: torch.nn.Module, after: torch.nn.Module) -> torch.Tensor:
    """The update's change of every weight, flattened, on the CPU."""
    return torch.cat([(a.detach().float().cpu() - b.detach().float().cpu()).flatten()
                      for b, a in zip(before.parameters(), after.parameters())])


@pytest.mark.parametrize("optimizer", ["adamw", "muon"])
def test_a_bf16_update_on_the_gpu_takes_the_cpu_s_fp32_step(optimizer):
    cfg = TrainConfig(optimizer=optimizer, lr=1e-3)
    cpu = small_model()
    gpu = on_cuda(small_model(precision.attention("auto", "cuda")), "bfloat16")
    assert gpu.config._attn_implementation == "sdpa"
    start = copy.deepcopy(cpu)
    m_cpu = update(cpu, make_optimizer(cpu, cfg), make_groups(), cfg, PAD)
    m_gpu = update(gpu, make_optimizer(gpu, cfg), make_groups(), cfg, PAD)
    assert m_gpu["loss"] == pytest.approx(m_cpu["loss"], abs=0.02)
    a, b = moved(start, cpu), moved(start, gpu)
    assert torch.nn.functional.cosine_similarity(a, b, dim=0) > 0.9
    assert next(gpu.parameters()).device.type == "cuda"


def test_chunked_log_probs_on_the_gpu_match_the_one_shot_pass_and_its_gradient():
    model = on_cuda(small_model())
    batch = batch_of(make_groups(), PAD, "cuda")
    ids, mask = batch["input_ids"], batch["attention_mask"]
    one = token_logp(model, ids, mask)
    one.sum().backward()
    grad = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    chunked = token_logp(model, ids, mask, max_logits=1)
    chunked.sum().backward()
    torch.testing.assert_close(chunked, one, atol=1e-5, rtol=0)
    for g, p in zip(grad, model.parameters()):
        torch.testing.assert_close(p.grad, g, atol=1e-5, rtol=1e-4)


def test_a_lora_update_on_the_gpu_moves_the_adapter_alone():
    from k2rl.device import lora

    model = small_model().cuda()
    base = {n: p.detach().clone() for n, p in model.named_parameters()}
    wrapped = lora.wrap(model, LoraConfig(rank=4, alpha=8), "/tmp/base")
    cfg = TrainConfig(lr=1e-2)
    # B starts at 0, so the first step moves B only; a second step moves A too.
    for _ in range(2):
        update(model, make_optimizer(model, cfg), make_groups(), cfg, PAD)
    adapter = lora.adapter_params(model)
    assert adapter and all(p.device.type == "cuda" for p in adapter.values())
    assert any(p.abs().sum() > 0 for n, p in adapter.items() if "lora_B" in n)
    for name, p in wrapped.get_base_model().named_parameters():
        if "lora_" not in name:
            key = name.replace(".base_layer", "")
            torch.testing.assert_close(p, base[key], atol=0, rtol=0)


def test_offloaded_optimizer_state_comes_back_and_the_next_step_is_unchanged():
    from k2rl.device.offload import offload_optimizer

    cfg = TrainConfig(lr=1e-3)
    kept, offloaded = on_cuda(small_model()), on_cuda(small_model())
    opts = {id(m): make_optimizer(m, cfg) for m in (kept, offloaded)}
    for m in (kept, offloaded):
        update(m, opts[id(m)], make_groups(), cfg, PAD)
    assert offload_optimizer(opts[id(offloaded)], "cpu") > 0
    states = [v for s in opts[id(offloaded)][0].state.values() for v in s.values()
              if torch.is_tensor(v) and v.ndim]
    assert states and all(v.device.type == "cpu" and v.is_pinned() for v in states)
    assert offload_optimizer(opts[id(offloaded)], "cuda") > 0
    for m in (kept, offloaded):
        update(m, opts[id(m)], make_groups(), cfg, PAD)
    for a, b in zip(kept.parameters(), offloaded.parameters()):
        torch.testing.assert_close(a, b, atol=0, rtol=0)


def test_nccl_sums_gradients_and_broadcasts_buckets_on_one_gpu(monkeypatch):
    """NCCL needs a GPU per rank, so one rank here: the collectives k2rl calls, for real."""
    import torch.distributed as dist

    from k2rl.device import distributed

    address = distributed.free_address().removeprefix("tcp://")
    host, port = address.rsplit(":", 1)
    store = dist.TCPStore(host, int(port), 1, True)
    group = dist.ProcessGroupNCCL(dist.PrefixStore("k2rl-dp", store), 0, 1)
    monkeypatch.setattr(distributed, "_GROUP", group)
    monkeypatch.setattr(distributed, "_DEVICE", "cuda")
    monkeypatch.setattr(distributed, "world_size", lambda: 2)  # take the collective paths
    assert distributed.all_sum([1.5, 2.0]) == [1.5, 2.0]
    p = torch.nn.Parameter(torch.ones(3, device="cuda"))
    p.grad = torch.full((3,), 2.0, device="cuda")
    distributed.all_reduce_grads([p])
    assert p.grad.tolist() == [2.0, 2.0, 2.0]
    named = [(f"w{i}", torch.full((256,), float(i), device="cuda")) for i in range(4)]
    got = list(distributed.broadcast_buckets(named, bucket_bytes=2048))
    assert len(got) == 2 and [t[0].item() for _, t in named] == [0.0, 1.0, 2.0, 3.0]
    torch.cuda.synchronize()


def test_the_default_model_s_warm_start_trains_on_the_gpu():
    import numpy as np

    from k2rl.bootstrap import sft

    cfg = Recipe(hidden_size=64, num_layers=2, num_heads=4, intermediate_size=128)
    tokenizer = build_tokenizer()
    model = small_model().cuda()
    envs_ = sft.make_demo_envs(cfg)
    rng = np.random.default_rng(0)
    seqs = iter([sft.demonstration(envs_[i % len(envs_)], tokenizer, i, rng) for i in range(8 * 16)])
    stats = sft.train_steps(model, tokenizer, lambda: next(seqs), 8, 16, 3e-3, "gpu", False)
    assert stats["last_loss"] < stats["first_loss"]
    assert next(model.parameters()).device.type == "cuda"


def test_the_default_model_is_built_on_the_gpu_and_saved_from_the_cpu(tmp_path):
    from k2rl.bootstrap.model import build_device, build_model

    assert build_device() == "cuda"
    recipe = Recipe(hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64, sft_steps=2,
                    sft_batch=4, judge_steps=2)
    out = build_model(recipe, str(tmp_path), progress=False)
    from transformers import AutoModelForCausalLM

    assert AutoModelForCausalLM.from_pretrained(out).num_parameters() > 0
