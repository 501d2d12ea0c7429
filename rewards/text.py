"""Verifiers for datasets whose answer is a short text or a choice letter.

Pure and batched like every verifier: responses and expected answers in, one reward in [0, 1]
per response out. Both read the response's final answer (``rewards.extract.final_answer``, in
the answer format ``fmt``):
"Answer: Paris", ``**Paris**``, ``\\boxed{B}``, ``<answer>B</answer>``, "The correct answer is
(B).", or the last line; a hedged or negated answer scores 0.
"""
from __future__ import annotations

import re
import unicodedata

from rewards.extract import Extracted, final_answer

# An option as a reply states it: "B", "(B)", "B.", "B)", "Option B", "B. Paris", "(B) Paris".
_CHOICE = re.compile(r"(?:(?:option|choice)\s+)?(?:\(([A-Z])\)(?:\s*[.:—–-]?\s+\S.*)?"
                     r"|([A-Z])(?:(?:[.:)]|\s+[—–-])\s+\S.*|[.:)])?)",
                     re.IGNORECASE | re.DOTALL)
# An option named last in a sentence: "I'd go with B.", "..., so (B)."
_LAST_OPTION = re.compile(r"(?:^|\s)\(?([A-H])\)?[.!]?$")
# Another option named in the text after the chosen one: "A. London, B. Paris".
_ANOTHER_OPTION = re.compile(r"\([A-Z]\)|(?<![A-Za-z])[A-Z][.)](?:\s|$)")
# A sentence that ends with its answer: "The capital of France is Paris.", "That would be Paris."
_COPULA = r"(?:.*\s)?(?:is|are|was|were|(?:would|should|must|will)\s+be)\s+|(?:.*\s)?\w+'s\s+"
# Emphasis and quotes inside a sentence: "The capital is **Paris**."
_EMPHASIS = re.compile(r"\*\*|__|`|[\"“”]")
# A remark in brackets after the answer.
_REMARK = re.compile(r"\s+\([^()]*\)$")
# A sentence that starts with it: "Paris is the capital of France.", "B is correct."
_PREDICATE = r"\s+(?:is|are|was|were)\s+(?P<predicate>.+)"
_DENIAL = re.compile(r"\b(?:not|never|no|wrong|incorrect|false)\b|n't\b")


def normalise(text: str) -> str:
    """Case-, width- and whitespace-insensitive form of a short answer, one trailing period off.

    >>> normalise("  Paris. "), normalise("ＰＡＲＩＳ"), normalise("New   York")
    ('paris', 'paris', 'new york')
    """
    text = unicodedata.normalize("NFKC", text).strip().removesuffix(".").strip()
    return " ".join(text.casefold().split())


def _answer(response: str, fmt: str) -> Extracted | None:
    """The response's final answer if it commits to one."""
    found = final_answer(response, fmt) if isinstance(response, str) else None
    return found if found is not None and found.clear else None


def states(text: str, answer: str) -> bool:
    """Whether ``text`` is ``answer``, or a sentence ending "is ``answer``" (up to case, width
    and spacing).

    >>> states("Paris", "paris"), states("The capital of France is Paris", "Paris")
    (True, True)
    >>> states("Paris is the capital of France", "Paris"), states("Paris is not it", "Paris")
    (True, False)
    >>> states("It is not Paris", "Paris"), states("Paris Paris", "Paris"), states("", "")
    (False, False, False)
    """
    text, answer = normalise(_EMPHASIS.sub("", text)), normalise(answer)
    if not answer:
        return False
    text = _REMARK.sub("", text)  # "Jupiter (the fifth planet)"
    if text == answer or re.fullmatch(f"(?:{_COPULA}){re.escape(answer)}", text):
        return True
    subject_first = re.fullmatch(f"{re.escape(answer)}{_PREDICATE}", text)
    return subject_first is not None and not _DENIAL.search(subject_first.group("predicate"))


def exact_match(responses: list[str], answers: list, fmt: str = "auto") -> list[float]:
    """1 when the response's final answer is the answer, up to case, width and spacing.

    >>> exact_match(["Paris", "paris.", "Answer: **Paris**", "Paris or London"], ["Paris"] * 4)
    [1.0, 1.0, 1.0, 0.0]
    """
    out = []
    for response, answer in zip(responses, answers):
        found = _answer(response, fmt)
        out.append(float(found is not None and states(found.text, str(answer))))
    return out


def chosen_option(text: str) -> str | None:
    """The one option letter ``text`` states, upper-cased, or None.

    >>> [chosen_option(t) for t in ["B", "(b)", "B.", "Option B", "B. Paris", "(B) Paris"]]
    ['B', 'B', 'B', 'B', 'B', 'B']
    >>> [chosen_option(t) for t in ["A B", "(A)(B)", "A. London, B. Paris", "all of them"]]
    [None, None, None, None]
    """
    match = _CHOICE.fullmatch(text.strip())
    if match is None:
        return None
    letter = match.group(1) or match.group(2)
    rest = text.strip()[match.end(1) if match.group(1) else match.end(2):]
    return None if _ANOTHER_OPTION.search(rest) else letter.upper()


def multiple_choice(responses: list[str], answers: list, fmt: str = "auto") -> list[float]:
    """1 when the response's final answer is the right option: "B", "(B)", "The answer is
    (B).", ``\\boxed{B}``, ``**B**``, "B. Paris".

    A response naming several letters, or hedging between them, scores 0, so listing every
    option cannot win.

    >>> multiple_choice(["B", "(b)", "B.", "A or B", "The answer is B"], ["B"] * 5)
    [1.0, 1.0, 1.0, 0.0, 1.0]
    """
    out = []
    for response, answer in zip(responses, answers):
        found = _answer(response, fmt)
        letter = chosen_option(found.text) if found is not None else None
        if letter is None and found is not None:  # "B is correct.", "I'd go with B."
            letter = _subject_option(found.text) or _last_option(found.text)
        out.append(float(letter is not None and letter == str(answer).strip().upper()))
    return out


def _last_option(text: str) -> str | None:
    """The option letter that ends a sentence naming no other option, or None.

    >>> _last_option("I'd go with B."), _last_option("Paris is in France, so (B)")
    ('B', 'B')
    >>> _last_option("Not A but B"), _last_option("I think so")
    (None, None)
    """
    found = _LAST_OPTION.search(text.strip())
    if found is None:
        return None
    before = text.strip()[:found.start()]
    if _ANOTHER_OPTION.search(before) or re.search(r"(?<![A-Za-z'])[A-H](?![A-Za-z'])", before):
        return None
    return found.group(1)


def _subject_option(text: str) -> str | None:
    """The option a sentence like "B is correct" or "(B) is the right answer" names, or None."""
    said = re.fullmatch(r"(?:option\s+)?\(?([A-Z])\)?\s+is\s+(?:the\s+)?(?:correct|right)\b.*",
                        normalise(text).upper(), re.IGNORECASE)
    return said.group(1).upper() if said and not _DENIAL.search(said.group(0).lower()) else None
