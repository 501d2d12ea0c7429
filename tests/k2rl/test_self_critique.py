"""The engine side of the critic (k2rl.self_critique): judging critic-rewarded groups, the
closed-loop refresh (pairs from verifiable groups, split by prompt, judge examples) and the
warm-start's critic examples. Logic only: the scorer is a stand-in."""
import gymnasium
import pytest
import numpy as np

import envs  # noqa: F401
from critic.pairs import Pair, judge_examples
from critic.rubrics import load_rubrics
from k2rl.group import Group, Request, Status, Trajectory
from k2rl.model import build_tokenizer
from k2rl.rollout import rollout
from k2rl.self_critique import (critic_demonstration, harvest, judge_groups, response_text,
                                store_pairs, training_pairs)

TOK = build_tokenizer()


def fixed_replies(replies):
    def generate(prompts, max_tokens, temperatures):
        outs = []
        for i, m in enumerate(max_tokens):
            ids = (TOK.encode(replies[i % len(replies)], add_special_tokens=False) + [TOK.eos_token_id])[:m]
            outs.append((ids, [-0.1] * len(ids)))
        return outs
    return generate


def test_judged_groups_get_win_rates_and_verifiable_ones_keep_their_reward():
    env = gymnasium.make("k2rl/Chat-v1").unwrapped
    env.reset(seed=2)
    fact = env.problem.answer
    replies = [fact, "Great question! " + fact, fact + " This answer is clear.", "Tea."]
    chat = rollout([Request("k2rl/Chat-v1", 2, group=0, k=4)], TOK, fixed_replies(replies))[0]
    arith = rollout([Request("k2rl/Arithmetic-v1", 1, group=1, k=4)], TOK, fixed_replies(["7"]))[0]
    assert chat.judged and all(t.judged for t in chat) and not any(t.judged for t in arith)
    calls = []

    def neutral(texts):  # a judge with no opinion: only the guards decide
        calls.append(len(texts))
        return [(-0.7, -0.7)] * len(texts)

    before = [t.reward for t in arith]
    assert judge_groups([chat, arith], neutral, load_rubrics()) == 1
    assert calls == [2 * 6]  # one engine call: 6 pairs of a group of 4, both orders
    rewards = [t.reward for t in chat]
    # the two guard-breakers lose to the two clean replies and tie with each other
    assert rewards == [2.5 / 3, 0.5 / 3, 0.5 / 3, 2.5 / 3]
    assert [t.rewards["critic"] for t in chat] == rewards  # the task's own 0 is kept, not used
    assert all(t.rewards["task"] == 0.0 for t in chat)
    assert [t.reward for t in arith] == before and not any("critic" in t.rewards for t in arith)


def test_warm_start_critic_examples_are_chat_preference_pairs_in_both_orders():
    from critic.guards import violations
    from critic.rubrics import rubrics_for

    env = gymnasium.make("k2rl/Chat-v1").unwrapped
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


def traj(prompt, reply, correct, tool=None):
    msgs = [{"role": "user", "content": prompt}]
    if tool:
        msgs += [{"role": "assistant", "content": tool[0]}, {"role": "tool", "content": tool[1]}]
    msgs.append({"role": "assistant", "content": reply})
    return Trajectory("0:0:0", "k2rl/Calculator-v1", "tool_use", prompt, 0, messages=msgs,
                      correct=correct, status=Status.DONE)


def groups_of(trajs, k):
    return [Group(Request("k2rl/Calculator-v1", 0, k=k), 0, trajs[i:i + k])
            for i in range(0, len(trajs), k)]


class FakeStore:
    def __init__(self):
        self.data = {"train": [], "heldout": []}

    def add_pairs(self, split, rows):
        self.data[split] += rows

    def pairs(self, split):
        return list(self.data[split])


def test_harvest_only_mixed_groups_and_correct_beats_incorrect():
    trajs = [traj("12*13=", "156", True, ("calc(12*13)", "156")), traj("12*13=", "150", False),
             traj("2*2=", "4", True), traj("2*2=", "4", True)]  # second group: no signal
    pairs = harvest(groups_of(trajs, 2))
    assert len(pairs) == 1
    assert pairs[0].chosen == "calc(12*13) | 156 | 156" and pairs[0].rejected == "150"
    assert response_text(trajs[1]) == "150"


def test_harvested_pairs_go_to_the_split_they_are_stored_in():
    store = FakeStore()
    trajs = []
    for a in range(10, 20):
        trajs += [traj(f"{a}*3=", str(3 * a), True), traj(f"{a}*3=", "0", False)]
    assert store_pairs(store, harvest(groups_of(trajs, 2))) == 10
    assert len(store.pairs("train")) == 10 and not store.pairs("heldout")
    assert store_pairs(store, harvest(groups_of(trajs[:2], 2)), "heldout") == 1
    assert store.pairs("heldout")[0]["prompt"] == "10*3="


def test_training_pairs_are_drawn_from_the_train_pairs_and_laid_out_in_both_orders():
    store = FakeStore()
    store_pairs(store, harvest(groups_of([traj("5*5=", "25", True), traj("5*5=", "20", False)], 2)))
    split = "train" if store.pairs("train") else "heldout"
    store.data["train"] = store.data[split]
    pairs = training_pairs(store, 4, np.random.default_rng(0))
    assert pairs == store.pairs("train")
    ex = judge_examples([Pair(**p) for p in pairs], load_rubrics())
    assert [e["response"] for e in ex] == ["A", "B"]
    assert "25" in ex[0]["prompt"] and ex[0]["prompt"].index("25") < ex[0]["prompt"].index("20")


def test_judged_groups_give_no_pairs():
    trajs = [traj("Tell me about tea.", "Tea is a hot drink.", True), traj("Tell me about tea.", "Tea.", False)]
    for t in trajs:
        t.judged = True  # `correct` of a critic-rewarded task is a reference check only
    assert harvest(groups_of(trajs, 2)) == []


def test_a_judge_message_too_long_for_the_engine_has_its_answers_cut_never_the_verdict():
    from critic.judge import Candidates, rank_groups
    from critic.rubrics import Rubric
    from k2rl.self_critique import CUT, fitted_judge_text, judge_prompt_ids
    from tests.k2rl.fixtures import chatml_tokenizer

    rubrics = [Rubric("c", "core", "Correct.")]
    for tok in (TOK, chatml_tokenizer()):
        render = fitted_judge_text(tok, 128)
        short = render("2+2=", "4", "5", rubrics)
        assert short == "Judge by: Correct. Q: 2+2= A: 4 B: 5 Better?"  # fits: untouched
        long_a, long_b = "four " * 200, "5"
        text = render("2+2=", long_a, long_b, rubrics)
        ids = judge_prompt_ids(tok, text)
        assert 100 < len(ids) <= 126  # room left for the verdict and its EOS, little wasted
        assert text.endswith(f"B: {long_b} Better?") and CUT in text  # only the long answer cut
        assert "Q: 2+2= A: four four" in text
        text = render("What is " * 200 + "2+2?", "4", "5", rubrics)  # the question is cut too
        assert len(judge_prompt_ids(tok, text)) <= 126 and text.endswith("Better?")
        with pytest.raises(ValueError, match="rubrics alone do not fit"):
            fitted_judge_text(tok, 16)("q", "a", "b", [Rubric("c", "core", "Correct. " * 20)])
    # the judge gets the cut messages: every one it scores fits
    seen = []
    rank_groups([Candidates("q", ["x" * 400, "y", "z" * 300])], rubrics,
                lambda texts: seen.extend(texts) or [(0.0, -1.0)] * len(texts), 0.0,
                render=fitted_judge_text(TOK, 128))
    assert seen and all(len(judge_prompt_ids(TOK, t)) <= 126 for t in seen)
