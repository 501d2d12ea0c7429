"""Verifiers for datasets whose answer is a short text or a choice letter.

Pure and batched like every verifier: responses and expected answers in, one reward in [0, 1]
per response out.
"""
from __future__ import annotations

import re
import unicodedata

_CHOICE = re.compile(r"^\(?([A-Z])\)?[.:)]?$")


def normalise(text: str) -> str:
    """Case-, width- and whitespace-insensitive form of a short answer, one trailing period off.

    >>> normalise("  Paris. "), normalise("ＰＡＲＩＳ"), normalise("New   York")
    ('paris', 'paris', 'new york')
    """
    text = unicodedata.normalize("NFKC", text).strip().removesuffix(".").strip()
    return " ".join(text.casefold().split())


def exact_match(responses: list[str], answers: list) -> list[float]:
    """1 when the whole response is the answer, up to case, width and spacing.

    >>> exact_match(["Paris", "paris.", "It is Paris"], ["Paris"] * 3)
    [1.0, 1.0, 0.0]
    """
    return [float(normalise(r) == normalise(str(a))) for r, a in zip(responses, answers)]


def multiple_choice(responses: list[str], answers: list) -> list[float]:
    """1 when the response is exactly the right option letter: "B", "(B)", "B." or "B)".

    A response naming several letters, or a letter inside a sentence, scores 0, so listing
    every option cannot win.

    >>> multiple_choice(["B", "(b)", "B.", "A or B", "The answer is B"], ["B"] * 5)
    [1.0, 1.0, 1.0, 0.0, 0.0]
    """
    out = []
    for r, a in zip(responses, answers):
        match = _CHOICE.match(r.strip().upper())
        out.append(float(match is not None and match.group(1) == str(a).strip().upper()))
    return out
