"""Tool calls in the forms model families write (Hermes/Qwen, Mistral, Llama-3.1) reach the
same tools as the plain form; a call that cannot be read is an observation, counted."""
import doctest
import json

import pytest

import envs.tool_calls
from envs.tool_calls import MALFORMED, MalformedCall, parse_calls, plain_call, plain_calls
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
    obs, _, done, _, _ = env.step(call("nope", x="1"))  # a call, to no tool: an error it sees
    assert obs.startswith("error") and not done


@pytest.mark.parametrize("bad", ["<tool_call>{}</tool_call>", "<tool_call>[1]</tool_call>",
                                 '<tool_call>{"name": 3}</tool_call>',
                                 '<tool_call>{"name": "calc", "arguments": 5}</tool_call>'])
def test_a_malformed_json_call_is_left_as_it_is(bad):
    assert plain_call(bad) == bad


ARGS = {"expression": "12*13"}
FORMS = {  # one call to calc(12*13), as each family's template teaches it
    "hermes": call("calc", **ARGS),
    "hermes, text before": "I will use the tool.\n" + call("calc", **ARGS),
    "mistral": "[TOOL_CALLS] " + json.dumps([{"name": "calc", "arguments": ARGS}]),
    "llama-3.1": json.dumps({"name": "calc", "parameters": ARGS}),
    "llama-3.1, tagged": "<|python_tag|>" + json.dumps({"name": "calc", "parameters": ARGS}),
}


@pytest.mark.parametrize("form", FORMS)
def test_every_family_s_call_form_reaches_the_calculator(form):
    assert plain_calls(FORMS[form]) == ["calc(12*13)"]
    env = make("k2rl/Calculator-v1")
    env.reset(seed=3)
    obs, _, done, _, info = env.step(FORMS[form])
    assert (obs, done) == ("156", False) and "malformed_calls" not in info


def test_several_calls_in_one_turn_are_answered_in_order():
    two = call("calc", expression="2*3") + "\n" + call("calc", expression="4*5")
    assert plain_calls(two) == ["calc(2*3)", "calc(4*5)"]
    mistral = "[TOOL_CALLS] " + json.dumps([{"name": "calc", "arguments": {"e": "2*3"}},
                                            {"name": "calc", "arguments": {"e": "4*5"}}])
    env = make("k2rl/Calculator-v1")
    for action in (two, mistral):
        env.reset(seed=3)
        assert env.step(action)[0] == "6\n20"


@pytest.mark.parametrize("bad", [
    "<tool_call>{}</tool_call>", "<tool_call>not json</tool_call>",
    '<tool_call>{"name": "calc", "arguments": {"e": "2*3"}}',  # never closed
    '<tool_call>{"name": "calc", "arguments": {"e": "2*3"}}</tool_call> so 6',  # text after
    "[TOOL_CALLS] [{", "[TOOL_CALLS] []", '<|python_tag|>{"name": "calc"}', "<|python_tag|>calc"])
def test_a_malformed_call_is_an_observation_and_counted(bad):
    with pytest.raises(MalformedCall):
        parse_calls(bad)
    for env_id in ("k2rl/Calculator-v1", "k2rl/Lookup-v1"):
        env = make(env_id)
        env.reset(seed=3)
        obs, reward, done, _, info = env.step(bad)
        assert (obs, reward, done) == (MALFORMED, 0.0, False), env_id
        assert info["malformed_calls"] == 1
        env.step(bad)
        _, _, _, _, info = env.step("7")
        assert info["malformed_calls"] == 2 or env_id == "k2rl/Lookup-v1"


@pytest.mark.parametrize("answer", ["156", '{"answer": 156}', "{not json}", "[1, 2]", "calc"])
def test_final_answers_are_not_calls(answer):
    assert parse_calls(answer) is None


def test_each_of_several_calls_gets_its_own_tool_message():
    """Chat templates lay out one result a call (Qwen's <tool_response> blocks, Mistral's
    [TOOL_RESULTS] with the call's id), so the env answers each call with its own message."""
    two = call("calc", expression="2*3") + "\n" + call("calc", expression="4*5")
    for env_id in ("k2rl/Calculator-v1", "k2rl/Lookup-v1"):
        env = make(env_id)
        env.reset(seed=3)
        obs, _, done, _, info = env.step(two)
        assert not done and info["tool_results"] == obs.split("\n") and len(obs.split("\n")) == 2
        assert [m["role"] for m in env.unwrapped.messages()] == ["user", "assistant", "tool", "tool"]
    env.reset(seed=3)
    assert "tool_results" not in env.step(call("calc", expression="2*3"))[4]  # one call: the obs
