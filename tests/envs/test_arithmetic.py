"""Tests particular to the arithmetic env ("k2rl/Arithmetic-v1").

The checks every env must pass are in test_contract.py; held-out checks in test_heldout.py.
"""

from __future__ import annotations

from tests.envs.helpers import make


def test_reset_info() -> None:
    obs, info = make("k2rl/Arithmetic-v1").reset(seed=0)
    a, op, b = obs[:-1].partition("+") if "+" in obs else obs[:-1].partition("-")
    assert obs == f"{a}{op}{b}=" and 0 <= int(a) <= 49 and 0 <= int(b) <= 49
    assert info == {"task": "arithmetic", "budget": 8, "prompt_id": info["prompt_id"],
                    "split": "train", "turn": 0}


def test_key_is_the_sum_in_either_order() -> None:
    env, orders = make("k2rl/Arithmetic-v1"), set()
    for seed in range(300):
        obs, info = env.reset(seed=seed)
        op = "+" if "+" in obs else "-"
        a, b = (int(x) for x in obs[:-1].split(op))
        if op == "+":
            orders.add(a < b)
            a, b = min(a, b), max(a, b)
        assert info["prompt_id"] == f"arith:{a}{op}{b}"  # a difference keeps its order
    assert orders == {True, False}  # both orders are shown
