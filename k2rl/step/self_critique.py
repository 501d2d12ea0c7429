"""The engine side of the self-critique rubric critic (K2 sec. 3.2.2): the policy as judge.

critic/ holds the rubrics, the judge's conversation (critic.layout), the pairwise arithmetic,
the pairs and the evaluation as pure logic; this module is everything of the critic that needs
the model, its tokenizer or the run:
- the judge's conversation as token ids (`open_ids`, `example_ids`): its own turns in the
  `<|critic|>` role (the assistant's for a model without one);
- the judge over the vLLM engine (`make_judge`): per step, one generate call writes the
  judge's own answer to every question (as the policy, after the policy's prompt), one writes
  the check line of every answer, and one scores every verdict in both orders from the
  log-probs of "A" and "B";
- ranking a step's critic-rewarded groups by pairwise win rates (`judge_groups`);
- the closed loop: labelled pairs harvested from verifiable groups into Redis, judge training
  pairs drawn from them (`harvest`, `store_pairs`, `training_pairs`), and the judge's own text
  on them as training examples where its verdict was right (`judge_examples`);
- the warm-start's critic examples with scripted own answers and checks
  (`critic_demonstration`).

The judge sees the question, the two transcripts and the rubrics, nothing else: no answer key,
no verifier label, nothing computed from them. A multi-turn response is shown as its turns
joined by " | " (tool calls and observations included), so the judge can see how an answer was
reached.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

import numpy as np

from critic.judge import Candidates, Comparison, Judge, Judgment, rank_groups, verdict_from_logprobs
from critic.layout import (ASK, JUDGE, VERDICTS, check_messages, example_messages, finding,
                           solve_messages, verdict_messages)
from critic.pairs import Pair, pairs_from_group
from critic.rubrics import Rubric, rubrics_for
from k2rl.device import engine
from k2rl.lm.chat import (conversation_ids, load_tokenizer, prompt_ids, text_ids, turn_end_id,
                          turn_ids)
from k2rl.step.group import Group, Trajectory

# Most tokens the judge writes for its own answer and for one check line: the default
# families' expert answers (a column working of 27 characters the longest) and the longest
# scripted check (a chat fact compared a character at a time, or eight listed words and four
# constraints: tests/envs/test_contract.py) fit.
SOLVE_TOKENS = 48
CHECK_TOKENS = 120
CUT = "..."  # marks an answer shortened to fit the engine

# generate(prompts, max_tokens, temperatures) -> [(token ids, log-probs), ...]
Generate = Callable[[list[list[int]], list[int], list[float]], list[tuple[list[int], list[float]]]]

# ---------------------------------------------------------------- the judge's layout


def judge_role(tokenizer) -> str:
    """The role of the judge's turns: critic, or assistant for a model whose tokenizer has no
    critic role (an outside model evaluated with `k2rl critic eval`).

    The judge gets turns of its own because its verdict, read as the assistant's first reply
    token, leaked into the policy when trained: after 20 updates at critic.lr 1e-3 the policy
    opened 93% of its arithmetic replies with "A" or "B" (12% of instruction replies at 2e-4).
    """
    critic = tokenizer.convert_tokens_to_ids("<|critic|>")
    return "critic" if critic is not None and critic != tokenizer.unk_token_id else "assistant"


def _in_role(tokenizer, messages: list[dict]) -> list[dict]:
    role = judge_role(tokenizer)
    return [{**m, "role": role} if m["role"] == JUDGE else m for m in messages]


def open_ids(tokenizer, messages: list[dict]) -> list[int]:
    """Token ids of a judge conversation up to where the judge's next turn begins."""
    if judge_role(tokenizer) == "critic":
        return (turn_ids(tokenizer, _in_role(tokenizer, messages))
                + [tokenizer.convert_tokens_to_ids("<|critic|>")])
    return prompt_ids(tokenizer, _in_role(tokenizer, messages))


def example_ids(tokenizer, messages: list[dict], trained: Callable[[int], bool] = lambda i: True
                ) -> tuple[list[int], list[int]]:
    """(ids, mask) of a whole judgment (critic.layout.example_messages): the loss falls on the
    judge's turns (their text and the end of turn) for which `trained(index)` holds. In the
    assistant's role that is the template's rendering of the whole judgment
    (k2rl.lm.chat.conversation_ids); in k2rl's own critic role, each turn after its opening."""
    if judge_role(tokenizer) == "assistant":
        return conversation_ids(tokenizer, _in_role(tokenizer, messages),
                                trained=lambda i: messages[i]["role"] == JUDGE and trained(i))
    ids: list[int] = []
    mask: list[int] = []
    for i, m in enumerate(messages):
        if m["role"] != JUDGE:
            continue
        head = open_ids(tokenizer, messages[:i])
        if head[:len(ids)] != ids:
            raise ValueError(f"the chat template of {tokenizer.name_or_path or 'this model'} does "
                             "not render the judge's conversation as a prefix of its continuation")
        reply = text_ids(tokenizer, m["content"]) + [turn_end_id(tokenizer)]
        mask += [0] * (len(head) - len(ids)) + [int(trained(i))] * len(reply)
        ids = head + reply
    return ids, mask


def _cut(tokenizer, text: str, cap: int) -> str:
    ids = text_ids(tokenizer, text)
    return text if len(ids) <= cap else tokenizer.decode(ids[:max(cap, 0)]) + CUT


def answer_cap(tokenizer, max_len: int, prompt: str, rubrics, working: str) -> int:
    """The most tokens an answer may keep so that a verdict prompt, its two checks and the
    verdict fit `max_len`; a question and rubrics that leave no room are a ValueError."""
    bare = len(open_ids(tokenizer, verdict_messages(prompt, rubrics, working, "", "", "", "")))
    cap = (max_len - 2 - bare - 2 * check_cap(tokenizer, max_len, rubrics)) // 2
    if cap < 4:
        raise ValueError(f"the judge's rubrics and question ({bare} tokens) leave no room for "
                         f"the answers in rollout.max_model_len {max_len}; raise it or use "
                         "shorter rubrics")
    return cap


MIN_ANSWER = 32  # tokens each answer keeps at least when a long question must be cut
MIN_CHECK = 24  # tokens a check line keeps at least in an engine too short for CHECK_TOKENS


def check_cap(tokenizer, max_len: int, rubrics) -> int:
    """Tokens a check line may take: CHECK_TOKENS, or fewer where the engine is too short for
    two of them beside the rubrics, the judge's own answer and two answers of MIN_ANSWER tokens
    (a model with 512 positions and a near-character vocabulary), but at least MIN_CHECK."""
    bare = len(open_ids(tokenizer, verdict_messages("", rubrics, "", "", "", "", "")))
    room = (max_len - 2 - bare - SOLVE_TOKENS - 2 * MIN_ANSWER - 8) // 2
    return max(MIN_CHECK, min(CHECK_TOKENS, room))


def question_cap(tokenizer, max_len: int, rubrics) -> int:
    """The most tokens a question may keep so that the working, two checks and two answers of
    MIN_ANSWER tokens still fit `max_len`; rubrics that leave no room are a ValueError."""
    bare = len(open_ids(tokenizer, verdict_messages("", rubrics, "", "", "", "", "")))
    cap = max_len - 2 - bare - SOLVE_TOKENS - 2 * check_cap(tokenizer, max_len, rubrics) - 2 * MIN_ANSWER
    if cap < 8:
        raise ValueError(f"the judge's rubrics ({bare} tokens with the layout) leave no room "
                         f"for a question and its answers in rollout.max_model_len {max_len}; "
                         "raise it or use shorter rubrics")
    return cap


def _verdict_ids(tokenizer, verdict: str) -> list[int]:
    """The ids of a verdict as the judge's turn writes it: in the assistant's role, the ids
    the template's rendering gives it in context (a SentencePiece tokenizer writes "A" alone
    as "▁A", but not after Gemma's "model\n"), without the turn end."""
    if judge_role(tokenizer) != "assistant":
        return text_ids(tokenizer, verdict)
    ids, mask = conversation_ids(tokenizer, [{"role": "user", "content": ASK},
                                             {"role": "assistant", "content": verdict}])
    return [i for i, m in zip(ids, mask) if m][:-1]


def verdict_ids(tokenizer) -> list[int]:
    """The ids of the two verdicts, each of which must be one token of the vocabulary."""
    out = []
    for v in VERDICTS:
        ids = _verdict_ids(tokenizer, v)
        if len(ids) != 1:
            raise ValueError(f"the tokenizer of {tokenizer.name_or_path or 'this model'} writes "
                             f"the verdict {v!r} as {len(ids)} tokens; the judge reads one")
        out += ids
    return out


# ---------------------------------------------------------------- judging with the engine


def make_judge(llm, tokenizer, max_len: int, temperature: float = 0.0) -> Judge:
    """judge(comparisons) -> judgments, three batched engine calls per use (working, checks,
    verdicts); the working and the checks are the engine's own tokens (`temperature` 0:
    greedy)."""

    def generate(prompts, max_tokens, temperatures):
        return engine.generate(llm, prompts, max_tokens, temperatures)

    def score(prompts):
        return engine.choice_logprobs(llm, prompts, verdict_ids(tokenizer))

    return judge_with(generate, score, tokenizer, max_len, temperature)


def answer_ids(tokenizer, prompt: str) -> list[int]:
    """Token ids up to the judge's own answer: the policy's prompt, in the policy's layout."""
    return prompt_ids(tokenizer, solve_messages(prompt))


def judge_with(generate: Generate, score: Callable[[list[list[int]]], list[list[float]]],
               tokenizer, max_len: int, temperature: float = 0.0) -> Judge:
    """The judge over any generate and verdict-score functions (the engine's: make_judge)."""

    def write(prompts: list[list[int]], budget: int) -> list[str]:
        outs = generate(prompts, [max(1, min(budget, max_len - len(p))) for p in prompts],
                        [temperature] * len(prompts))
        return [tokenizer.decode(ids, skip_special_tokens=True).strip() for ids, _ in outs]

    def judge(comparisons: list[Comparison]) -> list[Judgment]:
        if not comparisons:
            return []
        # A question too long to leave room for its answers is cut (rare: a user's dataset).
        comparisons = [replace(c, prompt=_cut(tokenizer, c.prompt,
                                              question_cap(tokenizer, max_len, c.rubrics)))
                       for c in comparisons]
        # One own answer per question (its text and rubrics), one check per answer shown to it.
        keys = [(c.prompt, tuple(r.text for r in c.rubrics)) for c in comparisons]
        questions = dict(zip(keys, comparisons))
        works = dict(zip(questions, write([answer_ids(tokenizer, c.prompt)
                                           for c in questions.values()], SOLVE_TOKENS)))
        caps = {q: answer_cap(tokenizer, max_len, c.prompt, c.rubrics, works[q])
                for q, c in questions.items()}
        shown = [(_cut(tokenizer, c.first, caps[q]), _cut(tokenizer, c.second, caps[q]))
                 for q, c in zip(keys, comparisons)]
        answers = {(q, x): c for q, c, xs in zip(keys, comparisons, shown) for x in xs}
        checks = dict(zip(answers, write([open_ids(tokenizer, check_messages(
            c.prompt, c.rubrics, works[q], x)) for (q, x), c in answers.items()],
            min(check_cap(tokenizer, max_len, c.rubrics) for c in comparisons))))
        prompts = []
        for q, c, (a, b) in zip(keys, comparisons, shown):
            w, ca, cb = works[q], checks[(q, a)], checks[(q, b)]
            prompts += [open_ids(tokenizer, verdict_messages(c.prompt, c.rubrics, w, a, ca, b, cb)),
                        open_ids(tokenizer, verdict_messages(c.prompt, c.rubrics, w, b, cb, a, ca))]
        p = [verdict_from_logprobs(la, lb) for la, lb in score(prompts)]
        return [Judgment(p[2 * k], p[2 * k + 1], works[q], (checks[(q, a)], checks[(q, b)]), (a, b))
                for k, (q, (a, b)) in enumerate(zip(keys, shown))]

    return judge


def standalone_judge(model_dir: str, max_model_len: int = 1024, threads: int = 2) -> Judge:
    """An engine and judge outside a run (for `k2rl critic eval`)."""
    engine.configure_env(threads, kv_cache_gib=1)
    max_model_len = engine.fitted_max_len(model_dir, max_model_len)
    llm = engine.start_engine(model_dir, max_model_len, seed=0)
    return make_judge(llm, load_tokenizer(model_dir), max_model_len)


def response_text(traj: Trajectory) -> str:
    return " | ".join(m["content"] for m in traj.after_prompt)


def judge_groups(groups: list[Group], judge: Judge, rubrics: list[Rubric],
                 tie_margin: float = 0.0, opponents: int | None = None) -> int:
    """Set the `critic` reward of every judged trajectory of the finished critic-rewarded
    groups to its pairwise win rate, in one batched use of the judge; returns how many groups
    were judged. A truncated reply keeps its truncation penalty (it never finished).
    `opponents`: comparisons per response (critic.judge.pairs_in_group; None: all).
    """
    judged = [g for g in groups if len(g) > 1 and g.judged and not g.paused]
    if not judged:
        return 0
    rates = rank_groups([Candidates(g.prompt, [response_text(t) for t in g], g.task)
                         for g in judged], rubrics, judge, tie_margin, opponents)
    for g, rs in zip(judged, rates):
        for t, r in zip(g, rs):
            if t.judged and not t.truncated:
                t.rewards["critic"] = float(r)
    return len(judged)


# ---------------------------------------------------------------- the closed loop


def harvest_group(g: Group) -> list[Pair]:
    """Labelled pairs from a verifiable group with mixed outcomes (critic.pairs), else none."""
    if g.judged:
        return []  # critic-rewarded: `correct` there is a reference check, not a verifier
    correct = [t.correct for t in g]
    if not any(correct) or all(correct):
        return []
    return pairs_from_group(g.prompt, [response_text(t) for t in g], correct, g.task)


def harvest(groups: list[Group]) -> list[Pair]:
    """Labelled pairs from every verifiable group with mixed outcomes."""
    return [p for g in groups for p in harvest_group(g)]


def store_pairs(store, pairs: list[Pair], split: str = "train") -> int:
    """Write pairs to the run's `split` of pairs ("train": harvested from training groups;
    "heldout": drawn once from eval-split prompts, k2rl.step.heldout); returns how many."""
    if pairs:
        store.add_pairs(split, [p.to_json() for p in pairs])
    return len(pairs)


def training_pairs(store, n: int, rng: np.random.Generator) -> list[dict]:
    """n train pairs drawn at random (a worker judges each and trains on its judgment in both
    orders: `judge_examples`)."""
    rows = store.pairs("train")
    if not rows:
        return []
    picks = rng.choice(len(rows), size=min(n, len(rows)), replace=False)
    return [rows[i] for i in picks]


def heldout_pairs(store, n: int) -> list[dict]:
    return store.pairs("heldout")[:n]


def reasoned(judgment: Judgment) -> bool:
    """Whether a judgment of a labelled pair (chosen first) was right all through: the
    verdict names the chosen answer, the chosen answer's check found "yes", the other's "no"."""
    check_chosen, check_rejected = judgment.checks
    return (judgment.preference > 0.5 and finding(check_chosen) is True
            and finding(check_rejected) is False)


def judge_examples(tokenizer, comparisons: list[Comparison], judgments: list[Judgment]
                   ) -> list[tuple[list[int], list[int]]]:
    """Training examples from the judge's own judgments of labelled pairs (chosen first):
    each pair in both orders, with the loss on the right verdict always and on the judge's
    own checks only where its reasoning was right all through: its verdict named the chosen
    answer, the chosen answer's check found "yes" and the rejected one's "no"
    (rejection-sampled self-training: it learns from its reasoning where that reasoning was
    right, not where a wrong check happened to end in the right verdict). Its own answer to
    the question is the policy's turn, which RL trains; it carries no loss here."""
    out = []
    for c, j in zip(comparisons, judgments):
        (a, b), (ca, cb) = j.shown, j.checks
        right = reasoned(j)
        last = len(example_messages(c.prompt, c.rubrics, j.working, a, ca, b, cb, VERDICTS[0])) - 1
        for x, cx, y, cy, verdict in ((a, ca, b, cb, VERDICTS[0]), (b, cb, a, ca, VERDICTS[1])):
            msgs = example_messages(c.prompt, c.rubrics, j.working, x, cx, y, cy, verdict)
            out.append(example_ids(tokenizer, msgs, lambda i: right or i == last))
    return out


# ---------------------------------------------------------------- warm-start


def expert_transcript(env, rng: np.random.Generator) -> str:
    """The env's scripted expert playing the current episode to its end, as the judge sees a
    response (its turns joined by " | ")."""
    first = len(env.messages())
    done = False
    while not done:
        _, _, terminated, truncated, _ = env.step(env.expert_action(rng))
        done = terminated or truncated
    return " | ".join(m["content"] for m in env.messages()[first:])


def critic_demonstration(env, tokenizer, seed: int, rng: np.random.Generator,
                         rubrics: list[Rubric], split: str = "train") -> tuple[list[int], list[int]]:
    """(ids, mask) of one scripted judgment for the warm-start (K2 bootstraps its critic in SFT)
    on a training-split prompt of an env that teaches judging (envs.base.TextEnv.judge_*):
    the expert's answer against a plausible wrong one in a random order, the env's scripted
    own answer and check lines, and the verdict; the loss falls on the judge's turns (the
    checks and the verdict; its own answer is the policy's turn, which the demonstrations
    teach). The scripts read the answer key; at judging time every turn of the judge's is the
    model's own. `split` "eval" builds held-out ones, for measuring (bench/judge_skill.py)."""
    obs, _ = env.reset(seed=seed, options={"split": split})
    good = expert_transcript(env, rng)
    env.reset(seed=seed, options={"split": split})
    bad, working = env.rejected_response(rng), env.judge_working()
    first = int(rng.integers(2))  # 0: the expert's answer shown as A
    (a, b) = (good, bad) if first == 0 else (bad, good)
    msgs = example_messages(obs, rubrics_for(env.task, rubrics), working, a, env.judge_check(a),
                            b, env.judge_check(b), VERDICTS[first])
    return example_ids(tokenizer, msgs)
