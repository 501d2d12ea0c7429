"""Tests particular to the lookup env ("k2rl/Lookup-v1").

The checks every env must pass are in test_contract.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from envs.lookup import CITIES, LookupEnv


def test_lookup_episode_with_a_tool_error_in_the_middle() -> None:
    env = LookupEnv()
    env.reset(seed=0)
    p = env.problem
    a, b = CITIES[p.city_a][p.field_a], CITIES[p.city_b][p.field_b]
    obs, reward, terminated, _, info = env.step(f"get({p.city_a},{p.field_a})")
    assert (obs, reward, terminated, info["turn"]) == (str(a), 0.0, False, 1)
    obs, reward, terminated, _, _ = env.step("get(Atlantis,pop)")
    assert (obs, reward, terminated) == ("error: no city Atlantis", 0.0, False)
    obs, _, terminated, _, _ = env.step(f"get({p.city_b.lower()}, {p.field_b})")
    assert (obs, terminated) == (str(b), False)
    _, reward, terminated, _, info = env.step(str(p.answer))
    assert (reward, terminated, info["correct"], info["turn"]) == (1.0, True, True, 4)
    assert p.answer == (a + b if p.op == "+" else a - b)
    roles = [m["role"] for m in env.messages()]
    assert roles == ["user"] + ["assistant", "tool"] * 3 + ["assistant"]


def test_lookup_expert_recovers_after_a_model_error() -> None:
    env = LookupEnv()
    env.reset(seed=3)
    env.step("get(Avon,height)")
    env.step("calc(1/0)")
    actions = []
    terminated = False
    while not terminated:
        actions.append(env.expert_action(np.random.default_rng(0)))
        _, reward, terminated, _, _ = env.step(actions[-1])
    assert reward == 1.0 and actions[0].startswith("get(") and len(actions) == 2


@pytest.mark.parametrize(("action", "reply"), [
    ("get(Avo,pop)", "error: no city Avo"),
    ("get(Avon,height)", "error: no field height"),
    ("get(Avon)", "error: use get(city,field) or calc(expr)"),
    ("get(Avon,pop", "error: use get(city,field) or calc(expr)"),
    ("get(Avon,pop,area)", "error: use get(city,field) or calc(expr)"),
    ("calc(1/2)", "error: bad expression"), ("calc(__import__('os'))", "error: bad expression"),
    (" get( AVON , Pop ) ", "120"), ("calc(120+75)", "195"), ("calc(75-120)", "-45"),
])
def test_lookup_tool_replies(action: str, reply: str) -> None:
    env = LookupEnv()
    env.reset(seed=0)
    assert env.step(action)[:3] == (reply, 0.0, False)


def test_lookup_tool_only_episode_ends_with_zero() -> None:
    env = LookupEnv()
    env.reset(seed=0)
    for _ in range(env.max_turns - 1):
        assert not env.step("get(Avon,pop)")[2]
    _, reward, terminated, truncated, info = env.step("get(Avon,pop)")
    assert (reward, terminated, truncated, info["correct"]) == (0.0, True, False, False)


def test_lookup_key_is_a_sum_in_either_order() -> None:
    env, orders = LookupEnv(), set()
    for seed in range(300):
        env.reset(seed=seed)
        p = env.problem
        first, second = f"{p.field_a}:{p.city_a}", f"{p.field_b}:{p.city_b}"
        if p.op == "+":
            orders.add(first < second)
            first, second = sorted((first, second))
        assert p.key == f"lookup:{first}{p.op}{second}"  # a difference keeps its order
    assert orders == {True, False}
