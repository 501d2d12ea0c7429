"""The contract every registered k2rl environment keeps, checked once per env id.

Each test is parametrised over ``envs.K2RL_ENV_IDS``. ``CONTRACT`` states what each env
promises (its class attributes, verifier, demonstrator settings); the first tests fail
loudly when the package registers an env that ``K2RL_ENV_IDS`` or ``CONTRACT`` lacks.
Behaviour particular to one env lives in the per-family files next to this one.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
from dataclasses import dataclass, field
from typing import Any

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import envs
from envs import K2RL_ARGUMENT_ENV_IDS, K2RL_ENV_IDS, TeachesJudging, TextEnv, split_of
from rewards import (chat_reference, countdown, describe_reference, exact_int, final_int,
                     get_reward, ifeval_following, instruction_following, math_equiv, sudoku, unit_tests)
from tests.envs.helpers import make, run_expert

GARBAGE = "\x0bzz(( 3"  # not a tool call, not an answer
EXPERT_EPISODES = 200
PROMPT_SAMPLES = 200
SPLIT_SAMPLES = 300


@dataclass(frozen=True)
class Contract:
    """What one env promises."""

    task: str
    budget: int
    max_turns: int
    reward_name: str
    verifier: Any  # what get_reward(reward_name) must return
    expert_kwargs: dict[str, Any] = field(default_factory=dict)  # a demonstrator that always solves
    max_prompt_chars: int = 60  # the policy is a tiny character-level model
    min_distinct_prompts: int = 100  # of PROMPT_SAMPLES reset prompts
    partial_credit: bool = False  # garbage may still earn some reward (but never full credit)
    judged: bool = False  # the critic gives the reward: the env ends with 0 and info["judged"]
    expert_episodes: int = EXPERT_EPISODES


CONTRACT: dict[str, Contract] = {
    "k2rl/Arithmetic-v1": Contract("arithmetic", 8, 1, "exact_int", exact_int),
    "k2rl/Arithmetic-v2": Contract("arithmetic", 32, 1, "final_int", final_int),
    # tool_rate=1.0: the demonstrator always calls the tool (its direct guess is usually wrong).
    "k2rl/Calculator-v1": Contract("tool_use", 24, 3, "exact_int", exact_int,
                                   expert_kwargs={"tool_rate": 1.0}),
    "k2rl/Math-v2": Contract("math", 16, 1, "math_equiv", math_equiv),
    "k2rl/Countdown-v1": Contract("countdown", 24, 1, "countdown", countdown),
    "k2rl/Sudoku-v1": Contract("sudoku", 24, 1, "sudoku", sudoku),
    # Instruction following gives partial credit: garbage may still meet a constraint.
    "k2rl/Instructions-v0": Contract("instructions", 32, 1, "instruction_following",
                                     instruction_following, partial_credit=True),
    "k2rl/Instructions-v1": Contract("instructions", 32, 1, "instruction_following",
                                     instruction_following, partial_credit=True),
    "k2rl/Lookup-v1": Contract("tool_use", 48, 4, "exact_int", exact_int),
    # Every episode runs the answer in the sandbox: fewer episodes.
    "k2rl/Code-v1": Contract("code", 96, 1, "unit_tests", unit_tests, expert_episodes=50),
    # hack_rate=0.0: the demonstrator never flatters.
    "k2rl/Chat-v1": Contract("chat", 56, 1, "chat_reference", chat_reference,
                             expert_kwargs={"hack_rate": 0.0}, judged=True),
    # For a pretrained chat model: prompts in full sentences.
    "k2rl/WordSums-v0": Contract("word_sums", 160, 1, "math_equiv", math_equiv,
                                 max_prompt_chars=90),
    "k2rl/ShortWriting-v1": Contract("short_writing", 96, 1, "ifeval", ifeval_following,
                                     max_prompt_chars=200, partial_credit=True),
    # Rewarded by the critic alone; the reference check reads one plain sentence.
    "k2rl/Describe-v0": Contract("describe", 64, 1, "describe_reference", describe_reference,
                                 judged=True),
}


def contract(env_id: str) -> Contract:
    """The contract of ``env_id``; a registered env without one is a test failure."""
    if env_id not in CONTRACT:
        pytest.fail(f"{env_id} is registered but has no entry in CONTRACT ({__file__})")
    return CONTRACT[env_id]


# --- the list of envs is complete ---------------------------------------------


def test_every_env_class_in_the_package_is_registered() -> None:
    """A TextEnv subclass in envs/ that is not in K2RL_ENV_IDS would go untested."""
    registered = {gymnasium.spec(env_id).entry_point
                  for env_id in K2RL_ENV_IDS + K2RL_ARGUMENT_ENV_IDS}
    defined = set()
    for module_info in pkgutil.iter_modules(envs.__path__):
        module = importlib.import_module(f"envs.{module_info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            own = cls.__module__ == module.__name__  # not one imported from elsewhere
            if own and issubclass(cls, TextEnv) and cls is not TextEnv:
                defined.add(f"{module.__name__}:{name}")
    assert defined == registered, f"not registered: {sorted(defined - registered)}"


def test_every_registered_env_is_listed() -> None:
    """Every gymnasium id in the k2rl namespace or served by envs/ is in K2RL_ENV_IDS (or, made
    only with a task's kwargs, in K2RL_ARGUMENT_ENV_IDS, tested in test_dataset.py)."""
    ours = {env_id for env_id, spec in gymnasium.registry.items()
            if spec.namespace == "k2rl"
            or (isinstance(spec.entry_point, str) and spec.entry_point.startswith("envs."))}
    ours -= set(K2RL_ARGUMENT_ENV_IDS)
    missing = sorted(ours - set(K2RL_ENV_IDS))
    assert ours == set(K2RL_ENV_IDS), f"missing from K2RL_ENV_IDS: {missing}"
    assert len(K2RL_ENV_IDS) == len(set(K2RL_ENV_IDS))


def test_every_listed_env_has_a_contract() -> None:
    assert set(CONTRACT) == set(K2RL_ENV_IDS), (
        f"no contract: {sorted(set(K2RL_ENV_IDS) - set(CONTRACT))}; "
        f"not registered: {sorted(set(CONTRACT) - set(K2RL_ENV_IDS))}")


def test_envs_module_imports_twice() -> None:
    importlib.reload(envs)
    assert set(K2RL_ENV_IDS) <= set(gymnasium.registry)


# --- the contract, per env ----------------------------------------------------


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_passes_gymnasium_env_checker(env_id: str) -> None:
    check_env(make(env_id), skip_render_check=True)


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_class_attributes_and_reset_info(env_id: str) -> None:
    c = contract(env_id)
    env = make(env_id)
    cls = type(env)
    assert (cls.task, cls.budget, cls.max_turns, cls.reward_name) == (
        c.task, c.budget, c.max_turns, c.reward_name)
    obs, info = env.reset(seed=0)
    assert info == {"task": c.task, "budget": c.budget, "prompt_id": info["prompt_id"],
                    "split": "train", "turn": 0}
    assert obs == env.problem.prompt and info["prompt_id"] == env.problem.key
    assert env.messages() == [{"role": "user", "content": obs}]


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_verifier_is_registered_under_its_name(env_id: str) -> None:
    c = contract(env_id)
    assert get_reward(c.reward_name) is c.verifier


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_module_doctests_pass(env_id: str) -> None:
    module_name = gymnasium.spec(env_id).entry_point.partition(":")[0]
    assert doctest.testmod(importlib.import_module(module_name)).failed == 0


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_same_seed_same_prompt(env_id: str) -> None:
    env = make(env_id)
    first = env.reset(seed=7)
    env.reset(seed=8)
    assert env.reset(seed=7) == first
    assert make(env_id).reset(seed=7) == first  # a fresh env too


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_train_and_eval_are_disjoint(env_id: str) -> None:
    """Keys and splits agree. This cannot catch a key that is not the problem's identity
    (split_of decides both sides); test_heldout.py checks the problems themselves."""
    env = make(env_id)

    def draw(seed, split):
        info = env.reset(seed=seed, options={"split": split})[1]
        return info, info["prompt_id"], env.problem.split_key or env.problem.key

    train = [draw(s, "train") for s in range(SPLIT_SAMPLES)]
    held_out = [draw(10_000 + s, "eval") for s in range(SPLIT_SAMPLES)]
    assert not {k for _, k, _ in train} & {k for _, k, _ in held_out}
    assert not {s for *_, s in train} & {s for *_, s in held_out}
    assert all(split_of(s) == "train" for *_, s in train)
    assert all(split_of(s) == "eval" for *_, s in held_out)
    held_out = [info for info, *_ in held_out]
    assert all(info["split"] == "eval" for info in held_out)


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_unknown_split_raises(env_id: str) -> None:
    with pytest.raises(ValueError, match="split"):
        make(env_id).reset(seed=0, options={"split": "test"})


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_prompts_are_short_and_varied(env_id: str) -> None:
    c = contract(env_id)
    env = make(env_id)
    prompts = [env.reset(seed=seed)[0] for seed in range(PROMPT_SAMPLES)]
    assert max(len(prompt) for prompt in prompts) <= c.max_prompt_chars
    assert len(set(prompts)) > c.min_distinct_prompts


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_stepping_after_termination_raises(env_id: str) -> None:
    env = make(env_id)
    with pytest.raises(RuntimeError, match="reset"):
        env.step("1")  # before any reset
    env.reset(seed=0)
    assert env.step("1")[2]
    with pytest.raises(RuntimeError, match="reset"):
        env.step("1")


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_garbage_is_a_wrong_answer(env_id: str) -> None:
    c = contract(env_id)
    env = make(env_id)
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(GARBAGE)
    assert (terminated, truncated, info["correct"], info["turn"]) == (True, False, False, 1)
    assert reward < 1.0 if c.partial_credit else reward == 0.0


@pytest.mark.parametrize("env_id", K2RL_ENV_IDS)
def test_expert_solves_every_episode_within_budget(env_id: str) -> None:
    c = contract(env_id)
    env, rng = make(env_id, **c.expert_kwargs), np.random.default_rng(0)
    for seed in range(c.expert_episodes):
        reward, info, actions = run_expert(env, seed, rng)
        assert info["correct"] and info["answer"] == str(env.problem.answer), (env.problem, actions)
        if c.judged:  # the critic rewards it later; the reference check says it is right
            assert (reward, info["judged"], info["reference_reward"]) == (0.0, True, 1.0)
        else:
            assert reward == 1.0 and "judged" not in info, (env.problem, actions)
        assert len(actions) <= c.max_turns
        # Character-level tokens: each turn's characters plus its end-of-turn token.
        assert sum(len(action) + 1 for action in actions) <= env.budget, actions


JUDGE_TEACHERS = [env_id for env_id in K2RL_ENV_IDS
                  if isinstance(gymnasium.make(env_id).unwrapped, TeachesJudging)]


def test_the_default_families_teach_judging() -> None:
    assert {"k2rl/Arithmetic-v2", "k2rl/Calculator-v1", "k2rl/Instructions-v1",
            "k2rl/Chat-v1"} <= set(JUDGE_TEACHERS)


@pytest.mark.parametrize("env_id", JUDGE_TEACHERS)
def test_scripted_critic_checks_agree_with_the_verifier(env_id: str) -> None:
    """The critic's scripted expert (warm-start data only): its check of the expert's answer
    says yes, its check of a wrong answer says no, and the wrong answer really is wrong."""
    from k2rl.step.critic_demos import expert_transcript
    from k2rl.step.critic_ids import CHECK_TOKENS
    from rewards import get_reward

    env = gymnasium.make(env_id).unwrapped
    for name, value in (("tool_rate", 1.0), ("hack_rate", 0.0)):
        if hasattr(env, name):
            setattr(env, name, value)
    verify = get_reward(env.reward_name)
    rng = np.random.default_rng(0)
    for seed in range(400):  # a rare prompt once had no wrong answer ("max 4 words")
        env.reset(seed=seed)
        good = expert_transcript(env, rng)
        env.reset(seed=seed)
        bad = env.rejected_response(rng)
        assert env.judge_working()
        assert env.judge_check(good).endswith(": yes"), (good, env.judge_check(good))
        assert env.judge_check(bad).endswith(": no"), (bad, env.judge_check(bad))
        # the default model writes a character a token: its longest check fits the critic's turn
        assert max(len(env.judge_check(good)), len(env.judge_check(bad))) < CHECK_TOKENS
        final = bad.rsplit(" | ", 1)[-1]
        assert verify([final], [env.problem.answer])[0] < 1.0, bad


@pytest.mark.parametrize("env_id", JUDGE_TEACHERS)
def test_a_check_against_the_critic_s_own_answer_is_the_scripted_check(env_id: str) -> None:
    """Where a task's check follows from the answer and the critic's own answer alone
    (`check_against`, what critic.correct_checks trains on), the scripted check is that line
    with the expert's working as the own answer; and it reads the two texts, not the problem:
    against a wrong own answer the right reply's check says no."""
    from k2rl.step.critic_demos import expert_transcript

    env = gymnasium.make(env_id).unwrapped
    if not env.corrects_checks:
        pytest.skip(f"{env_id}'s checks need the problem (no check_from)")
    for name, value in (("tool_rate", 1.0), ("hack_rate", 0.0)):  # the expert at its best
        if hasattr(env, name):
            setattr(env, name, value)
    reads_own = env.check_against("x", "x") is not None  # else it reads the question
    rng = np.random.default_rng(1)
    for layout in ({}, {"bounds_in_checks": True, "compare_quoted": True}):
        for name, value in layout.items():
            if hasattr(env, name):
                setattr(env, name, value)
        for seed in range(200):
            obs, _ = env.reset(seed=seed)
            good = expert_transcript(env, rng)
            env.reset(seed=seed)
            bad, own = env.rejected_response(rng), env.judge_working()
            assert env.check_from(obs, good, own) == env.judge_check(good)
            assert env.check_from(obs, bad, own) == env.judge_check(bad)
            if reads_own:
                assert env.check_from(obs, good, bad).endswith(": no")


def test_a_result_check_compares_a_character_at_a_time_up_to_the_first_difference() -> None:
    """Each mark looks only at the two characters before it, and the finding is the last mark:
    the layout that lets a small critic compare two numbers (bench/archive/notebook.md, issue
    27)."""
    from envs.base import compare_line, side_by_side

    assert side_by_side("-32", "-33") == "--=33=23!"
    assert side_by_side("85", "85") == "88=55="
    assert side_by_side("8", "85") == "88=_5!"  # the shorter one padded: a missing digit differs
    assert side_by_side("132", "32") == "13!"  # stops at the first difference
    for said, mine in [("-32", "-33"), ("85", "85"), ("8", "85"), ("", "7")]:
        line = compare_line(said, mine)
        assert line.endswith(": yes" if said == mine else ": no")
        assert (line.rsplit(":", 1)[0][-1] == "!") == (said != mine)


def test_an_instruction_check_lists_the_reply_s_words_numbered_and_marked_on_topic() -> None:
    from envs.instructions import word_list
    from rewards.instructions import words

    assert word_list('["FIG", "cat", "plum"]', ("fig", "plum")) == "1 FIG+ 2 cat? 3 plum+"
    assert word_list("- fig.\n- fіg", ("fig",)) == "1 fig+ 2 fіg+"  # as the verifier sees it
    assert word_list("", ("fig",)) == "0"
    env = gymnasium.make("k2rl/Instructions-v1").unwrapped
    rng = np.random.default_rng(1)
    for seed in range(50):
        env.reset(seed=seed)
        bad = env.rejected_response(rng)
        listed = env.judge_check(bad).split(";")[0]
        n = len(words(bad))
        assert listed == "0" if n == 0 else listed.split(" ")[-2] == str(min(n, 8)), (bad, listed)
