"""The trainer's update as a share of the machine's matmul rate (issue 17).

    PYTHONPATH=. .venv/bin/python bench/train_step.py [--sizes 256x4,512x8] [--out F]

For each model size (hidden x layers, the default model's layout: char vocabulary, 4 heads,
MLP 3x hidden) it builds a random batch shaped like the default run's (32 groups of K=8,
prompt plus reply lengths drawn from --min-len..--max-len tokens: the default run's
are 8 to 45), times `k2rl.step.trainer.update`
with the default TrainConfig (π_old from the engine's log-probs, set here to the trainer's own
so the check passes; 2 inner steps), counts the update's matmul FLOPs over real tokens
(k2rl.lm.flops: forward 2·P·n plus causal attention, backward 2x forward) and divides by the
time. The model computes as the trainer's would (`--autocast`, `--attention`: the
`model.autocast` and `model.attention` settings, auto by default: bf16 matmuls and eager
attention on a CPU with AMX). The matmul rates are the best of several fp32 2048³ and bf16
1024³/2048³ matmuls in the same process, same threads; the update's rate is given as a share
of each. Results: bench/results/train_step.json.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "results" / "train_step.json"


def make_groups(tokenizer, rng, groups: int, k: int, min_len: int, max_len: int):
    from k2rl.step.group import Group, Request, Status, Trajectory

    out = []
    vocab = [i for i in range(len(tokenizer)) if i not in tokenizer.all_special_ids]
    for g in range(groups):
        prompt = [int(x) for x in rng.choice(vocab, size=int(rng.integers(min_len // 2,
                                                                          max_len // 2)))]
        group = Group(Request("k2rl/Arithmetic-v1", g, group=g, k=k), 1)
        for i in range(k):
            reply = [int(x) for x in rng.choice(vocab, size=int(rng.integers(
                max(1, min_len - len(prompt)), max(2, max_len - len(prompt)))))]
            group.trajectories.append(Trajectory(
                f"1:{g}:{i}", "k2rl/Arithmetic-v1", "arithmetic", str(g), i, ids=prompt + reply,
                mask=[0] * len(prompt) + [1] * len(reply),
                rewards={"task": float(rng.random() < .5)}, n_tokens=len(reply),
                status=Status.DONE))
        out.append(group)
    return out


def one_size(hidden: int, layers: int, args) -> dict:
    import numpy as np
    import torch
    from transformers import Qwen2ForCausalLM

    from k2rl.bootstrap.model import build_config, build_tokenizer
    from k2rl.bootstrap.recipe import Recipe
    from k2rl.config import TrainConfig
    from k2rl.lm import precision
    from k2rl.lm.flops import matmul_params
    from k2rl.step.trainer import batch_of, make_optimizer, old_logp, update

    tokenizer = build_tokenizer()
    torch.manual_seed(0)
    model = Qwen2ForCausalLM._from_config(build_config(Recipe(
        hidden_size=hidden, num_layers=layers, num_heads=4, intermediate_size=3 * hidden),
        tokenizer), attn_implementation=precision.attention(args.attention, "cpu")).eval()
    precision.enable(model, precision.autocast_dtype(args.autocast, "cpu"),
                     precision.long_attention(args.attention, "cpu"))
    groups = make_groups(tokenizer, np.random.default_rng(0), args.groups, args.k,
                         args.min_len, args.max_len)
    batch = batch_of(groups, tokenizer.pad_token_id)
    _, tok = old_logp(model, batch, "sum")  # the engine's log-probs, as an engine would give
    for i, t in enumerate(t for g in groups for t in g.trajectories):
        t.logp_engine = tok[i][batch["loss_mask"][i] > 0].tolist()
    cfg = TrainConfig()
    optimizers = make_optimizer(model, cfg)
    runs = []
    for _ in range(args.repeats + 1):  # the first is warm-up
        start = time.perf_counter()
        metrics = update(model, optimizers, groups, cfg, tokenizer.pad_token_id)
        runs.append((time.perf_counter() - start, metrics))
    seconds = statistics.median(s for s, _ in runs[1:])
    flops = runs[-1][1]["train_flops"]
    real = int(batch["attention_mask"].sum())
    return {"hidden": hidden, "layers": layers, "matmul_params": matmul_params(model),
            "sequences": len(batch["input_ids"]), "real_tokens": real,
            "padded_tokens": int(batch["attention_mask"].numel()),
            "seconds": seconds, "all_seconds": [s for s, _ in runs[1:]],
            "train_flops": flops, "gflops": flops / seconds / 1e9,
            "old_logp_recomputed": runs[-1][1]["old_logp_recomputed"],
            "old_logp_extra_pass": runs[-1][1]["old_logp_extra_pass"]}


def main(argv=None) -> None:
    from k2rl.config import ATTENTION_CHOICES, AUTOCAST_CHOICES

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="256x4,512x8,1024x8")
    p.add_argument("--groups", type=int, default=32)
    p.add_argument("--k", type=int, default=8)
    p.add_argument("--min-len", type=int, default=8)
    p.add_argument("--max-len", type=int, default=48)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--autocast", default="auto", choices=AUTOCAST_CHOICES)
    p.add_argument("--attention", default="auto", choices=ATTENTION_CHOICES)
    p.add_argument("--out", default=str(OUT))
    args = p.parse_args(argv)
    import torch

    from bench.default_run import matmul_gflops
    from k2rl.lm import precision

    torch.set_num_threads(args.threads)
    load = os.getloadavg()
    rate = matmul_gflops(args.threads)
    bf16_rate = matmul_gflops(args.threads, dtype="bfloat16")
    dtype = precision.autocast_dtype(args.autocast, "cpu")
    own = bf16_rate if dtype == "bfloat16" else rate
    rows = []
    for size in args.sizes.split(","):
        hidden, layers = (int(x) for x in size.split("x"))
        row = one_size(hidden, layers, args)
        row["pct_of_matmul"] = 100 * row["gflops"] / rate
        row["pct_of_own_dtype_matmul"] = 100 * row["gflops"] / own
        rows.append(row)
        print(f"{row['matmul_params'] / 1e6:6.1f} M matmul params: update {row['seconds']:.2f} s, "
              f"{row['gflops']:.1f} GFLOP/s = {row['pct_of_matmul']:.1f}% of fp32's {rate:.0f}, "
              f"{row['pct_of_own_dtype_matmul']:.1f}% of {dtype}'s {own:.0f}", flush=True)
    result = {"benchmark": "k2rl update FLOP rate vs the matmul rate",
              "autocast": dtype, "attention": precision.attention(args.attention, "cpu"),
              "bf16_matmul_gflops": bf16_rate,
              "timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(),
              "threads": args.threads, "load_average_at_start": load,
              "load_average_at_end": os.getloadavg(), "matmul_gflops": rate,
              "batch": {"groups": args.groups, "k": args.k, "min_len": args.min_len,
                        "max_len": args.max_len},
              "sizes": rows,
              "target": {"pct_of_matmul": 70.0,
                         "meets_target": all(r["pct_of_own_dtype_matmul"] >= 70 for r in rows)}}
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
