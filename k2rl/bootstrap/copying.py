"""Copying drills for the default model's warm-start: replies that repeat the user's made-up words.

A critic's check line copies what it checks: an instruction reply's words, listed and numbered, a
chat reply's fact beside its own, an answer's digits. The 3.4 M-parameter default, warm-started on
demonstrations alone, never learns to copy a word it has not seen before: given a reply of made-up
words it lists topic words it remembers (bench/archive/notebook.md, "Why the checks fail"), and it
copies none of 100 strings of random letters, teacher-forced. Random letters can only be copied,
never recalled, so a share of these drills in the warm-start makes it grow the attention that copies
(an induction head: find where the current character stood in the source, write the one after it).
The checks also compare two strings a character at a time (`side_by_side`: an answer's digits
against its own, a chat reply against the fact it knows), and teacher-forced the default marks "55"
as different and "42" as the same (bench/archive/notebook.md), so the fourth form is that
comparison, of made-up words or numbers, equal half the time. Each drill is short:

    user: Repeat: kqe Zuvb ot         assistant: kqe Zuvb ot
    user: List the words: kqe Zuvb    assistant: 1 kqe 2 Zuvb; 2 words  (as a critic lists a reply)
    user: Say it back. Zuvb ot        assistant: Zuvb ot
    user: Compare: Zuvb / Zub         assistant: ZZ=uu=vb!: no       (as a critic checks)
"""
from __future__ import annotations

import string

import numpy as np
import torch

from envs.base import check_line, side_by_side
from k2rl.lm.chat import conversation_ids

LETTERS = string.ascii_lowercase


def made_up_words(rng: np.random.Generator, most: int = 6) -> list[str]:
    """2 to `most` words of 2-6 random letters, about a third capitalised (as chat's facts are).

    >>> len(made_up_words(np.random.default_rng(0))) in range(2, 7)
    True
    """
    words = ["".join(rng.choice(list(LETTERS), int(rng.integers(2, 7))))
             for _ in range(int(rng.integers(2, most + 1)))]
    return [w.capitalize() if rng.random() < 0.3 else w for w in words]


def near_copy(text: str, rng: np.random.Generator) -> str:
    """`text` itself half the time, else with one character changed, dropped or added.

    >>> near_copy("abc", np.random.default_rng(1)) != "abc"
    True
    """
    if rng.random() < 0.5:
        return text
    alphabet = "0123456789" if text.isdigit() else LETTERS
    i = int(rng.integers(len(text) + 1))
    edit = int(rng.integers(3)) if i < len(text) else 2  # 0 change, 1 drop, 2 add
    edit = 0 if edit == 1 and len(text) == 1 else edit  # never empty
    new = str(rng.choice([c for c in alphabet if c != text[i:i + 1]]))
    return text[:i] + ("" if edit == 1 else new) + text[i + (edit != 2):]


def comparison_messages(rng: np.random.Generator) -> list[dict]:
    """A made-up word or a number against a near copy, checked as the critic checks."""
    first = (str(int(rng.integers(0, 10 ** int(rng.integers(1, 5))))) if rng.random() < 0.5
             else made_up_words(rng, 2)[0])
    second = near_copy(first, rng)
    return [{"role": "user", "content": f"Compare: {first} / {second}"},
            {"role": "assistant", "content": check_line(side_by_side(first, second), first == second)}]


def drill_messages(rng: np.random.Generator) -> list[dict]:
    """One copying drill as chat messages (the four forms above, equally often)."""
    form = int(rng.integers(4))
    if form == 3:
        return comparison_messages(rng)
    words = made_up_words(rng)
    text = " ".join(words)
    if form == 1:
        listed = " ".join(f"{i} {w}" for i, w in enumerate(words, 1))
        return [{"role": "user", "content": f"List the words: {text}"},
                {"role": "assistant", "content": f"{listed}; {len(words)} words"}]
    ask = "Repeat:" if form == 0 else "Say it back."
    return [{"role": "user", "content": f"{ask} {text}"}, {"role": "assistant", "content": text}]


def copy_drill(tokenizer, rng: np.random.Generator) -> tuple[list[int], list[int]]:
    """(ids, mask) of one drill, laid out as a demonstration is, the loss on the reply."""
    return conversation_ids(tokenizer, drill_messages(rng))


def copies(model, tokenizer, n: int = 100, seed: int = 7, drill=copy_drill) -> float:
    """Share of `n` drills (`drill(tokenizer, rng) -> (ids, mask)`) whose whole reply (and its
    turn end) is the model's greedy choice at every token, teacher-forced: what greedy decoding
    would copy exactly."""
    rng = np.random.default_rng(seed)
    right = 0
    for _ in range(n):
        ids, mask = drill(tokenizer, rng)
        with torch.no_grad():
            greedy = model(torch.tensor([ids])).logits[0].argmax(-1).tolist()
        right += all(greedy[i - 1] == ids[i] for i in range(1, len(ids)) if mask[i])
    return right / n
