"""How much of each held-out style set does each verifier read right? First scores and now.

    python bench/verifier_styles.py [--out PATH]

The held-out sets of tests/rewards/test_real_styles.py (issue 47) are correct replies in the
styles real chat models write, each set written whole before any verifier read it. A set's
first score is the only held-out figure: its misses then led to general fixes, after which it
is a regression set. This records, per set and verifier, the first score (from the comments
and ``FIRST_SCORE_4`` of the test module) and the share that scores 1.0 now (the module's
``held_out*_rates``).

Writes bench/results/verifier_styles.json. Takes a few seconds (math_equiv's worker starts
once; unit_tests runs its sandbox).
"""
import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.rewards import test_real_styles as styles  # noqa: E402

# First scores of sets 1-3, as the test module's comments record them (set 4's is a constant).
_INTS = ("exact_int", "final_int")
FIRST_SCORES = {
    "held_out_1": {"math_equiv": (97, 100), **dict.fromkeys(_INTS, (61, 64)),
                   "multiple_choice": (11, 12), "exact_match": (8, 10), "countdown": (6, 6),
                   "unit_tests": (4, 4)},
    "held_out_2": {"math_equiv": (86, 96), **dict.fromkeys(_INTS, (46, 60)),
                   "multiple_choice": (5, 10), "exact_match": (8, 10), "countdown": (3, 6),
                   "unit_tests": (3, 4)},
    "held_out_3": {"math_equiv": (91, 96), **dict.fromkeys(_INTS, (56, 60)),
                   "multiple_choice": (8, 10), "exact_match": (6, 10), "countdown": (5, 6),
                   "unit_tests": (4, 4)},
    "held_out_4": styles.FIRST_SCORE_4,
}
RATES = {"held_out_1": styles.held_out_rates, "held_out_2": styles.held_out_2_rates,
         "held_out_3": styles.held_out_3_rates, "held_out_4": styles.held_out_4_rates}


def figures(right: int, n: int) -> dict:
    return {"right": right, "n": n, "rate": round(right / n, 4)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/verifier_styles.json")
    args = parser.parse_args()
    sets = {}
    for name, rates in RATES.items():
        now = rates()
        sets[name] = {verifier: {"first": figures(*FIRST_SCORES[name][verifier]),
                                 "now": figures(*now[verifier])} for verifier in now}
        print(name, {v: f"{r}/{n}" for v, (r, n) in now.items()}, flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    args.out.write_text(json.dumps({
        "commit": commit, "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d"),
        "note": "first: the set's score when first run, before the fixes it led to (the only "
                "held-out figure); now: the share scoring 1.0 at this commit",
        "sets": sets}, indent=1) + "\n")


if __name__ == "__main__":
    main()
