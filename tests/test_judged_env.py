"""The critic-rewarded chat environment and the worker-side judging of its groups (logic)."""
import gymnasium
import numpy as np

import envs  # noqa: F401
from critic.rubrics import load_rubrics
from k2rl.judge import judge_rewards
from k2rl.model import build_tokenizer
from k2rl.rollout import Request, rollout
from rewards import get_reward

TOK = build_tokenizer()


def test_chat_episode_defers_its_reward_to_the_critic():
    env = gymnasium.make("k2rl/Chat-v0").unwrapped
    prompt, info = env.reset(seed=4)
    fact = env.problem.answer
    _, reward, done, _, info = env.step("Great question! " + fact)
    assert done and reward == 0.0 and info["judged"] and not info["correct"]
    env.reset(seed=4)
    _, reward, _, _, info = env.step(fact)
    assert reward == 0.0 and info["correct"] and info["reference_reward"] == 1.0


def test_expert_hacks_at_its_rate():
    env = gymnasium.make("k2rl/Chat-v0", hack_rate=0.5).unwrapped
    rng = np.random.default_rng(0)
    hacked = 0
    for s in range(400):
        env.reset(seed=s)
        hacked += get_reward("chat_reference")([env.expert_action(rng)], [env.problem.answer])[0] == 0
    assert 160 < hacked < 240
    clean = gymnasium.make("k2rl/Chat-v0", hack_rate=0.0).unwrapped
    clean.reset(seed=1)
    assert clean.expert_action(rng) == clean.problem.answer


def fixed_replies(replies):
    def generate(prompts, max_tokens, temperatures):
        outs = []
        for i, m in enumerate(max_tokens):
            ids = (TOK.encode(replies[i % len(replies)], add_special_tokens=False) + [TOK.eos_token_id])[:m]
            outs.append((ids, [-0.1] * len(ids)))
        return outs
    return generate


def test_judged_groups_get_win_rates_and_verifiable_ones_keep_their_reward():
    env = gymnasium.make("k2rl/Chat-v0").unwrapped
    env.reset(seed=2)
    fact = env.problem.answer
    replies = [fact, "Great question! " + fact, fact + " This answer is clear.", "Tea."]
    trajs = [t.to_dict() for t in rollout([Request("k2rl/Chat-v0", 2, group=0)], 4, TOK,
                                          fixed_replies(replies))]
    arith = [t.to_dict() for t in rollout([Request("k2rl/Arithmetic-v0", 1, group=1)], 4, TOK,
                                          fixed_replies(["7"]))]
    assert all(t["judged"] for t in trajs) and not any(t["judged"] for t in arith)
    calls = []

    def neutral(texts):  # a judge with no opinion: only the guards decide
        calls.append(len(texts))
        return [(-0.7, -0.7)] * len(texts)

    before = [t["reward"] for t in arith]
    assert judge_rewards(trajs + arith, 4, neutral, load_rubrics()) == 1
    assert calls == [2 * 6]  # one engine call: 6 pairs of a group of 4, both orders
    rewards = [t["reward"] for t in trajs]
    # the two guard-breakers lose to the two clean replies and tie with each other
    assert rewards == [2.5 / 3, 0.5 / 3, 0.5 / 3, 2.5 / 3]
    assert [t["reward"] for t in arith] == before


def test_warm_start_critic_examples_are_chat_preference_pairs_in_both_orders():
    from critic.guards import violations
    from critic.rubrics import rubrics_for
    from k2rl.sft import critic_demonstration

    env = gymnasium.make("k2rl/Chat-v0").unwrapped
    rubrics = load_rubrics()
    rng = np.random.default_rng(0)
    verdicts = []
    for seed in range(40):
        env.reset(seed=seed, options={"split": "train"})
        chosen, rejected = env.preference_pair(np.random.default_rng(seed))
        assert chosen == env.problem.answer and rejected != chosen
        # the rejected reply breaks a guard or is off-topic; the chosen one breaks none
        assert not violations(chosen, rubrics_for("chat", rubrics))
        assert violations(rejected, rubrics_for("chat", rubrics)) or env.problem.answer not in rejected
        ids, mask = critic_demonstration(env, TOK, seed, rng, rubrics)
        text = TOK.decode(ids)
        assert text.startswith("<|user|>Judge by: ") and "<|critic|>" in text
        verdicts.append(TOK.decode([i for i, m in zip(ids, mask) if m]))
    assert set(verdicts) == {"A<|eos|>", "B<|eos|>"}  # both positions are taught
