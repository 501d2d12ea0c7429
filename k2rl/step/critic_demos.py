"""The warm-start's critic examples (K2 bootstraps its critic in SFT): scripted judgments, with
the env's scripted own answer and checks, as (ids, mask) (`critic_demonstration`), and the
env's expert playing an episode, as the critic is shown a response (`expert_transcript`; also the
chosen answer of the held-out pairs, k2rl.step.heldout).
"""
from __future__ import annotations

import numpy as np

from critic.layout import VERDICTS, example_messages
from critic.rubrics import Rubric, rubrics_for
from k2rl.step.critic_ids import example_ids


def expert_transcript(env, rng: np.random.Generator) -> str:
    """The env's scripted expert playing the current episode to its end, as the critic sees a
    response (its turns joined by " | ")."""
    first = len(env.messages())
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(env.expert_action(rng))
        done = terminated or truncated
    return " | ".join(m["content"] for m in env.messages()[first:])


def critic_demonstration(env, tokenizer, seed: int, rng: np.random.Generator,
                         rubrics: list[Rubric], split: str = "train") -> tuple[list[int], list[int]]:
    """(ids, mask) of one scripted judgment for the warm-start (K2 bootstraps its critic in SFT)
    on a training-split prompt of an env that teaches judging (envs.judging.TeachesJudging):
    the expert's answer against a plausible wrong one in a random order, the env's scripted
    own answer and check lines, and the verdict; the loss falls on the critic's turns (the
    checks and the verdict; its own answer is the policy's turn, which the demonstrations
    teach). The scripts read the answer key; at judging time every turn of the critic's is the
    model's own. `split` "eval" builds held-out ones, for measuring
    (bench/archive/judge_skill.py)."""
    obs, _ = env.reset(seed=seed, options={"split": split})
    good = expert_transcript(env, rng)
    env.reset(seed=seed, options={"split": split})
    bad, working = env.rejected_response(rng), env.judge_working()
    first = int(rng.integers(2))  # 0: the expert's answer shown as A
    (a, b) = (good, bad) if first == 0 else (bad, good)
    msgs = example_messages(obs, rubrics_for(env.task, rubrics), working, a, env.judge_check(a),
                            b, env.judge_check(b), VERDICTS[first])
    return example_ids(tokenizer, msgs)
