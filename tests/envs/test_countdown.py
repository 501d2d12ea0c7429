"""Tests particular to the countdown env ("k2rl/Countdown-v1").

The checks every env must pass are in test_contract.py.
"""

from __future__ import annotations

from envs.countdown import CountdownEnv


def test_countdown_prompt_states_the_problem() -> None:
    env = CountdownEnv()
    for seed in range(50):
        prompt, info = env.reset(seed=seed)
        numbers, target = env.problem.answer["numbers"], env.problem.answer["target"]
        assert prompt == f"Use {' '.join(map(str, numbers))} to make {target}:"
        assert len(numbers) in (3, 4) and all(1 <= n <= 9 for n in numbers)
        assert 1 <= target <= 99
        assert info["prompt_id"] == f"countdown:{' '.join(map(str, numbers))}:{target}"
