"""Tests for the critic's evaluation on hand-made verdicts with known answers."""

from __future__ import annotations

import math

import pytest

from critic.evaluate import evaluate, evaluate_scorer, format_table
from critic.pairs import Pair
from critic.rubrics import Rubric

PAIRS = [Pair("q1", "a", "b", "chat", "short"), Pair("q2", "a", "b", "chat"),
         Pair("q3", "a", "b", "arithmetic"), Pair("q4", "a", "b")]
# chosen shown as A (p_ab) and as B (p_ba: P(A better), A = rejected):
#   q1: right both ways          -> combined 0.85, consistent
#   q2: always says A            -> combined 0.5 (tie), A/B right, B/A wrong
#   q3: wrong both ways          -> combined 0.2, consistent (on the wrong winner)
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
    assert r["by_rubric"]["short"] == {"n": 1, "accuracy": 1.0, "accuracy_ab": 1.0,
                                       "accuracy_ba": 1.0, "swap_consistency": 1.0, "tie_rate": 0.0}
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
    assert lines[0].split() == ["slice", "n", "acc", "acc", "A/B", "acc", "B/A", "swap", "ties"]
    assert lines[1].split() == ["all", "4", "50.0%", "75.0%", "25.0%", "50.0%", "25.0%"]
    assert any(line.startswith("task=arithmetic") for line in lines)
    assert any(line.startswith("rubric=short") for line in lines)


def test_evaluate_scorer_makes_one_batched_call() -> None:
    calls = []

    def score(texts: list[str]) -> list[tuple[float, float]]:
        calls.append(texts)
        # Right every time: the chosen text "good" is the one after " A: " in even texts.
        return [(0.0, -5.0) if " A: good " in t else (-5.0, 0.0) for t in texts]

    pairs = [Pair("q", "good", "bad"), Pair("r", "good", "worse", "chat")]
    r = evaluate_scorer(pairs, [Rubric("c", "core", "Clear.")], score, 0.05)
    assert len(calls) == 1 and len(calls[0]) == 4
    assert r["accuracy"] == r["swap_consistency"] == 1.0
