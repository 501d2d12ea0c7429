"""Where one RL step's time goes, phase by phase, as a share of the step (issue 17).

    python bench/step_profile.py RUN_DIR [--out bench/results/step_profile.json]

Reads RUN_DIR/metrics.jsonl (nothing typed in) and prints, over the run's steps without an
evaluation and over those with one, the mean seconds and share of the step of each phase the
controller times: rollout (generation and environment steps; `time/reward` of it is spent in
env.step: tools and verifiers), critic (the policy judging critic-rewarded groups), train (the
update, with the judge's own step), sync (the weight push into the engine), eval (held-out
evaluation and the critic's held-out accuracy, on evaluation steps) and other (Redis writes,
logging, checkpoints: the rest of `time/step`). A regression shows as a phase whose share grows.
It also gives the update's matmul rate (`train_gflops_per_s`: FLOPs over real tokens,
k2rl.lm.flops), with --matmul as a share of this machine's fp32 and bf16 matmul rates (the
update's matmuls run in bf16 under `model.autocast` where the CPU has AMX), how often π_old
was the trainer's rather than the engine's (`old_logp_recomputed`) and how often that cost an
extra forward pass (`old_logp_extra_pass`).
"""
import argparse
import json
import time
from pathlib import Path

PHASES = ("rollout", "critic", "train", "sync")


def profile(rows: list[dict]) -> dict:
    """Mean seconds and share of the step per phase over `rows` (steps of one kind)."""
    n = len(rows)
    step = sum(r["time/step"] for r in rows) / n
    out = {p: sum(r.get(f"time/{p}", 0.0) for r in rows) / n for p in PHASES}
    out["env (within rollout)"] = sum(r.get("time/reward", 0.0) for r in rows) / n
    out["other"] = step - sum(out[p] for p in PHASES)
    result = {"steps": n, "seconds_per_step": step,
              "phases": {p: {"seconds": s, "share": s / step} for p, s in out.items()}}
    rates = [r["train_gflops_per_s"] for r in rows if "train_gflops_per_s" in r]
    if rates:  # the update's matmul FLOPs over real tokens per second (k2rl.lm.flops)
        result["train_gflops_per_s"] = sum(rates) / len(rates)
        result["old_logp_recomputed"] = sum(r.get("old_logp_recomputed", 1.0)
                                            for r in rows) / n
        result["old_logp_extra_pass"] = sum(r.get("old_logp_extra_pass", 1.0)
                                            for r in rows) / n
    return result


def matmul_gflops(threads: int, n: int = 2048, reps: int = 8, dtype: str = "float32") -> float:
    """Best n³ matmul rate in `dtype` on `threads` threads, in GFLOP/s (for bfloat16 the
    best of n and n/2: AMX's rate at 2048³ is half its rate at 1024³ on this machine)."""
    import torch

    torch.set_num_threads(threads)
    best = 0.0
    for size in (n, n // 2) if dtype == "bfloat16" else (n,):
        a, b = (torch.randn(size, size, dtype=getattr(torch, dtype)) for _ in range(2))
        c = torch.empty(size, size, dtype=a.dtype)
        times = []
        for _ in range(reps + 2):
            start = time.perf_counter()
            torch.matmul(a, b, out=c)
            times.append(time.perf_counter() - start)
        best = max(best, 2.0 * size ** 3 / min(times[2:]) / 1e9)
    return best


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir")
    p.add_argument("--out", help="also write the profile as JSON here")
    p.add_argument("--matmul", action="store_true",
                   help="also measure this machine's fp32 matmul rate (run it on an idle "
                        "machine) and give the update's rate as a share of it")
    p.add_argument("--threads", type=int, default=2, help="threads of the matmul (default 2)")
    args = p.parse_args()
    rows = [json.loads(x) for x in (Path(args.run_dir) / "metrics.jsonl").open()]
    steps = [r for r in rows if r["step"] > 0]
    kinds = {"training steps": [r for r in steps if "heldout/all/accuracy" not in r],
             "steps with an evaluation": [r for r in steps if "heldout/all/accuracy" in r]}
    result = {"run": str(args.run_dir),
              **{k: profile(v) for k, v in kinds.items() if v}}
    if args.matmul:
        result["matmul_gflops"] = matmul_gflops(args.threads)
        result["bf16_matmul_gflops"] = matmul_gflops(args.threads, dtype="bfloat16")
    for kind, prof in result.items():
        if not isinstance(prof, dict):
            continue
        print(f"{kind} ({prof['steps']}): {prof['seconds_per_step']:.2f} s a step")
        for phase, f in prof["phases"].items():
            label = "eval and other" if phase == "other" and "evaluation" in kind else phase
            print(f"  {label:<22}{f['seconds']:>8.3f} s {100 * f['share']:>6.1f}%")
        if "train_gflops_per_s" in prof:
            rate = prof["train_gflops_per_s"]
            share = (f" = {100 * rate / result['matmul_gflops']:.1f}% of this machine's "
                     f"{result['matmul_gflops']:.0f} GFLOP/s fp32 matmul and "
                     f"{100 * rate / result['bf16_matmul_gflops']:.1f}% of its "
                     f"{result['bf16_matmul_gflops']:.0f} GFLOP/s bf16"
                     if "matmul_gflops" in result else "")
            print(f"  update: {rate:.1f} GFLOP/s{share}; pi_old the trainer's for "
                  f"{100 * prof['old_logp_recomputed']:.0f}% of trajectories, an extra pass for "
                  f"{100 * prof['old_logp_extra_pass']:.0f}%")
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
