"""Pairwise judging by the policy-as-critic, as data and arithmetic; the critic is a callable.

K2 (sec. 3.2.2) has the policy compare its own K responses pairwise against rubrics and rank
them, but does not say how rankings become a scalar reward. Here, as docs/method.md section 6
describes, a response's reward is its pairwise win rate within its group (a tie counts 0.5),
with every comparison judged in both orders so that a critic that favours a position gets ties
rather than a ranking.

The critic works each question out before it decides (critic.layout: its own answer, a check
line per answer, then the verdict). Its verdict is not parsed from sampled text: the engine
returns the log-probs of the "A" and "B" tokens after the question "A or B?", and the
preference is the softmax over those two (`verdict_from_logprobs`). All comparisons of a step
go to the critic as ONE batch: `rank_groups` builds them, calls `critic(comparisons)` once (the
engine's implementation is k2rl.step.critic_engine.make_critic) and scatters the verdicts.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from critic.guards import guarded, violations
from critic.rubrics import Rubric, rubrics_for


@dataclass
class Candidates:
    """One prompt's K sampled responses; `task` picks the task rubrics (None: general only)."""

    prompt: str
    responses: list[str]
    task: str | None = None


@dataclass(frozen=True)
class Comparison:
    """Two responses to one prompt, judged in both orders against `rubrics`."""

    prompt: str
    first: str
    second: str
    rubrics: tuple[Rubric, ...] = ()
    task: str | None = None


@dataclass
class Judgment:
    """The critic's reading of a comparison: its verdicts in both orders and its own text."""

    p_ab: float  # P(A better) with `first` shown as A
    p_ba: float  # P(A better) with `second` shown as A
    working: str = ""  # the critic's own answer to the question (critic.layout)
    checks: tuple[str, str] = ("", "")  # its check of `first`, of `second`
    shown: tuple[str, str] = ("", "")  # `first` and `second` as the critic saw them (cut to fit)
    # critic.layout: "checks" (`working` its own answer, `checks` a line per answer) or "chat"
    # (`checks`: its reasoning with `first` shown as A, then with `second` shown as A)
    layout: str = "checks"

    @property
    def preference(self) -> float:
        """P(first better than second), both orders combined."""
        return combine_orders(self.p_ab, self.p_ba)


# critic(comparisons) -> one Judgment per comparison, in order, from one batched engine pass
Critic = Callable[[list[Comparison]], list[Judgment]]


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
    if logp_a == logp_b:  # also both -inf: the critic gave neither verdict any mass
        return 0.5
    d = logp_a - logp_b
    # The logistic of d, written so that exp never overflows.
    p = 1.0 / (1.0 + math.exp(-d)) if d >= 0 else math.exp(d) / (1.0 + math.exp(d))
    return 0.5 if is_tie(p, tie_margin) else p


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


def rank_groups(groups: list[Candidates], rubrics: list[Rubric], critic: Critic,
                tie_margin: float, opponents: int | None = None) -> list[list[float]]:
    """Each group's rewards (win rates), with one call of `critic` for the whole step; the
    prescriptive guards of each group's rubrics override the critic where they apply
    (a guarded response loses to any that is not)."""
    _check_margin(tie_margin)
    index, comparisons = [], []
    for g, group in enumerate(groups):
        crit = tuple(rubrics_for(group.task, rubrics))
        for i, j in pairs_in_group(len(group.responses), opponents):
            index.append((g, i, j))
            comparisons.append(Comparison(group.prompt, group.responses[i], group.responses[j],
                                          crit, group.task))
    # No comparison at all (every group has one response): do not wake the engine.
    judgments = critic(comparisons) if comparisons else []
    if len(judgments) != len(comparisons):
        raise ValueError(f"{len(comparisons)} comparisons but {len(judgments)} judgments")
    violates = [[bool(violations(r, rubrics_for(g.task, rubrics))) for r in g.responses]
                for g in groups]
    prefs: list[dict[tuple[int, int], float]] = [{} for _ in groups]
    for (g, i, j), jd in zip(index, judgments):
        prefs[g][(i, j)] = guarded(jd.preference, violates[g][i], violates[g][j])
    return [group_win_rates(len(group.responses), p, tie_margin, opponents)
            for group, p in zip(groups, prefs)]
