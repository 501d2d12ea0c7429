"""The engine side of the critic: the critic's conversation as ids (k2rl.step.critic_ids),
judging critic-rewarded groups (k2rl.step.critic_engine), the closed-loop refresh (pairs from
verifiable groups, the critic's own text as training examples where it was right:
k2rl.step.critic_loop), the warm-start's scripted judgments (k2rl.step.critic_demos), and that
the critic never sees an answer key. Logic with stand-in engines, and one real engine."""
import json
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import gymnasium
import numpy as np
import pytest

from critic.compare import Comparison, Judgment
from critic.layout import CRITIC, VERDICTS, example_messages
from critic.pairs import Pair, comparison_of
from critic.rubrics import Rubric, load_rubrics
import envs  # noqa: F401
from envs.arithmetic import WorkedArithmeticEnv
from envs.base import Problem
from envs.chat import ChatEnv, ChatProblem
from envs.instructions import InstructionsEnv
from k2rl.bootstrap.model import build_tokenizer, critic_scripts
from k2rl.bootstrap.recipe import Recipe
from k2rl.bootstrap.sft import make_critic_envs
from k2rl.step.group import Group, Request, Status, Trajectory
from k2rl.step.rollout import rollout
from k2rl.step.critic_demos import critic_demonstration
from k2rl.step.critic_engine import chat_critic_with, critic_rank_groups, critic_with
from k2rl.step.critic_ids import (CUT, SOLVE_TOKENS, answer_cap, example_ids, open_ids,
                                  response_text, verdict_ids)
from k2rl.step.critic_loop import (check_correctors, corrected, critic_examples, harvest,
                                   reasoned, store_pairs, training_pairs)

TOK = build_tokenizer()
ROOT = Path(__file__).resolve().parents[2]
RUBRICS = [Rubric("c", "core", "Correct.")]


def fixed_replies(replies):
    def generate(prompts, max_tokens, temperatures):
        outs = []
        for i, m in enumerate(max_tokens):
            ids = (TOK.encode(replies[i % len(replies)], add_special_tokens=False) + [TOK.eos_token_id])[:m]
            outs.append((ids, [-0.1] * len(ids)))
        return outs
    return generate


class StandIn:
    """An engine stand-in that records every prompt it is given: generate writes `<n>` for the
    n-th sequence it is asked to write; score prefers A when the check after the first answer
    says "yes"."""

    def __init__(self):
        self.generated, self.scored, self.calls = [], [], []

    def generate(self, prompts, max_tokens, temperatures):
        self.calls.append(("generate", len(prompts)))
        outs = []
        for p in prompts:
            self.generated.append(p)
            ids = TOK.encode(f"<{len(self.generated)}> yes" if "A: good" in TOK.decode(p) else
                             f"<{len(self.generated)}>", add_special_tokens=False)
            outs.append((ids + [TOK.eos_token_id], [0.0] * (len(ids) + 1)))
        return outs

    def score(self, prompts):
        self.calls.append(("score", len(prompts)))
        self.scored += prompts
        first_check = [TOK.decode(p).split("<|critic|>")[1].split("<|eos|>")[0] for p in prompts]
        return [[0.0, -2.0] if c.endswith("yes") else [-2.0, 0.0] for c in first_check]


class ChatStandIn:
    """A stand-in engine for the chat layout: generate reasons "A is right. Verdict: B" (the
    verdict it writes itself is cut: only the log-probs are read); score prefers whichever
    response holds "good"."""

    def __init__(self):
        self.generated, self.scored = [], []

    def generate(self, prompts, max_tokens, temperatures):
        self.generated += prompts
        ids = TOK.encode("A is right. Verdict: B", add_special_tokens=False)
        return [(ids + [TOK.eos_token_id], [0.0] * (len(ids) + 1)) for _ in prompts]

    def score(self, prompts):
        self.scored += prompts
        texts = [TOK.decode(p) for p in prompts]
        assert all(t.rstrip().endswith("A is right.\nVerdict:") for t in texts)
        good_first = ["Response A: good" in t for t in texts]
        return [[0.0, -2.0] if g else [-2.0, 0.0] for g in good_first]


def test_the_chat_critic_reasons_then_its_verdict_is_read_in_both_orders():
    fake = ChatStandIn()
    critic = chat_critic_with(fake.generate, fake.score, TOK, 1024)
    js = critic([Comparison("2+2=", "good", "bad", tuple(RUBRICS), "arithmetic"),
                 Comparison("2+2=", "bad", "good", tuple(RUBRICS), "arithmetic")])
    assert len(fake.generated) == len(fake.scored) == 4  # two orders each, one call each
    assert js[0].preference > 0.8 and js[1].preference < 0.2  # the same in either order
    assert js[0].layout == "chat" and js[0].checks == ("A is right.", "A is right.")
    shown = TOK.decode(fake.generated[0])
    assert "Request: 2+2=" in shown and "Response A: good" in shown and "Response B: bad" in shown


def test_the_chat_layout_is_the_default_for_a_model_k2rl_did_not_build(tmp_path):
    from k2rl.config import load_config
    from k2rl.step.critic_engine import layout_for, run_layout

    assert layout_for("auto", tmp_path) == "chat"  # no recipe.json: not built by k2rl
    (tmp_path / "recipe.json").write_text("{}")
    assert layout_for("auto", tmp_path) == "checks" and layout_for("chat", tmp_path) == "chat"
    cfg = load_config(None, ["tasks=[{id: k2rl/WordSums-v0}]"])
    assert run_layout(cfg, None) == "chat" and run_layout(cfg, {}) == "checks"
    cfg = load_config(None, ["tasks=[{id: k2rl/WordSums-v0}]", "critic.refresh=true"])
    assert run_layout(cfg, None) == "chat"  # the closed loop trains the chat layout too


def test_the_critic_answers_then_checks_then_scores_verdicts_in_three_calls():
    fake = StandIn()
    critic = critic_with(fake.generate, fake.score, TOK, 1024)
    comparisons = [Comparison("2+2=", "A: good", "bad", tuple(RUBRICS), "arithmetic"),
                   Comparison("2+2=", "bad", "other", tuple(RUBRICS), "arithmetic"),
                   Comparison("3+3=", "x", "y", tuple(RUBRICS))]
    out = critic(comparisons)
    assert fake.calls == [("generate", 2), ("generate", 5), ("score", 6)]
    # one own answer per question, one check per distinct answer, written by the "engine"
    assert [j.working for j in out] == ["<1>", "<1>", "<2>"]
    assert out[0].checks == ("<3> yes", "<4>") and out[1].checks == ("<4>", "<5>")
    solve = TOK.decode(fake.generated[0])
    assert solve == "<|user|>2+2=<|eos|><|assistant|>"  # exactly the policy's prompt
    check = TOK.decode(fake.generated[2])
    assert check == solve + "<1><|eos|><|user|>Judge by: Correct. Answer: A: good<|eos|><|critic|>"
    # both orders reuse the same check text, and end with the question and the critic's turn
    ab, ba = TOK.decode(fake.scored[0]), TOK.decode(fake.scored[1])
    assert ab.endswith("<|user|>Better: A (first) or B (second)?<|eos|><|critic|>")
    assert ("A: good<|eos|><|critic|><3> yes<|eos|><|user|>Answer: bad<|eos|><|critic|><4><|eos|>"
            in ab)
    assert ("Answer: bad<|eos|><|critic|><4><|eos|><|user|>Answer: A: good<|eos|><|critic|><3> yes"
            "<|eos|>" in ba)
    assert out[0].p_ab > 0.5 and out[0].p_ba < 0.5 and out[0].preference > 0.8
    assert critic([]) == [] and len(fake.calls) == 3  # nothing to judge: no engine call


def test_answers_too_long_for_the_engine_are_cut_never_the_question_or_the_verdict():
    fake = StandIn()
    critic = critic_with(fake.generate, fake.score, TOK, 600)
    out = critic([Comparison("2+2=", "four " * 200, "5", tuple(RUBRICS))])
    assert out[0].shown[0].endswith(CUT) and out[0].shown[1] == "5"
    assert all(len(p) <= 600 - 2 for p in fake.scored)  # room for the verdict and its EOS
    assert TOK.decode(fake.scored[0]).startswith("<|user|>2+2=<|eos|>")
    assert answer_cap(TOK, 1024, "2+2=", RUBRICS, "1+1=2") > 100
    with pytest.raises(ValueError, match="no room for the answers"):
        answer_cap(TOK, 64, "2+2=", [Rubric("c", "core", "Correct. " * 12)], "")
    # a question too long for the engine is cut too, and the critic still fits
    fake = StandIn()
    out = critic_with(fake.generate, fake.score, TOK, 600)(
        [Comparison("What is " * 100 + "2+2?", "4", "5", tuple(RUBRICS))])
    assert len(out) == 1 and all(len(p) <= 598 for p in fake.scored)
    assert CUT in TOK.decode(fake.generated[0])
    with pytest.raises(ValueError, match="rubrics .* leave no room"):
        critic_with(fake.generate, fake.score, TOK, 200)(
            [Comparison("q", "a", "b", (Rubric("c", "core", "Correct. " * 12),))])


def test_the_longest_default_prompts_leave_room_for_whole_answers():
    rubrics = [r for r in load_rubrics() if r.applies_to("instructions")]
    prompt = "List fruits. min 3 words, uppercase, include 'mango'."
    working = "MANGO APPLE PEAR LEMON GRAPE"
    budget = gymnasium.make("k2rl/Instructions-v1").unwrapped.budget
    assert answer_cap(TOK, 1024, prompt, rubrics, working) >= budget  # no reply is ever cut


def test_a_build_that_compares_the_quoted_word_gets_longer_checks_and_still_whole_answers():
    """The recipe's instr_compare writes instruction checks of up to 160 characters: such a
    build's critic may write LONG_CHECK_TOKENS a check (read from the recipe it carries), any
    other model CHECK_TOKENS, and the default prompts still keep their whole answers."""
    from k2rl.step.critic_ids import CHECK_TOKENS, LONG_CHECK_TOKENS, check_cap, check_tokens

    assert check_tokens(None) == check_tokens({"instr_bounds": True}) == CHECK_TOKENS
    assert check_tokens({"instr_compare": True}) == LONG_CHECK_TOKENS > CHECK_TOKENS
    # a model k2rl did not build judges in model.default's layout (its PTX judgments' own)
    assert check_tokens(None, Recipe()) == LONG_CHECK_TOKENS
    assert check_tokens(None, Recipe(instr_compare=False)) == CHECK_TOKENS
    assert check_tokens({}, Recipe()) == CHECK_TOKENS  # recipe 11's build
    assert check_cap(TOK, 1024, RUBRICS, LONG_CHECK_TOKENS) == LONG_CHECK_TOKENS
    rubrics = [r for r in load_rubrics() if r.applies_to("instructions")]
    prompt = "List fruits. min 3 words, uppercase, include 'mango'."
    budget = gymnasium.make("k2rl/Instructions-v1").unwrapped.budget
    assert answer_cap(TOK, 1024, prompt, rubrics, "MANGO APPLE PEAR", LONG_CHECK_TOKENS) >= budget
    budgets = []

    def generate(prompts, max_tokens, temperatures):
        budgets.append(max_tokens)
        return StandIn().generate(prompts, max_tokens, temperatures)

    critic_with(generate, StandIn().score, TOK, 1024, 0.0, LONG_CHECK_TOKENS)(
        [Comparison("2+2=", "4", "5", tuple(RUBRICS))])
    assert budgets[0] == [SOLVE_TOKENS] and budgets[1] == [LONG_CHECK_TOKENS] * 2


def test_verdicts_must_be_one_token_each():
    assert verdict_ids(TOK) == [TOK.convert_tokens_to_ids("A"), TOK.convert_tokens_to_ids("B")]

    class TwoTokenA:  # with k2rl's critic role: its verdict follows the role's opening
        name_or_path = "odd-model"
        unk_token_id = None

        def convert_tokens_to_ids(self, token):
            return 0

        def encode(self, text, add_special_tokens=False):
            return [1, 2] if text == "A" else [3]

    with pytest.raises(ValueError, match="odd-model writes the verdict 'A' as 2 tokens"):
        verdict_ids(TwoTokenA())


def test_example_ids_put_the_loss_on_the_critic_s_turns_only():
    msgs = example_messages("2+2=", RUBRICS, "2+2=4", "4", "4 vs 4: yes", "5", "5 vs 4: no", "A")
    ids, mask = example_ids(TOK, msgs)
    assert TOK.decode(ids) == TOK.decode(open_ids(TOK, msgs[:-1])) + "A<|eos|>"
    trained = TOK.decode([i for i, m in zip(ids, mask) if m])
    assert trained == "4 vs 4: yes<|eos|>5 vs 4: no<|eos|>A<|eos|>"  # not its own answer
    ids2, mask2 = example_ids(TOK, msgs, lambda i: i == len(msgs) - 1)
    assert ids2 == ids and TOK.decode([i for i, m in zip(ids2, mask2) if m]) == "A<|eos|>"


def test_a_model_without_a_critic_role_is_judged_in_its_assistant_turns():
    from tests.k2rl.fixtures import chatml_tokenizer

    tok = chatml_tokenizer()
    msgs = example_messages("2+2=", RUBRICS, "4", "4", "yes", "5", "no", "B")
    ids, mask = example_ids(tok, msgs)
    text = tok.decode(ids)
    assert text.count("<|im_start|>assistant") == 4 and "critic" not in text
    trained = tok.decode([i for i, m in zip(ids, mask) if m])
    assert trained.replace("<|im_end|>", "|") == "yes|no|B|"


def test_training_examples_keep_the_critic_s_own_text_only_where_it_was_right():
    c = comparison_of(Pair("2+2=", "4", "5", "arithmetic"), load_rubrics())
    right = Judgment(0.9, 0.2, "2+2=4", ("4 vs 4: yes", "5 vs 4: no"), ("4", "5"))
    wrong = Judgment(0.3, 0.8, "2+2=5", ("4 vs 5: no", "5 vs 5: yes"), ("4", "5"))
    lucky = Judgment(0.6, 0.4, "2+2=4", ("4 vs 4: yes", "5 vs 4: yes"), ("4", "5"))
    (r_ab, r_ba), (w_ab, w_ba), (l_ab, l_ba) = (critic_examples(TOK, [c], [j])
                                                for j in (right, wrong, lucky))
    for ids, mask in (r_ab, r_ba, w_ab, w_ba, l_ab, l_ba):
        assert len(ids) == len(mask)

    def trained(ex):
        return TOK.decode([i for i, m in zip(*ex) if m])

    assert trained(r_ab) == "4 vs 4: yes<|eos|>5 vs 4: no<|eos|>A<|eos|>"
    assert trained(r_ba) == "5 vs 4: no<|eos|>4 vs 4: yes<|eos|>B<|eos|>"
    # a wrong judgment teaches the right verdict only, never its own wrong checks; nor does a
    # right verdict reached through a wrong check ("5 vs 4: yes")
    assert trained(w_ab) == "A<|eos|>" and trained(w_ba) == "B<|eos|>"
    assert trained(l_ab) == "A<|eos|>" and trained(l_ba) == "B<|eos|>"
    assert "2+2=5" in TOK.decode(w_ab[0])
    assert [reasoned(j) for j in (right, wrong, lucky)] == [True, False, False]


def test_corrected_checks_are_what_the_critic_should_have_written_from_what_it_saw():
    """critic.correct_checks: the check lines follow from the two answers and the critic's own
    working alone (the task's check_against), never from the pair's label or answer key."""
    fix = {"arithmetic": WorkedArithmeticEnv().check_from}
    c = comparison_of(Pair("12-45=", "-33", "-32", "arithmetic"), load_rubrics())
    working = "-(45-12)|5-2=3|4-1-0=3|-33"
    slipped = Judgment(0.4, 0.6, working, ("-33 vs -33, --=33=33=: yes",
                                           "-32 vs -33, --=33=23=: yes"), ("-33", "-32"))
    assert corrected(c, slipped, fix) == ("-33 vs -33, --=33=33=: yes",
                                          "-32 vs -33, --=33=23!: no")
    ab, ba = critic_examples(TOK, [c], [slipped], fix)
    trained = TOK.decode([i for i, m in zip(*ab) if m])
    assert trained == "-33 vs -33, --=33=33=: yes<|eos|>-32 vs -33, --=33=23!: no<|eos|>A<|eos|>"
    assert TOK.decode([i for i, m in zip(*ba) if m]).endswith("B<|eos|>")
    # Without correctors, or for a task without one, the critic's own slipped checks carry no loss
    for ex in (critic_examples(TOK, [c], [slipped])[0],
               critic_examples(TOK, [replace(c, task="instructions")], [slipped], fix)[0]):
        assert TOK.decode([i for i, m in zip(*ex) if m]) == "A<|eos|>"
    # A critic whose own sum is wrong: the corrected checks would contradict the label, so none
    wrong_sum = replace(slipped, working="-(45-12)|5-2=2|4-1-0=3|-32")
    assert corrected(c, wrong_sum, fix) is None
    assert TOK.decode([i for i, m in zip(*critic_examples(TOK, [c], [wrong_sum], fix)[0])
                       if m]) == "A<|eos|>"


def test_judged_groups_get_win_rates_and_verifiable_ones_keep_their_reward():
    env = gymnasium.make("k2rl/Chat-v1").unwrapped
    env.reset(seed=2)
    fact = env.problem.answer
    replies = [fact, "Great question! " + fact, fact + " This answer is clear.", "Tea."]
    chat = rollout([Request("k2rl/Chat-v1", 2, group=0, k=4)], TOK, fixed_replies(replies))[0]
    arith = rollout([Request("k2rl/Arithmetic-v1", 1, group=1, k=4)], TOK, fixed_replies(["7"]))[0]
    assert chat.judged and all(t.judged for t in chat) and not any(t.judged for t in arith)
    calls = []

    def neutral(comparisons):  # a critic with no opinion: only the guards decide
        calls.append(len(comparisons))
        return [Judgment(0.5, 0.5)] * len(comparisons)

    before = [t.reward for t in arith]
    assert critic_rank_groups([chat, arith], neutral, load_rubrics()) == 1
    assert calls == [6]  # one call: the 6 pairs of a group of 4
    rewards = [t.reward for t in chat]
    # the two guard-breakers lose to the two clean replies and tie with each other
    assert rewards == [2.5 / 3, 0.5 / 3, 0.5 / 3, 2.5 / 3]
    assert [t.rewards["critic"] for t in chat] == rewards  # the task's own 0 is kept, not used
    assert all(t.rewards["task"] == 0.0 for t in chat)
    assert [t.reward for t in arith] == before and not any("critic" in t.rewards for t in arith)


# ------------------------------------------------------------------ the critic is not a verifier

CANARY = "zq7canary"


class CanaryChat(ChatEnv):
    """Chat whose answer key is a unique canary no reply states."""

    def _draw(self) -> Problem:
        p = super()._draw()
        return ChatProblem(key=p.key, prompt=p.prompt, answer=f"{CANARY} {p.answer}",
                           kind=p.kind, item=p.item)


class CanaryArithmetic(WorkedArithmeticEnv):
    """Worked arithmetic whose problems carry a canary in their key (the prompt_id stored with
    every trajectory) next to the answer the verifier checks."""

    def _draw(self) -> Problem:
        p = super()._draw()
        return type(p)(key=f"{CANARY}:{p.key}", prompt=p.prompt, answer=p.answer, a=p.a,
                       op=p.op, b=p.b)


def right_then_wrong(prompts, max_tokens, temperatures):
    """Replies to "a+b=" / "a-b=" prompts: the right result, then a wrong one, in turn."""
    outs = []
    for i, p in enumerate(prompts):
        a, op, b = re.search(r"(\d+)([+-])(\d+)=", TOK.decode(p)).groups()
        value = int(a) + int(b) if op == "+" else int(a) - int(b)
        ids = TOK.encode(str(value + i % 2), add_special_tokens=False) + [TOK.eos_token_id]
        outs.append((ids, [-0.1] * len(ids)))
    return outs


def test_a_canary_answer_never_reaches_a_critic_prompt():
    gymnasium.register("test/CanaryChat-v0", entry_point=CanaryChat)
    gymnasium.register("test/CanaryArithmetic-v0", entry_point=CanaryArithmetic)
    try:
        chat = rollout([Request("test/CanaryChat-v0", s, group=s, k=4) for s in range(3)], TOK,
                       fixed_replies(["Cat has 3 letters.", "12 is even.", "Tea."]))
        arith = rollout([Request("test/CanaryArithmetic-v0", s, group=s, k=4) for s in range(6)],
                        TOK, right_then_wrong)
    finally:
        for env_id in ("test/CanaryChat-v0", "test/CanaryArithmetic-v0"):
            gymnasium.registry.pop(env_id)
    assert all(CANARY in t.prompt_id for g in arith for t in g)
    fake = StandIn()
    critic = critic_with(fake.generate, fake.score, TOK, 1024)
    critic_rank_groups(chat, critic, load_rubrics())  # the reward path
    pairs = harvest(arith)  # the closed loop: pairs, judged, then trained on
    assert pairs
    comparisons = [comparison_of(p, load_rubrics()) for p in pairs]
    examples = critic_examples(TOK, comparisons, critic(comparisons))
    seen = [TOK.decode(p) for p in fake.generated + fake.scored] + [TOK.decode(i) for i, _ in examples]
    chat_fake = ChatStandIn()
    chat_critic = chat_critic_with(chat_fake.generate, lambda ps: [[0.0, 0.0]] * len(ps), TOK, 1024)
    critic_rank_groups(chat, chat_critic, load_rubrics())
    chat_critic(comparisons)
    seen += [TOK.decode(p) for p in chat_fake.generated]
    assert len(chat_fake.generated) > 10
    assert len(seen) > 20 and not any(CANARY in text for text in seen)
    assert not any(CANARY in json.dumps(p.to_json()) for p in pairs)


# ------------------------------------------------------------------ warm-start


def test_warm_start_judgments_are_scripted_on_training_prompts_of_every_family():
    rubrics = load_rubrics()
    rng = np.random.default_rng(0)
    critic_envs = make_critic_envs(Recipe())
    assert {e.task for e in critic_envs} == {"arithmetic", "tool_use", "instructions", "chat"}
    for env in critic_envs:
        verdicts = set()
        for seed in range(30):
            ids, mask = critic_demonstration(env, TOK, seed, rng, rubrics)
            assert env.split == "train"
            text = TOK.decode(ids)
            own = env.judge_working()
            assert text.startswith(f"<|user|>{env.problem.prompt}<|eos|><|assistant|>{own}<|eos|>"
                                   "<|user|>Judge by: ") and text.count("<|critic|>") == 3
            turns = TOK.decode([i for i, m in zip(ids, mask) if m]).split("<|eos|>")[:-1]
            check_a, check_b, verdict = turns
            # the expert's answer is checked "yes", the wrong one "no", and the verdict follows
            assert sorted([check_a.endswith(": yes"), check_b.endswith(": yes")]) == [False, True]
            assert sorted([check_a.endswith(": no"), check_b.endswith(": no")]) == [False, True]
            assert verdict == (VERDICTS[0] if check_a.endswith("yes") else VERDICTS[1])
            verdicts.add(verdict)
        assert verdicts == set(VERDICTS), env.task  # both positions are taught


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
    assert store.pairs("heldout")[0] == Pair("10*3=", "30", "0", "tool_use")
    pairs = training_pairs(store, 4, np.random.default_rng(0))
    assert len(pairs) == 4 and all(p in store.pairs("train") for p in pairs)
    assert len(set(pairs)) == 4 and all(isinstance(p, Pair) for p in pairs)


def test_judged_groups_give_no_pairs():
    trajs = [traj("Tell me about tea.", "Tea is a hot drink.", True), traj("Tell me about tea.", "Tea.", False)]
    for t in trajs:
        t.judged = True  # `correct` of a critic-rewarded task is a reference check only
    assert harvest(groups_of(trajs, 2)) == []


# ------------------------------------------------------------------ a real engine

ENGINE_CRITIC = r"""
import json
from k2rl.device import engine
engine.configure_env(2, 1)
from critic.compare import Comparison
from critic.layout import check_messages
import tempfile
from critic.rubrics import load_rubrics, rubrics_for
from k2rl.lm.chat import load_tokenizer
from k2rl.step.critic_engine import make_critic
from k2rl.step.critic_ids import SOLVE_TOKENS, answer_ids, check_cap, open_ids
from tests.k2rl.fixtures import qwen2_dir

# random weights (a ChatML model judged in its assistant turns): it writes text, not EOS
model_dir = str(qwen2_dir(tempfile.mkdtemp()))
tok = load_tokenizer(model_dir)
llm = engine.start_engine(model_dir, 512, seed=0)
rubrics = tuple(rubrics_for("arithmetic", load_rubrics()))
c = Comparison("12+7=", "2+7=9|1+0+0=1|19", "2+7=9|1+0+0=1|18", rubrics, "arithmetic")
j = make_critic(llm, tok, 512)([c])[0]
raw = []
def greedy(prompt, n):
    ids, _ = engine.generate(llm, [prompt], [n], [0.0])[0]
    raw.append(tok.decode(ids, skip_special_tokens=True))
    return raw[-1].strip()
working = greedy(answer_ids(tok, c.prompt), SOLVE_TOKENS)
checks = [greedy(open_ids(tok, check_messages(c.prompt, rubrics, working, x)), check_cap(tok, 512, rubrics))
          for x in j.shown]
print("RESULT" + json.dumps({"judgment": [j.p_ab, j.p_ba, j.working, list(j.checks)],
                             "working": working, "checks": checks, "raw": raw}))
"""


@pytest.mark.slow
def test_the_critic_s_working_and_checks_are_the_engine_s_own_tokens():
    done = subprocess.run([sys.executable, "-c", ENGINE_CRITIC], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(next(x for x in done.stdout.splitlines() if x.startswith("RESULT"))[6:])
    p_ab, p_ba, working, checks = out["judgment"]
    assert working == out["working"] and checks == out["checks"]  # the engine's greedy text
    assert all(len(r) >= SOLVE_TOKENS // 2 for r in out["raw"])  # it wrote, and not EOS
    assert 0.0 <= p_ab <= 1.0 and 0.0 <= p_ba <= 1.0


def test_the_run_s_correctors_are_its_tasks_whose_checks_follow_from_what_the_critic_saw():
    """Arithmetic and chat check against the critic's own answer; instructions against the
    constraints the question states, in the layout the critic was taught; a tool call's
    product is not in any text the critic saw, so tool use has none."""
    tasks = ["k2rl/Arithmetic-v2", "k2rl/Calculator-v1", "k2rl/Instructions-v1", "k2rl/Chat-v1"]
    fix = check_correctors(tasks)
    assert sorted(fix) == ["arithmetic", "chat", "instructions"]
    assert check_correctors(["CartPole-v1"]) == {}  # a plain gymnasium.Env: no check_from
    assert ChatEnv.corrects_checks and InstructionsEnv.corrects_checks
    assert fix["chat"]("Q", "7 is odd.", "7 is even.") == "77=  =ii=ss=  =oe!: no"
    question = "List colors. min 2 words, include 'navy'."
    assert fix["instructions"](question, "navy", "navy red") == (
        "1 navy+; colors yes, 1 words no, has 'navy' yes: no")
    taught = check_correctors(tasks, critic_scripts(None, Recipe()))
    assert taught["instructions"](question, "navy", "navy red") == (
        "1 navy+ nnaavvyy=^; has 'navy' yes, colors yes, 1 words, min 2 no: no")
    assert taught["instructions"]("Tell me about the word nurse.", "x", "x") is None


def test_corrected_instruction_checks_read_the_question_and_agree_with_the_label():
    """An instruction pair's checks are corrected to what the question's constraints make of
    each reply, where that agrees with the pair's label; the critic's own answer (a reply it
    wrote) plays no part, and a question it cannot read corrects nothing."""
    fix = check_correctors(["k2rl/Instructions-v1"])
    c = comparison_of(Pair("List colors. min 2 words, include 'navy'.", "navy red", "navy",
                           "instructions"), load_rubrics())
    slipped = Judgment(0.4, 0.6, "red", ("1 navy+ 2 red+; colors yes, 2 words yes, has 'navy' "
                                         "yes: yes", "1 navy+; colors yes, 1 words yes, has "
                                         "'navy' yes: yes"), ("navy red", "navy"))
    assert corrected(c, slipped, fix) == (
        "1 navy+ 2 red+; colors yes, 2 words yes, has 'navy' yes: yes",
        "1 navy+; colors yes, 1 words no, has 'navy' yes: no")
    assert corrected(replace(c, prompt="List colors now."), slipped, fix) is None


def test_the_critic_is_evaluated_where_a_reward_comes_from_it_even_with_the_refresh_off():
    """critic.refresh=false still ranks chat's groups with the critic, so the run still draws
    and scores its held-out pairs; a run with no critic at all (no refresh, no critic-rewarded
    task) spends nothing on them."""
    from k2rl.config import load_config
    from k2rl.step.heldout import critic_evaluated

    assert critic_evaluated(load_config(None, ["critic.refresh=false"]))  # the default: chat
    assert critic_evaluated(load_config(None))
    verifiable = load_config("configs/tiny.yaml", ["critic.refresh=false"])
    assert not critic_evaluated(verifiable) and critic_evaluated(load_config("configs/tiny.yaml"))
    # by default (critic.refresh null) a run of verifiable tasks draws no held-out pairs
    assert not critic_evaluated(load_config("configs/tiny.yaml", ["critic.refresh=null"]))
