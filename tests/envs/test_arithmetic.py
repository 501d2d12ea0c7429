"""Tests particular to the arithmetic env ("k2rl/Arithmetic-v0").

The checks every env must pass are in test_contract.py.
"""

from __future__ import annotations

from tests.envs.helpers import make


def test_reset_info() -> None:
    obs, info = make("k2rl/Arithmetic-v0").reset(seed=0)
    a, op, b = obs[:-1].partition("+") if "+" in obs else obs[:-1].partition("-")
    assert obs == f"{a}{op}{b}=" and 0 <= int(a) <= 99 and 0 <= int(b) <= 99
    assert info == {"task": "arithmetic", "budget": 8, "prompt_id": f"arith:{a}{op}{b}",
                    "split": "train", "turn": 0}
