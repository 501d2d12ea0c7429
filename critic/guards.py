"""Hard guards from prescriptive rubrics against reward hacking (K2 sec. 3.2.2).

A learned critic can be flattered: an answer that opens by praising the question, or that
vouches for its own quality, may win comparisons it should not. A prescriptive rubric with
`patterns` turns that rule into a check: in every comparison, a response that violates such a
rubric loses to one that does not, whatever the critic's verdict; when both or neither
violate, the critic decides.
"""
from __future__ import annotations

from critic.rubrics import Rubric


def violations(response: str, rubrics: list[Rubric]) -> list[str]:
    """Names of the prescriptive rubrics `response` violates."""
    return [r.name for r in rubrics if r.kind == "prescriptive" and r.violated_by(response)]


def guarded(pref: float, x_violates: bool, y_violates: bool) -> float:
    """P(x better than y) after the guards: 0 or 1 when exactly one side violates.

    >>> guarded(0.9, True, False), guarded(0.2, False, True), guarded(0.7, True, True)
    (0.0, 1.0, 0.7)
    """
    if x_violates == y_violates:
        return pref
    return 0.0 if x_violates else 1.0
