"""Summarise a finished run folder: its results, or where its steps' time goes.

    python bench/default_run.py runs/RUN_NAME [--wall-seconds N] [--critic-eval] [--out F]
    python bench/default_run.py runs/RUN_NAME --profile [--matmul] [--out F]

Summary (default; writes --out, bench/results/default_run.json unless given): held-out accuracy
at every evaluation, the critic's held-out pair accuracy at every evaluation, mean
step/rollout/critic/train/sync seconds, sync bytes and the largest vLLM-vs-trainer log-prob
gap, all read from the run's metrics.jsonl (nothing typed in). `--wall-seconds` records how
long the whole `make train` took, set-up included, if measured. `--critic-eval` also runs
`k2rl critic eval --run RUN --json` on the starting model and on the last checkpoint (every
held-out pair of the run) and records both results.

Profile (`--profile`; writes --out only if given, e.g. bench/results/step_profile.json): over
the run's steps without an evaluation and over those with one, the mean seconds and share of
the step of each phase the controller times: rollout (generation and environment steps;
`time/reward` of it is spent in env.step: tools and verifiers), critic (the policy judging
critic-rewarded groups), train (the update, with the critic's own step), sync (the weight push
into the engine), eval (held-out evaluation and the critic's held-out accuracy, on evaluation
steps) and other (Redis writes, logging, checkpoints: the rest of `time/step`). A regression
shows as a phase whose share grows. It also gives the update's matmul rate
(`train_gflops_per_s`: FLOPs over real tokens, k2rl.lm.flops), with `--matmul` as a share of
this machine's fp32 and bf16 matmul rates (the update's matmuls run in bf16 under
`model.autocast` where the CPU has AMX), how often π_old was the trainer's rather than the
engine's (`old_logp_recomputed`) and how often that cost an extra forward pass
(`old_logp_extra_pass`).
"""
import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

PHASES = ("rollout", "critic", "train", "sync")


def _cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def summarise(run: Path) -> dict:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in rows if r["step"] > 0]
    mean = lambda key: sum(r[key] for r in steps) / len(steps)  # noqa: E731
    # the critic's phase: judging the critic-rewarded groups, harvesting the training pairs,
    # and its own optimizer step on them (critic_train_seconds, inside time/train)
    critic_share = (sum(r.get("time/critic", 0.0) + r.get("time/critic_refresh", 0.0)
                        + r.get("critic_train_seconds", 0.0) for r in steps)
                    / sum(r["time/step"] for r in steps))
    return {
        "run": run.name,
        "steps": len(steps),
        "heldout": {r["step"]: {k: v for k, v in r.items() if k.startswith("heldout/")}
                    for r in rows if any(k.startswith("heldout/") for k in r)},
        "critic": {r["step"]: {k: v for k, v in r.items() if k.startswith("critic/")}
                   for r in rows if "critic/accuracy" in r},
        "critic_seconds": (sum(r["time/critic"] for r in judged) / len(judged)
                           if (judged := [r for r in steps if "time/critic" in r]) else None),
        "critic_refresh_seconds": (sum(r.get("time/critic_refresh", 0.0) for r in steps)
                                   / len(steps)),
        "critic_train_seconds": (sum(r.get("critic_train_seconds", 0.0) for r in steps)
                                 / len(steps)),
        "critic_share_of_step": critic_share,
        "judge_share_of_step": critic_share,  # its old name, written until the next release
        "seconds_per_step": mean("time/step"), "rollout_seconds": mean("time/rollout"),
        "train_seconds": mean("time/train"), "sync_seconds": mean("sync_seconds"),
        "sync_bytes": steps[0]["sync_bytes"], "max_logp_gap": max(r["logp_gap"] for r in steps),
        "worker_rss_mb_max": max(r["mem/worker_rss_mb"] for r in steps),
        "worker_peak_rss_mb": max(r.get("mem/worker_peak_rss_mb", 0.0) for r in steps) or None,
        "time_to_first_step": rows[0].get("time/to_first_step"),
        "config": (run / "config.yaml").read_text(), "machine": platform.platform(),
        "processor": _cpu_name(),
    }


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


def step_profile(args: argparse.Namespace) -> dict:
    """The --profile mode: each phase's seconds and share of the step, printed."""
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
    return result


def critic_eval(run: Path) -> dict:
    """`k2rl critic eval --json` on the run's held-out pairs: starting model and last checkpoint."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from k2rl.bootstrap.model import recipe_dir
    from k2rl.bootstrap.recipe import recipe_for
    from k2rl.config import load_config

    cfg = load_config(run / "config.yaml")
    start = cfg.model.path or str(recipe_dir(recipe_for(cfg.model), cfg.model.cache_dir))
    models = {"start": start,
              "end": str(sorted((run / "checkpoints").glob("step-*"))[-1])}
    out = {}
    for name, model in models.items():
        res = subprocess.run([sys.executable, "-m", "k2rl", "critic", "eval", "--model", model,
                              "--run", str(run), "--json"], capture_output=True, text=True,
                             check=True)
        out[name] = {"model": model, **json.loads(res.stdout[res.stdout.index("{"):])}
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir")
    p.add_argument("--wall-seconds", type=float)
    p.add_argument("--critic-eval", action="store_true",
                   help="also run k2rl critic eval on the starting model and the last checkpoint")
    p.add_argument("--profile", action="store_true",
                   help="where the steps' time goes, phase by phase, instead of the summary")
    p.add_argument("--matmul", action="store_true",
                   help="with --profile: also measure this machine's fp32 and bf16 matmul rates "
                        "(run it on an idle machine) and give the update's rate as a share of them")
    p.add_argument("--threads", type=int, default=2, help="threads of the matmul (default 2)")
    p.add_argument("--out", help="where the JSON goes (the summary's default: "
                                 "bench/results/default_run.json; the profile's: none)")
    args = p.parse_args()
    if args.profile:
        result = step_profile(args)
        if args.out:
            Path(args.out).write_text(json.dumps(result, indent=1) + "\n")
        return
    result = summarise(Path(args.run_dir))
    if args.wall_seconds:
        result["make_train_wall_seconds"] = args.wall_seconds
    if args.critic_eval:
        result["critic_eval"] = critic_eval(Path(args.run_dir))
    out = args.out or str(Path(__file__).parent / "results" / "default_run.json")
    Path(out).write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "config"}, indent=1))


if __name__ == "__main__":
    main()
