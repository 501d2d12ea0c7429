"""The policy as judge over the vLLM engine (K2 sec. 3.2.2), and ranking a step's
critic-rewarded groups with it.

Per step, one generate call writes the judge's own answer to every question (as the policy,
after the policy's prompt), one writes the check line of every answer, and one scores every
verdict in both orders from the log-probs of "A" and "B" (`make_judge`; `judge_with` over any
generate and score functions). `judge_groups` sets each judged reply's `critic` reward to its
pairwise win rate (critic.judge.rank_groups). The conversation itself, as token ids, is
k2rl.step.judge_ids.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from critic.judge import Candidates, Comparison, Judge, Judgment, rank_groups, verdict_from_logprobs
from critic.layout import check_messages, verdict_messages
from critic.rubrics import Rubric
from k2rl.device import engine
from k2rl.lm.chat import load_tokenizer
from k2rl.lm.hf import built_recipe
from k2rl.step.group import Group
from k2rl.step.judge_ids import (CHECK_TOKENS, SOLVE_TOKENS, answer_cap, answer_ids, check_cap,
                                 check_tokens, open_ids, question_cap, response_text, shorten,
                                 verdict_ids)
from k2rl.step.rollout import Generate  # what an engine's generate looks like


def make_judge(llm, tokenizer, max_len: int, temperature: float = 0.0,
               check_tokens: int = CHECK_TOKENS) -> Judge:
    """judge(comparisons) -> judgments, three batched engine calls per use (working, checks,
    verdicts); the working and the checks are the engine's own tokens (`temperature` 0:
    greedy), a check at most `check_tokens` (k2rl.step.judge_ids.check_tokens)."""

    def generate(prompts, max_tokens, temperatures):
        return engine.generate(llm, prompts, max_tokens, temperatures)

    def score(prompts):
        return engine.choice_logprobs(llm, prompts, verdict_ids(tokenizer))

    return judge_with(generate, score, tokenizer, max_len, temperature, check_tokens)


def judge_with(generate: Generate, score: Callable[[list[list[int]]], list[list[float]]],
               tokenizer, max_len: int, temperature: float = 0.0,
               check_tokens: int = CHECK_TOKENS) -> Judge:
    """The judge over any generate and verdict-score functions (the engine's: make_judge)."""

    def write(prompts: list[list[int]], budget: int) -> list[str]:
        outs = generate(prompts, [max(1, min(budget, max_len - len(p))) for p in prompts],
                        [temperature] * len(prompts))
        return [tokenizer.decode(ids, skip_special_tokens=True).strip() for ids, _ in outs]

    def judge(comparisons: list[Comparison]) -> list[Judgment]:
        if not comparisons:
            return []
        # A question too long to leave room for its answers is cut (rare: a user's dataset).
        comparisons = [replace(c, prompt=shorten(tokenizer, c.prompt,
                                                question_cap(tokenizer, max_len, c.rubrics,
                                                             check_tokens)))
                       for c in comparisons]
        # One own answer per question (its text and rubrics), one check per answer shown to it.
        keys = [(c.prompt, tuple(r.text for r in c.rubrics)) for c in comparisons]
        questions = dict(zip(keys, comparisons))
        works = dict(zip(questions, write([answer_ids(tokenizer, c.prompt)
                                           for c in questions.values()], SOLVE_TOKENS)))
        caps = {q: answer_cap(tokenizer, max_len, c.prompt, c.rubrics, works[q], check_tokens)
                for q, c in questions.items()}
        shown = [(shorten(tokenizer, c.first, caps[q]), shorten(tokenizer, c.second, caps[q]))
                 for q, c in zip(keys, comparisons)]
        answers = {(q, x): c for q, c, xs in zip(keys, comparisons, shown) for x in xs}
        checks = dict(zip(answers, write([open_ids(tokenizer, check_messages(
            c.prompt, c.rubrics, works[q], x)) for (q, x), c in answers.items()],
            min(check_cap(tokenizer, max_len, c.rubrics, check_tokens) for c in comparisons))))
        prompts = []
        for q, c, (a, b) in zip(keys, comparisons, shown):
            w, ca, cb = works[q], checks[(q, a)], checks[(q, b)]
            prompts += [open_ids(tokenizer, verdict_messages(c.prompt, c.rubrics, w, a, ca, b, cb)),
                        open_ids(tokenizer, verdict_messages(c.prompt, c.rubrics, w, b, cb, a, ca))]
        p = [verdict_from_logprobs(la, lb) for la, lb in score(prompts)]
        return [Judgment(p[2 * k], p[2 * k + 1], works[q], (checks[(q, a)], checks[(q, b)]), (a, b))
                for k, (q, (a, b)) in enumerate(zip(keys, shown))]

    return judge


def standalone_judge(model_dir: str, max_model_len: int = 1024, threads: int = 2,
                     default=None) -> Judge:
    """An engine and judge outside a run (for `k2rl critic eval`). A model k2rl did not build
    checks in the layout of `default` (the model.default whose scripts a run's PTX judgments
    taught it: k2rl.step.judge_ids.check_tokens), as it did in the run."""
    engine.configure_env(threads, kv_cache_gib=1)
    max_model_len = engine.fitted_max_len(model_dir, max_model_len)
    llm = engine.start_engine(model_dir, max_model_len, seed=0)
    return make_judge(llm, load_tokenizer(model_dir), max_model_len,
                      check_tokens=check_tokens(built_recipe(model_dir), default))


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
