"""The real-model families (configs/smollm2.yaml) score replies as SmolLM2 writes them: its
working, then the result; echoes, hedges and a wrong last word score 0."""
import pytest

from tests.envs.helpers import make

# Replies in the styles SmolLM2-135M-Instruct wrote for these prompts (from a run's held-out
# answers), with the right result put in.
RIGHT = [
    "55 + 54 = 109",
    "To calculate 55 + 54, we need to add 55 and 54, which is 109. So, 55 + 54 = 109.",
    "To find the sum of 55 and 54, we add them.\n\nThe sum of 55 and 54 is 109.\n\nSo, the "
    "final answer is 109.",
    "55 + 54 = \\boxed{109}",
    "The answer is $\\boxed{109}$.",
    "**109**",
]
WRONG = [
    "55 + 54",  # the question back
    "\\boxed{55 + 54}",
    "108 or \\boxed{109}",  # a hedge
    "The answer is 109, or maybe 110.",
    "The answer is not \\boxed{109}.",
    "55 + 54 = 109, so the answer is 110.",  # the last answer is the answer
    "1\u200b09",  # an invisible character
]


def episode(key: str):
    """An episode on the problem `key` (54+55 is a held-out problem)."""
    env = make("k2rl/WordSums-v0")
    for seed in range(2000):
        env.reset(seed=seed, options={"split": "eval"})
        if env.unwrapped.problem.key == key:
            return env
    pytest.fail(f"no draw of {key} in 2000 seeds")


@pytest.mark.parametrize("reply", RIGHT)
def test_a_right_sum_in_a_real_style_scores_1(reply):
    env = episode("54+55")
    assert env.step(reply)[1] == 1.0


@pytest.mark.parametrize("reply", WRONG)
def test_echoes_hedges_and_negations_score_0(reply):
    env = episode("54+55")
    assert env.step(reply)[1] == 0.0


def test_short_writing_scores_the_constraints_it_follows():
    env = make("k2rl/ShortWriting-v0")
    prompt, _ = env.reset(seed=0)
    assert 'Include the word "old"' in prompt and 'exact phrase "That is all."' in prompt
    assert env.step("My old friend lives by the sea. That is all.")[1] == 1.0
    env.reset(seed=0)
    assert env.step("My friend lives by the sea. That is all.")[1] == 0.5
    env.reset(seed=0)
    assert env.step("That is all. My old friend.")[1] == 0.5  # the phrase must end it
