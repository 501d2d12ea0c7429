"""Where one RL step's time goes, phase by phase, as a share of the step (issue 17).

    python bench/step_profile.py RUN_DIR [--out bench/results/step_profile.json]

Reads RUN_DIR/metrics.jsonl (nothing typed in) and prints, over the run's steps without an
evaluation and over those with one, the mean seconds and share of the step of each phase the
controller times: rollout (generation and environment steps; `time/reward` of it is spent in
env.step: tools and verifiers), critic (the policy judging critic-rewarded groups), train (the
update, with the judge's own step), sync (the weight push into the engine), eval (held-out
evaluation and the critic's held-out accuracy, on evaluation steps) and other (Redis writes,
logging, checkpoints: the rest of `time/step`). A regression shows as a phase whose share grows.
"""
import argparse
import json
from pathlib import Path

PHASES = ("rollout", "critic", "train", "sync")


def profile(rows: list[dict]) -> dict:
    """Mean seconds and share of the step per phase over `rows` (steps of one kind)."""
    n = len(rows)
    step = sum(r["time/step"] for r in rows) / n
    out = {p: sum(r.get(f"time/{p}", 0.0) for r in rows) / n for p in PHASES}
    out["env (within rollout)"] = sum(r.get("time/reward", 0.0) for r in rows) / n
    out["other"] = step - sum(out[p] for p in PHASES)
    return {"steps": n, "seconds_per_step": step,
            "phases": {p: {"seconds": s, "share": s / step} for p, s in out.items()}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("run_dir")
    p.add_argument("--out", help="also write the profile as JSON here")
    args = p.parse_args()
    rows = [json.loads(x) for x in (Path(args.run_dir) / "metrics.jsonl").open()]
    steps = [r for r in rows if r["step"] > 0]
    kinds = {"training steps": [r for r in steps if "heldout/all/accuracy" not in r],
             "steps with an evaluation": [r for r in steps if "heldout/all/accuracy" in r]}
    result = {"run": str(args.run_dir),
              **{k: profile(v) for k, v in kinds.items() if v}}
    for kind, prof in result.items():
        if kind == "run":
            continue
        print(f"{kind} ({prof['steps']}): {prof['seconds_per_step']:.2f} s a step")
        for phase, f in prof["phases"].items():
            label = "eval and other" if phase == "other" and "evaluation" in kind else phase
            print(f"  {label:<22}{f['seconds']:>8.3f} s {100 * f['share']:>6.1f}%")
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
