"""Tests particular to the instructions env ("k2rl/Instructions-v0").

The checks every env must pass are in test_contract.py.
"""

from __future__ import annotations

import numpy as np

from envs.instructions import InstructionsEnv
from rewards.instructions import satisfied


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


def _has_word(spec: list[dict]) -> bool:
    return any(c["kind"] in ("include", "exclude") for c in spec)


def test_word_constraint_keeps_only_problems_with_a_quoted_word() -> None:
    plain, worded = InstructionsEnv(), InstructionsEnv(word_constraint=True)
    shares = []
    for env in (plain, worded):
        seen = []
        for seed in range(400):
            env.reset(seed=seed, options={"split": "train"})
            seen.append(_has_word(env.problem.answer))
        shares.append(sum(seen) / len(seen))
    assert 0.4 < shares[0] < 0.6  # v0's own draw: about half
    assert shares[1] == 1.0
    kinds = set()  # and both word kinds, with the other groups beside them
    for seed in range(100):
        worded.reset(seed=seed, options={"split": "train"})
        kinds |= {c["kind"] for c in worded.problem.answer}
    assert {"include", "exclude", "json", "lowercase", "max_words"} <= kinds


def test_word_constraint_leaves_the_default_draw_as_it_was() -> None:
    """Evaluation and RL use the plain draw: the option must not change a seed's problem."""
    plain, worded = InstructionsEnv(), InstructionsEnv(word_constraint=True)
    for seed in range(200):
        plain.reset(seed=seed, options={"split": "eval"})
        worded.reset(seed=seed, options={"split": "eval"})
        if _has_word(plain.problem.answer):
            assert worded.problem == plain.problem  # the first draw is kept when it has a word
