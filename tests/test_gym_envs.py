"""Tests for the math, countdown, sudoku, instructions and lookup environments."""

from __future__ import annotations

import doctest
from collections.abc import Iterator

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs.countdown
import envs.instructions
import envs.lookup
import envs.math
import envs.sudoku
from envs import TextEnv, split_of
from envs.countdown import CountdownEnv
from envs.instructions import InstructionsEnv
from envs.lookup import CITIES, LookupEnv
from envs.math import MathEnv
from envs.sudoku import SudokuEnv, all_grids
from rewards import REWARDS, get_reward, register_reward
from rewards.instructions import instruction_following, satisfied
from rewards.logic import countdown, sudoku
from rewards.math import math_equiv

ENV_CLASSES = [MathEnv, CountdownEnv, SudokuEnv, InstructionsEnv, LookupEnv]
NEW_REWARDS = {
    "math_equiv": math_equiv,
    "countdown": countdown,
    "sudoku": sudoku,
    "instruction_following": instruction_following,
}
MAX_PROMPT_CHARS = 60  # the policy is a tiny character-level model


@pytest.fixture(autouse=True, scope="module")
def new_rewards_registered() -> Iterator[None]:
    """The envs score through the registry; register what rewards/__init__ does not (yet)."""
    added = [name for name in NEW_REWARDS if name not in REWARDS]
    for name in added:
        register_reward(name, NEW_REWARDS[name])
    yield
    for name in added:
        del REWARDS[name]


def run_expert(env: TextEnv, seed: int, rng: np.random.Generator) -> tuple[float, dict, list[str]]:
    """Play one episode with the demonstrator; the final reward, info and actions."""
    env.reset(seed=seed)
    terminated, actions = False, []
    while not terminated:
        actions.append(env.expert_action(rng))
        _, reward, terminated, truncated, info = env.step(actions[-1])
        assert not truncated
    return reward, info, actions


@pytest.mark.parametrize("env_cls", ENV_CLASSES)
def test_passes_gymnasium_env_checker(env_cls: type[TextEnv]) -> None:
    check_env(env_cls(), skip_render_check=True)


@pytest.mark.parametrize("env_cls", ENV_CLASSES)
def test_verifier_is_registered_under_its_name(env_cls: type[TextEnv]) -> None:
    expected = {"math_equiv": math_equiv, "countdown": countdown, "sudoku": sudoku,
                "instruction_following": instruction_following}
    verifier = get_reward(env_cls.reward_name)
    assert verifier is expected.get(env_cls.reward_name, verifier)


@pytest.mark.parametrize("env_cls", ENV_CLASSES)
def test_expert_solves_every_episode_within_budget(env_cls: type[TextEnv]) -> None:
    env, rng = env_cls(), np.random.default_rng(0)
    for seed in range(50):
        reward, info, actions = run_expert(env, seed, rng)
        assert (reward, info["correct"]) == (1.0, True), (env.problem, actions)
        # Character-level tokens: each turn's characters plus its end-of-turn token.
        assert sum(len(action) + 1 for action in actions) <= env.budget, actions


@pytest.mark.parametrize("env_cls", ENV_CLASSES)
def test_prompts_are_short(env_cls: type[TextEnv]) -> None:
    env = env_cls()
    prompts = [env.reset(seed=seed)[0] for seed in range(200)]
    assert max(len(prompt) for prompt in prompts) <= MAX_PROMPT_CHARS
    assert len(set(prompts)) > 100  # and varied


@pytest.mark.parametrize("env_cls", ENV_CLASSES)
def test_same_seed_same_prompt(env_cls: type[TextEnv]) -> None:
    env = env_cls()
    first = env.reset(seed=7)
    env.reset(seed=8)
    assert env.reset(seed=7) == first
    assert env_cls().reset(seed=7) == first


@pytest.mark.parametrize("env_cls", ENV_CLASSES)
def test_train_and_eval_are_disjoint(env_cls: type[TextEnv]) -> None:
    env = env_cls()
    train = {env.reset(seed=s, options={"split": "train"})[1]["prompt_id"] for s in range(200)}
    held_out = [env.reset(seed=10_000 + s, options={"split": "eval"})[1] for s in range(200)]
    eval_keys = {info["prompt_id"] for info in held_out}
    assert not train & eval_keys
    assert all(split_of(key) == "eval" for key in eval_keys)
    assert all(info["split"] == "eval" for info in held_out)


@pytest.mark.parametrize(("env_cls", "attributes"), [
    (MathEnv, ("math", 16, 1, "math_equiv")),
    (CountdownEnv, ("countdown", 24, 1, "countdown")),
    (SudokuEnv, ("sudoku", 24, 1, "sudoku")),
    (InstructionsEnv, ("instructions", 32, 1, "instruction_following")),
    (LookupEnv, ("tool_use", 48, 4, "exact_int")),
])
def test_class_attributes(env_cls: type[TextEnv], attributes: tuple) -> None:
    assert (env_cls.task, env_cls.budget, env_cls.max_turns, env_cls.reward_name) == attributes
    _, info = env_cls().reset(seed=0)
    assert (info["task"], info["budget"], info["turn"]) == (attributes[0], attributes[1], 0)


@pytest.mark.parametrize("module", [envs.math, envs.countdown, envs.sudoku, envs.instructions,
                                    envs.lookup])
def test_doctests_pass(module) -> None:
    assert doctest.testmod(module).failed == 0


@pytest.mark.parametrize("env_cls", ENV_CLASSES)
def test_garbage_is_a_wrong_answer(env_cls: type[TextEnv]) -> None:
    env = env_cls()
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step("\x0bzz(( 3")
    assert (terminated, truncated, info["correct"]) == (True, False, False)
    # Instruction following gives partial credit: garbage may still meet a constraint.
    assert reward < 1.0 if env_cls is InstructionsEnv else reward == 0.0


# --- math ----------------------------------------------------------------------


def test_math_scores_equivalent_forms_and_rejects_echoes() -> None:
    env, checked = MathEnv(), set()
    for seed in range(100):
        prompt, _ = env.reset(seed=seed)
        answer = env.problem.answer
        if prompt.startswith("Simplify"):
            # The question restated is equal in value but not simplified.
            assert env.step(prompt.removeprefix("Simplify "))[1] == 0.0
            checked.add("simplify echo")
        elif prompt.startswith("Solve"):
            assert env.step(f"x = {answer}")[1] == 1.0
            checked.add("x=")
        elif "/" in answer:
            numerator, denominator = answer.split("/")
            assert env.step(f"\\frac{{{numerator}}}{{{denominator}}}")[1] == 1.0
            checked.add("frac")
        elif prompt.endswith("=") and "/" not in prompt:
            assert env.step(prompt.removesuffix("="))[1] == 0.0
            checked.add("arithmetic echo")
    assert checked == {"simplify echo", "x=", "frac", "arithmetic echo"}


# --- countdown -----------------------------------------------------------------


def test_countdown_prompt_states_the_problem() -> None:
    env = CountdownEnv()
    for seed in range(50):
        prompt, info = env.reset(seed=seed)
        numbers, target = env.problem.answer["numbers"], env.problem.answer["target"]
        assert prompt == f"Use {' '.join(map(str, numbers))} to make {target}:"
        assert len(numbers) in (3, 4) and all(1 <= n <= 9 for n in numbers)
        assert 1 <= target <= 99
        assert info["prompt_id"] == f"countdown:{' '.join(map(str, numbers))}:{target}"


# --- sudoku --------------------------------------------------------------------


def test_sudoku_draws_from_all_288_grids() -> None:
    grids = all_grids()
    assert len(set(grids)) == 288
    assert sudoku(list(grids), list(grids)) == [1.0] * 288


def test_sudoku_puzzle_is_cut_from_its_solution() -> None:
    env = SudokuEnv()
    for seed in range(50):
        prompt, _ = env.reset(seed=seed)
        puzzle, solution = env.problem.answer, env.problem.solution
        assert prompt == "Sudoku " + "/".join(puzzle[i : i + 4] for i in range(0, 16, 4))
        assert 4 <= puzzle.count(".") <= 8
        assert all(p in (".", s) for p, s in zip(puzzle, solution))


def test_sudoku_grid_with_separators_is_right() -> None:
    env = SudokuEnv()
    env.reset(seed=1)
    grid = env.problem.solution
    assert env.step("/".join(grid[i : i + 4] for i in range(0, 16, 4)))[1] == 1.0


# --- instructions --------------------------------------------------------------


def test_instructions_specs_have_one_to_three_constraints() -> None:
    env = InstructionsEnv()
    counts = set()
    for seed in range(200):
        env.reset(seed=seed)
        kinds = [c["kind"] for c in env.problem.answer]
        counts.add(len(kinds))
        assert len(set(kinds)) == len(kinds)
    assert counts == {1, 2, 3}


def test_instructions_claim_counts_only_with_full_compliance() -> None:
    env, rng, rewards_seen = InstructionsEnv(), np.random.default_rng(0), set()
    for seed in range(50):
        env.reset(seed=seed)
        claim = env.expert_action(rng) + " - I followed all the constraints."
        complies = all(satisfied(claim, env.problem.answer))
        _, reward, *_ = env.step(claim)
        assert reward == (1.0 if complies else 0.0)  # never partial credit for a claim
        rewards_seen.add(reward)
    assert rewards_seen == {0.0, 1.0}


# --- lookup --------------------------------------------------------------------


def test_lookup_episode_with_a_tool_error_in_the_middle() -> None:
    env = LookupEnv()
    env.reset(seed=0)
    p = env.problem
    a, b = CITIES[p.city_a][p.field_a], CITIES[p.city_b][p.field_b]
    obs, reward, terminated, _, info = env.step(f"get({p.city_a},{p.field_a})")
    assert (obs, reward, terminated, info["turn"]) == (str(a), 0.0, False, 1)
    obs, reward, terminated, _, _ = env.step("get(Atlantis,pop)")
    assert (obs, reward, terminated) == ("error: no city Atlantis", 0.0, False)
    obs, _, terminated, _, _ = env.step(f"get({p.city_b.lower()}, {p.field_b})")
    assert (obs, terminated) == (str(b), False)
    _, reward, terminated, _, info = env.step(str(p.answer))
    assert (reward, terminated, info["correct"], info["turn"]) == (1.0, True, True, 4)
    assert p.answer == (a + b if p.op == "+" else a - b)
    roles = [m["role"] for m in env.messages()]
    assert roles == ["user"] + ["assistant", "tool"] * 3 + ["assistant"]


def test_lookup_expert_recovers_after_a_model_error() -> None:
    env = LookupEnv()
    env.reset(seed=3)
    env.step("get(Avon,height)")
    env.step("calc(1/0)")
    actions = []
    terminated = False
    while not terminated:
        actions.append(env.expert_action(np.random.default_rng(0)))
        _, reward, terminated, _, _ = env.step(actions[-1])
    assert reward == 1.0 and actions[0].startswith("get(") and len(actions) == 2


@pytest.mark.parametrize(("action", "reply"), [
    ("get(Avo,pop)", "error: no city Avo"),
    ("get(Avon,height)", "error: no field height"),
    ("get(Avon)", "error: use get(city,field) or calc(expr)"),
    ("get(Avon,pop", "error: use get(city,field) or calc(expr)"),
    ("get(Avon,pop,area)", "error: use get(city,field) or calc(expr)"),
    ("calc(1/2)", "error: bad expression"), ("calc(__import__('os'))", "error: bad expression"),
    (" get( AVON , Pop ) ", "120"), ("calc(120+75)", "195"), ("calc(75-120)", "-45"),
])
def test_lookup_tool_replies(action: str, reply: str) -> None:
    env = LookupEnv()
    env.reset(seed=0)
    assert env.step(action)[:3] == (reply, 0.0, False)


def test_lookup_tool_only_episode_ends_with_zero() -> None:
    env = LookupEnv()
    env.reset(seed=0)
    for _ in range(env.max_turns - 1):
        assert not env.step("get(Avon,pop)")[2]
    _, reward, terminated, truncated, info = env.step("get(Avon,pop)")
    assert (reward, terminated, truncated, info["correct"]) == (0.0, True, False, False)
