"""The policy as critic over the vLLM engine (K2 sec. 3.2.2), and ranking a step's
critic-rewarded groups with it.

Two layouts (critic.layout). In ``chat``, for any chat model, one generate call writes the
critic's reasoning for every comparison in both orders (its own working of the request, then
its comparison), and one scores every verdict from the log-probs of " A" and " B" after
"Verdict:" (`chat_critic_with`). In ``checks``, the embedded default's, one generate call writes
the critic's own answer to every question (as the policy, after the policy's prompt), one writes
the check line of every answer, and one scores every verdict in both orders from the log-probs
of "A" and "B" (`critic_with`). `make_critic` picks by layout; `critic_rank_groups` sets each
judged reply's `critic` reward to its pairwise win rate (critic.compare.rank_groups). The
conversation itself, as token ids, is k2rl.step.critic_ids.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

from critic.compare import (Candidates, Comparison, Critic, Judgment, rank_groups,
                            verdict_from_logprobs)
from critic.layout import LAYOUTS, before_verdict, chat_messages, check_messages, verdict_messages
from critic.rubrics import Rubric
from k2rl.device import engine
from k2rl.lm.chat import load_tokenizer
from k2rl.lm.hf import built_recipe
from k2rl.step.critic_ids import (CHECK_TOKENS, REASON_TOKENS, SOLVE_TOKENS, answer_cap,
                                  answer_ids, chat_caps, chat_prompt_ids, chat_verdict_ids,
                                  chat_verdict_prompt, check_cap, check_tokens, open_ids,
                                  question_cap, response_text, shorten, verdict_ids)
from k2rl.step.group import Group
from k2rl.step.rollout import Generate  # what an engine's generate looks like

Score = Callable[[list[list[int]]], list[list[float]]]


def layout_for(layout: str, model_dir) -> str:
    """The layout a critic uses: `layout`, or for "auto" the checks layout where k2rl built the
    model (its build taught it the check lines) and the chat layout for any other model."""
    if layout == "auto":
        return "checks" if model_dir is not None and built_recipe(model_dir) is not None else "chat"
    if layout not in LAYOUTS:
        raise ValueError(f"critic.layout must be auto or one of {LAYOUTS}, got {layout!r}")
    return layout


def run_layout(cfg, built: dict | None) -> str:
    """A run's critic layout (critic.layout): "auto" is checks for a model k2rl built (`built`:
    its recipe), chat otherwise."""
    if cfg.critic.layout != "auto":
        return cfg.critic.layout
    return "checks" if built is not None else "chat"


def make_critic(llm, tokenizer, max_len: int, temperature: float = 0.0,
                check_tokens: int = CHECK_TOKENS, layout: str = "checks") -> Critic:
    """critic(comparisons) -> judgments over the engine, in `layout` ("chat" or "checks"): the
    critic's text is the engine's own tokens (`temperature` 0: greedy), its verdicts the
    engine's log-probs of the two choices."""

    def generate(prompts, max_tokens, temperatures):
        return engine.generate(llm, prompts, max_tokens, temperatures)

    if layout == "chat":
        _, ids = chat_verdict_ids(tokenizer)
        return chat_critic_with(generate,
                                lambda prompts: engine.choice_logprobs(llm, prompts, ids),
                                tokenizer, max_len, temperature)

    def score(prompts):
        return engine.choice_logprobs(llm, prompts, verdict_ids(tokenizer))

    return critic_with(generate, score, tokenizer, max_len, temperature, check_tokens)


def _writer(generate: Generate, tokenizer, max_len: int, temperature: float):
    def write(prompts: list[list[int]], budget: int) -> list[str]:
        outs = generate(prompts, [max(1, min(budget, max_len - len(p))) for p in prompts],
                        [temperature] * len(prompts))
        return [tokenizer.decode(ids, skip_special_tokens=True).strip() for ids, _ in outs]

    return write


def chat_critic_with(generate: Generate, score: Score, tokenizer, max_len: int,
                     temperature: float = 0.0) -> Critic:
    """The chat layout's critic over any generate and verdict-score functions: per comparison
    and order, the critic's reasoning (up to REASON_TOKENS, cut where it starts a verdict of
    its own), then P(A) from the log-probs after "Verdict:". The critic sees the request, the
    two responses and the rubrics, nothing else."""
    write = _writer(generate, tokenizer, max_len, temperature)

    def critic(comparisons: list[Comparison]) -> list[Judgment]:
        if not comparisons:
            return []
        opened, shown = [], []
        for c in comparisons:
            q_cap, r_cap = chat_caps(tokenizer, max_len, c.rubrics, c.prompt)
            question = shorten(tokenizer, c.prompt, q_cap)
            a, b = shorten(tokenizer, c.first, r_cap), shorten(tokenizer, c.second, r_cap)
            shown.append((a, b))
            opened += [chat_prompt_ids(tokenizer, chat_messages(question, c.rubrics, a, b)),
                       chat_prompt_ids(tokenizer, chat_messages(question, c.rubrics, b, a))]
        reasons = [before_verdict(r) for r in write(opened, REASON_TOKENS)]
        p = [verdict_from_logprobs(la, lb) for la, lb in score(
            [chat_verdict_prompt(tokenizer, o, r) for o, r in zip(opened, reasons)])]
        return [Judgment(p[2 * k], p[2 * k + 1], "", (reasons[2 * k], reasons[2 * k + 1]),
                         shown[k], layout="chat")
                for k in range(len(comparisons))]

    return critic


def critic_with(generate: Generate, score: Score, tokenizer, max_len: int,
                temperature: float = 0.0, check_tokens: int = CHECK_TOKENS) -> Critic:
    """The checks layout's critic over any generate and verdict-score functions (the engine's:
    make_critic)."""
    write = _writer(generate, tokenizer, max_len, temperature)

    def critic(comparisons: list[Comparison]) -> list[Judgment]:
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

    return critic


def standalone_critic(model_dir: str, max_model_len: int = 1024, threads: int = 2,
                      default=None, layout: str = "auto") -> Critic:
    """An engine and critic outside a run (for `k2rl critic eval`). `layout` "auto": the checks
    layout for a model k2rl built, the chat layout for any other (`layout_for`). In the checks
    layout a model k2rl did not build checks in the layout of `default` (the model.default
    whose scripts a run's PTX judgments taught it: k2rl.step.critic_ids.check_tokens)."""
    layout = layout_for(layout, model_dir)
    engine.configure_env(threads, kv_cache_gib=1)
    max_model_len = engine.fitted_max_len(model_dir, max_model_len)
    llm = engine.start_engine(model_dir, max_model_len, seed=0)
    return make_critic(llm, load_tokenizer(model_dir), max_model_len,
                       check_tokens=check_tokens(built_recipe(model_dir), default), layout=layout)


def critic_rank_groups(groups: list[Group], critic: Critic, rubrics: list[Rubric],
                       tie_margin: float = 0.0, opponents: int | None = None) -> int:
    """Set the `critic` reward of every judged trajectory of the finished critic-rewarded
    groups to its pairwise win rate, in one batched use of the critic; returns how many groups
    were judged. A truncated reply keeps its truncation penalty (it never finished).
    `opponents`: comparisons per response (critic.compare.pairs_in_group; None: all).
    """
    judged = [g for g in groups if len(g) > 1 and g.judged and not g.paused]
    if not judged:
        return 0
    rates = rank_groups([Candidates(g.prompt, [response_text(t) for t in g], g.task)
                         for g in judged], rubrics, critic, tie_margin, opponents)
    for g, rs in zip(judged, rates):
        for t, r in zip(g, rs):
            if t.judged and not t.truncated:
                t.rewards["critic"] = float(r)
    return len(judged)
