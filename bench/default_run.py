"""Summarise a finished run folder into bench/results/default_run.json.

    python bench/default_run.py runs/RUN_NAME [--wall-seconds N]

Held-out accuracy at every evaluation, mean step/rollout/train/sync seconds, sync bytes and the
largest vLLM-vs-trainer log-prob gap, all read from the run's metrics.jsonl (nothing typed in).
`--wall-seconds` records how long the whole `make train` took, set-up included, if measured.
"""
import argparse
import json
import platform
from pathlib import Path


def summarise(run: Path) -> dict:
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    steps = [r for r in rows if r["step"] > 0]
    mean = lambda key: sum(r[key] for r in steps) / len(steps)  # noqa: E731
    return {
        "run": run.name,
        "steps": len(steps),
        "heldout": {r["step"]: {k: v for k, v in r.items() if k.startswith("heldout/")}
                    for r in rows if any(k.startswith("heldout/") for k in r)},
        "seconds_per_step": mean("time/step"), "rollout_seconds": mean("time/rollout"),
        "train_seconds": mean("time/train"), "sync_seconds": mean("sync_seconds"),
        "sync_bytes": steps[0]["sync_bytes"], "max_logp_gap": max(r["logp_gap"] for r in steps),
        "config": (run / "config.yaml").read_text(), "machine": platform.platform(),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir")
    p.add_argument("--wall-seconds", type=float)
    p.add_argument("--out", default=str(Path(__file__).parent / "results" / "default_run.json"))
    args = p.parse_args()
    result = summarise(Path(args.run_dir))
    if args.wall_seconds:
        result["make_train_wall_seconds"] = args.wall_seconds
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "config"}, indent=1))


if __name__ == "__main__":
    main()
