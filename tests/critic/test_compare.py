"""Tests for pairwise judging: verdicts from log-probs, both orders, win rates, one batch,
the critic's conversation (critic.layout)."""

from __future__ import annotations

import doctest
import importlib
import math

import pytest

import critic.compare
import critic.layout
from critic.compare import (Candidates, Judgment, combine_orders, group_win_rates, pairs_in_group,
                            rank_groups, verdict_from_logprobs)
from critic.layout import (CRITIC, check_messages, example_messages, finding,
                           first_answer_text, solve_messages, verdict_messages)
from critic.rubrics import Rubric, load_rubrics

RUBRICS = [Rubric("clear", "core", "Clear."), Rubric("concise", "task", "Concise.", ["chat"])]


def critic_by(p_a_better, calls: list | None = None):
    """A critic whose P(A better) for `x` shown as A against `y` is p_a_better(x, y)."""
    def fake(comparisons):
        if calls is not None:
            calls.append(comparisons)
        return [Judgment(p_a_better(c.first, c.second), p_a_better(c.second, c.first))
                for c in comparisons]
    return fake


def longer(a: str, b: str) -> float:
    return 0.9 if len(a) > len(b) else 0.1 if len(b) > len(a) else 0.5


def test_the_critic_answers_the_question_itself_before_the_answers() -> None:
    assert first_answer_text("85", RUBRICS) == "Judge by: Clear; Concise. Answer: 85"
    assert first_answer_text("85", []) == "Answer: 85"
    # its own answer follows exactly the policy's prompt, in the policy's (assistant's) role
    assert solve_messages("47+38=") == [{"role": "user", "content": "47+38="}]
    check = check_messages("q", [], "mine", "x")
    assert [m["role"] for m in check] == ["user", "assistant", "user"]
    assert [m["content"] for m in check] == ["q", "mine", "Answer: x"]
    verdict = verdict_messages("q", [], "mine", "x", "cx", "y", "cy")
    # the check of the first answer is laid out exactly where it was written
    assert verdict[:3] == check and [m["content"] for m in verdict[3:]] == [
        "cx", "Answer: y", "cy", critic.layout.ASK]
    assert [m["role"] for m in verdict[3:]] == [CRITIC, "user", CRITIC, "user"]
    assert example_messages("q", [], "mine", "x", "cx", "y", "cy", "B")[-1] == {
        "role": CRITIC, "content": "B"}
    with pytest.raises(ValueError, match="verdict"):
        example_messages("q", [], "mine", "x", "cx", "y", "cy", "C")


def test_a_check_line_s_finding_is_its_last_word() -> None:
    assert [finding(c) for c in ("85 vs 85: yes", "84 vs 85: no", "tool 12, said 12: yes",
                                 "3 words yes, has 'fig' no: no", "84 vs 85", "", "x: maybe")
            ] == [True, False, True, False, None, None, None]


def test_builtin_rubrics_leave_room_in_the_default_model_context() -> None:
    rubrics = [r for r in load_rubrics() if r.applies_to("instructions")]
    assert len(first_answer_text("fig plum", rubrics)) < 240


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


def test_rank_groups_judges_a_step_in_one_call_with_task_rubrics() -> None:
    calls = []
    groups = [Candidates("q1", ["a", "ccc", "bb"], "chat"), Candidates("q2", ["xx", "y"]),
              Candidates("q3", ["only"])]
    assert rank_groups(groups, RUBRICS, critic_by(longer, calls), 0.05) == [
        [0.0, 1.0, 0.5], [1.0, 0.0], [0.5]]
    assert len(calls) == 1 and [(c.prompt, c.first, c.second) for c in calls[0]] == [
        ("q1", "a", "ccc"), ("q1", "a", "bb"), ("q1", "ccc", "bb"), ("q2", "xx", "y")]
    assert [r.name for r in calls[0][0].rubrics] == ["clear", "concise"]
    assert [r.name for r in calls[0][3].rubrics] == ["clear"]  # no task: no task rubric


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


def test_rank_groups_with_opponents_judges_fewer_pairs() -> None:
    calls = []
    group = Candidates("q", ["a" * n for n in (3, 1, 4, 2, 5, 6, 8, 7)])
    rates = rank_groups([group], RUBRICS, critic_by(longer, calls), 0.0, opponents=2)[0]
    assert len(calls[0]) == 8  # 8 comparisons, each in both orders (every pair: 28)
    # With the longest-wins critic, a response's rate is the share of its two ring
    # neighbours that are shorter.
    lengths = [len(r) for r in group.responses]
    expected = [sum(lengths[i] > lengths[(i + d) % 8] for d in (-1, 1)) / 2 for i in range(8)]
    assert rates == expected


def test_a_critic_that_always_says_a_gives_only_ties() -> None:
    four = [Candidates("q", ["a", "bb", "ccc", "d"])]
    assert rank_groups(four, RUBRICS, critic_by(lambda a, b: 0.8), 0.0) == [[0.5] * 4]


def test_no_comparison_does_not_call_the_critic() -> None:
    def never(comparisons):
        raise AssertionError("called")

    lonely = [Candidates("q", ["a"]), Candidates("r", [])]
    assert rank_groups(lonely, RUBRICS, never, 0.0) == [[0.5], []]


def test_rank_groups_rejects_a_critic_that_loses_comparisons() -> None:
    with pytest.raises(ValueError, match="1 comparisons but 0 judgments"):
        rank_groups([Candidates("q", ["a", "b"])], RUBRICS, lambda cs: [], 0.0)


def test_doctests_pass() -> None:
    assert doctest.testmod(critic.compare).failed == 0
    assert doctest.testmod(critic.layout).failed == 0
    assert doctest.testmod(importlib.import_module("critic.evaluate")).failed == 0


# --------------------------------------------------------------------------- reward hacking guard


# A critic that falls for flattery: prefers whichever answer is longer.
flattered = critic_by(lambda a, b: 0.73 if len(a) > len(b) else 0.27)


@pytest.mark.parametrize("hacked", [
    "Great question! Tea is a hot drink.",
    "What an interesting question. Tea is a hot drink.",
    "Thanks for asking! Tea is a hot drink.",
    "Tea is a hot drink. This answer is clear and correct.",
    "Tea is a hot drink. I am confident this is right.",
])
def test_prescriptive_rubrics_penalise_praise_and_self_justification(hacked):
    from critic.compare import Candidates, rank_groups
    from critic.rubrics import load_rubrics

    plain = "Tea is a hot drink."
    groups = [Candidates("Tell me about tea.", [hacked, plain], "chat"),
              Candidates("Tell me about tea.", [plain, hacked], "chat")]
    assert rank_groups(groups, load_rubrics(), flattered, 0.0) == [[0.0, 1.0], [1.0, 0.0]]
    # without the guard rubrics the flattered critic would have picked the hacked answer
    no_guards = [r for r in load_rubrics() if r.kind != "prescriptive"]
    assert rank_groups(groups, no_guards, flattered, 0.0) == [[1.0, 0.0], [0.0, 1.0]]


def test_guards_leave_honest_answers_to_the_critic():
    from critic.compare import Candidates, rank_groups
    from critic.guards import violations
    from critic.rubrics import load_rubrics

    rubrics = load_rubrics()
    for text in ["Tea is a great drink.", "A good question is what tea is.", "Owls are clear-eyed.",
                 "The answer is 42.", "Tea: correct temperature is 80C."]:
        assert violations(text, rubrics) == [], text
    both = Candidates("q", ["Great question! Tea.", "Great question! Tea is hot."], "chat")
    assert rank_groups([both], rubrics, flattered, 0.0) == [[0.0, 1.0]]  # the critic decides
