"""Pairwise judging by the policy-as-critic, as data and arithmetic; the engine is a callable.

K2 (sec. 3.2.2) has the policy compare its own K responses pairwise against rubrics and rank
them, but does not say how rankings become a scalar reward. Here, as docs/method.md section 6
describes, a response's reward is its pairwise win rate within its group (a tie counts 0.5),
with every comparison judged in both orders so that a judge that favours a position gets ties
rather than a ranking.

Departures, for a small character-level policy:
- The judge's user message is compact (`judge_text`) and its reply a single character, "A"
  or "B". The verdict is not parsed from sampled text: the engine returns the log-probs of
  the "A" and "B" tokens as the next token after the assistant marker, and the preference is
  the softmax over those two (`verdict_from_logprobs`). A judge that never learnt the format
  still yields a usable, if uninformative, number.
- All comparisons of a step go to the engine as ONE batch: `rank_groups` builds the
  requests, calls `score(texts) -> [(logp_A, logp_B), ...]` once, and scatters the verdicts.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from critic.guards import guarded, violations
from critic.rubrics import Rubric, rubrics_for

VERDICTS = ("A", "B")  # the judge's whole reply: "A" if the first answer is better
Scorer = Callable[[list[str]], list[tuple[float, float]]]


@dataclass
class Candidates:
    """One prompt's K sampled responses; `task` picks the task rubrics (None: general only)."""

    prompt: str
    responses: list[str]
    task: str | None = None


@dataclass
class JudgeRequest:
    """One comparison of a step's batch: responses i < j of group `group`, in one order."""

    group: int
    i: int
    j: int
    swapped: bool  # False: response i shown as A; True: response j shown as A
    text: str  # the judge's user message


def _criteria(rubrics: list[Rubric]) -> str:
    return "; ".join(r.text.rstrip(". ") for r in rubrics)


def judge_text(prompt: str, a: str, b: str, rubrics: list[Rubric]) -> str:
    """The user message shown to the judge; the expected reply is "A" or "B".

    >>> judge_text("2+2=", "4", "5", [Rubric("r", "core", "Correct.")])
    'Judge by: Correct. Q: 2+2= A: 4 B: 5 Better?'
    """
    head = f"Judge by: {_criteria(rubrics)}. " if rubrics else ""
    return f"{head}Q: {prompt} A: {a} B: {b} Better?"


# judge_text's signature: (question, answer shown as A, answer shown as B, rubrics) -> message
Render = Callable[[str, str, str, list[Rubric]], str]


def _check_margin(tie_margin: float) -> None:
    if not 0.0 <= tie_margin <= 0.5:
        raise ValueError(f"tie_margin must be in [0, 0.5], got {tie_margin}")


def is_tie(p: float, tie_margin: float) -> bool:
    """Whether preference `p` is too close to 0.5 to name a winner (exactly 0.5 always is)."""
    return p == 0.5 or abs(p - 0.5) < tie_margin


def verdict_from_logprobs(logp_a: float, logp_b: float, tie_margin: float = 0.0) -> float:
    """P(A better) = softmax over the two verdict tokens; 0.5 exactly when it is a tie.

    >>> round(verdict_from_logprobs(math.log(0.3), math.log(0.1)), 6)
    0.75
    >>> verdict_from_logprobs(math.log(0.3), math.log(0.25), tie_margin=0.1)
    0.5
    """
    _check_margin(tie_margin)
    if math.isnan(logp_a) or math.isnan(logp_b):
        raise ValueError(f"verdict log-probs must be numbers, got {logp_a}, {logp_b}")
    if logp_a == logp_b:  # also both -inf: the judge gave neither verdict any mass
        return 0.5
    d = logp_a - logp_b
    # The logistic of d, written so that exp never overflows.
    p = 1.0 / (1.0 + math.exp(-d)) if d >= 0 else math.exp(d) / (1.0 + math.exp(d))
    return 0.5 if is_tie(p, tie_margin) else p


def both_orders(pairs: list[tuple[str, str, str]]) -> list[tuple[str, str, str, bool]]:
    """(prompt, first, second, swapped) for each (prompt, x, y): x/y, then y/x swapped."""
    out = []
    for prompt, x, y in pairs:
        out += [(prompt, x, y, False), (prompt, y, x, True)]
    return out


def combine_orders(p_ab: float, p_ba_swapped: float) -> float:
    """P(x better than y) from both orders, which cancels a constant position bias.

    `p_ab` is the verdict P(A better) with x shown as A; `p_ba_swapped` the verdict P(A
    better) with y shown as A, so x's side of it is 1 - p_ba_swapped.

    >>> combine_orders(0.9, 0.9)  # always prefers position A: no information about x vs y
    0.5
    """
    return (p_ab + (1.0 - p_ba_swapped)) / 2.0


def pairs_in_group(k: int, opponents: int | None = None) -> list[tuple[int, int]]:
    """The comparisons of a group of k responses, as (i, j) with i < j.

    `opponents` None (or at least k - 1): every pair, k(k-1)/2 comparisons. Otherwise each
    response meets its neighbours on a ring, ceil(opponents / 2) on either side, which costs
    about k * opponents / 2 comparisons and gives every response the same number of them.
    The order of a group's samples is random, so ring neighbours are random opponents.

    >>> pairs_in_group(4, opponents=2)
    [(0, 1), (1, 2), (2, 3), (0, 3)]
    """
    if opponents is not None and opponents < 1:
        raise ValueError(f"opponents must be at least 1 (or None for all), got {opponents}")
    if opponents is None or opponents >= k - 1:
        return [(i, j) for i in range(k) for j in range(i + 1, k)]
    ring = (tuple(sorted((i, (i + d) % k))) for d in range(1, (opponents + 1) // 2 + 1)
            for i in range(k))
    return list(dict.fromkeys(ring))  # in order, each pair once


def group_win_rates(k: int, prefs: dict[tuple[int, int], float],
                    tie_margin: float = 0.0, opponents: int | None = None) -> list[float]:
    """Each response's win rate over the responses it was compared with (win 1, tie 0.5,
    loss 0).

    `prefs[(i, j)]` (i < j, every pair of `pairs_in_group(k, opponents)` present) is the
    combined P(i better than j). A group of one response has nothing to be compared with and
    gets 0.5, a neutral reward.

    >>> group_win_rates(3, {(0, 1): 0.9, (0, 2): 0.8, (1, 2): 0.7})
    [1.0, 0.5, 0.0]
    """
    _check_margin(tie_margin)
    expected = pairs_in_group(k, opponents)
    if set(prefs) != set(expected):
        missing = sorted(set(expected) - set(prefs))
        extra = sorted(set(prefs) - set(expected))
        raise ValueError(f"a group of {k} needs a preference for each pair i < j; "
                         f"missing {missing}, unexpected {extra}")
    if k <= 1:
        return [0.5] * k
    wins, games = [0.0] * k, [0] * k
    for (i, j), p in prefs.items():
        games[i] += 1
        games[j] += 1
        if is_tie(p, tie_margin):
            wins[i] += 0.5
            wins[j] += 0.5
        elif p > 0.5:
            wins[i] += 1.0
        else:
            wins[j] += 1.0
    return [w / n for w, n in zip(wins, games)]


def build_judge_requests(groups: list[Candidates], rubrics: list[Rubric],
                         opponents: int | None = None, render: Render = judge_text
                         ) -> list[JudgeRequest]:
    """Every comparison of a step (`pairs_in_group`), in both orders, flattened into one batch.

    Each group is judged by the rubrics that apply to its task (`rubrics_for`), so passing
    every loaded rubric is right. `render` lays out each judge message (judge_text, or a
    version of it that fits the engine: k2rl.self_critique.fitted_judge_text).
    """
    requests = []
    for g, group in enumerate(groups):
        crit = rubrics_for(group.task, rubrics)
        for i, j in pairs_in_group(len(group.responses), opponents):
            a, b = group.responses[i], group.responses[j]
            requests.append(JudgeRequest(g, i, j, False, render(group.prompt, a, b, crit)))
            requests.append(JudgeRequest(g, i, j, True, render(group.prompt, b, a, crit)))
    return requests


def scatter_verdicts(requests: list[JudgeRequest], scores: list[tuple[float, float]],
                     sizes: list[int], tie_margin: float = 0.0,
                     violates: list[list[bool]] | None = None,
                     opponents: int | None = None) -> list[list[float]]:
    """Per-group win rates from the scorer's (logp_A, logp_B) for each request.

    `sizes` are the groups' response counts (a group of 0 or 1 has no request). The tie
    margin applies to the combined preference, not to each order, so two weak verdicts that
    agree can still name a winner. `violates[g][i]` (optional) says whether response i of
    group g breaks a prescriptive guard (critic.guards): it then loses to any that does not.
    """
    if len(scores) != len(requests):
        raise ValueError(f"{len(requests)} judge requests but {len(scores)} scores")
    orders: dict[tuple[int, int, int], dict[bool, float]] = {}
    for req, (la, lb) in zip(requests, scores):
        if not 0 <= req.group < len(sizes):
            raise ValueError(f"request for group {req.group} but only {len(sizes)} groups")
        seen = orders.setdefault((req.group, req.i, req.j), {})
        if req.swapped in seen:
            raise ValueError(f"comparison {req.i} vs {req.j} of group {req.group} is judged "
                             f"twice in the same order")
        seen[req.swapped] = verdict_from_logprobs(la, lb)
    prefs: list[dict[tuple[int, int], float]] = [{} for _ in sizes]
    for (g, i, j), seen in orders.items():
        if len(seen) != 2:
            raise ValueError(f"comparison {i} vs {j} of group {g} is judged in one order only")
        pref = combine_orders(seen[False], seen[True])
        if violates is not None:
            pref = guarded(pref, violates[g][i], violates[g][j])
        prefs[g][(i, j)] = pref
    return [group_win_rates(k, p, tie_margin, opponents) for k, p in zip(sizes, prefs)]


def rank_groups(groups: list[Candidates], rubrics: list[Rubric], score: Scorer,
                tie_margin: float, opponents: int | None = None, render: Render = judge_text
                ) -> list[list[float]]:
    """Each group's rewards (win rates), with one call of `score` for the whole step; the
    prescriptive guards of each group's rubrics override the judge where they apply."""
    _check_margin(tie_margin)
    requests = build_judge_requests(groups, rubrics, opponents, render)
    # No comparison at all (every group has one response): do not wake the engine.
    scores = score([r.text for r in requests]) if requests else []
    violates = [[bool(violations(r, rubrics_for(g.task, rubrics))) for r in g.responses]
                for g in groups]
    return scatter_verdicts(requests, list(scores), [len(g.responses) for g in groups],
                            tie_margin, violates, opponents)
