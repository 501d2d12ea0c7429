"""One RL step of a model of Qwen2.5-0.5B's shape on this CPU: peak memory and seconds.

    python bench/memory.py [--prompts 4] [--k 4] [--out bench/results/memory.json]

A randomly initialised Qwen2 with Qwen2.5-0.5B's shape (vocabulary 151,936, 24 layers, hidden
896, 14 heads of 64, 2 key/value heads, MLP 4,864, tied embeddings: 494 M parameters) is saved
with a ChatML byte-level BPE tokenizer built here (nothing is downloaded), then one in-process
hybrid worker (the vLLM engine and the trainer, fp32) does what a run step does: roll out
`--prompts` k2rl/Calculator-v0 prompts K times each, one update of the Kimi loss (AdamW, two
inner steps, the chunked log-prob path), and the weight push into the engine. Peak resident
memory of the process (`ru_maxrss`) is recorded after each phase, with the seconds each took.
"""
import argparse
import json
import platform
import resource
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHAPE = dict(vocab_size=151_936, hidden_size=896, intermediate_size=4_864, num_hidden_layers=24,
             num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=512,
             tie_word_embeddings=True, rope_theta=1_000_000.0)


def peak_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20  # kB -> GiB


def build(folder: Path) -> Path:
    import torch
    from transformers import GenerationConfig, Qwen2Config, Qwen2ForCausalLM

    from tests.k2rl.fixtures import chatml_tokenizer

    tok = chatml_tokenizer()
    torch.manual_seed(0)
    model = Qwen2ForCausalLM(Qwen2Config(**SHAPE, eos_token_id=tok.eos_token_id,
                                         pad_token_id=tok.pad_token_id))
    model.generation_config = GenerationConfig(eos_token_id=tok.eos_token_id)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--prompts", type=int, default=4)
    p.add_argument("--k", type=int, default=4)
    p.add_argument("--out", default=str(ROOT / "bench" / "results" / "memory.json"))
    args = p.parse_args()
    from k2rl import engine

    engine.configure_env(2, kv_cache_gib=2)
    from k2rl.config import load_config
    from k2rl.group import Request, trajectories
    from k2rl.hybrid import HybridWorker

    phases = {}

    def phase(name, start):
        phases[name] = {"seconds": round(time.perf_counter() - start, 2),
                        "peak_rss_gib": round(peak_gib(), 2)}
        print(name, phases[name], flush=True)

    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        folder = build(Path(tmp) / "qwen2.5-0.5b-shape")
        phase("build and save", t)
        cfg = load_config(None, [f"model.path={folder}", "critic.refresh=false",
                                 "rollout.kv_cache_gib=2"])
        t = time.perf_counter()
        worker = HybridWorker(str(folder), cfg)
        phase("start (trainer + vLLM engine)", t)
        reqs = [Request("k2rl/Calculator-v0", s, group=s, k=args.k) for s in range(args.prompts)]
        t = time.perf_counter()
        groups = worker.rollout(reqs, 1)
        phase("rollout", t)
        t = time.perf_counter()
        metrics = worker.train(groups, 1)
        phase("train (Kimi loss, 2 AdamW steps)", t)
        t = time.perf_counter()
        sync = worker.sync()
        phase("weight push", t)
    tokens = sum(len(x.ids) for x in trajectories(groups))
    result = {"shape": SHAPE, "parameters": worker.param_count(), "trajectories": len(groups) * args.k,
              "tokens": tokens, "phases": phases,
              "seconds_per_step": round(sum(v["seconds"] for k, v in phases.items()
                                            if k in ("rollout", "train (Kimi loss, 2 AdamW steps)",
                                                     "weight push")), 2),
              "peak_rss_gib": round(peak_gib(), 2), "logp_gap": metrics["logp_gap"],
              "sync_gb": sync["sync_bytes"] / 1e9, "machine": platform.platform(),
              "trl_grpo": "not run: TRL is not installed in the project's environment"}
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "shape"}, indent=1))


if __name__ == "__main__":
    main()
