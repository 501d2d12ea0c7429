"""Summarise a finished run folder into bench/results/default_run.json.

    python bench/default_run.py runs/RUN_NAME [--wall-seconds N] [--critic-eval]

Held-out accuracy at every evaluation, the critic's held-out pair accuracy at every evaluation,
mean step/rollout/critic/train/sync seconds, sync bytes and the largest vLLM-vs-trainer log-prob
gap, all read from the run's metrics.jsonl (nothing typed in). `--wall-seconds` records how
long the whole `make train` took, set-up included, if measured. `--critic-eval` also runs
`k2rl critic eval --run RUN --json` on the starting model and on the last checkpoint (every
held-out pair of the run) and records both results.
"""
import argparse
import json
import platform
import subprocess
import sys
from pathlib import Path


def _cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def summarise(run: Path) -> dict:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in rows if r["step"] > 0]
    mean = lambda key: sum(r[key] for r in steps) / len(steps)  # noqa: E731
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
        # the judge's phase: judging the critic-rewarded groups and the training pairs
        "judge_share_of_step": sum(r.get("time/critic", 0.0) + r.get("time/critic_refresh", 0.0)
                                   for r in steps) / sum(r["time/step"] for r in steps),
        "seconds_per_step": mean("time/step"), "rollout_seconds": mean("time/rollout"),
        "train_seconds": mean("time/train"), "sync_seconds": mean("sync_seconds"),
        "sync_bytes": steps[0]["sync_bytes"], "max_logp_gap": max(r["logp_gap"] for r in steps),
        "worker_rss_mb_max": max(r["mem/worker_rss_mb"] for r in steps),
        "worker_peak_rss_mb": max(r.get("mem/worker_peak_rss_mb", 0.0) for r in steps) or None,
        "time_to_first_step": rows[0].get("time/to_first_step"),
        "config": (run / "config.yaml").read_text(), "machine": platform.platform(),
        "processor": _cpu_name(),
    }


def critic_eval(run: Path) -> dict:
    """`k2rl critic eval --json` on the run's held-out pairs: starting model and last checkpoint."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from k2rl.bootstrap.model import recipe_dir
    from k2rl.config import load_config

    cfg = load_config(run / "config.yaml")
    models = {"start": cfg.model.path or str(recipe_dir(cfg.model.default)),
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
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "default_run.json"))
    args = p.parse_args()
    result = summarise(Path(args.run_dir))
    if args.wall_seconds:
        result["make_train_wall_seconds"] = args.wall_seconds
    if args.critic_eval:
        result["critic_eval"] = critic_eval(Path(args.run_dir))
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "config"}, indent=1))


if __name__ == "__main__":
    main()
