"""Rollout logic with a scripted generator standing in for vLLM (pure logic, no model)."""
from k2rl.bootstrap.model import build_tokenizer
from k2rl.lm.chat import prompt_ids
from k2rl.step.group import Request, Status, trajectories
from k2rl.step.rollout import rollout

TOK = build_tokenizer()
EOS = TOK.eos_token_id


def scripted(replies_by_turn):
    """A generate() that answers turn t of every episode with replies_by_turn[t]."""
    calls = []

    def generate(prompts, max_tokens, temperatures):
        calls.append((prompts, max_tokens, temperatures))
        turn = len(calls) - 1
        outs = []
        for m in max_tokens:
            ids = TOK.encode(replies_by_turn[turn], add_special_tokens=False) + [EOS]
            ids = ids[:m]
            outs.append((ids, [-0.5] * len(ids)))
        return outs

    return generate, calls


def play(requests, generate, **kwargs):
    """The trajectories of rolling out `requests`, group by group."""
    return trajectories(rollout(requests, TOK, generate, **kwargs))


def test_multi_turn_tool_episode_is_batched_per_turn_and_masked():
    req = Request("k2rl/Calculator-v1", seed=3)
    probe = play([req], scripted(["0"])[0])[0]  # learn the problem
    a, b = probe.prompt_id.split(":")[1].split("*")
    generate, calls = scripted([f"calc({a}*{b})", str(int(a) * int(b))])
    groups = rollout([Request("k2rl/Calculator-v1", seed=3, k=4)], TOK, generate, step=7)
    assert len(groups) == 1 and len(groups[0]) == 4 and groups[0].id == "7:0"
    trajs = groups[0].trajectories
    assert len(calls) == 2 and len(calls[0][0]) == 4  # one batched call per turn, K=4 episodes
    t = trajs[0]
    assert t.traj_id == "7:0:0" and t.turns == 2 and t.reward == 1.0 and t.correct
    assert t.status is Status.DONE and t.rewards == {"task": 1.0}
    assert [m["role"] for m in t.messages] == ["user", "assistant", "tool", "assistant"]
    assert t.messages[2]["content"] == str(int(a) * int(b))
    model_text = TOK.decode([i for i, m in zip(t.ids, t.mask) if m], skip_special_tokens=True)
    assert model_text == f"calc({a}*{b}){int(a) * int(b)}"  # only the model's tokens are masked in
    assert len(t.logp_engine) == sum(t.mask) == t.n_tokens
    assert t.env_seconds > 0  # two env steps: the tool call and the scored answer
    # the second turn's prompt is the first turn's prompt + reply + tool observation
    assert calls[1][0][0][: len(calls[0][0][0])] == calls[0][0][0]


def test_same_seed_same_prompt_for_the_group():
    trajs = play([Request("k2rl/Arithmetic-v1", seed=11, k=3)], scripted(["1"])[0])
    assert len({t.prompt_id for t in trajs}) == 1 and [t.sample for t in trajs] == [0, 1, 2]


def test_budget_truncates_and_penalises():
    generate, calls = scripted(["123456789012345"])
    trajs = play([Request("k2rl/Arithmetic-v1", seed=1, budget=5, k=2)], generate,
                 truncation_penalty=-0.5)
    assert calls[0][1] == [5, 5]  # the budget is the engine's max_tokens
    assert all(t.truncated and t.reward == -0.5 and t.n_tokens == 5 for t in trajs)
    assert all(t.rewards == {"truncation": -0.5} for t in trajs)  # never scored by the env


def test_budget_counts_all_turns_of_an_episode():
    generate, calls = scripted(["calc(12*12)", "144"])
    play([Request("k2rl/Calculator-v1", seed=2, budget=14)], generate)
    first = len("calc(12*12)") + 1
    assert calls[1][1] == [14 - first]


def test_an_observation_that_would_overflow_the_context_truncates_the_episode():
    generate, calls = scripted(["calc(12*12)", "144"])
    req = Request("k2rl/Calculator-v1", seed=2, k=1)
    prompt = len(prompt_ids(TOK, play([req], scripted(["0"])[0])[0].prompt))
    t = play([req], generate, max_len=prompt + 12 + 6, truncation_penalty=-0.5)[0]
    # the reply (11 characters + <|eos|>) fits; its observation (<|tool|>144<|eos|><|assistant|>) not
    assert len(calls) == 1 and t.truncated and t.rewards == {"truncation": -0.5}
    assert len(t.ids) == prompt + 12 and t.messages[-1]["role"] == "assistant"
    t = play([req], scripted(["calc(12*12)", "144"])[0], max_len=prompt + 12 + 6 + 4 + 1)[0]
    assert not t.truncated and t.turns == 2  # with room for it, the episode goes on


def test_a_crashing_environment_is_named_with_its_prompt(monkeypatch):
    import pytest

    from envs.arithmetic import ArithmeticEnv
    from k2rl.step.rollout import EnvCrash

    def boom(self, action):
        raise ZeroDivisionError("bad env")

    monkeypatch.setattr(ArithmeticEnv, "_step", boom)
    with pytest.raises(EnvCrash, match=r"k2rl/Arithmetic-v1 crashed in step\(\) on prompt arith:.*ZeroDivisionError: bad env"):
        play([Request("k2rl/Arithmetic-v1", seed=1, k=2)], scripted(["1"])[0])


def test_each_request_samples_at_its_own_temperature():
    generate, calls = scripted(["1"])
    reqs = [Request("k2rl/Arithmetic-v1", seed=1, temperature=0.3, k=2),
            Request("k2rl/Arithmetic-v1", seed=2, group=1, temperature=0.9, k=2)]
    play(reqs, generate)
    assert calls[0][2] == [0.3, 0.3, 0.9, 0.9]


# --------------------------------------------------------------------------- partial rollouts


def stateless(replies_by_turn):
    """A generate() that continues whatever reply the prompt ends in (as vLLM would): turn t's
    full reply is replies_by_turn[t] + <|eos|>, and each call emits the next max_tokens of it."""
    marker = TOK.convert_tokens_to_ids("<|assistant|>")

    def generate(prompts, max_tokens, temperatures):
        outs = []
        for p, m in zip(prompts, max_tokens):
            last = len(p) - 1 - p[::-1].index(marker)
            turn = p.count(marker) - 1
            full = TOK.encode(replies_by_turn[turn], add_special_tokens=False) + [EOS]
            done = len(p) - last - 1
            ids = full[done: done + m]
            outs.append((ids, [-0.25] * len(ids)))
        return outs

    return generate


def calculator_replies(seed):
    probe = play([Request("k2rl/Calculator-v1", seed=seed)], scripted(["0"])[0])[0]
    a, b = probe.prompt_id.split(":")[1].split("*")
    return [f"calc({a}*{b})", str(int(a) * int(b))]


def test_partial_rollout_pauses_mid_reply_and_resumes_to_the_same_episode():
    import json

    from k2rl.step.group import Group

    req = Request("k2rl/Calculator-v1", seed=5, k=2)
    gen = stateless(calculator_replies(5))
    whole = play([req], gen, step=1)
    groups = rollout([req], TOK, gen, step=1, partial_budget=4)
    trajs = trajectories(groups)
    assert all(t.paused and t.reward == 0.0 and t.n_tokens == 4 and t.turns == 0 for t in trajs)
    assert groups[0].paused and not trajs[0].rewards
    calls = 1
    while groups[0].paused:
        carried = [Group.from_dict(json.loads(json.dumps(g.to_dict()))) for g in groups]  # Redis
        groups = rollout([], TOK, gen, step=9, partial_budget=4, carried=carried)
        calls += 1
    trajs = trajectories(groups)
    assert calls > 2  # "calc(a*b)<eos>" + the answer needs several 4-token segments
    for t, w in zip(trajs, whole):
        assert t.traj_id == w.traj_id == f"1:0:{t.sample}"  # keeps the id of the step it began in
        assert (t.ids, t.mask, t.messages) == (w.ids, w.mask, w.messages)
        assert t.reward == w.reward == 1.0 and t.correct and t.segments == calls
        assert t.stale > 0 and len(t.logp_engine) == t.n_tokens


def test_partial_rollout_resume_rejects_a_non_deterministic_environment():
    import pytest

    from k2rl.step.rollout import EnvCrash

    req = Request("k2rl/Calculator-v1", seed=5)
    gen = stateless(calculator_replies(5))
    group = rollout([req], TOK, gen, partial_budget=12)[0]  # paused after the tool turn
    t = group.trajectories[0]
    assert t.paused and [m["role"] for m in t.messages] == ["user", "assistant", "tool"]
    t.messages[2]["content"] = "999999"  # not what the environment answers on replay
    with pytest.raises(EnvCrash, match="not deterministic"):
        rollout([], TOK, gen, partial_budget=12, carried=[group])


def test_a_carried_group_resumes_only_its_paused_members():
    """A finished member of a carried group waits as it is; only the paused one goes on."""
    from copy import deepcopy
    from dataclasses import replace

    gen = stateless(calculator_replies(5))
    group = rollout([Request("k2rl/Calculator-v1", seed=5, k=2)], TOK, gen, partial_budget=4)[0]
    done = play([Request("k2rl/Calculator-v1", seed=5)], gen)[0]
    group.trajectories[1] = replace(done, traj_id=group.trajectories[1].traj_id, sample=1)
    finished = deepcopy(group.trajectories[1])
    calls = []

    def counting(prompts, max_tokens, temperatures):
        calls.append(len(prompts))
        return gen(prompts, max_tokens, temperatures)

    out = rollout([], TOK, counting, partial_budget=100, carried=[group])[0]
    assert set(calls) == {1} and not out.paused
    assert out.trajectories[1] == finished and out.trajectories[1].segments == 1
    assert out.trajectories[0].segments == 2 and out.trajectories[0].reward == 1.0


def test_a_malformed_tool_call_is_an_observation_counted_on_the_trajectory():
    generate, _ = scripted(["[TOOL_CALLS] [", "calc(2*3)", "6"])  # within the budget of 24
    traj = play([Request("k2rl/Calculator-v1", seed=3)], generate)[0]
    assert traj.messages[2] == {"role": "tool", "content": "error: malformed tool call"}
    assert traj.malformed_calls == 1
    from k2rl.controller import task_metrics
    from k2rl.step.group import Group

    metrics = task_metrics([Group(Request("k2rl/Calculator-v1", seed=3), 0, [traj])], "train")
    assert metrics["train/tool_use/malformed_calls"] == 1.0


def test_a_mistral_call_is_answered_in_its_layout_and_an_unreadable_one_ends_the_episode():
    """On Mistral-v0.3's layout (its SentencePiece vocabulary, its template) a call the model
    writes in its form gets `[TOOL_RESULTS]` with its id, and the final reply's ids are the
    template's. A malformed call's result has no layout there (a tool message must answer a
    call, and a user turn moves its `[AVAILABLE_TOOLS]`), so the turn ends the episode as a
    wrong answer, counted in malformed_calls, and the stored ids are still the template's."""
    from envs.calculator import CalculatorEnv
    from k2rl.lm.chat import render, text_ids
    from tests.k2rl.fixtures import mistral_tokenizer

    tok = mistral_tokenizer()
    call = '[TOOL_CALLS] [{"name": "calc", "arguments": {"expression": "2*3"}, "id": "a1B2c3D4e"}]'

    def generate(replies):
        def run(prompts, max_tokens, temperatures):
            turn = next(i for i, r in enumerate(replies) if r is not None)
            reply, replies[turn] = replies[turn], None
            ids = text_ids(tok, reply) + [tok.eos_token_id]
            return [(ids, [-0.5] * len(ids)) for _ in prompts]
        return run

    [group] = rollout([Request("k2rl/Calculator-v1", seed=3, k=1)], tok, generate([call, "6"]),
                      max_len=512)
    t = group.trajectories[0]
    assert t.messages[-2]["content"] == "6"
    full = text_ids(tok, render(tok, t.messages, False, CalculatorEnv.tools))
    assert t.ids == full
    assert '[TOOL_RESULTS] {"content": 6, "call_id": "a1B2c3D4e"}[/TOOL_RESULTS]' in tok.decode(t.ids)
    [group] = rollout([Request("k2rl/Calculator-v1", seed=3, k=1)], tok,
                      generate(["[TOOL_CALLS] [oops", "6"]), max_len=512)
    t = group.trajectories[0]
    assert t.status is Status.DONE and t.reward == 0.0 and not t.correct
    assert t.malformed_calls == 1 and t.turns == 1
    assert [m["role"] for m in t.messages] == ["user", "assistant"]
    assert t.ids == prompt_ids(tok, t.messages[:1], CalculatorEnv.tools) + text_ids(
        tok, "[TOOL_CALLS] [oops") + [tok.eos_token_id]  # the prompt and the tokens sampled
