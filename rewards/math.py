"""Verifier for answers that are numbers or expressions ("math_equiv").

Equivalence is decided by ``math_verify``: both the response and the gold
answer are parsed to SymPy and compared numerically and symbolically, so
``0.5`` matches ``1/2``, ``\\frac{1}{2}`` and ``x=1/2``, and ``1+2x`` matches
``2x+1``. ``math_verify`` (and SymPy behind it) is imported on first use, not
with the package: every process imports ``rewards`` and most never score math.

Equivalence alone would reward copying the question: ``3*(4+5)-7`` *equals*
the answer to ``3*(4+5)-7=``, and ``2x+3x`` equals ``5x``. So a response must
also be in final form: it may state no more numbers than the gold answer does
(see ``literal_count``). A response that shows its working therefore fails;
the policies here answer tersely.
"""

from __future__ import annotations

import re
import threading

# Responses are cut to their last characters before parsing: SymPy's work
# grows fast with input size, and a final answer ends a response.
MAX_CHARS = 200
# A longer run of digits is no plausible answer, and SymPy can spend seconds on one.
_LONG_NUMBER = re.compile(r"[0-9]{30}")
# Seconds math_verify may spend parsing or comparing one pair (signal.alarm
# granularity, so a whole number).
TIMEOUT_S = 1
# Text already marked up as math is parsed as is; bare text is wrapped in $..$
# because math_verify's plain-expression parser reads "2x+1" as just "2".
_MATH_MARKUP = re.compile(r"\$|\\\(|\\\[|\\boxed")
# A number as written: a fraction of integers (either notation) is one number,
# like the decimal it stands for.
_LITERAL = re.compile(
    r"\\d?frac\{\s*-?[0-9]+\s*\}\{\s*-?[0-9]+\s*\}|[0-9]+\s*/\s*[0-9]+|[0-9]*\.?[0-9]+"
)


def literal_count(text: str) -> int:
    """How many numbers ``text`` writes down; a fraction of integers counts once.

    >>> literal_count("20"), literal_count("3*(4+5)-7"), literal_count("-1/2")
    (1, 4, 1)
    >>> literal_count("\\\\frac{1}{2}"), literal_count("2x+1"), literal_count("x")
    (1, 2, 0)
    """
    return len(_LITERAL.findall(text))


def _timeout() -> int | None:
    """math_verify's timeouts use signal.alarm, which only the main thread may set.

    Elsewhere (a thread pool, some actor runtimes) math_verify would raise on
    every call, so there the input cap alone bounds the work.
    """
    return TIMEOUT_S if threading.current_thread() is threading.main_thread() else None


def _parse(text: str) -> list:
    """math_verify's parse of ``text``: as LaTeX math if possible, else as free text."""
    from math_verify import parse

    timeout = _timeout()
    if not _MATH_MARKUP.search(text):
        as_math = parse(f"${text}$", parsing_timeout=timeout)
        if as_math:
            return as_math
    # Free text such as "the answer is 4": math_verify finds the number itself.
    return parse(text, parsing_timeout=timeout)


def is_equivalent(response: str, answer: str) -> bool:
    """True if ``response`` states ``answer`` (up to equivalence) in final form.

    Never raises: malformed input, parser errors and timeouts are all False.

    >>> is_equivalent("0.5", "1/2"), is_equivalent("1+2x", "2x+1")
    (True, True)
    >>> is_equivalent("3*(4+5)-7", "20"), is_equivalent("0.4", "1/2")
    (False, False)
    """
    from math_verify.errors import TimeoutException

    if not isinstance(response, str) or not response.strip():
        return False
    response, answer = response[-MAX_CHARS:], str(answer)[-MAX_CHARS:]
    if _LONG_NUMBER.search(response):
        return False
    if literal_count(response) > literal_count(answer):
        return False  # unevaluated: echoes the question or shows working
    try:
        from math_verify import verify

        gold, pred = _parse(answer), _parse(response)
        # verify is not symmetric: the gold answer goes first.
        return bool(gold and pred and verify(gold, pred, timeout_seconds=_timeout()))
    except (Exception, TimeoutException):
        # TimeoutException is a BaseException; a reward must never end a run.
        return False


def math_equiv(responses: list[str], answers: list[str]) -> list[float]:
    """1.0 where a response is equivalent to its answer and in final form, else 0.0.

    >>> responses = ["\\\\frac{1}{2}", "x=3", "\\\\boxed{4}", "-0.50", "5"]
    >>> math_equiv(responses, ["0.5", "3", "4", "-1/2", "4"])
    [1.0, 1.0, 1.0, 1.0, 0.0]
    """
    if len(responses) != len(answers):
        raise ValueError(
            f"math_equiv got {len(responses)} responses but {len(answers)} answers"
        )
    return [
        1.0 if is_equivalent(response, answer) else 0.0
        for response, answer in zip(responses, answers)
    ]
