"""Tests for the code-writing env ("k2rl/Code-v0") and its unit-test verifier."""

from __future__ import annotations

import doctest
import math
import time

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import rewards.code
from envs.base import split_of
from envs.code import TEMPLATES, CodeEnv, make_problem, parse_key
from rewards import REWARDS
from rewards.code import strip_fence, unit_test_fraction, unit_tests


@pytest.fixture(autouse=True)
def unit_tests_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The env scores through the registry; register the verifier if rewards/ does not yet."""
    if "unit_tests" not in REWARDS:
        monkeypatch.setitem(REWARDS, "unit_tests", unit_tests)


def extremes(template) -> list[tuple[int, ...]]:
    """The smallest and largest constants of ``template``: the longest prompts and answers."""
    return [tuple(lo for lo, _ in template.ranges), tuple(hi for _, hi in template.ranges)]


def test_passes_gymnasium_env_checker() -> None:
    check_env(CodeEnv(), skip_render_check=True)


def test_reset_info_and_key() -> None:
    obs, info = CodeEnv().reset(seed=0)
    template, constants = parse_key(info["prompt_id"])
    assert obs == template.prompt.format(*constants)
    assert info == {"task": "code", "budget": 96, "prompt_id": info["prompt_id"],
                    "split": "train", "turn": 0}


def test_same_seed_same_prompt() -> None:
    env = CodeEnv()
    first = env.reset(seed=7)
    env.reset(seed=8)
    assert env.reset(seed=7) == first


def test_train_and_eval_are_disjoint() -> None:
    env = CodeEnv()
    train = {env.reset(seed=s, options={"split": "train"})[1]["prompt_id"] for s in range(300)}
    held_out = [env.reset(seed=10_000 + s, options={"split": "eval"})[1] for s in range(300)]
    eval_keys = {info["prompt_id"] for info in held_out}
    assert not train & eval_keys
    assert all(split_of(key) == "eval" for key in eval_keys)


def test_templates_make_thousands_of_short_problems() -> None:
    assert len(TEMPLATES) >= 8 and len({t.name for t in TEMPLATES}) == len(TEMPLATES)
    assert sum(math.prod(hi - lo + 1 for lo, hi in t.ranges) for t in TEMPLATES) >= 2000
    for template in TEMPLATES:
        for constants in extremes(template):
            problem = make_problem(template, constants)
            assert len(problem.prompt) <= 80 and 3 <= len(problem.answer) <= 5
            assert len(template.solution.format(*constants)) <= CodeEnv.budget
            assert parse_key(problem.key) == (template, constants)


def test_every_template_solution_passes_its_tests() -> None:
    rng = np.random.default_rng(0)
    problems = [(t, c) for t in TEMPLATES for c in extremes(t)]
    problems += [(t, tuple(int(rng.integers(lo, hi + 1)) for lo, hi in t.ranges))
                 for t in TEMPLATES]
    solutions = [t.solution.format(*c) for t, c in problems]
    answers = [make_problem(t, c).answer for t, c in problems]
    assert unit_tests(solutions, answers) == [1.0] * len(problems)


def test_expert_scores_full_marks() -> None:
    env, rng = CodeEnv(), np.random.default_rng(0)
    for seed in range(10):
        env.reset(seed=seed)
        _, reward, terminated, truncated, info = env.step(env.expert_action(rng))
        assert (reward, terminated, truncated, info["correct"]) == (1.0, True, False, True)


def test_wrong_solution_scores_a_fraction_or_zero() -> None:
    lin = next(t for t in TEMPLATES if t.name == "lin")
    tests = make_problem(lin, (3, 1)).answer  # f(0)=1, f(1)=4, f(5)=16, f(-3)=-8, f(12)=37
    partly = "def f(x):\n    return 4 if x == 1 else 0"
    assert unit_tests([partly, "def f(x):\n    return x*3"], [tests, tests]) == [0.2, 0.0]
    env = CodeEnv()
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step("def f(x):\n    return None")
    assert (reward, terminated, info["correct"]) == (0.0, True, False)


def test_random_text_scores_zero_without_a_sandbox() -> None:
    env = CodeEnv()
    env.action_space.seed(0)
    env.reset(seed=0)
    started = time.monotonic()
    garbage = [env.action_space.sample() + "(" for _ in range(50)]  # "(" never closes
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
