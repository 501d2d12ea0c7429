"""Rollout logic with a scripted generator standing in for vLLM (pure logic, no model)."""
from k2rl.model import build_tokenizer
from k2rl.rollout import Request, rollout

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



def test_multi_turn_tool_episode_is_batched_per_turn_and_masked():
    req = Request("k2rl/Calculator-v0", seed=3)
    probe = rollout([req], 1, TOK, scripted(["0"])[0])[0]  # learn the problem
    a, b = probe.prompt_id.split(":")[1].split("*")
    generate, calls = scripted([f"calc({a}*{b})", str(int(a) * int(b))])
    trajs = rollout([req], 4, TOK, generate, step=7)
    assert len(calls) == 2 and len(calls[0][0]) == 4  # one batched call per turn, K=4 episodes
    t = trajs[0]
    assert t.traj_id == "7:0:0" and t.turns == 2 and t.reward == 1.0 and t.correct
    assert [m["role"] for m in t.messages] == ["user", "assistant", "tool", "assistant"]
    assert t.messages[2]["content"] == str(int(a) * int(b))
    model_text = TOK.decode([i for i, m in zip(t.ids, t.mask) if m], skip_special_tokens=True)
    assert model_text == f"calc({a}*{b}){int(a) * int(b)}"  # only the model's tokens are masked in
    assert len(t.logp_engine) == sum(t.mask) == t.n_tokens
    # the second turn's prompt is the first turn's prompt + reply + tool observation
    assert calls[1][0][0][: len(calls[0][0][0])] == calls[0][0][0]


def test_same_seed_same_prompt_for_the_group():
    trajs = rollout([Request("k2rl/Arithmetic-v0", seed=11)], 3, TOK, scripted(["1"])[0])
    assert len({t.prompt_id for t in trajs}) == 1 and [t.sample for t in trajs] == [0, 1, 2]


def test_budget_truncates_and_penalises():
    generate, calls = scripted(["123456789012345"])
    trajs = rollout([Request("k2rl/Arithmetic-v0", seed=1, budget=5)], 2, TOK, generate,
                    truncation_penalty=-0.5)
    assert calls[0][1] == [5, 5]  # the budget is the engine's max_tokens
    assert all(t.truncated and t.reward == -0.5 and t.n_tokens == 5 for t in trajs)


def test_budget_counts_all_turns_of_an_episode():
    generate, calls = scripted(["calc(12*12)", "144"])
    rollout([Request("k2rl/Calculator-v0", seed=2, budget=14)], 1, TOK, generate)
    first = len("calc(12*12)") + 1
    assert calls[1][1] == [14 - first]


def test_a_crashing_environment_is_named_with_its_prompt(monkeypatch):
    import pytest

    from envs.arithmetic import ArithmeticEnv
    from k2rl.rollout import EnvCrash

    def boom(self, action):
        raise ZeroDivisionError("bad env")

    monkeypatch.setattr(ArithmeticEnv, "_step", boom)
    with pytest.raises(EnvCrash, match=r"k2rl/Arithmetic-v0 crashed in step\(\) on prompt arith:.*ZeroDivisionError: bad env"):
        rollout([Request("k2rl/Arithmetic-v0", seed=1)], 2, TOK, scripted(["1"])[0])


def test_each_request_samples_at_its_own_temperature():
    generate, calls = scripted(["1"])
    reqs = [Request("k2rl/Arithmetic-v0", seed=1, temperature=0.3), Request("k2rl/Arithmetic-v0", seed=2, group=1)]
    rollout(reqs, 2, TOK, generate, temperature=0.9)
    assert calls[0][2] == [0.3, 0.3, 0.9, 0.9]
