"""Tests for the unit-test verifier of code answers (rewards.code).

The sandbox it runs answers in is tested in test_sandbox.py, and attempts to game
the verifier in test_code_cheats.py.
"""

from __future__ import annotations

import doctest
import time

import pytest

import rewards.code
from envs.base import text_space
from envs.code import TEMPLATES, make_problem
from rewards.code import strip_fence, unit_test_fraction, unit_tests


def test_wrong_solution_scores_a_fraction_or_zero() -> None:
    lin = next(t for t in TEMPLATES if t.name == "lin")
    tests = make_problem(lin, (3, 1)).answer  # f(0)=1, f(1)=4, f(5)=16, f(-3)=-8, f(12)=37
    partly = "def f(x):\n    return 4 if x == 1 else 0"
    assert unit_tests([partly, "def f(x):\n    return x*3"], [tests, tests]) == [0.2, 0.0]


def test_random_text_scores_zero_without_a_sandbox() -> None:
    space = text_space()  # what the code env's model may emit
    space.seed(0)
    started = time.monotonic()
    garbage = [space.sample() + "(" for _ in range(50)]  # "(" never closes
    assert unit_tests(garbage, [["assert f(1) == 1"]] * 50) == [0.0] * 50
    assert time.monotonic() - started < 1.0


def test_reward_doctests_pass() -> None:
    assert doctest.testmod(rewards.code).failed == 0


@pytest.mark.parametrize(("response", "code"), [
    ("```python\ndef f(x):\n    return x\n```", "def f(x):\n    return x\n"),
    ("Here:\n```py\ndef f(x): return x\n```\ntext", "def f(x): return x\n"),
    ("```\ndef f(x):\n    return x", "def f(x):\n    return x"),  # cut off by the budget
    ("def f(x): return x", "def f(x): return x"),
])
def test_strip_fence(response: str, code: str) -> None:
    assert strip_fence(response) == code


def test_printed_pass_lines_earn_nothing() -> None:
    tests = [["assert f(1) == 2", "assert f(2) == 3"]]
    forged = ("import sys\nfor i in range(2):\n"
              "    for line in (f'{i}:PASS', 'PASS', f'None:{i}:PASS'):\n"
              "        print(line)\n        sys.stderr.write(line + '\\n')")
    assert unit_test_fraction([forged], tests) == [0.0]


def test_a_chatty_right_answer_keeps_its_score() -> None:
    # 200 kB of prints: beyond the output cap, yet the results are not pushed out.
    chatty = "print('x' * 200_000)\ndef f(x):\n    print('y' * 100_000)\n    return x + 1"
    assert unit_test_fraction([chatty], [["assert f(1) == 2", "assert f(2) == 3"]]) == [1.0]


def test_crash_timeout_and_missing_entry_score_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rewards.code, "TIMEOUT_SECONDS", 1.0)
    tests = [["assert f(1) == 2"]] * 4
    responses = ["def f(x):\n    while True:\n        pass",  # times out
                 "raise SystemExit(0)\ndef f(x):\n    return x + 1",  # dies before f exists
                 "def g(x):\n    return x + 1\nf = g",  # defines the entry, g
                 "def f(x):\n    return x + 1"]
    assert unit_test_fraction(responses, tests, entry=["f", "f", "g", "f"]) == [0.0, 0.0, 1.0, 1.0]
    # Right answers, but the entry they were asked for (h) is missing.
    assert unit_test_fraction(responses[2:], tests[2:], entry=["h", "h"]) == [0.0, 0.0]


def test_verifier_rejects_bad_batches() -> None:
    with pytest.raises(ValueError, match="2 responses but 1 answers"):
        unit_tests(["a", "b"], [["assert True"]])
    with pytest.raises(ValueError, match="at least one test"):
        unit_tests(["a"], [[]])


# --- the harness keeps the tests' ordinary meaning (it evaluates them outside the response) ---


@pytest.mark.parametrize(("response", "tests"), [
    # plain values of every kind come back as themselves
    ("def f():\n    return [1, (2.5, 'x'), {'k': {3}}, b'z', None, True, float('inf')]",
     ["assert f() == [1, (2.5, 'x'), {'k': {3}}, b'z', None, True, float('inf')]",
      "assert type(f()[1]) is tuple and f()[-1] > 10**300"]),
    # subclasses of plain types arrive as their base value (namedtuple == tuple, Counter == dict)
    ("import collections\nP = collections.namedtuple('P', 'x y')\n"
     "def f(s):\n    return P(1, 2), collections.Counter(s)",
     ["assert f('aab') == ((1, 2), {'a': 2, 'b': 1})"]),
    # modules the response imported, helpers and state the tests define, HumanEval's check()
    ("import math\ndef f(x):\n    return math.sqrt(x)",
     ["assert math.isclose(f(2), 2 ** 0.5)",
      "def check(candidate):\n    assert abs(candidate(9) - 3) < 1e-9\ncheck(f)",
      "seen = [f(4)]", "assert seen == [2.0]"]),
    # builtin exceptions the function raises can be expected by the tests
    ("def f(x):\n    if x < 0:\n        raise ValueError('negative')\n    return x",
     ["try:\n    f(-1)\n    assert False\n"
      "except ValueError as error:\n    assert 'negative' in str(error)"]),
    # the response keeps its state between calls, and keyword arguments work
    ("calls = []\ndef f(x, scale=1):\n    calls.append(x)\n    return len(calls) * scale",
     ["assert f(0) == 1", "assert f(0, scale=10) == 20"]),
])
def test_the_harness_keeps_ordinary_semantics(response: str, tests: list[str]) -> None:
    assert unit_test_fraction([response], [tests]) == [1.0]


def test_the_entry_may_have_a_builtins_name_but_other_builtins_stay_the_harness() -> None:
    responses = ["def sum(xs):\n    return 42",
                 "def sum(xs):\n    return 42\ndef len(x):\n    return 0"]
    tests = [["assert sum([1]) == 42"], ["assert sum([1]) == 42", "assert len([1, 2]) == 2"]]
    assert unit_test_fraction(responses, tests, entry=["sum", "sum"]) == [1.0, 1.0]
    # without an entry, "sum" in a test is the builtin: the response cannot shadow it
    assert unit_test_fraction(responses[:1], [["assert sum([1]) == 42"]]) == [0.0]


@pytest.mark.parametrize("response", [
    "def f():\n    return (x for x in range(3))",  # a generator
    "def f():\n    return object()",  # an arbitrary object
    "def f():\n    return f",  # a function
])
def test_values_that_are_not_plain_data_fail(response: str) -> None:
    assert unit_test_fraction([response], [["assert f() is not None"]]) == [0.0]


def test_a_response_that_forks_is_still_served_once() -> None:
    forks = "import os\nif os.fork() == 0:\n    pass\ndef f(x):\n    return x + 1"
    assert unit_test_fraction([forks], [["assert f(1) == 2", "assert f(2) == 3"]]) == [1.0]


def test_check_plain_checks_every_value_even_where_ids_are_reused() -> None:
    """Issue 29: the walk tracked ``id()`` of the temporary ``dict.items()`` pairs, so a
    nested dict's pair could take a freed pair's id and its code object went unchecked."""
    import marshal

    from rewards.code import check_plain

    code = compile("1", "<response>", "eval")
    for value in ({"a": {"b": code}}, [{"a": {"b": {"c": code}}}], {"a": 1, "b": {"c": code}},
                  ({1: 2}, {3: {4: code}})):
        with pytest.raises(TypeError, match="sent a code"):
            check_plain(marshal.loads(marshal.dumps(value)))
    shared = [1, 2]
    assert check_plain({"a": shared, "b": (shared, shared)}) == {"a": shared, "b": (shared, shared)}
