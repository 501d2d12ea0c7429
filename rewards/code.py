"""Verifiers for tasks whose answer is Python source, scored by hidden unit tests.

A response is run once, in the sandbox, inside a harness that executes it and
then each of the problem's tests (Python ``assert`` statements) and reports
one result line per test. Result lines carry a random nonce that the response
is never shown, and go to a stdout of their own while the response's prints go
to stderr: printing "PASS" earns nothing, and a response that prints a lot
cannot push the results past the output cap. (The nonce stops accidents and
naive cheating; code that deliberately inspects the harness's own frames can
still find it, as it could override ``__eq__`` to pass the asserts: the
sandbox guards the host, not the reward.)
"""

from __future__ import annotations

import ast
import re
import secrets
import threading
import warnings
from typing import Sequence

from rewards.sandbox import SandboxPool, SandboxResult

TIMEOUT_SECONDS = 5.0  # wall clock for one response's whole test run
CPU_SECONDS = 5
# A fenced block, possibly unclosed (the token budget can cut the closing fence).
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)

# Runs the response, then each test, in one namespace. The call line with the
# response, tests and entry name (as ASCII literals) is appended per run.
HARNESS = """\
import os, sys

def _k2rl_run(source, tests, entry):
    nonce = sys.stdin.readline().strip()
    results = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # the response's own prints go to stderr
    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    try:
        exec(compile(source, "<response>", "exec"), namespace)
        defined = entry is None or callable(namespace.get(entry))
    except BaseException:
        _k2rl_report()
        defined = False
    for index, test in enumerate(tests):
        passed = False
        if defined:
            try:
                exec(compile(test, f"<test {index}>", "exec"), namespace)
                passed = True
            except BaseException:
                _k2rl_report()
        results.write(f"{nonce}:{index}:{'PASS' if passed else 'FAIL'}\\n")
        results.flush()

def _k2rl_report():
    import traceback  # only on failure: it is slow to import
    traceback.print_exc()

"""


def strip_fence(response: str) -> str:
    """The code in ``response``: its first fenced block if it has one, else all of it.

    >>> strip_fence("```python\\ndef f(x):\\n    return x\\n```")
    'def f(x):\\n    return x\\n'
    >>> strip_fence("def f(x): return x")
    'def f(x): return x'
    """
    fenced = _FENCE.search(response)
    return fenced.group(1) if fenced else response


def harness(source: str, tests: Sequence[str], entry: str | None = None) -> str:
    """The script that runs ``source`` and then reports each test; reads the nonce from stdin."""
    # ascii() rather than repr(): the literal survives any encoding, lone surrogates included.
    return HARNESS + f"_k2rl_run({ascii(source)}, {ascii(list(tests))}, {ascii(entry)})\n"


def compiles(source: str) -> bool:
    """Whether ``source`` parses as Python; parsing never executes it.

    >>> compiles("def f(x): return x"), compiles("def f(x) return x"), compiles("a\\0")
    (True, False, False)
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # e.g. invalid escapes: the sandbox's business
            ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


def unit_test_fraction(
    responses: list[str],
    tests: list[list[str]],
    *,
    entry: list[str] | None = None,
    pool: SandboxPool | None = None,
) -> list[float]:
    """The fraction of its problem's tests that each response passes.

    ``tests[i]`` are assert statements run after ``responses[i]`` (a fence is
    stripped first); ``entry[i]``, if given, names the function the response
    must define, otherwise every test fails. A response that does not parse,
    crashes before defining anything, or runs out of time scores 0.0. Without a
    ``pool``, the module's shared one is used.

    >>> tests = [["assert add(2, 3) == 5", "assert add(0, 0) == 0"]] * 3
    >>> unit_test_fraction(["def add(a, b):\\n    return a + b",
    ...                     "def add(a, b):\\n    return a * b",
    ...                     "print('PASS')"], tests, entry=["add"] * 3)
    [1.0, 0.5, 0.0]
    """
    entry = [None] * len(responses) if entry is None else entry
    if not len(responses) == len(tests) == len(entry):
        raise ValueError(f"unit_test_fraction got {len(responses)} responses, "
                         f"{len(tests)} test lists and {len(entry)} entries")
    if any(len(problem_tests) == 0 for problem_tests in tests):
        raise ValueError("every problem needs at least one test")
    pool = pool or default_pool()
    sources = [strip_fence(response) for response in responses]
    nonces = [secrets.token_hex(16) for _ in responses]
    # Text that does not parse cannot pass a test: score it without a subprocess.
    runs = {
        index: pool.submit(harness(source, tests[index], entry[index]), nonces[index] + "\n",
                           timeout=TIMEOUT_SECONDS, cpu_seconds=CPU_SECONDS)
        for index, source in enumerate(sources)
        if compiles(source)
    }
    return [
        _fraction(runs[index].result(), nonces[index], len(tests[index])) if index in runs else 0.0
        for index in range(len(responses))
    ]


def _fraction(result: SandboxResult, nonce: str, n_tests: int) -> float:
    """The share of the ``n_tests`` tests that reported a pass under ``nonce``."""
    if result.timed_out:
        return 0.0
    passed = {f"{nonce}:{index}:PASS" for index in range(n_tests)}
    return len(passed & set(result.stdout.splitlines())) / n_tests


def unit_tests(responses: list[str], answers: list[list[str]]) -> list[float]:
    """The registry's form of ``unit_test_fraction``: an answer is its problem's tests.

    >>> unit_tests(["def f(x):\\n    return x*3+1", "def f(x):\\n    return x*3"],
    ...            [["assert f(0) == 1", "assert f(2) == 7"]] * 2)
    [1.0, 0.0]
    """
    if len(responses) != len(answers):
        raise ValueError(f"unit_tests got {len(responses)} responses but {len(answers)} answers")
    return unit_test_fraction(responses, [list(tests) for tests in answers])


_default_pool: SandboxPool | None = None
_default_pool_lock = threading.Lock()


def default_pool() -> SandboxPool:
    """The pool shared by verifiers called without one; made on first use.

    Made lazily so that importing the rewards starts no threads. Its threads
    are joined when the interpreter exits.
    """
    global _default_pool
    with _default_pool_lock:
        if _default_pool is None:
            _default_pool = SandboxPool(workers=2)
        return _default_pool
