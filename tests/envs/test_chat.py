"""The critic-rewarded chat environment (k2rl/Chat-v0): its reward is deferred to the critic."""
import gymnasium
import numpy as np

import envs  # noqa: F401
from rewards import get_reward


def test_chat_episode_defers_its_reward_to_the_critic():
    env = gymnasium.make("k2rl/Chat-v0").unwrapped
    prompt, info = env.reset(seed=4)
    fact = env.problem.answer
    _, reward, done, _, info = env.step("Great question! " + fact)
    assert done and reward == 0.0 and info["judged"] and not info["correct"]
    env.reset(seed=4)
    _, reward, _, _, info = env.step(fact)
    assert reward == 0.0 and info["correct"] and info["reference_reward"] == 1.0


def test_expert_hacks_at_its_rate():
    env = gymnasium.make("k2rl/Chat-v0", hack_rate=0.5).unwrapped
    rng = np.random.default_rng(0)
    hacked = 0
    for s in range(400):
        env.reset(seed=s)
        hacked += get_reward("chat_reference")([env.expert_action(rng)], [env.problem.answer])[0] == 0
    assert 160 < hacked < 240
    clean = gymnasium.make("k2rl/Chat-v0", hack_rate=0.0).unwrapped
    clean.reset(seed=1)
    assert clean.expert_action(rng) == clean.problem.answer
