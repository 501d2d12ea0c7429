"""Verifiers for tasks whose answer is a single integer.

Each verifier is pure and batched: a list of model responses and a list of
expected answers in, one float reward in [0, 1] per response out. They import
only the standard library so the engine, the environments and offline
evaluation can all share them.

The integer scored is the value of the response's final answer as
``rewards.extract.final_answer`` reads it: a bare ``85``, ``\\boxed{85}``,
``#### 85``, "The answer is 85.", "7 + 78 = 85", "85 apples"; the working
before it is not scored, and a hedged or negated answer scores 0.
"""

from __future__ import annotations

import re

from rewards.extract import final_answer, has_table

# ASCII digits only: `\d` would also accept other scripts' digits, which the
# character-level models never see in a correct answer.
_INT = re.compile(r"-?[0-9]+")
# A value as the extractor reads it: an integer, with thousands separators or "x = " before it.
_STATED_INT = re.compile(r"(?:[A-Za-z]\s*=\s*)?(?:\\\$)?(-?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+))"
                         # a unit in text after it, as in \boxed{72 \text{ clips}}
                         r"(?:\s*\\(?:text|mathrm|mbox)\s*\{[^{}0-9]*\})?")


def parse_int(text: str) -> int | None:
    """The integer ``text`` states as its final answer, or None.

    Surrounding whitespace and one trailing period are tolerated; anything
    else (words, several numbers, signs other than a leading '-', other bases)
    means the response does not state an integer.

    >>> parse_int(" 85"), parse_int("85."), parse_int("-3")
    (85, 85, -3)
    >>> parse_int("85 apples"), parse_int("8 5"), parse_int(""), parse_int("0x55")
    (None, None, None, None)
    """
    stripped = text.strip()
    if stripped.endswith("."):
        stripped = stripped[:-1]
    if not _INT.fullmatch(stripped):
        return None
    try:
        return int(stripped)
    except ValueError:
        # Python refuses to convert strings of more than ~4300 digits; such a
        # response is not a plausible answer, so it earns nothing rather than
        # crashing a training step.
        return None


def read_int(response: str, fmt: str = "auto") -> int | None:
    """The integer ``response`` states as its final answer (``rewards.extract``), or None.

    >>> read_int("85"), read_int("47 + 38 = 85"), read_int("The answer is **85**.")
    (85, 85, 85)
    >>> read_int("x = -3"), read_int("1,000"), read_int("85 apples")
    (-3, 1000, 85)
    >>> read_int("\\\\boxed{85 \\\\text{ apples}}"), read_int("\\\\boxed{85 \\\\text{ or } 86}")
    (85, None)
    >>> read_int("85 86"), read_int("84 or 85"), read_int("0x55"), read_int("85..")
    (None, None, None, None)
    """
    found = final_answer(response, fmt) if isinstance(response, str) else None
    if found is None or not found.clear or found.value is None:
        return None
    stated = _STATED_INT.fullmatch(found.value)
    if stated is None:
        return None
    return parse_int(stated.group(1).replace(",", ""))


def exact_int(responses: list[str], answers: list[int], fmt: str = "auto") -> list[float]:
    """1.0 where the integer a response states as its final answer equals its answer.

    >>> exact_int(["85", "-12.", "8 5", "So 40 + 45 = \\\\boxed{85}"], [85, -12, 85, 85])
    [1.0, 1.0, 0.0, 1.0]
    """
    if len(responses) != len(answers):
        raise ValueError(
            f"exact_int got {len(responses)} responses but {len(answers)} answers"
        )
    return [
        1.0 if read_int(response, fmt) == gold_int(answer) else 0.0
        for response, answer in zip(responses, answers)
    ]


def gold_int(answer: int | str) -> int:
    """An answer key as an integer: an int, or a text stating one (a dataset's "29", "1,000");
    anything else is a caller error, not a 0 for every reply.

    >>> gold_int(29), gold_int(" -29 "), gold_int("1,000")
    (29, -29, 1000)
    """
    if isinstance(answer, bool):
        raise ValueError(f"exact_int's answer must be an integer, got {answer!r}")
    if isinstance(answer, int):
        return answer
    stated = _STATED_INT.fullmatch(str(answer).strip())
    if stated is None:
        raise ValueError(f"exact_int's answer must be an integer, got {answer!r}")
    return parse_int(stated.group(1).replace(",", ""))


def final_int(responses: list[str], answers: list[int], fmt: str = "auto") -> list[float]:
    """exact_int on what follows a response's last ``|``: worked answers such as
    ``"7+8=15|4+3+1=8|85"`` are scored on their final answer alone (the working is not
    checked; a bare answer counts too).

    >>> final_int(["7+8=15|4+3+1=8|85", "85", "7+8=15|85|84", "85|"], [85, 85, 85, 85])
    [1.0, 1.0, 0.0, 0.0]
    """
    return exact_int([_after_last_bar(response) for response in responses], answers, fmt)


def _after_last_bar(response: str) -> str:
    """What follows the last ``|`` of ``response`` (all of it if it has none, or if its bars are
    a markdown table's: "| Final answer | 85 |" is read as a reply, not as worked columns)."""
    if not isinstance(response, str) or has_table(response):
        return response
    return response.rpartition("|")[2]
