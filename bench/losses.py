"""The default run with each registered loss (`train.loss`), from the same built model: a table.

    k2rl train train.loss=grpo log.run_name=loss-grpo      # once per loss (and seed)
    PYTHONPATH=. .venv/bin/python bench/losses.py runs/loss-grpo runs/loss-gspo ... [--out FILE]

Reads each run's config.yaml and metrics.jsonl (nothing typed in) and writes, per run, the loss,
the RL seed, held-out greedy accuracy per family at the first and last evaluation (with n, the
distinct problems) and the mean and median seconds a step (the median is the steadier under
other work on the machine), to bench/results/losses.json; prints a markdown table.
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import yaml

OUT = Path(__file__).resolve().parent / "results" / "losses.json"


def summary(run: Path) -> dict:
    cfg = yaml.safe_load((run / "config.yaml").read_text())
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    evals = [r for r in rows if "heldout/all/accuracy" in r]
    steps = [r for r in rows if r["step"] > 0 and "time/step" in r]
    tasks = sorted({k.split("/")[1] for k in evals[0]
                    if k.startswith("heldout/") and k.endswith("/accuracy")})
    return {"run": run.name, "loss": cfg["train"]["loss"], "seed": cfg["train"]["seed"],
            "steps": evals[-1]["step"],
            "heldout": {t: {"first": evals[0][f"heldout/{t}/accuracy"],
                            "last": evals[-1][f"heldout/{t}/accuracy"],
                            "n": int(evals[-1][f"heldout/{t}/n"])} for t in tasks},
            "seconds_per_step": sum(r["time/step"] for r in steps) / len(steps),
            "median_seconds_per_step": statistics.median(r["time/step"] for r in steps)}


def table(runs: list[dict]) -> str:
    tasks = ["all"] + [t for t in runs[0]["heldout"] if t != "all"]
    head = "| loss (seed) | " + " | ".join(
        f"{t} ({runs[0]['heldout'][t]['n']})" for t in tasks) + " | s a step (median) |"
    lines = [head, "|" + "---|" * (len(tasks) + 2)]
    for r in runs:
        cells = [f"{100 * r['heldout'][t]['first']:.1f} -> {100 * r['heldout'][t]['last']:.1f}"
                 for t in tasks]
        lines.append(f"| {r['loss']} ({r['seed']}) | " + " | ".join(cells)
                     + f" | {r['seconds_per_step']:.1f} ({r['median_seconds_per_step']:.1f}) |")
    return "\n".join(lines)


def spread(runs: list[dict]) -> str:
    """Per loss over its seeds: the last evaluation's accuracy per family as mean (min-max),
    and the median of the runs' median seconds a step."""
    tasks = ["all"] + [t for t in runs[0]["heldout"] if t != "all"]
    losses = list(dict.fromkeys(r["loss"] for r in runs))
    lines = ["| loss | seeds | " + " | ".join(f"{t} at the end" for t in tasks) + " | s a step |",
             "|" + "---|" * (len(tasks) + 3)]
    for loss in losses:
        mine = [r for r in runs if r["loss"] == loss]
        cells = []
        for t in tasks:
            xs = [100 * r["heldout"][t]["last"] for r in mine]
            cells.append(f"{statistics.mean(xs):.1f} ({min(xs):.1f}-{max(xs):.1f})"
                         if len(xs) > 1 else f"{xs[0]:.1f}")
        seconds = statistics.median(r["median_seconds_per_step"] for r in mine)
        lines.append(f"| {loss} | {', '.join(str(r['seed']) for r in mine)} | "
                     + " | ".join(cells) + f" | {seconds:.1f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    runs = [summary(run) for run in args.runs]
    args.out.write_text(json.dumps(runs, indent=1) + "\n")
    print(table(runs))
    print()
    print(spread(runs))


if __name__ == "__main__":
    main()
