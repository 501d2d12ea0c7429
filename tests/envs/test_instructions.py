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
