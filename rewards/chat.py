"""Reference check of an open-ended chat reply (for reporting; the critic gives the reward)."""

from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def _guards():
    from critic.rubrics import load_rubrics

    return [r for r in load_rubrics() if r.kind == "prescriptive" and r.patterns]


def chat_reference(responses: list[str], facts: list[str]) -> list[float]:
    """1.0 where the reply states the fact and breaks no prescriptive guard, else 0.0.

    >>> chat_reference(["Tea is a hot drink.", "Great question! Tea is a hot drink.", "Tea."],
    ...                ["Tea is a hot drink."] * 3)
    [1.0, 0.0, 0.0]
    """
    out = []
    for response, fact in zip(responses, facts):
        clean = not any(g.violated_by(response) for g in _guards())
        out.append(float(clean and fact.lower() in response.lower()))
    return out
