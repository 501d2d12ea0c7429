"""Tests for the reward registry (rewards/__init__.py).

That every env's verifier is registered under its ``reward_name`` is part of the env
contract, tests/envs/test_contract.py.
"""

from __future__ import annotations

import pytest

from rewards import REWARDS, exact_int, get_reward, register_reward


def test_registry_has_exact_int() -> None:
    assert get_reward("exact_int") is exact_int
    assert REWARDS["exact_int"] is exact_int


def test_registry_refuses_duplicates() -> None:
    with pytest.raises(ValueError, match="exact_int"):
        register_reward("exact_int", exact_int)


def test_registry_suggests_close_names() -> None:
    with pytest.raises(KeyError, match="exact_int"):
        get_reward("exact_itn")
