"""AdamW against Muon on the default run: held-out accuracy at the same step count.

    python bench/archive/optimizers.py [key=value ...]      (extra overrides go to both runs)

Runs `k2rl train` twice on the embedded default, identical but for `train.optimizer`, and
writes bench/archive/results/optimizers.json with each run's held-out accuracy at every evaluation.
Muon uses `adjust_lr_fn="match_rms_adamw"`, so both runs share the learning rate.
"""
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(optimizer: str, root: Path, extra: list[str]) -> dict:
    name = f"bench-{optimizer}"
    start = time.time()
    subprocess.run([sys.executable, "-m", "k2rl", "train", f"train.optimizer={optimizer}",
                    f"log.run_dir={root}", f"log.run_name={name}", "log.progress=false", *extra],
                   cwd=ROOT, check=True)
    rows = [json.loads(x) for x in (root / name / "metrics.jsonl").read_text().splitlines()]
    return {"wall_seconds": time.time() - start,
            "heldout": {r["step"]: {k: v for k, v in r.items() if k.startswith("heldout/")}
                        for r in rows if any(k.startswith("heldout/") for k in r)}}


def main() -> None:
    extra = sys.argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        result = {opt: run(opt, Path(tmp), extra) for opt in ("adamw", "muon")}
    result["overrides"] = extra
    out = Path(__file__).parent / "results" / "optimizers.json"
    out.write_text(json.dumps(result, indent=1))
    for opt in ("adamw", "muon"):
        last = max(result[opt]["heldout"], key=int)
        print(opt, last, result[opt]["heldout"][last])


if __name__ == "__main__":
    main()
