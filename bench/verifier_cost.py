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
   after a warm-up, plus the first call (worker start and imports);
4. every registered verifier (``rewards.REWARDS``) on each of ``HOSTILE`` (64,000 characters
   or more each: many boxes, nested boxes, unmatched braces, a long digit run, many "answer
   is", tags, ``####``, ``$``, check lines, table rows, ``=`` chains, step lists, clauses,
   "or", LaTeX spacing, code fences, words then a box), one call each after a warm-up call,
   in one fresh process per verifier: the slowest call in milliseconds (the fastest of
   ``REPEATS`` tries of each reply) and which reply it was (issue 47's target: under 50 ms),
   and a short reply's cost for comparison. CPU time of the process, but wall-clock for
   ``math_equiv`` (its work is in the verifier worker) and ``unit_tests`` (its sandbox run,
   a fresh process each call, which costs the same for a short reply; ``host_max_ms`` is the
   part that reads the reply: the code block picked, and parsed).

    python bench/verifier_cost.py --part verifiers   # part 4 alone, merged into --out

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

# Hostile replies of 64,000 characters or more (part 4): name -> Python expression.
HOSTILE = {
    "boxes": r"'\\boxed{72}' * 6400",
    "nested boxes": r"'\\boxed{' * 9200 + '72' + '}' * 9200",
    "open braces": "'{' * 64000",
    "brace pairs": "'{}' * 32000",
    "digits": "'9' * 64000",
    "answer is": "'The answer is 72. ' * 3600",
    "answer is, never ended": "'answer is ' * 6400",
    "tags": "'<answer>72</answer>' * 3400",
    "open tags": "'<answer>' * 8000",
    "####": r"'#### 72\n' * 8000",
    "dollars": "'$' * 64000",
    "math segments": "'$1$ ' * 16000",
    "open \\(": r"'\\(' * 32000",
    "check lines": r"'The answer is 72.\n' + 'Check: 48 + 24 = 72\n' * 3300",
    "table rows": r"'| a | b |\n|---|---|\n' + '| x | 72 |\n' * 6400",
    "one long table row": r"'|---|\n|' + ' ' * 64000 + '| 72 |'",
    "= chain": "'1=' * 32000 + '40'",
    "steps": r"'8 - 3 = 5\n' * 6400",
    "commas": "'Paris, a b' * 6400",
    "clauses": "'It is Paris, located on the Seine' + ', a b' * 16000",
    "a code block of tests": r"'```python\ndef test_add():\n' + '    assert 1\n' * 5000 + '```'",
    "dashes": "'x - ' * 16000",
    "stars": "'*' * 64000",
    "or": "'72 or ' * 10700",
    "spacing": r"'\\quad ' * 10700 + '72'",
    "fences": r"'```python\n' * 6400",
    "closed fences": r"'```\nx = 1\n```\n' * 4600",
    "words then a box": r"'Let me think. ' * 4600 + '\\boxed{72}'",
    "spaces then a number": "' ' * 64000 + '72'",
    "reasoning labels": r"'72\nReasoning:' * 5400",
}
# An answer key each verifier takes (the second argument), as a Python expression.
KEYS = {
    "exact_int": "72", "final_int": "72", "math_equiv": "'72'", "exact_match": "'Paris'",
    "multiple_choice": "'B'", "countdown": "{'numbers': [3, 4, 8, 2], 'target': 40}",
    "sudoku": "'12.4/3..2/..../4321'",
    "instruction_following": "[{'kind': 'max_words', 'n': 3}, {'kind': 'include', 'word': 'red'}]",
    "ifeval": "{'instruction_id_list': ['punctuation:no_comma'], 'kwargs': [{}]}",
    "unit_tests": "['assert add(2, 3) == 5']", "chat_reference": "'12 is even'",
}
VERIFIER = r"""
import json, statistics, time
from rewards import get_reward
fn = get_reward(%(name)r)
key = %(key)s
fn(["72"], [key])  # warm-up: lazy imports, the math worker, the sandbox pool
clock = time.perf_counter if %(name)r in ("math_equiv", "unit_tests") else time.process_time
replies = {name: eval(expr) for name, expr in %(hostile)r.items()}
out, host = {}, {}
for name, reply in replies.items():
    assert len(reply) >= 64000, name
    times = []
    for _ in range(%(repeats)d):
        start = clock()
        fn([reply], [key])
        times.append(clock() - start)
    out[name] = round(min(times) * 1e3, 2)
    if %(name)r == "unit_tests":  # the part that reads the reply, in this process
        from rewards.code import compiles, strip_fence
        start = time.process_time()
        compiles(strip_fence(reply))
        host[name] = round((time.process_time() - start) * 1e3, 2)
short = []
for _ in range(5):  # a short reply, for the cost every call has (a sandbox run, a round trip)
    start = clock()
    fn(["72"], [key])
    short.append(clock() - start)
print(json.dumps({"ms": out, "host_ms": host,
                  "short_reply_ms": round(statistics.median(short) * 1e3, 2)}))
"""
NOTE = ("ms per call, the fastest of REPEATS tries; CPU time, wall-clock for math_equiv and "
        "unit_tests. unit_tests' figure is its sandbox run (a fresh process per call, as "
        "costly for a short reply: short_reply_ms); host_max_ms is its reading of the reply. "
        "ifeval scores a reply over 32,000 characters 0 without checking it.")
# Each reply is scored this many times and the fastest kept: the wall-clock figures
# (math_equiv's worker, unit_tests' sandbox) vary with the machine's load, not the reply.
REPEATS = 3


def time_verifiers(root: Path) -> dict:
    """Part 4: per registered verifier, the slowest call on ``HOSTILE`` and every call's ms."""
    program = "import sys\nsys.path.insert(0, %r)\nfrom rewards import REWARDS\nprint(*REWARDS)"
    names = subprocess.run([sys.executable, "-c", program % str(root)], capture_output=True,
                           text=True, check=True).stdout.split()
    results = {}
    for name in names:
        if name not in KEYS:
            results[name] = {"error": "no answer key in bench/verifier_cost.py KEYS"}
            continue
        code = "import sys\nsys.path.insert(0, %r)\n" % str(root) + VERIFIER % {
            "name": name, "key": KEYS[name], "hostile": HOSTILE, "repeats": REPEATS}
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=600)
        if run.returncode != 0:
            results[name] = {"error": run.stderr.strip().splitlines()[-1]}
        else:
            got = json.loads(run.stdout.splitlines()[-1])
            ms = got["ms"]
            worst = max(ms, key=ms.get)
            results[name] = {"max_ms": ms[worst], "worst": worst,
                             "short_reply_ms": got["short_reply_ms"], "ms": ms}
            if got["host_ms"]:  # unit_tests: reading the reply, apart from the sandbox's run
                host = got["host_ms"]
                results[name]["host_max_ms"] = max(host.values())
                results[name]["host_ms"] = host
        print(f"{name:25s} {results[name].get('max_ms', results[name].get('error'))} ms "
              f"({results[name].get('worst', '')}; a short reply "
              f"{results[name].get('short_reply_ms')} ms)", flush=True)
    return results


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
    parser.add_argument("--part", choices=("all", "verifiers"), default="all",
                        help="verifiers: part 4 alone, merged into an existing --out")
    args = parser.parse_args()
    if args.part == "verifiers":
        previous = json.loads(args.out.read_text()) if args.out.exists() else {}
        previous["verifiers_64k"] = time_verifiers(args.root)
        previous["verifiers_64k_date"] = time.strftime("%Y-%m-%d")
        previous["verifiers_64k_root"] = str(args.root)
        previous["verifiers_64k_note"] = NOTE
        args.out.write_text(json.dumps(previous, indent=1) + "\n")
        return
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
    verifiers = time_verifiers(args.root)
    args.out.write_text(json.dumps({
        "root": str(args.root), "limit_s": args.limit, "python": platform.python_version(),
        "machine": platform.processor() or platform.machine(),
        "date": time.strftime("%Y-%m-%d"), "seconds": seconds, "verifiers_64k": verifiers,
        "verifiers_64k_date": time.strftime("%Y-%m-%d"), "verifiers_64k_root": str(args.root),
        "verifiers_64k_note": NOTE}, indent=1) + "\n")


if __name__ == "__main__":
    main()
