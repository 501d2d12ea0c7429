"""Tool calls in the JSON form of chat templates reach the same tools as the plain form."""
import doctest
import json

import pytest

import envs.tool_calls
from envs.tool_calls import plain_call
from tests.envs.helpers import make


def call(name, **arguments):
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def test_doctests_pass():
    assert doctest.testmod(envs.tool_calls).failed == 0


def test_calculator_answers_a_json_call_as_it_answers_the_plain_one():
    env = make("k2rl/Calculator-v1")
    env.reset(seed=3)
    a, b = env.problem.prompt.removesuffix("=").split("*")
    obs, reward, done, _, _ = env.step(call("calc", expression=f"{a}*{b}"))
    assert (obs, reward, done) == (str(int(a) * int(b)), 0.0, False)
    _, reward, done, _, info = env.step(obs)
    assert done and reward == 1.0 and info["correct"]
    env.reset(seed=3)
    assert env.step(call("calc", expression="__import__('os')"))[0] == "error: bad expression"


def test_lookup_takes_json_calls_and_its_expert_reads_them():
    import numpy as np

    env = make("k2rl/Lookup-v1")
    env.reset(seed=1)
    p = env.problem
    first = env.step(call("get", city=p.city_a, field=p.field_a))[0]
    second = env.step(call("get", city=p.city_b, field=p.field_b))[0]
    assert first.isdigit() and second.isdigit()
    # the expert sees both facts as known and goes on to calc, not get
    assert env.expert_action(np.random.default_rng(0)).startswith("calc(")
    _, reward, done, _, info = env.step(call("nope", x="1"))  # as the plain nope(1): an answer
    assert done and reward == 0.0 and not info["correct"]


@pytest.mark.parametrize("bad", ["<tool_call>{}</tool_call>", "<tool_call>[1]</tool_call>",
                                 '<tool_call>{"name": 3}</tool_call>',
                                 '<tool_call>{"name": "calc", "arguments": 5}</tool_call>'])
def test_a_malformed_json_call_is_left_as_it_is(bad):
    assert plain_call(bad) == bad
