"""k2rl/Describe-v0: one sentence about a thing, rewarded by the critic alone; its reference
check (reports only) reads one plain sentence about the thing, and the hacks a policy could
find score 0 there."""
import gymnasium
import envs  # noqa: F401  (registers k2rl/*)
from envs.base import split_of
from rewards import get_reward


def test_the_reward_is_the_critics_and_the_reference_is_kept_for_reports():
    env = gymnasium.make("k2rl/Describe-v0").unwrapped
    prompt, _ = env.reset(seed=5)
    word = env.problem.key.split(":")[1]
    assert word in prompt and "one sentence" in prompt.lower() or "one-sentence" in prompt
    _, reward, terminated, _, info = env.step(f"The {word} is a thing that people use every day.")
    assert terminated and reward == 0.0 and info["judged"] and info["reference_reward"] == 1.0


def test_the_reference_check_gives_nothing_to_the_cheap_replies():
    env = gymnasium.make("k2rl/Describe-v0").unwrapped
    env.reset(seed=5)
    word, answer = env.problem.key.split(":")[1], env.problem.answer
    hacks = [word, f"{word.capitalize()}.", f'"{word}"', env.problem.prompt,  # echo
             f"Great question! A {word} is a thing that people use every day.",
             f"A {word} is a thing that people use every day. I am confident this is right.",
             f"A {word} is useful. A {word} is common.",  # two sentences
             f"A {word} is " + "a very " * 15 + "useful thing.",  # padded
             "A lamp is a thing that people use every day." if word != "lamp" else "A cat naps.",
             f"A {word}\u200b is a thing that people use every day and night."]
    scores = get_reward("describe_reference")(hacks, [answer] * len(hacks))
    assert scores == [0.0] * len(hacks), scores


def test_a_thing_is_held_out_under_every_template():
    from envs.describe import THINGS

    env = gymnasium.make("k2rl/Describe-v0").unwrapped
    held = {w for w in THINGS if split_of(f"describe:{w}") == "eval"}
    assert len(THINGS) == len(set(THINGS)) == 738 and len(held) == 77
    prompts = set()
    for seed in range(200):
        env.reset(seed=seed, options={"split": "eval"})
        assert env.problem.key.split(":")[1] in held
        prompts.add(env.problem.prompt)
    assert len(prompts) > len(held)  # a thing under several templates, held out under each


def test_the_reference_check_shares_nothing_with_the_critic():
    """The training reward's guards are critic/; the reporting check must not use them."""
    import ast
    import inspect

    import rewards.describe

    tree = ast.parse(inspect.getsource(rewards.describe))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                 for a in node.names}
    assert not any(name.startswith("critic") for name in imported), imported
