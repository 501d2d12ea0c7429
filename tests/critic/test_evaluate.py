"""Tests for the critic's evaluation on hand-made verdicts with known answers."""

from __future__ import annotations

import math

import pytest

from critic.compare import Judgment
from critic.evaluate import brier, ece, evaluate, evaluate_critic, format_judgments, format_table
from critic.pairs import Pair
from critic.rubrics import Rubric

PAIRS = [Pair("q1", "a", "b", "chat", "short"), Pair("q2", "a", "b", "chat"),
         Pair("q3", "a", "b", "arithmetic"), Pair("q4", "a", "b")]
# chosen shown as A (p_ab) and as B (p_ba: P(A better), A = rejected):
#   q1: right both ways          -> combined 0.85, consistent
#   q2: always says A            -> combined 0.5 (tie), A/B right, B/A wrong
#   q3: wrong both ways          -> combined 0.3, consistent (on the wrong winner)
#   q4: weakly right, then tie   -> combined 0.56 (right at margin 0.05), not consistent
P_AB = [0.9, 0.8, 0.3, 0.62]
P_BA = [0.2, 0.8, 0.7, 0.5]


def test_metrics_on_known_verdicts() -> None:
    r = evaluate(PAIRS, P_AB, P_BA, tie_margin=0.05)
    assert r["n"] == 4
    assert r["accuracy"] == 0.5  # q1, q4
    assert r["accuracy_ab"] == 0.75  # q1, q2, q4
    assert r["accuracy_ba"] == 0.25  # q1
    assert r["swap_consistency"] == 0.5  # q1, q3
    assert r["tie_rate"] == 0.25  # q2


def test_breakdowns_by_task_and_rubric() -> None:
    r = evaluate(PAIRS, P_AB, P_BA, tie_margin=0.05)
    assert set(r["by_task"]) == {"chat", "arithmetic", "(none)"}
    assert r["by_task"]["chat"]["n"] == 2 and r["by_task"]["chat"]["accuracy"] == 0.5
    assert r["by_task"]["arithmetic"]["accuracy"] == 0.0
    short = r["by_rubric"]["short"]
    assert {k: short[k] for k in ("n", "accuracy", "accuracy_ab", "accuracy_ba",
                                  "swap_consistency", "tie_rate")} == {
        "n": 1, "accuracy": 1.0, "accuracy_ab": 1.0, "accuracy_ba": 1.0,
        "swap_consistency": 1.0, "tie_rate": 0.0}
    assert r["by_rubric"]["(all)"]["n"] == 3


def test_a_larger_tie_margin_turns_weak_wins_into_ties() -> None:
    r = evaluate(PAIRS, P_AB, P_BA, tie_margin=0.1)
    assert r["accuracy"] == 0.25 and r["tie_rate"] == 0.5


def test_bad_inputs_are_errors() -> None:
    with pytest.raises(ValueError, match="no pairs"):
        evaluate([], [], [], 0.0)
    with pytest.raises(ValueError, match="4 pairs but 3"):
        evaluate(PAIRS, P_AB[:3], P_BA, 0.0)
    with pytest.raises(ValueError, match="probabilities"):
        evaluate(PAIRS, [math.nan] + P_AB[1:], P_BA, 0.0)


def test_format_table_has_a_row_per_slice() -> None:
    table = format_table(evaluate(PAIRS, P_AB, P_BA, tie_margin=0.05))
    lines = table.splitlines()
    assert lines[0].split() == ["slice", "n", "acc", "acc", "A/B", "acc", "B/A", "consist.",
                                "ties", "brier", "ece"]
    assert lines[1].split()[:7] == ["all", "4", "50.0%", "75.0%", "25.0%", "50.0%", "25.0%"]
    assert any(line.startswith("task=arithmetic") for line in lines)
    assert any(line.startswith("rubric=short") for line in lines)


def test_calibration_columns_on_known_verdicts() -> None:
    r = evaluate(PAIRS, P_AB, P_BA, tie_margin=0.05)
    p = [0.85, 0.5, 0.3, 0.56]  # combined P(chosen better) of q1..q4
    assert r["brier"] == pytest.approx(sum((1 - x) ** 2 for x in p) / 4)
    assert r["ece"] == pytest.approx(ece(p))
    # A critic that is always sure and always right is perfectly calibrated; always sure and
    # always wrong is the worst there is; an unsure critic has Brier 0.25.
    assert brier([1.0, 1.0]) == 0.0 and ece([1.0, 1.0]) == 0.0
    assert brier([0.0]) == 1.0 and ece([0.0]) == 1.0
    assert brier([0.5, 0.5]) == 0.25
    # 80% sure and right 4 times of 5: calibrated; right 2 times of 5: off by 0.4
    assert ece([0.8] * 4 + [0.2]) == pytest.approx(0.0)
    assert ece([0.8] * 2 + [0.2] * 3) == pytest.approx(0.4)


def test_evaluate_critic_makes_one_batched_call_and_keeps_the_judgments() -> None:
    calls = []

    def critic(comparisons):
        calls.append(comparisons)
        # Right every time: prefers the answer "good", whichever order it is shown in.
        return [Judgment(0.9 if c.first == "good" else 0.1, 0.1 if c.first == "good" else 0.9,
                         "mine", (f"{c.first}: yes", f"{c.second}: no")) for c in comparisons]

    pairs = [Pair("q", "good", "bad"), Pair("r", "good", "worse", "chat")]
    r, judgments = evaluate_critic(pairs, [Rubric("c", "core", "Clear.")], critic, 0.05)
    assert len(calls) == 1 and len(calls[0]) == 2
    assert [c.rubrics[0].name for c in calls[0]] == ["c", "c"]
    assert r["accuracy"] == r["swap_consistency"] == 1.0
    shown = format_judgments(pairs, judgments, 1)
    assert "critic's own answer: mine" in shown and "check:  good: yes" in shown
    assert "[2]" not in shown  # only the first judgment


def test_shown_judgments_take_a_task_at_a_time() -> None:
    """`--show 3` over pairs grouped by task shows one of each family, not three of the first."""
    pairs = [Pair(f"a{i}", "good", "bad", "arithmetic") for i in range(5)]
    pairs += [Pair("c0", "good", "bad", "chat"), Pair("t0", "good", "bad", "tool_use")]
    judgments = [Judgment(0.9, 0.1, "mine", ("yes", "no")) for _ in pairs]
    shown = format_judgments(pairs, judgments, 3)
    assert [line.split()[1] for line in shown.splitlines() if line.startswith("[")] == [
        "task=arithmetic", "task=chat", "task=tool_use"]
    assert "question: a0" in shown and "question: a1" not in shown
    assert format_judgments(pairs, judgments, 4).count("task=arithmetic") == 2
    assert format_judgments(pairs, judgments, 99).count("\n[") == len(pairs) - 1


def test_chat_layout_judgments_have_no_check_findings():
    from critic.compare import Judgment
    from critic.evaluate import evaluate_critic, format_judgments, format_table
    from critic.pairs import Pair

    pairs = [Pair("2+2=", "4", "5", "arithmetic")] * 2

    def critic(comparisons):
        return [Judgment(0.8, 0.3, "", ("4 is right. ", "5 is wrong."), (c.first, c.second),
                         layout="chat") for c in comparisons]

    result, judgments = evaluate_critic(pairs, [], critic, 0.0)
    assert result["accuracy"] == 1.0 and "checks" not in result
    assert "checks:" not in format_table(result)
    shown = format_judgments(pairs, judgments, 1)
    assert "critic, chosen shown as A:   4 is right." in shown and "own answer" not in shown
