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
    env = make("k2rl/ShortWriting-v1")
    prompt, _ = env.reset(seed=0)
    assert 'Include the word "old"' in prompt and 'exact phrase "That is all."' in prompt
    assert env.step("My old friend lives by the sea. That is all.")[1] == 1.0
    env.reset(seed=0)
    assert env.step("My friend lives by the sea. That is all.")[1] == 0.5
    env.reset(seed=0)
    assert env.step("My old friend lives by the sea.")[1] == 0.5  # the phrase is missing


# What SmolLM2 learned to write under v0, whose IFEval checks read no topic (README): each
# follows both of its constraints and is no sentence on the topic, so each scores 0 in v1.
GAMED = ["That is all.", '"An old friend"', "old. That is all.", "An old friend. That is all.",
         "Write one sentence about a friend. Include the word old. That is all.",
         "My old cat sleeps all day long. That is all.",  # a sentence, not on the topic
         "My old friend is kind. My old friend is near. That is all.",  # two sentences
         "old friend old friend old friend. That is all.",
         "My old fri\u200bend lives by the sea. That is all."]  # an invisible character


@pytest.mark.parametrize("reply", GAMED)
def test_short_writing_needs_a_sentence_on_the_topic(reply):
    env = make("k2rl/ShortWriting-v1")
    env.reset(seed=0)
    assert env.step(reply)[1] == 0.0


def test_short_writing_draws_room_for_a_sentence():
    """A closing phrase never comes with a limit of 8 words: 5 words and the phrase fit."""
    env = make("k2rl/ShortWriting-v1")
    for seed in range(400):
        prompt, _ = env.reset(seed=seed)
        assert not ("less than 8 words" in prompt and "exact phrase" in prompt), prompt
        expert = env.unwrapped.expert_action(env.unwrapped.np_random)
        assert env.step(expert)[1] == 1.0, (prompt, expert)


def test_the_answer_read_is_in_the_info():
    env = episode("54+55")
    info = env.step("55 + 54 = 109, so the sum is \\boxed{109}.")[4]
    assert info["extracted"] == "109" and info["correct"]
