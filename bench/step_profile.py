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
k2rl.flops), with --matmul as a share of this machine's fp32 matmul rate, and how often π_old
had to be recomputed instead of taken from the engine (`old_logp_recomputed`).
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
    if rates:  # the update's matmul FLOPs over real tokens per second (k2rl.flops)
        result["train_gflops_per_s"] = sum(rates) / len(rates)
        result["old_logp_recomputed"] = sum(r.get("old_logp_recomputed", 1.0)
                                            for r in rows) / n
    return result


def matmul_gflops(threads: int, n: int = 2048, reps: int = 8) -> float:
    """Best fp32 n³ matmul rate on `threads` threads, in GFLOP/s."""
    import torch

    torch.set_num_threads(threads)
    a, b, c = torch.randn(n, n), torch.randn(n, n), torch.empty(n, n)
    times = []
    for _ in range(reps + 2):
        start = time.perf_counter()
        torch.matmul(a, b, out=c)
        times.append(time.perf_counter() - start)
    return 2.0 * n ** 3 / min(times[2:]) / 1e9


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
    for kind, prof in result.items():
        if kind == "run":
            continue
        if kind == "matmul_gflops":
            continue
        print(f"{kind} ({prof['steps']}): {prof['seconds_per_step']:.2f} s a step")
        for phase, f in prof["phases"].items():
            label = "eval and other" if phase == "other" and "evaluation" in kind else phase
            print(f"  {label:<22}{f['seconds']:>8.3f} s {100 * f['share']:>6.1f}%")
        if "train_gflops_per_s" in prof:
            rate = prof["train_gflops_per_s"]
            share = (f" = {100 * rate / result['matmul_gflops']:.1f}% of this machine's "
                     f"{result['matmul_gflops']:.0f} GFLOP/s fp32 matmul"
                     if "matmul_gflops" in result else "")
            print(f"  update: {rate:.1f} GFLOP/s{share}; pi_old recomputed for "
                  f"{100 * prof['old_logp_recomputed']:.0f}% of trajectories")
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
