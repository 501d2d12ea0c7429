"""Scale-out benchmark: 1 vs 2 hybrid workers, and weight-sync speed against model size.

Part `workers` runs `k2rl train` on the embedded default model (the cached warm-start, as
`make train` builds it) for --steps RL steps with 1 worker (2 threads) and with 2 workers
(1 thread each) on the same global batch, and reports from each run's metrics: median
seconds per step (step 1 excluded: warm-up), its rollout / train / sync parts, and rollout
tokens/s (model tokens generated per step / rollout seconds).

Part `sync` builds random-initialised models of several sizes (same layout as the default,
wider), starts the in-process vLLM engine on each (one subprocess per size) and times
`engine.push_weights` (--repeats pushes after a warm-up one, median), giving bytes/s. Before
that first push, in the same process, it times vLLM's `reload_weights` path (what
`push_weights` falls back to, and did before k2rl.device.weight_sync) the same way. Next to them:
this machine's memory-copy bandwidth, from `torch` copies of a 256 MiB buffer (bytes copied
per second) timed between the pushes, so that both see the same load, and the load average.
`fraction_of_copy` is the median push's bandwidth over the median copy's (on a busy machine
the two move together); `best_fraction_of_copy` compares the best of each. The target
(issue 17): `fraction_of_copy` >= 0.5 from 100 M parameters up.

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
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "scale.json"
TARGET_FRACTION, TARGET_PARAMS = 0.5, 100_000_000


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
                   f"ray.num_workers={workers}", f"engine.threads={threads}",
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


def copy_seconds(src, dst) -> float:
    t0 = time.perf_counter()
    dst.copy_(src)
    return time.perf_counter() - t0


def one_size(hidden: int, repeats: int) -> dict:
    """In a fresh process: build, start the engine, time the reload path, then the push."""
    from k2rl.device import engine

    engine.configure_env(2, 1)
    import torch
    from transformers import Qwen2ForCausalLM

    from k2rl.bootstrap.model import build_config, build_tokenizer
    from k2rl.bootstrap.recipe import Recipe
    from k2rl.lm.hf import param_count

    torch.set_num_threads(2)
    tok = build_tokenizer()
    heads = max(4, hidden // 64)
    cfg = Recipe(hidden_size=hidden, num_heads=heads, num_layers=4, intermediate_size=3 * hidden)
    model = Qwen2ForCausalLM(build_config(cfg, tok)).eval()
    named = [(name, p.detach()) for name, p in model.named_parameters()]
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp)
        tok.save_pretrained(tmp)
        llm = engine.start_engine(tmp, 256, 0)

        def reload() -> float:  # the fallback path; only before the first push switches
            t0 = time.perf_counter()
            llm.collective_rpc(engine._reload, args=(named,))
            llm.reset_prefix_cache()
            return time.perf_counter() - t0

        reloads = [reload() for _ in range(repeats + 1)][1:]
        engine.push_weights(llm, model)  # warm-up: switches the engine to the copy plan
        src = torch.randn(64 * 2 ** 20)  # 256 MiB, copied between the pushes: the same load
        dst = torch.empty_like(src)
        copies, pushes = [], []
        for _ in range(repeats):
            copies += [copy_seconds(src, dst) for _ in range(3)]
            pushes.append(engine.push_weights(llm, model)["sync_seconds"])
    nbytes = sum(t.numel() * t.element_size() for _, t in named)
    seconds = statistics.median(pushes)
    return {"hidden": hidden, "params": param_count(model), "bytes": nbytes,
            "sync_seconds": seconds, "bytes_per_s": nbytes / seconds, "sync_seconds_all": pushes,
            "reload_seconds": statistics.median(reloads),
            "reload_bytes_per_s": nbytes / statistics.median(reloads),
            "copy_bytes_per_s": src.numel() * 4 / statistics.median(copies),
            "copy_best_bytes_per_s": src.numel() * 4 / min(copies),
            "sync_best_bytes_per_s": nbytes / min(pushes),
            "load_average": [load_before, os.getloadavg()[0]]}


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
        r["best_fraction_of_copy"] = r["sync_best_bytes_per_s"] / r["copy_best_bytes_per_s"]
        r["reload_fraction_of_copy"] = r["reload_bytes_per_s"] / r["copy_bytes_per_s"]
    return rows


def sync_target(rows: list[dict]) -> dict:
    """Issue 17: at >= 100 M parameters a push runs at >= 50% of memory-copy bandwidth."""
    big = [r["fraction_of_copy"] for r in rows if r["params"] >= TARGET_PARAMS]
    return {"fraction_of_copy": TARGET_FRACTION, "from_params": TARGET_PARAMS,
            "worst_fraction": min(big) if big else None,
            "meets_target": bool(big) and min(big) >= TARGET_FRACTION}


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
        result["sync_target"] = sync_target(result["sync"])
        print(f"{'params':>11} {'MB':>6} {'sync s':>7} {'GB/s':>6} {'%copy':>6} {'best%':>6} "
              f"{'reload s':>8} {'GB/s':>6} {'%copy':>6} {'copy GB/s':>9} {'load':>5}")
        for r in result["sync"]:
            print(f"{r['params']:>11,} {r['bytes'] / 1e6:>6.1f} {r['sync_seconds']:>7.3f} "
                  f"{r['bytes_per_s'] / 1e9:>6.2f} {100 * r['fraction_of_copy']:>5.1f}% "
                  f"{100 * r['best_fraction_of_copy']:>5.1f}% "
                  f"{r['reload_seconds']:>8.3f} {r['reload_bytes_per_s'] / 1e9:>6.2f} "
                  f"{100 * r['reload_fraction_of_copy']:>5.1f}% "
                  f"{r['copy_bytes_per_s'] / 1e9:>9.2f} {r['load_average'][1]:>5.2f}")
        print(f"target: {result['sync_target']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1))
    print(f"[scale] wrote {args.out}")


if __name__ == "__main__":
    main()
