"""Verifier for instruction following: checkable constraints on a response.

A task's answer is a spec, a list of constraints such as
``[{"kind": "lowercase"}, {"kind": "max_words", "n": 3}, {"kind": "include", "word": "red"}]``.
Each kind is a small pure predicate ``check(text, params) -> bool`` in
``CHECKS``. The reward is the fraction of constraints a response satisfies,
with two exceptions that close cheap exploits:

- an empty response scores 0.0, though it would meet every upper bound and
  "exclude" constraint for free;
- the hack check: a response that *claims* compliance ("as requested", "I
  followed all ...", "(word count: 3)") scores 0.0 unless it really satisfies
  every constraint. A learned judge can be talked into credit this way; the
  policy must learn that only compliance pays.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable

Check = Callable[[str, dict[str, Any]], bool]

# A word is a whitespace-separated token with a letter or digit in it, so the
# "- " of a bullet or the brackets of a JSON list are not words.
_WORD = re.compile(r"\S*[A-Za-z0-9]\S*")
# A sentence ends at . ! or ? followed by whitespace or the end ("3.5" is one number).
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")
_CLAIMS = re.compile(
    r"followed (all|every|the)|i (have )?followed|as (requested|instructed|asked)"
    r"|(this|my) (response|answer) (satisfies|meets|follows|complies)"
    r"|all (the )?(constraints|instructions|rules|requirements)"
    r"|\(word count|word count:|complies|compliant|compliance",
    re.IGNORECASE,
)


def words(text: str) -> list[str]:
    """The words of ``text`` (see ``_WORD``).

    >>> words("- red apple"), words('["red", "fig"]')
    (['red', 'apple'], ['["red",', '"fig"]'])
    """
    return _WORD.findall(text)


def _has_word(text: str, word: str) -> bool:
    """Whole-word, case-insensitive: "red" is in "Red fig" but not in "bred"."""
    pattern = rf"(?<![A-Za-z0-9]){re.escape(word)}(?![A-Za-z0-9])"
    return re.search(pattern, text, re.IGNORECASE) is not None


def max_words(text: str, params: dict[str, Any]) -> bool:
    """At most ``params["n"]`` words."""
    return len(words(text)) <= params["n"]


def min_words(text: str, params: dict[str, Any]) -> bool:
    """At least ``params["n"]`` words."""
    return len(words(text)) >= params["n"]


def max_chars(text: str, params: dict[str, Any]) -> bool:
    """At most ``params["n"]`` characters, surrounding whitespace excluded."""
    return len(text.strip()) <= params["n"]


def lowercase(text: str, params: dict[str, Any]) -> bool:
    """Some letters and none of them capital."""
    return text.islower()


def uppercase(text: str, params: dict[str, Any]) -> bool:
    """Some letters and all of them capital."""
    return text.isupper()


def include(text: str, params: dict[str, Any]) -> bool:
    """Contains the word ``params["word"]``."""
    return _has_word(text, params["word"])


def exclude(text: str, params: dict[str, Any]) -> bool:
    """Does not contain the word ``params["word"]``."""
    return not _has_word(text, params["word"])


def json_format(text: str, params: dict[str, Any]) -> bool:
    """Parses as JSON, and is an object or a list (a bare "3" or string is not a format)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: "[[[[..." thousands deep
        return False
    return isinstance(value, (dict, list))


def bullets(text: str, params: dict[str, Any]) -> bool:
    """Every non-empty line starts with "- ", and there is at least one."""
    lines = [line for line in text.splitlines() if line.strip()]
    return bool(lines) and all(line.startswith("- ") for line in lines)


def sentences(text: str, params: dict[str, Any]) -> bool:
    """Exactly ``params["n"]`` sentences; a trailing one without a full stop counts."""
    parts = _SENTENCE_END.split(text)
    return sum(1 for part in parts if re.search(r"[A-Za-z0-9]", part)) == params["n"]


CHECKS: dict[str, Check] = {
    "max_words": max_words,
    "min_words": min_words,
    "max_chars": max_chars,
    "lowercase": lowercase,
    "uppercase": uppercase,
    "include": include,
    "exclude": exclude,
    "json": json_format,
    "bullets": bullets,
    "sentences": sentences,
}


def satisfied(text: str, spec: list[dict[str, Any]]) -> list[bool]:
    """Whether ``text`` meets each constraint of ``spec``; an unknown kind is a caller bug.

    >>> satisfied("red fig", [{"kind": "lowercase"}, {"kind": "max_words", "n": 1}])
    [True, False]
    """
    results = []
    for constraint in spec:
        check = CHECKS.get(constraint.get("kind"))
        if check is None:
            kind = constraint.get("kind")
            raise ValueError(f"unknown constraint kind {kind!r}; known: {sorted(CHECKS)}")
        results.append(check(text, constraint))
    return results


def claims_compliance(text: str) -> bool:
    """True if ``text`` asserts that it follows the instructions.

    >>> claims_compliance("red fig (word count: 2)"), claims_compliance("red fig")
    (True, False)
    """
    return _CLAIMS.search(text) is not None


def follow_score(text: str, spec: list[dict[str, Any]]) -> float:
    """The fraction of ``spec`` that ``text`` satisfies, after the empty and hack checks.

    >>> spec = [{"kind": "lowercase"}, {"kind": "include", "word": "red"}]
    >>> [follow_score(text, spec) for text in ["red fig", "Red fig", "Fig, as requested"]]
    [1.0, 0.5, 0.0]
    """
    if not spec:
        raise ValueError("an instruction spec needs at least one constraint")
    if not isinstance(text, str) or not text.strip():
        return 0.0
    results = satisfied(text, spec)
    if claims_compliance(text) and not all(results):
        return 0.0  # claiming compliance without complying earns nothing at all
    return sum(results) / len(results)


def instruction_following(responses: list[str], specs: list[list[dict[str, Any]]]) -> list[float]:
    """Per response, the fraction of its spec's constraints satisfied (see the module doc).

    >>> spec = [{"kind": "max_words", "n": 2}, {"kind": "exclude", "word": "fig"}]
    >>> instruction_following(["red plum", "red fig", "red fig, all constraints met"], [spec] * 3)
    [1.0, 0.5, 0.0]
    """
    if len(responses) != len(specs):
        raise ValueError(
            f"instruction_following got {len(responses)} responses but {len(specs)} specs"
        )
    return [follow_score(response, spec) for response, spec in zip(responses, specs)]
