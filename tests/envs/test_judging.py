"""`TeachesJudging`: only the envs that opt in teach the critic, and k2rl asks the protocol."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

from envs import K2RL_ENV_IDS, TeachesJudging, TextEnv
from envs.arithmetic import ArithmeticEnv, WorkedArithmeticEnv
from envs.base import Problem

# The envs whose scripted expert taught the critic before the protocol was explicit (TextEnv's
# `teaches_judging()`/`corrects_checks()`): the embedded default's critic data must not change.
TEACHERS = {"k2rl/Arithmetic-v2", "k2rl/Calculator-v1", "k2rl/Instructions-v0",
            "k2rl/Instructions-v1", "k2rl/Chat-v1"}
CORRECTORS = {"k2rl/Arithmetic-v2", "k2rl/Instructions-v0", "k2rl/Instructions-v1",
              "k2rl/Chat-v1"}


def test_an_env_teaches_judging_only_by_opting_in() -> None:
    assert isinstance(WorkedArithmeticEnv(), TeachesJudging)
    assert not isinstance(ArithmeticEnv(), TeachesJudging)  # v1: no working to check against
    assert not isinstance(gymnasium.make("CartPole-v1").unwrapped, TeachesJudging)
    assert not isinstance(gymnasium.make("k2rl/Arithmetic-v2"), TeachesJudging)  # a wrapper
    for name in ("judge_working", "judge_check", "rejected_response", "check_against",
                 "check_from", "corrects_checks", "teaches_judging"):
        assert not hasattr(TextEnv, name), name


def test_the_envs_that_teach_judging_are_unchanged() -> None:
    made = {env_id: gymnasium.make(env_id).unwrapped for env_id in K2RL_ENV_IDS}
    assert {i for i, env in made.items() if isinstance(env, TeachesJudging)} == TEACHERS
    assert {i for i, env in made.items()
            if isinstance(env, TeachesJudging) and env.corrects_checks} == CORRECTORS


def test_an_opted_in_env_must_write_the_three_scripts() -> None:
    class HalfDone(TextEnv, TeachesJudging):
        task, budget, max_turns, reward_name = "half", 8, 1, "exact_match"

        def _draw(self) -> Problem:
            return Problem(key="half", prompt="say x", answer="x")

        def judge_working(self) -> str:
            return "x"

    with pytest.raises(TypeError, match="judge_check"):
        HalfDone()


def test_the_critic_s_correctors_ask_the_protocol() -> None:
    from k2rl.step.critic_loop import check_correctors

    fix = check_correctors(sorted(TEACHERS) + ["k2rl/Arithmetic-v1", "CartPole-v1"])
    assert sorted(fix) == ["arithmetic", "chat", "instructions"]
    env = WorkedArithmeticEnv()
    env.reset(seed=0)
    own = env.judge_working()
    assert fix["arithmetic"](env.problem.prompt, own, own).endswith(": yes")
    assert env.rejected_response(np.random.default_rng(0)) != own
