"""Check that a change left a run's behaviour unchanged: compare two run folders step by step.

    python bench/compare_runs.py RUN_BEFORE RUN_AFTER [--out bench/results/NAME.json]

Every metric both runs logged at every step is compared exactly, except measurements of the
machine (timings `time/*`, `sync_seconds`, rates `*_per_s`, `colocate/*`, memory `mem/*`), which
vary run to run. The default run is
deterministic given its seeds on one machine with one cached model, so a refactor that keeps
behaviour gives zero differences. Metrics only one run logged are listed, not compared. The
result (counts, the first differences, held-out accuracy and critic accuracy at every
evaluation of both runs) is printed and written to --out.
"""
import argparse
import json
from pathlib import Path

TIMING = ("time/", "sync_seconds", "sync_gb_per_s", "colocate/", "mem/", "train_gflops_per_s")


def rows(run: Path) -> dict[int, dict]:
    return {r["step"]: r for r in map(json.loads, (run / "metrics.jsonl").read_text().splitlines())}


def compare(before: Path, after: Path) -> dict:
    b, a = rows(before), rows(after)
    same, differ, only = 0, [], set()
    for step in sorted(set(b) | set(a)):
        x, y = b.get(step, {}), a.get(step, {})
        for key in sorted(set(x) | set(y)):
            if key.startswith(TIMING):
                continue
            if key not in x or key not in y:
                only.add(f"{key} ({'after' if key in y else 'before'} only)")
            elif x[key] == y[key]:
                same += 1
            else:
                differ.append({"step": step, "key": key, "before": x[key], "after": y[key]})
    evals = {name: {s: {k: v for k, v in r.items() if k.startswith(("heldout/", "critic/acc"))}
                    for s, r in runs.items() if any(k.startswith("heldout/") for k in r)}
             for name, runs in (("before", b), ("after", a))}
    return {"before": before.name, "after": after.name, "steps": len(set(b) | set(a)),
            "identical_values": same, "differences": len(differ), "first_differences": differ[:20],
            "logged_by_one_run_only": sorted(only), "evaluations": evals}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path)
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    result = compare(args.before, args.after)
    if args.out:
        args.out.write_text(json.dumps(result, indent=1))
    print(json.dumps({k: v for k, v in result.items() if k != "evaluations"}, indent=1))


if __name__ == "__main__":
    main()
