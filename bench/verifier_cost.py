"""What does one verification cost at its worst? Long and hostile replies, timed per kind.

    python bench/verifier_cost.py [--root PATH] [--limit S] [--out PATH]

Each case runs in a fresh subprocess and is timed in CPU seconds of that process
(``time.process_time``, so a loaded machine slows the run but not the figure; the math
cases, whose work is in a worker process, are timed by the wall clock). A case is killed
after ``--limit`` CPU seconds (RLIMIT_CPU, recorded as ``">LIMIT"``), so a version with
quadratic checks can be measured too: ``--root`` imports ``rewards`` from another checkout
(e.g. ``git archive`` of main).

1. instructions: ``max_words`` on 32k ``!``; every kind on 64k ``!`` (one call each), and
   the floods that were quadratic (``sentences`` on ``!...!x``, word splitting on ``[``);
2. IFEval: ``change_case:capital_word_frequency`` on 64k ``!`` and on 31k ``A!`` (below
   the new 32k cap), ``number_placeholders`` on 30k ``[``;
3. math: ``9^{9^{9}}`` scored off the main thread (the issue's GIL bomb), and the
   cost of a common-case call (``math_equiv(["\\frac{1}{2}"], ["0.5"])``), median of 200
   after a warm-up, plus the first call (worker start and imports).

Writes bench/results/verifier_cost.json (or ``--out``).
"""
import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

KINDS = {
    "max_words": {"n": 3}, "min_words": {"n": 3}, "max_chars": {"n": 10}, "lowercase": {},
    "uppercase": {}, "include": {"word": "red"}, "exclude": {"word": "red"}, "json": {},
    "bullets": {}, "sentences": {"n": 2},
}

# Every check is called (``satisfied``), not ``follow_score``, which now scores a reply
# with no visible word 0 without checking anything.
CASES = {f"instructions {kind} 64k '!'":
         f"from rewards.instructions import satisfied\n"
         f"satisfied('!' * 65536, [{{'kind': {kind!r}, **{params!r}}}])"
         for kind, params in KINDS.items()}
CASES = {
    "instructions max_words 32k '!'":
        "from rewards.instructions import satisfied\n"
        "satisfied('!' * 32768, [{'kind': 'max_words', 'n': 3}])",
    "instructions all ten kinds 64k '!' (one spec)":
        "from rewards.instructions import satisfied\n"
        f"satisfied('!' * 65536, [{{'kind': k, **p}} for k, p in {KINDS!r}.items()])",
    **CASES,
    "instructions sentences 64k '!' + 'x'":
        "from rewards.instructions import satisfied\n"
        "satisfied('!' * 65536 + 'x', [{'kind': 'sentences', 'n': 2}])",
    "instructions all ten kinds 64k '['":
        "from rewards.instructions import satisfied\n"
        f"satisfied('[' * 65536, [{{'kind': k, **p}} for k, p in {KINDS!r}.items()])",
    "ifeval capital_word_frequency 64k '!'":
        "from rewards.ifeval import check\n"
        "check('change_case:capital_word_frequency', '!' * 65536,"
        " {'capital_frequency': 3, 'capital_relation': 'less than'})",
    "ifeval capital_word_frequency 31k 'A!' (below the cap)":
        "from rewards.ifeval import check\n"
        "check('change_case:capital_word_frequency', 'A!' * 15500,"
        " {'capital_frequency': 3, 'capital_relation': 'less than'})",
    "ifeval number_placeholders 30k '['":
        "from rewards.ifeval import check\n"
        "check('detectable_content:number_placeholders', '[' * 30000, {'num_placeholders': 1})",
    "math 9^{9^{9}} in a thread":
        "import threading\nfrom rewards.math import math_equiv\nout = []\n"
        "t = threading.Thread(target=lambda: out.append(math_equiv(['9^{9^{9}}'], ['4'])),"
        " daemon=True)\nt.start(); t.join()\nassert out == [[0.0]], out",
}

COMMON = r"""
import statistics, time
from rewards.math import math_equiv
start = time.perf_counter()
assert math_equiv(["\\frac{1}{2}"], ["0.5"]) == [1.0]
first = time.perf_counter() - start
times = []
for _ in range(200):
    start = time.perf_counter()
    math_equiv(["\\frac{1}{2}"], ["0.5"])
    times.append(time.perf_counter() - start)
print(first, statistics.median(times))
"""


def timed(code: str, root: Path, limit: int) -> float | str:
    """Seconds the case took in a fresh interpreter, imports excluded; ">LIMIT" if cut
    (the limit counts the imports too)."""
    # Imports and nltk's data lookup happen before the clock starts.
    clock = "time.perf_counter" if "math" in code else "time.process_time"
    program = ("import time, sys, resource\nsys.path.insert(0, %r)\n"
               "import rewards, rewards.ifeval\nrewards.ifeval._punkt_tokenizer()\n"
               "used = int(time.process_time()) + 1\n"
               "resource.setrlimit(resource.RLIMIT_CPU, (used + %d, used + %d))\n"
               "start = %s()\n%s\nprint(%s() - start)\n"
               % (str(root), limit, limit + 1, clock, code, clock))
    try:
        result = subprocess.run([sys.executable, "-c", program], capture_output=True,
                                text=True, timeout=max(600, 20 * limit))
    except subprocess.TimeoutExpired:
        return f">{limit:g} (wall)"
    if result.returncode in (-24, -9):  # SIGXCPU, SIGKILL: the CPU limit
        return f">{limit:g}"
    if result.returncode != 0:
        return "error: " + result.stderr.strip().splitlines()[-1]
    return round(float(result.stdout.split()[-1]), 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=ROOT)
    parser.add_argument("--limit", type=int, default=60, help="CPU seconds per case")
    parser.add_argument("--out", type=Path, default=ROOT / "bench/results/verifier_cost.json")
    args = parser.parse_args()
    seconds = {}
    for name, code in CASES.items():
        seconds[name] = timed(code, args.root, args.limit)
        print(f"{name:50s} {seconds[name]}", flush=True)
    program = "import sys\nsys.path.insert(0, %r)\n%s" % (str(args.root), COMMON)
    first, median = subprocess.run([sys.executable, "-c", program], capture_output=True,
                                   text=True, check=True).stdout.split()
    seconds["math common case: first call"] = round(float(first), 4)
    seconds["math common case: median of 200"] = round(float(median), 6)
    print(f"math common case: first {float(first):.3f} s, median {float(median) * 1e3:.2f} ms")
    args.out.write_text(json.dumps({
        "root": str(args.root), "limit_s": args.limit, "python": platform.python_version(),
        "machine": platform.processor() or platform.machine(),
        "date": time.strftime("%Y-%m-%d"), "seconds": seconds}, indent=1) + "\n")


if __name__ == "__main__":
    main()
