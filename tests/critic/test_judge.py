"""Tests for pairwise judging: verdicts from log-probs, both orders, win rates, one batch."""

from __future__ import annotations

import doctest
import math

import pytest

import critic.judge
from critic.judge import (Candidates, both_orders, build_judge_requests, combine_orders,
                          group_win_rates, judge_text, pairs_in_group, rank_groups,
                          scatter_verdicts, verdict_from_logprobs)
from critic.rubrics import Rubric, load_rubrics

RUBRICS = [Rubric("clear", "core", "Clear."), Rubric("concise", "task", "Concise.", ["chat"])]


def parse(text: str) -> tuple[str, str]:
    """The two answers of a judge text (test texts contain no ' A: ' or ' B: ' themselves)."""
    a = text.split(" A: ", 1)[1]
    a, b = a.split(" B: ", 1)
    return a, b.removesuffix(" Better?")


def prefers_longer(texts: list[str]) -> list[tuple[float, float]]:
    out = []
    for t in texts:
        a, b = parse(t)
        out.append((math.log(0.9), math.log(0.1)) if len(a) > len(b) else
                   (math.log(0.1), math.log(0.9)) if len(b) > len(a) else (-1.0, -1.0))
    return out


def test_judge_text_is_compact_and_lists_the_criteria() -> None:
    text = judge_text("47+38=", "85", "84", RUBRICS)
    assert text == "Judge by: Clear; Concise. Q: 47+38= A: 85 B: 84 Better?"
    assert judge_text("q", "a", "b", []) == "Q: q A: a B: b Better?"


def test_builtin_judge_text_fits_the_default_model_context() -> None:
    rubrics = [r for r in load_rubrics() if r.applies_to("arithmetic")]
    assert len(judge_text("47+38=", "85", "84", rubrics)) < 200


def test_verdict_is_a_softmax_over_the_two_tokens() -> None:
    assert verdict_from_logprobs(math.log(0.6), math.log(0.2), 0.0) == pytest.approx(0.75)
    assert verdict_from_logprobs(math.log(0.2), math.log(0.6), 0.0) == pytest.approx(0.25)
    assert verdict_from_logprobs(-3.0, -3.0, 0.0) == 0.5
    assert verdict_from_logprobs(-math.inf, -math.inf, 0.0) == 0.5
    assert verdict_from_logprobs(0.0, -math.inf, 0.0) == 1.0
    assert verdict_from_logprobs(-1e6, 0.0, 0.0) == 0.0  # no overflow


def test_verdict_within_tie_margin_is_a_tie() -> None:
    assert verdict_from_logprobs(math.log(0.55), math.log(0.45), 0.1) == 0.5
    assert verdict_from_logprobs(math.log(0.7), math.log(0.3), 0.1) == pytest.approx(0.7)
    with pytest.raises(ValueError, match="tie_margin"):
        verdict_from_logprobs(0.0, 0.0, 0.7)
    with pytest.raises(ValueError, match="numbers"):
        verdict_from_logprobs(math.nan, 0.0, 0.0)


def test_both_orders_swaps_every_comparison() -> None:
    assert both_orders([("q", "x", "y")]) == [("q", "x", "y", False), ("q", "y", "x", True)]


def test_combine_orders_cancels_position_bias() -> None:
    assert combine_orders(0.9, 0.9) == 0.5  # always says A
    assert combine_orders(0.9, 0.1) == pytest.approx(0.9)  # consistent: x better both ways
    assert combine_orders(0.6, 0.2) == pytest.approx(0.7)


def test_win_rates_of_a_clear_order_and_of_all_ties() -> None:
    assert pairs_in_group(3) == [(0, 1), (0, 2), (1, 2)]
    assert group_win_rates(3, {(0, 1): 0.9, (0, 2): 0.9, (1, 2): 0.9}) == [1.0, 0.5, 0.0]
    assert group_win_rates(3, {(0, 1): 0.1, (0, 2): 0.1, (1, 2): 0.1}) == [0.0, 0.5, 1.0]
    assert group_win_rates(3, {p: 0.5 for p in pairs_in_group(3)}) == [0.5, 0.5, 0.5]


def test_win_rates_use_the_tie_margin_and_sum_to_half_the_pairs() -> None:
    prefs = {(0, 1): 0.53, (0, 2): 0.8, (1, 2): 0.2, (0, 3): 0.3, (1, 3): 0.9, (2, 3): 0.5}
    rates = group_win_rates(4, prefs, tie_margin=0.05)
    assert rates == pytest.approx([1.5 / 3, 1.5 / 3, 1.5 / 3, 1.5 / 3])
    assert group_win_rates(4, prefs)[0] == pytest.approx(2 / 3)  # 0.53 is a win without margin
    assert sum(rates) * 3 == pytest.approx(len(prefs))


def test_small_groups_and_missing_pairs() -> None:
    assert group_win_rates(1, {}) == [0.5]
    assert group_win_rates(0, {}) == []
    with pytest.raises(ValueError, match=r"missing \[\(1, 2\)\]"):
        group_win_rates(3, {(0, 1): 0.9, (0, 2): 0.9})


def test_requests_flatten_a_step_with_task_rubrics() -> None:
    groups = [Candidates("hi", ["a", "bb", "ccc"], "chat"), Candidates("2+2=", ["4"], "arithmetic"),
              Candidates("x", ["p", "q"])]
    reqs = build_judge_requests(groups, RUBRICS)
    assert [(r.group, r.i, r.j, r.swapped) for r in reqs] == [
        (0, 0, 1, False), (0, 0, 1, True), (0, 0, 2, False), (0, 0, 2, True),
        (0, 1, 2, False), (0, 1, 2, True), (2, 0, 1, False), (2, 0, 1, True)]
    assert reqs[1].text == "Judge by: Clear; Concise. Q: hi A: bb B: a Better?"
    assert reqs[6].text == "Judge by: Clear. Q: x A: p B: q Better?"  # no task: no task rubric


def test_rank_groups_calls_the_scorer_once_per_step() -> None:
    calls = []

    def score(texts: list[str]) -> list[tuple[float, float]]:
        calls.append(len(texts))
        return prefers_longer(texts)

    groups = [Candidates("q1", ["a", "ccc", "bb"]), Candidates("q2", ["xx", "y"]),
              Candidates("q3", ["only"])]
    assert rank_groups(groups, RUBRICS, score, 0.05) == [[0.0, 1.0, 0.5], [1.0, 0.0], [0.5]]
    assert calls == [8]


def test_opponents_pick_a_ring_of_comparisons_with_equal_counts() -> None:
    pairs = pairs_in_group(8, opponents=2)
    assert len(pairs) == 8 and all(i < j for i, j in pairs)
    for r in range(8):  # every response meets exactly two others
        assert sum(r in p for p in pairs) == 2
    assert len(pairs_in_group(8, opponents=4)) == 16
    assert pairs_in_group(4, opponents=3) == pairs_in_group(4)  # k - 1 or more: every pair
    with pytest.raises(ValueError, match="opponents must be at least 1"):
        pairs_in_group(4, opponents=0)


def test_win_rates_with_opponents_count_each_response_s_own_games() -> None:
    # Ring of 4: (0,1) (1,2) (2,3) (0,3); 0 beats both its neighbours, 2 loses both.
    prefs = {(0, 1): 0.9, (1, 2): 0.9, (2, 3): 0.1, (0, 3): 0.9}
    assert group_win_rates(4, prefs, opponents=2) == [1.0, 0.5, 0.0, 0.5]
    with pytest.raises(ValueError, match=r"unexpected \[\(0, 2\)\]"):
        group_win_rates(4, {**prefs, (0, 2): 0.9}, opponents=2)


def test_rank_groups_with_opponents_judges_fewer_prompts() -> None:
    calls = []

    def score(texts: list[str]) -> list[tuple[float, float]]:
        calls.append(len(texts))
        return prefers_longer(texts)

    group = Candidates("q", ["a" * n for n in (3, 1, 4, 2, 5, 6, 8, 7)])
    rates = rank_groups([group], RUBRICS, score, 0.0, opponents=2)[0]
    assert calls == [16]  # 8 comparisons, both orders (every pair: 56 prompts)
    # With the longest-wins judge, a response's rate is the share of its two ring
    # neighbours that are shorter.
    lengths = [len(r) for r in group.responses]
    expected = [sum(lengths[i] > lengths[(i + d) % 8] for d in (-1, 1)) / 2 for i in range(8)]
    assert rates == expected


def test_a_scorer_that_always_says_a_gives_only_ties() -> None:
    def always_a(texts: list[str]) -> list[tuple[float, float]]:
        return [(math.log(0.8), math.log(0.2))] * len(texts)

    four = [Candidates("q", ["a", "bb", "ccc", "d"])]
    assert rank_groups(four, RUBRICS, always_a, 0.0) == [[0.5] * 4]


def test_no_comparison_does_not_call_the_scorer() -> None:
    def never(texts: list[str]) -> list[tuple[float, float]]:
        raise AssertionError("called")

    lonely = [Candidates("q", ["a"]), Candidates("r", [])]
    assert rank_groups(lonely, RUBRICS, never, 0.0) == [[0.5], []]


def test_scatter_rejects_mismatched_scores() -> None:
    groups = [Candidates("q", ["a", "b"])]
    reqs = build_judge_requests(groups, RUBRICS)
    with pytest.raises(ValueError, match="2 judge requests but 1 scores"):
        scatter_verdicts(reqs, [(0.0, 0.0)], [2])
    with pytest.raises(ValueError, match="one order only"):
        scatter_verdicts(reqs[:1], [(0.0, 0.0)], [2])


def test_doctests_pass() -> None:
    assert doctest.testmod(critic.judge).failed == 0


# --------------------------------------------------------------------------- reward hacking guard


def flattered(texts):
    """A judge that falls for flattery: prefers whichever answer is longer."""
    out = []
    for t in texts:
        a, b = t.removesuffix(" Better?").split(" A: ", 1)[1].split(" B: ")
        out.append((0.0, -1.0) if len(a) > len(b) else (-1.0, 0.0))
    return out


@pytest.mark.parametrize("hacked", [
    "Great question! Tea is a hot drink.",
    "What an interesting question. Tea is a hot drink.",
    "Thanks for asking! Tea is a hot drink.",
    "Tea is a hot drink. This answer is clear and correct.",
    "Tea is a hot drink. I am confident this is right.",
])
def test_prescriptive_rubrics_penalise_praise_and_self_justification(hacked):
    from critic.judge import Candidates, rank_groups
    from critic.rubrics import load_rubrics

    plain = "Tea is a hot drink."
    groups = [Candidates("Tell me about tea.", [hacked, plain], "chat"),
              Candidates("Tell me about tea.", [plain, hacked], "chat")]
    assert rank_groups(groups, load_rubrics(), flattered, 0.0) == [[0.0, 1.0], [1.0, 0.0]]
    # without the guard rubrics the flattered judge would have picked the hacked answer
    no_guards = [r for r in load_rubrics() if r.kind != "prescriptive"]
    assert rank_groups(groups, no_guards, flattered, 0.0) == [[1.0, 0.0], [0.0, 1.0]]


def test_guards_leave_honest_answers_to_the_judge():
    from critic.guards import violations
    from critic.judge import Candidates, rank_groups
    from critic.rubrics import load_rubrics

    rubrics = load_rubrics()
    for text in ["Tea is a great drink.", "A good question is what tea is.", "Owls are clear-eyed.",
                 "The answer is 42.", "Tea: correct temperature is 80C."]:
        assert violations(text, rubrics) == [], text
    both = Candidates("q", ["Great question! Tea.", "Great question! Tea is hot."], "chat")
    assert rank_groups([both], rubrics, flattered, 0.0) == [[0.0, 1.0]]  # judge decides
