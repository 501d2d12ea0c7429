"""TextEnv's protocol: one required method (`_draw`), a public `score`, an optional expert."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from envs import TextEnv, has_expert
from envs.base import Problem

WORDS = ["cat", "dog", "sun", "red", "map", "cup", "hat", "pen", "box", "key", "owl", "fig"]
ENV_ID = "test/OneMethod-v0"


class OneMethodEnv(TextEnv):
    """A single-turn env as docs/data-and-envs.md shows it: `_draw` and nothing else."""

    task, budget, max_turns, reward_name = "spell", 16, 1, "exact_match"

    def _draw(self) -> Problem:
        word = "".join(self.np_random.choice(WORDS, size=2))
        return Problem(key=f"spell:{word}", prompt=f"Say {word}.", answer=word)


class HalvedEnv(OneMethodEnv):
    """A custom score through the public hook: half the verifier's."""

    def score(self, action: str) -> float:
        return super().score(action) / 2


@pytest.fixture
def one_method_id():
    """`OneMethodEnv` registered under ENV_ID, and removed afterwards."""
    gymnasium.register(id=ENV_ID, entry_point=lambda **kw: OneMethodEnv(**kw))
    yield ENV_ID
    gymnasium.registry.pop(ENV_ID, None)


def test_a_one_method_env_runs_and_scores_through_its_verifier() -> None:
    env = OneMethodEnv()
    check_env(env, skip_render_check=True)
    prompt, info = env.reset(seed=0)
    word = env.problem.answer
    assert prompt == f"Say {word}." and info["prompt_id"] == f"spell:{word}"
    _, reward, terminated, truncated, info = env.step(f"The answer is {word}")
    assert (reward, terminated, truncated, info["correct"]) == (1.0, True, False, True)
    assert info["extracted"] == word  # exact_match read the final answer, as the verifier does
    env.reset(seed=0)
    assert env.step("no idea")[1] == 0.0
    env.reset(seed=0)
    assert env.score(word) == 1.0 and env.score(word + "s") == 0.0


def test_a_custom_score_overrides_the_public_hook() -> None:
    env = HalvedEnv()
    env.reset(seed=1)
    _, reward, terminated, _, info = env.step(env.problem.answer)
    assert (reward, terminated, info["correct"]) == (0.5, True, False)


def test_only_draw_is_required() -> None:
    class NoDraw(TextEnv):
        task, budget, max_turns, reward_name = "none", 8, 1, "exact_match"

    with pytest.raises(NotImplementedError, match="NoDraw must implement _draw"):
        NoDraw().reset(seed=0)


def test_an_env_without_an_expert_says_so_and_callers_ask_first() -> None:
    env = OneMethodEnv()
    env.reset(seed=0)
    assert not has_expert(env)
    with pytest.raises(NotImplementedError, match="OneMethodEnv has no expert_action; only the "
                                                  "embedded default's warm-start"):
        env.expert_action(np.random.default_rng(0))
    assert has_expert(gymnasium.make("k2rl/Arithmetic-v2").unwrapped)
    assert not has_expert(gymnasium.make("CartPole-v1").unwrapped)  # a plain gymnasium.Env


def test_envs_check_plays_random_text_on_an_env_without_an_expert(one_method_id, capsys) -> None:
    from k2rl.cli import main

    assert main(["envs", "check", one_method_id, "--episodes", "2", "--train-draws", "200"]) == 0
    out = capsys.readouterr().out
    assert "check_env passed" in out and out.count("(random policy)") == 2
    assert "split check passed" in out


def test_the_ptx_curated_set_leaves_out_an_env_without_an_expert(one_method_id) -> None:
    from k2rl.bootstrap.ptx import curated_envs

    made = curated_envs([one_method_id, "k2rl/Arithmetic-v2"])
    assert [type(env).__name__ for env in made] == ["WorkedArithmeticEnv"]
