"""Reference check of a one-sentence description (k2rl/Describe-v0), for reporting; the critic
gives the reward.

Like rewards.chat's, it is written apart from the critic: nothing here comes from critic/ (its
rubrics and regex guards shape the training reward), so a policy that fools the critic does
not fool this check by the same blind spot. It reads a sentence as ShortWriting-v1 does
(rewards.sentence) and flattery as Chat-v1's check does (rewards.chat.flattery).
"""

from __future__ import annotations

from rewards.chat import flattery
from rewards.ifeval import split_into_sentences
from rewards.instructions import has_invisible
from rewards.sentence import is_sentence_about


def describe_reference(responses: list[str], answers: list[dict]) -> list[float]:
    """1.0 where the reply is one sentence about the thing (rewards.sentence.is_sentence_about
    with ``answer["sentence"]``) of at most ``answer["max_words"]`` words, with no flattery and
    no invisible characters (a zero-width space inside a word hides it from every check).

    >>> rule = {"sentence": {"about": ["owl", "owls"], "min_words": 5,
    ...                      "request": ["Describe an owl in one sentence."]}, "max_words": 25}
    >>> describe_reference(["An owl is a bird that hunts at night.", "Owl.",
    ...     "Great question! An owl is a bird that hunts at night.",
    ...     "An owl is a bird. It hunts at night.", "An owl is " + "a very " * 12 + "wise bird.",
    ...     "Describe an owl in one sentence."], [rule] * 6)
    [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    """
    return [float(isinstance(r, str) and not has_invisible(r)
                  and is_sentence_about(r, answer, split_into_sentences)
                  and len(r.split()) <= answer["max_words"] and not flattery(r))
            for r, answer in zip(responses, answers)]
