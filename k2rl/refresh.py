"""Closed-loop critic refresh (K2 sec. 3.2.2): verifiable outcomes become the critic's labels.

Groups from verifiable tasks with mixed outcomes yield labelled pairs (a correct response beats
an incorrect one, critic.pairs.pairs_from_group). Pairs go to Redis in a train or held-out split
decided by a hash of the prompt, so the two never share a prompt. Every update trains the
judging skill on a sample of train pairs (both orders, reply "A" or "B"), and every evaluation
measures it on held-out pairs. A multi-turn response is shown to the judge as its turns joined
by " | " (tool calls and observations included), so the judge can see how an answer was reached.
"""
from __future__ import annotations

import numpy as np

from critic.pairs import Pair, judge_examples, pairs_from_group, split_of_pair
from critic.rubrics import load_rubrics


def response_text(traj: dict) -> str:
    return " | ".join(m["content"] for m in traj["messages"][1:])


def harvest(trajs: list[dict], k: int) -> list[Pair]:
    """Labelled pairs from every group of k with mixed outcomes."""
    pairs = []
    for g in range(0, len(trajs), k):
        group = trajs[g:g + k]
        if any(t.get("judged") for t in group):
            continue  # critic-rewarded: `correct` there is a reference check, not a verifier
        correct = [bool(t["correct"]) for t in group]
        if any(correct) and not all(correct):
            pairs += pairs_from_group(group[0]["messages"][0]["content"],
                                      [response_text(t) for t in group], correct, group[0]["task"])
    return pairs


def store_pairs(store, pairs: list[Pair]) -> dict[str, int]:
    counts = {}
    for split in ("train", "heldout"):
        rows = [p.to_json() for p in pairs if split_of_pair(p) == split]
        if rows:
            store.add_pairs(split, rows)
        counts[split] = len(rows)
    return counts


def training_examples(store, n: int, rng: np.random.Generator) -> list[dict]:
    """Judge examples (both orders) from n train pairs drawn at random."""
    rows = store.pairs("train")
    if not rows:
        return []
    picks = rng.choice(len(rows), size=min(n, len(rows)), replace=False)
    return judge_examples([Pair(**rows[i]) for i in picks], load_rubrics())


def heldout_pairs(store, n: int) -> list[dict]:
    return store.pairs("heldout")[:n]
