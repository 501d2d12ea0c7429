"""Scale-out benchmark: 1 vs 2 hybrid workers, and weight-sync speed against model size.

Part `workers` runs `k2rl train` on the embedded default model (the cached warm-start, as
`make train` builds it) for --steps RL steps with 1 worker (2 threads) and with 2 workers
(1 thread each) on the same global batch, and reports from each run's metrics: median
seconds per step (step 1 excluded: warm-up), its rollout / train / sync parts, and rollout
tokens/s (model tokens generated per step / rollout seconds).

Part `sync` builds random-initialised models of several sizes (same layout as the default,
wider), starts the in-process vLLM engine on each (one subprocess per size) and times
`engine.push_weights` (--repeats pushes, median), giving bytes/s. Next to it: this machine's
memory-copy bandwidth, the best of several `torch` copies of a 256 MiB buffer (bytes copied
per second), measured in the same process.

Results go to bench/results/scale.json (and a table to stdout). Run from the repo root on an
otherwise idle machine:

    PYTHONPATH=. .venv/bin/python bench/scale.py                  # both parts, ~10 min
    PYTHONPATH=. .venv/bin/python bench/scale.py --part sync --sizes 64,128 --repeats 2  # quick
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "scale.json"


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--part", choices=["all", "workers", "sync"], default="all")
    p.add_argument("--steps", type=int, default=6, help="RL steps per worker count")
    p.add_argument("--config", default="configs/default.yaml")
    p.add_argument("--sizes", default="256,512,1024,1536",
                   help="hidden sizes of the sync models (4 layers, MLP 3x)")
    p.add_argument("--repeats", type=int, default=5, help="timed pushes per size")
    p.add_argument("--out", type=Path, default=OUT)
    p.add_argument("--one-size", type=int, help=argparse.SUPPRESS)  # subprocess mode
    return p.parse_args(argv)


# --------------------------------------------------------------------------- workers


def run_workers(args) -> list[dict]:
    from k2rl.config import load_config

    cfg = load_config(args.config)
    per_step = cfg.rollout.k * cfg.rollout.prompts_per_step  # trajectories per step
    rows = []
    for workers, threads in ((1, 2), (2, 1)):
        with tempfile.TemporaryDirectory() as tmp:
            cmd = [sys.executable, "-m", "k2rl", "train", args.config, f"train.steps={args.steps}",
                   f"ray.num_workers={workers}", f"rollout.threads={threads}",
                   f"eval.every={args.steps}", "eval.prompts_per_task=16", "log.progress=false",
                   f"log.run_dir={tmp}", "log.run_name=scale"]
            print(f"[scale] {workers} worker(s): {' '.join(cmd[3:])}", flush=True)
            subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
            lines = (Path(tmp) / "scale" / "metrics.jsonl").read_text().splitlines()
            steps = [m for m in map(json.loads, lines) if m["step"] > 1]
            tokens = [m["train/all/length"] * per_step for m in steps]
            med = lambda key: statistics.median(m[key] for m in steps)  # noqa: E731
            rows.append({
                "workers": workers, "threads_per_worker": threads, "steps_timed": len(steps),
                "step_seconds": med("time/step"), "rollout_seconds": med("time/rollout"),
                "train_seconds": med("time/train"), "sync_seconds": med("sync_seconds"),
                "rollout_tokens_per_s": statistics.median(
                    t / m["time/rollout"] for t, m in zip(tokens, steps)),
            })
    return rows


# --------------------------------------------------------------------------- sync


def copy_bandwidth() -> float:
    """Best bytes/s of copying a 256 MiB float32 buffer with torch."""
    import time

    import torch

    src = torch.randn(64 * 2 ** 20)
    dst = torch.empty_like(src)
    best = float("inf")
    for _ in range(6):
        t0 = time.perf_counter()
        dst.copy_(src)
        best = min(best, time.perf_counter() - t0)
    return src.numel() * 4 / best


def one_size(hidden: int, repeats: int) -> dict:
    """In a fresh process: build, start the engine, push the weights `repeats` times."""
    from k2rl import engine

    engine.configure_env(2, 1)
    import torch
    from transformers import Qwen2ForCausalLM

    from k2rl.config import ModelConfig
    from k2rl.model import build_config, build_tokenizer, param_count

    torch.set_num_threads(2)
    tok = build_tokenizer()
    heads = max(4, hidden // 64)
    cfg = ModelConfig(hidden_size=hidden, num_heads=heads, num_layers=4,
                      intermediate_size=3 * hidden)
    model = Qwen2ForCausalLM(build_config(cfg, tok)).eval()
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        llm = engine.start_engine(tmp, 256, 0)
        engine.push_weights(llm, model)  # warm-up
        pushes = [engine.push_weights(llm, model) for _ in range(repeats)]
    seconds = statistics.median(p["sync_seconds"] for p in pushes)
    nbytes = pushes[0]["sync_bytes"]
    return {"hidden": hidden, "params": param_count(model), "bytes": nbytes,
            "sync_seconds": seconds, "bytes_per_s": nbytes / seconds,
            "copy_bytes_per_s": copy_bandwidth()}


def run_sync(args) -> list[dict]:
    rows = []
    for hidden in map(int, args.sizes.split(",")):
        print(f"[scale] sync, hidden {hidden}", flush=True)
        out = subprocess.run([sys.executable, __file__, "--one-size", str(hidden),
                              "--repeats", str(args.repeats)], cwd=ROOT, check=True,
                             capture_output=True, text=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    for r in rows:
        r["fraction_of_copy"] = r["bytes_per_s"] / r["copy_bytes_per_s"]
    return rows


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.one_size:
        print(json.dumps(one_size(args.one_size, args.repeats)))
        return
    result = json.loads(args.out.read_text()) if args.out.exists() else {}
    result |= {"date": datetime.datetime.now().isoformat(timespec="seconds"),
               "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                           "load_at_start": os.getloadavg()[0]}}
    if args.part in ("all", "workers"):
        result["workers"] = run_workers(args)
        for r in result["workers"]:
            print(f"{r['workers']} worker(s): {r['step_seconds']:.2f} s/step (rollout "
                  f"{r['rollout_seconds']:.2f}, train {r['train_seconds']:.2f}, sync "
                  f"{r['sync_seconds']:.3f}), {r['rollout_tokens_per_s']:.0f} rollout tok/s")
    if args.part in ("all", "sync"):
        result["sync"] = run_sync(args)
        print(f"{'params':>10} {'MB':>8} {'sync s':>8} {'GB/s':>7} {'copy GB/s':>10} {'%':>6}")
        for r in result["sync"]:
            print(f"{r['params']:>10,} {r['bytes'] / 1e6:>8.1f} {r['sync_seconds']:>8.3f} "
                  f"{r['bytes_per_s'] / 1e9:>7.2f} {r['copy_bytes_per_s'] / 1e9:>10.2f} "
                  f"{100 * r['fraction_of_copy']:>5.1f}%")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(f"[scale] wrote {args.out}")


if __name__ == "__main__":
    main()
