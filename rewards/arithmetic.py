"""Verifiers for tasks whose answer is a single integer.

Each verifier is pure and batched: a list of model responses and a list of
expected answers in, one float reward in [0, 1] per response out. They import
only the standard library so the engine, the environments and offline
evaluation can all share them.
"""

from __future__ import annotations

import re

# ASCII digits only: `\d` would also accept other scripts' digits, which the
# character-level models never see in a correct answer.
_INT = re.compile(r"-?[0-9]+")


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


def exact_int(responses: list[str], answers: list[int]) -> list[float]:
    """1.0 where a response's parsed integer equals its answer, else 0.0.

    >>> exact_int(["85", "85 apples", "-12."], [85, 85, -12])
    [1.0, 0.0, 1.0]
    """
    if len(responses) != len(answers):
        raise ValueError(
            f"exact_int got {len(responses)} responses but {len(answers)} answers"
        )
    return [
        1.0 if parse_int(response) == answer else 0.0
        for response, answer in zip(responses, answers)
    ]


def final_int(responses: list[str], answers: list[int]) -> list[float]:
    """exact_int on what follows a response's last ``|``: worked answers such as
    ``"7+8=15|4+3+1=8|85"`` are scored on their final answer alone (the working is not
    checked; a bare answer counts too).

    >>> final_int(["7+8=15|4+3+1=8|85", "85", "7+8=15|85|84", "85|"], [85, 85, 85, 85])
    [1.0, 1.0, 0.0, 0.0]
    """
    return exact_int([response.rpartition("|")[2] for response in responses], answers)
